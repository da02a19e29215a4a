"""Procurement solved (app/planning/procurement.py over app/sizing/procurement.py): worked
cases with the arithmetic written out (a flat forecast commits everything, one busy month is
rented, spot only above the protected N+1), the integer program against a brute force, and
what must always hold."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.planning.procurement import solve
from app.sizing.procurement import Need, Procurement, ProcurementProblem, Rates, committed_hours

HOURS = 730.0  # per month
# The seeded H100 SXM's illustrative rates (catalog_seed/gpus.yaml): on demand, 1y, 3y, spot.
ON_DEMAND, ONE_YEAR, THREE_YEARS, SPOT = 3.00, 2.16, 1.62, 1.50


def _monthly(units: list[int], protected: list[int] | None = None) -> tuple[Need, ...]:
    protected = protected or units
    return tuple(
        Need(f"2027-{month:02d}", HOURS, n, p, HOURS)
        for month, (n, p) in enumerate(zip(units, protected, strict=True), 1)
    )


def _problem(
    needs: tuple[Need, ...], rates: Rates, gpus_per_unit: int = 1, period_months: int = 1
) -> ProcurementProblem:
    return ProcurementProblem(needs, gpus_per_unit, rates, period_months, HOURS)


def test_a_flat_forecast_commits_everything_when_the_committed_rate_is_below_on_demand() -> None:
    """12 months of 10 GPUs. Committed for a year: 10 x 2.16 x 730 x 12 = 189,216.00 USD;
    on demand: 10 x 3.00 x 730 x 12 = 262,800.00. A committed GPU needed every hour pays 72%
    of on demand, so all ten are committed."""
    plan = solve(_problem(_monthly([10] * 12), Rates(ON_DEMAND, {"1y": ONE_YEAR})))
    assert [(c.term, c.gpus, c.first_period, c.last_period) for c in plan.commitments] == [
        ("1y", 10, "2027-01", "2027-12")
    ]
    assert all(p.on_demand_gpus == 0 and p.committed_gpus == 10 for p in plan.periods)
    assert plan.cost_usd == 189_216.00 == round(10 * 2.16 * 730 * 12, 2)
    assert plan.on_demand_cost_usd == 262_800.00
    assert plan.savings_usd == 73_584.00
    assert plan.monthly_cost_usd == 15_768.00  # 189,216 / 12


def test_a_committed_rate_no_lower_than_on_demand_commits_nothing() -> None:
    plan = solve(_problem(_monthly([10] * 12), Rates(ON_DEMAND, {"1y": ON_DEMAND})))
    assert plan.commitments == ()  # a tie goes to on demand: the same price, no lock-in
    assert plan.cost_usd == plan.on_demand_cost_usd == 262_800.00


def test_a_forecast_with_one_busy_month_commits_the_base_and_rents_the_peak() -> None:
    """11 months of 10 GPUs and one (July) of 20. The 10 of the base are needed all year:
    committed (2.16 x 8,760 = 18,921.60 a GPU, against 26,280.00 on demand). Each of July's
    10 more would cost 18,921.60 committed and 3.00 x 730 = 2,190.00 rented for the month:
    rented. Total 10 x 18,921.60 + 10 x 2,190.00 = 211,116.00."""
    units = [10] * 12
    units[6] = 20
    plan = solve(_problem(_monthly(units), Rates(ON_DEMAND, {"1y": ONE_YEAR})))
    assert [(c.term, c.gpus) for c in plan.commitments] == [("1y", 10)]
    july = plan.periods[6]
    assert (july.committed_gpus, july.on_demand_gpus) == (10, 10)
    assert july.cost_usd == round(10 * 2.16 * 730 + 10 * 3.00 * 730, 2) == 37_668.00
    assert all(p.on_demand_gpus == 0 for i, p in enumerate(plan.periods) if i != 6)
    assert plan.cost_usd == 211_116.00 == round(10 * 2.16 * 8760 + 10 * 3.00 * 730, 2)
    # Renting it all: 11 months x 10 x 2,190 + 20 x 2,190 = 284,700; saved 73,584.
    assert plan.on_demand_cost_usd == 284_700.00
    assert plan.savings_usd == 73_584.00


def test_a_busy_stretch_past_the_break_even_is_committed_too() -> None:
    """A 1-year commitment at 2.16 pays for a GPU needed more than 2.16 / 3.00 = 72% of the
    year: 8.64 months. Needed for 9 months: committed (18,921.60 < 9 x 2,190 = 19,710.00);
    for 8: rented (17,520.00)."""
    nine = solve(_problem(_monthly([11] * 9 + [10] * 3), Rates(ON_DEMAND, {"1y": ONE_YEAR})))
    eight = solve(_problem(_monthly([11] * 8 + [10] * 4), Rates(ON_DEMAND, {"1y": ONE_YEAR})))
    assert [c.gpus for c in nine.commitments] == [11]
    assert [c.gpus for c in eight.commitments] == [10]


def test_three_years_of_flat_traffic_take_the_three_year_rate() -> None:
    """36 months of 4 GPUs, 1y at 2.16 or 3y at 1.62: 4 x 1.62 x 730 x 36 = 170,294.40 USD."""
    plan = solve(_problem(_monthly([4] * 12) * 3, Rates(ON_DEMAND, {"1y": ONE_YEAR, "3y": THREE_YEARS})))
    assert [(c.term, c.gpus, c.months) for c in plan.commitments] == [("3y", 4, 36)]
    assert plan.cost_usd == round(4 * 1.62 * 730 * 36, 2) == 170_294.40


def test_spot_is_used_only_above_the_protected_n_plus_1() -> None:
    """A year of 10 GPUs, 6 of them the protected N+1 of the average load. Spot at 1.50 with a
    5% chance an hour is taken back counts as 0.95 of a GPU: 1.58 a GPU carried, below the
    1-year rate. The 6 protected are committed (never spot, however cheap); the other 4 are
    carried by ceil(4 / 0.95) = 5 spot GPUs: (6 x 2.16 + 5 x 1.50) x 730 = 14,935.80 a month."""
    rates = Rates(ON_DEMAND, {"1y": ONE_YEAR}, SPOT, 0.05)
    plan = solve(_problem(_monthly([10] * 12, [6] * 12), rates))
    for period in plan.periods:
        assert (period.committed_gpus, period.on_demand_gpus, period.spot_gpus) == (6, 0, 5)
        assert period.cost_usd == round((6 * 2.16 + 5 * 1.50) * 730, 2) == 14_935.80
    assert plan.cost_usd == round(12 * 14_935.80, 2)


def test_no_spot_when_the_whole_fleet_is_protected() -> None:
    """A flat day (peak = average): every GPU is the N+1 of the average load, so none is spot
    even at a tenth of the on-demand price."""
    plan = solve(_problem(_monthly([8] * 12), Rates(ON_DEMAND, {"1y": ONE_YEAR}, 0.30, 0.0)))
    assert all(p.spot_gpus == 0 for p in plan.periods)


def test_replicas_of_several_gpus_are_bought_whole() -> None:
    """TP4 replicas: units of 4 GPUs, so GPUs come in fours (3 replicas: 12 GPUs committed)."""
    plan = solve(_problem(_monthly([3] * 12), Rates(ON_DEMAND, {"1y": ONE_YEAR}), gpus_per_unit=4))
    assert plan.commitments[0].gpus == 12
    assert plan.cost_usd == round(12 * 2.16 * 730 * 12, 2)


def _cost(
    problem: ProcurementProblem, committed: dict[tuple[str, int], int], on_demand: list[int], spot: list[int]
) -> float:
    rates, total = problem.rates, 0.0
    for (term, index), units in committed.items():
        window = problem.windows(term)[index]
        total += (
            units * problem.unit_rate(rates.committed_usd_per_hour[term]) * sum(problem.needs[p].hours for p in window)
        )
    for p, need in enumerate(problem.needs):
        total += on_demand[p] * problem.unit_rate(rates.on_demand_usd_per_hour) * need.hours
        total += spot[p] * problem.unit_rate(rates.spot_usd_per_hour or 0.0) * need.hours
    return total


def _brute_force(problem: ProcurementProblem) -> float:
    """Every commitment count up to the most any period needs; each period then takes the
    cheapest on-demand and spot top-up that covers it."""
    rates = problem.rates
    keys = [(term, i) for term in problem.terms for i in range(len(problem.windows(term)))]
    most = max(n.units for n in problem.needs)
    best = math.inf
    for counts in itertools.product(range(most + 1), repeat=len(keys)):
        committed = dict(zip(keys, counts, strict=True))
        on_demand, spot = [], []
        for p, need in enumerate(problem.needs):
            held = sum(n for (term, i), n in committed.items() if p in problem.windows(term)[i])
            options = []
            for s in range(0, 2 * most + 2 if rates.spot_usd_per_hour is not None else 1):
                o = max(0, need.protected_units - held, math.ceil(need.units - held - s * rates.spot_share - 1e-9))
                options.append((o * rates.on_demand_usd_per_hour + s * (rates.spot_usd_per_hour or 0.0), o, s))
            _, o, s = min(options)
            on_demand.append(o)
            spot.append(s)
        best = min(best, _cost(problem, committed, on_demand, spot))
    return best


def _covers(plan: Procurement) -> None:
    share = plan.problem.rates.spot_share
    for period in plan.periods:
        held = period.committed_gpus + period.on_demand_gpus
        assert held >= period.gpus_protected  # the N+1 never rests on spot
        assert held + period.spot_gpus * share >= period.gpus_needed - 1e-9
        assert period.cost_usd == round(period.committed_cost_usd + period.on_demand_cost_usd + period.spot_cost_usd, 2)


NEEDS = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=12).map(
    lambda pairs: tuple(Need(f"p{i}", HOURS, max(a, b), min(a, b), HOURS) for i, (a, b) in enumerate(pairs))
)
RATES = st.builds(
    lambda od, c1, spot, r: Rates(od, {"1y": c1}, spot, r),
    st.floats(0.5, 5.0),
    st.floats(0.2, 6.0),
    st.one_of(st.none(), st.floats(0.1, 4.0)),
    st.floats(0.0, 0.5),
)


@settings(max_examples=40, deadline=None)
@given(needs=NEEDS, rates=RATES)
def test_the_split_covers_every_period_and_never_costs_more_than_all_on_demand(
    needs: tuple[Need, ...], rates: Rates
) -> None:
    plan = solve(_problem(needs, rates))
    _covers(plan)
    assert plan.cost_usd <= plan.on_demand_cost_usd + 0.01 * len(needs)
    assert plan.cost_usd == round(sum(p.cost_usd for p in plan.periods), 2)


@pytest.mark.parametrize("seed", range(6))
def test_the_integer_program_finds_the_brute_forces_optimum(seed: int) -> None:
    import random

    rng = random.Random(seed)
    units = [rng.randint(0, 3) for _ in range(12)]
    needs = tuple(Need(f"p{i}", HOURS, n, rng.randint(0, n), HOURS) for i, n in enumerate(units))
    rates = Rates(3.0, {"1y": rng.uniform(1.0, 3.5)}, rng.choice([None, rng.uniform(0.5, 2.0)]), 0.1)
    problem = _problem(needs, rates)
    plan = solve(problem)
    _covers(plan)
    assert plan.status == "optimal"
    # The plan's cost is in cents, period by period: within a cent a period of the optimum.
    assert plan.cost_usd == pytest.approx(_brute_force(problem), abs=0.01 * len(needs))


def test_a_commitment_bills_every_hour_of_its_months_however_few_the_fleet_is_billed() -> None:
    """A fleet billed 365 hours a month (half the day) on demand: 10 GPUs cost 10 x 3.00 x 365
    = 10,950.00 a month rented, and 10 x 2.16 x 730 = 15,768.00 committed, every hour billed:
    committing never pays (2.16 x 730 / (3.00 x 365) = 144% of the term). At 600 hours it
    does: 18,000.00 rented against the same 15,768.00."""
    assert committed_hours(1, 365) == 730 and committed_hours(3, 744) == 3 * 744

    def year(hours: float) -> Procurement:
        needs = tuple(Need(f"2027-{m:02d}", hours, 10, 10, committed_hours(1, hours)) for m in range(1, 13))
        return solve(ProcurementProblem(needs, 1, Rates(ON_DEMAND, {"1y": ONE_YEAR}), 1, hours))

    part_time = year(365)
    assert part_time.commitments == ()
    assert part_time.cost_usd == part_time.on_demand_cost_usd == round(12 * 10 * ON_DEMAND * 365, 2) == 131_400.00
    assert any("730 hours a month committed against 365" in line and "144%" in line for line in part_time.why)
    busier = year(600)
    (commitment,) = busier.commitments
    assert commitment.gpus == 10 and commitment.cost_usd == round(10 * ONE_YEAR * 730 * 12, 2) == 189_216.00
    assert [p.committed_cost_usd for p in busier.periods] == [15_768.00] * 12
    assert busier.on_demand_cost_usd == round(12 * 10 * ON_DEMAND * 600, 2)

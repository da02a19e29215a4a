"""The solver's counts as GPUs, costs and reasons (app/sizing/procurement.py's settle), on a
three-year horizon worked out by hand; the solver itself is app/planning/procurement.py's."""

import pytest

from app.sizing import procurement
from app.sizing.procurement import Need, ProcurementProblem, Rates

HOURS = 12 * 730.0  # a year of 730-hour months, billed on demand and committed alike


def _problem(rates: Rates, units=(3, 2, 4), not_offered=None) -> ProcurementProblem:
    # Three yearly periods of replicas of two cards each: 6, 4 and 8 GPUs needed.
    needs = tuple(Need(f"Y{i + 1}", HOURS, u, 1, procurement.committed_hours(12, 730.0)) for i, u in enumerate(units))
    return ProcurementProblem(needs, 2, rates, 12, 730.0, not_offered or {})


def test_settled_counts_are_priced_period_by_period_in_cents():
    problem = _problem(Rates(2.5, {"1y": 1.5}))
    # Two replicas (4 GPUs) committed each year; one replica on demand in year 1, two in year 3.
    committed = {("1y", 0): 2, ("1y", 1): 2, ("1y", 2): 2}
    plan = procurement.settle(problem, committed, [1, 0, 2], [0, 0, 0], "optimal", 0.01)
    year = 4 * 1.5 * HOURS  # 4 committed GPUs, every hour of the year: 52,560
    assert [c.cost_usd for c in plan.commitments] == [year] * 3 == [52_560.0] * 3
    first_commitment = plan.commitments[0]
    assert (first_commitment.gpus, first_commitment.first_period, first_commitment.months) == (4, "Y1", 12)
    first, second, third = plan.periods
    assert first.committed_gpus_by_term == {"1y": 4} and first.on_demand_gpus == 2
    assert first.on_demand_cost_usd == 2 * 2.5 * HOURS == 43_800.0
    assert first.cost_usd == 52_560.0 + 43_800.0
    assert second.cost_usd == 52_560.0 and second.on_demand_gpus == 0
    assert third.on_demand_cost_usd == 4 * 2.5 * HOURS and third.cost_usd == 52_560.0 + 87_600.0
    # Everything rented on demand instead: 6, 4 and 8 GPUs at 2.50 all year.
    assert [p.on_demand_only_cost_usd for p in plan.periods] == [131_400.0, 87_600.0, 175_200.0]
    assert (first.gpus_needed, first.gpus_protected, first.months) == (6, 2, 12)
    assert plan.cost_usd == 289_080.0 and plan.on_demand_cost_usd == 394_200.0
    assert plan.savings_usd == 105_120.0
    assert plan.monthly_cost_usd == pytest.approx(289_080.0 / 36) and first.monthly_cost_usd == 96_360.0 / 12
    assert plan.committed_gpus == 4 and (plan.status, plan.solve_s) == ("optimal", 0.01)


def test_the_reasons_give_the_breakeven_each_commitment_and_the_saving():
    problem = _problem(Rates(2.5, {"1y": 1.5}), not_offered={"3y": "no 3-year rate for this GPU"})
    plan = procurement.settle(problem, {("1y", 0): 3, ("1y", 2): 2}, [0, 2, 2], [0, 0, 0], "optimal", 0.0)
    why = list(plan.why)
    # 1.50 every hour against 2.50 only while needed: committing pays past 60% of the term.
    assert why[0].endswith(
        "committing is cheaper for a GPU needed more than 60% of the term (7.2 of its 12 months)"
    ) and why[0].startswith("a GPU committed for 1y at 1.50 USD/h")
    assert "hours a month committed against" not in why[0]  # billed every hour on demand too
    assert why[1] == "no 3y: no 3-year rate for this GPU"
    assert why[2].startswith("commits 6 GPUs for 1y from Y1 to Y1 (78,840.00 USD)")
    assert why[2].endswith("needs at least that many in 1 of its 1 periods")
    assert why[3].startswith("commits 4 GPUs for 1y from Y3 to Y3") and why[3].endswith("in 1 of its 1 periods")
    assert why[4] == "rents GPUs on demand in 2 of 3 periods, at most 4 (in Y2): needed too briefly to commit"
    # 78,840 + 52,560 committed, 87,600 + 87,600 rented: 306,600 of 394,200.
    assert plan.cost_usd == 306_600.0
    assert why[-1] == "87,600.00 USD (22.2%) less than renting every GPU on demand over the 36-month horizon"


def test_spot_is_priced_at_its_rate_and_said_to_stand_for_its_share_of_a_gpu():
    problem = _problem(Rates(2.5, {}, spot_usd_per_hour=1.0, spot_interruptions_per_hour=0.05))
    plan = procurement.settle(problem, {}, [1, 1, 1], [2, 1, 3], "optimal", 0.0)
    assert [p.spot_gpus for p in plan.periods] == [4, 2, 6]
    assert plan.periods[0].spot_cost_usd == 4 * 1.0 * HOURS
    assert plan.periods[0].cost_usd == 2 * 2.5 * HOURS + 4 * HOURS
    assert plan.commitments == () and plan.committed_gpus == 0
    spot = next(line for line in plan.why if line.startswith("spot at"))
    assert "a chance of 5%, counts as 0.95 of a GPU (1.05 USD/h per GPU it stands for)" in spot
    assert "adds spot GPUs in 3 of 3 periods" in plan.why


def test_part_time_fleets_commit_every_hour_of_the_calendar():
    # A fleet billed 365 hours a month still pays a commitment's 730: breakeven doubles.
    needs = (Need("Y1", 12 * 365.0, 1, 1, procurement.committed_hours(12, 365.0)),)
    assert needs[0].committed_hours == 12 * 730.0
    problem = ProcurementProblem(needs, 1, Rates(2.0, {"1y": 0.8}), 12, 365.0)
    plan = procurement.settle(problem, {}, [1], [0], "optimal", 0.0)
    # 0.80 x 730 against 2.00 x 365: 80% of the term.
    assert "(730 hours a month committed against 365 billed on demand)" in plan.why[0]
    assert "more than 80% of the term (9.6 of its 12 months)" in plan.why[0]


def test_commitment_windows_are_whole_terms_from_the_horizon_s_start():
    problem = _problem(Rates(2.5, {"1y": 1.5, "3y": 1.0}))
    assert problem.terms == ("1y", "3y") and problem.horizon_months == 36
    assert problem.windows("1y") == [range(0, 1), range(1, 2), range(2, 3)]
    assert problem.windows("3y") == [range(0, 3)]
    # Two years hold no whole 3-year term.
    assert _problem(Rates(2.5, {"3y": 1.0}), units=(1, 1)).windows("3y") == []
    assert problem.unit_rate(1.5) == 3.0  # two cards a unit
    # A term committed over its window bills every hour of each period it covers.
    plan = procurement.settle(problem, {("3y", 0): 1}, [2, 1, 3], [0, 0, 0], "optimal", 0.0)
    (three,) = plan.commitments
    assert (three.term, three.first_period, three.last_period, three.covers) == ("3y", "Y1", "Y3", range(0, 3))
    assert three.cost_usd == 2 * 1.0 * 3 * HOURS
    assert all(p.committed_gpus_by_term == {"1y": 0, "3y": 2} for p in plan.periods)


def test_no_gpu_needed_is_nothing_to_pay_for():
    plan = procurement.settle(_problem(Rates(2.5), units=(0, 0, 0)), {}, [0, 0, 0], [0, 0, 0], "optimal", 0.0)
    assert plan.cost_usd == 0.0 and plan.why[-1] == "nothing to pay for: no GPU is needed"

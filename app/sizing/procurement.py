"""Procurement: how a forecast's GPUs are paid for. Some are committed for a term (a one- or
three-year reservation, billed every hour of it, busy or not), the rest rented on demand
period by period, and load above the protected N+1 may ride on spot capacity, cheaper but
taken back now and then.

The problem (ProcurementProblem) is stated here and solved by app/planning/procurement.py
(an integer program on HiGHS); this module turns the solver's counts into costs and reasons.
Units are what a fleet is counted in: one replica of `gpus_per_unit` whole cards, or on MIG
one card of slices. Every period needs `units` of them (its peak, spares and zones), of which
`protected_units` (its average load with the spares: what the fleet must keep if every spot
replica went at once) on capacity that cannot be taken away. Spot units count above that,
each as 1 - interruption rate of one.

A commitment is billed every hour of its term, busy or not: a month of it is at least the
calendar's 730 hours (8,760 / 12) however few the fleet is billed on demand (hours_per_month
below 730: a fleet run part of the day), and the month's own when it is billed more (744).

Commitments are placed in windows of their term from the horizon's start (a 1-year one each
year, renewed at its size chosen anew; a 3-year one each third year); a window the horizon
does not hold whole is not offered. Every cost is in cents, period by period, so that a
spreadsheet adding the same cells finds the same total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .cost import HOURS_PER_MONTH, cents

SPOT = "spot"
# A commitment's term, months.
TERM_MONTHS = {"1y": 12, "3y": 36}
# A forecast period's length may be any of these: each divides both terms.
PERIOD_MONTHS = (1, 2, 3, 4, 6, 12)
# A traffic without a forecast is flat over this horizon (the longest term), in periods of a year.
FLAT_HORIZON_MONTHS = 36
FLAT_PERIOD_MONTHS = 12


@dataclass(frozen=True)
class Rates:
    """What one whole card costs an hour, each way it can be had (per GPU-hour)."""

    on_demand_usd_per_hour: float
    committed_usd_per_hour: dict[str, float] = field(default_factory=dict)  # term -> rate, those offered
    spot_usd_per_hour: float | None = None  # None: spot not offered
    spot_interruptions_per_hour: float = 0.0

    @property
    def spot_share(self) -> float:
        """What a spot GPU counts as: the share of its hours not taken back."""
        return 1.0 - self.spot_interruptions_per_hour


def committed_hours(period_months: int, hours_per_month: float) -> float:
    """The hours a committed GPU is billed in a period: every hour of the calendar's months,
    at least the hours the fleet is billed."""
    return period_months * max(hours_per_month, HOURS_PER_MONTH)


@dataclass(frozen=True)
class Need:
    """One period of the forecast: how long it bills on demand and committed, and what its
    fleet holds."""

    period: str
    hours: float  # on demand and spot
    units: int
    protected_units: int
    committed_hours: float  # a committed GPU: every hour of the period (committed_hours())


@dataclass(frozen=True)
class ProcurementProblem:
    needs: tuple[Need, ...]
    gpus_per_unit: int
    rates: Rates
    period_months: int
    hours_per_month: float
    # Why a term or spot is not offered, by name (shown in `why`).
    not_offered: dict[str, str] = field(default_factory=dict)

    @property
    def horizon_months(self) -> int:
        return len(self.needs) * self.period_months

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(term for term in TERM_MONTHS if term in self.rates.committed_usd_per_hour)

    def windows(self, term: str) -> list[range]:
        """The periods each commitment of `term` covers: whole terms from the horizon's start."""
        length = TERM_MONTHS[term] // self.period_months
        return [range(start, start + length) for start in range(0, len(self.needs) - length + 1, length)]

    def unit_rate(self, usd_per_gpu_hour: float) -> float:
        return usd_per_gpu_hour * self.gpus_per_unit


@dataclass(frozen=True)
class Commitment:
    term: str
    first_period: str
    last_period: str
    gpus: int
    usd_per_hour: float  # per GPU
    months: int
    cost_usd: float  # over its whole term
    covers: range  # the periods it covers, by position


@dataclass(frozen=True)
class PeriodSplit:
    """One period's GPUs by how they are had, and what each part costs in the period."""

    period: str
    hours: float
    committed_hours: float
    gpus_needed: int
    gpus_protected: int
    committed_gpus_by_term: dict[str, int]
    on_demand_gpus: int
    spot_gpus: int
    committed_cost_usd: float
    on_demand_cost_usd: float
    spot_cost_usd: float
    cost_usd: float
    on_demand_only_cost_usd: float  # every GPU needed rented on demand
    months: int

    @property
    def committed_gpus(self) -> int:
        return sum(self.committed_gpus_by_term.values())

    @property
    def monthly_cost_usd(self) -> float:
        return cents(self.cost_usd / self.months)


@dataclass(frozen=True)
class Procurement:
    problem: ProcurementProblem
    commitments: tuple[Commitment, ...]
    periods: tuple[PeriodSplit, ...]
    status: str
    solve_s: float
    why: tuple[str, ...] = ()

    @property
    def cost_usd(self) -> float:
        return cents(math.fsum(p.cost_usd for p in self.periods))

    @property
    def on_demand_cost_usd(self) -> float:
        return cents(math.fsum(p.on_demand_only_cost_usd for p in self.periods))

    @property
    def savings_usd(self) -> float:
        return cents(self.on_demand_cost_usd - self.cost_usd)

    @property
    def monthly_cost_usd(self) -> float:
        return cents(self.cost_usd / self.problem.horizon_months)

    @property
    def on_demand_monthly_cost_usd(self) -> float:
        return cents(self.on_demand_cost_usd / self.problem.horizon_months)

    @property
    def committed_gpus(self) -> int:
        """The most GPUs committed at once over the horizon."""
        return max((p.committed_gpus for p in self.periods), default=0)


def settle(
    problem: ProcurementProblem,
    committed: dict[tuple[str, int], int],
    on_demand: list[int],
    spot: list[int],
    status: str,
    solve_s: float,
) -> Procurement:
    """The solver's counts (units committed per term and window, on demand and spot per
    period) as GPUs and costs, with the reasons."""
    g, rates = problem.gpus_per_unit, problem.rates
    by_period: list[dict[str, int]] = [{} for _ in problem.needs]
    commitments = []
    for term in problem.terms:
        rate = rates.committed_usd_per_hour[term]
        for index, window in enumerate(problem.windows(term)):
            units = committed.get((term, index), 0)
            for p in window:
                by_period[p][term] = units * g
            if units:
                hours = math.fsum(problem.needs[p].committed_hours for p in window)
                commitments.append(
                    Commitment(
                        term,
                        problem.needs[window[0]].period,
                        problem.needs[window[-1]].period,
                        units * g,
                        rate,
                        TERM_MONTHS[term],
                        cents(units * g * rate * hours),
                        window,
                    )
                )
    periods = []
    for p, need in enumerate(problem.needs):
        terms = {term: by_period[p].get(term, 0) for term in problem.terms}
        committed_cost = cents(
            math.fsum(n * rates.committed_usd_per_hour[t] for t, n in terms.items()) * need.committed_hours
        )
        rented = on_demand[p] * g
        spotted = spot[p] * g
        rented_cost = cents(rented * rates.on_demand_usd_per_hour * need.hours)
        spot_cost = cents(spotted * (rates.spot_usd_per_hour or 0.0) * need.hours)
        periods.append(
            PeriodSplit(
                period=need.period,
                hours=need.hours,
                committed_hours=need.committed_hours,
                gpus_needed=need.units * g,
                gpus_protected=need.protected_units * g,
                committed_gpus_by_term=terms,
                on_demand_gpus=rented,
                spot_gpus=spotted,
                committed_cost_usd=committed_cost,
                on_demand_cost_usd=rented_cost,
                spot_cost_usd=spot_cost,
                cost_usd=cents(committed_cost + rented_cost + spot_cost),
                on_demand_only_cost_usd=cents(need.units * g * rates.on_demand_usd_per_hour * need.hours),
                months=problem.period_months,
            )
        )
    plan = Procurement(problem, tuple(commitments), tuple(periods), status, solve_s)
    return Procurement(plan.problem, plan.commitments, plan.periods, status, solve_s, tuple(reasons(plan)))


def reasons(plan: Procurement) -> list[str]:
    """Why the split is what it is: what each way of paying costs, what was chosen, and the
    saving against renting everything on demand."""
    problem, rates = plan.problem, plan.problem.rates
    od = rates.on_demand_usd_per_hour
    # Hours a month each way bills: on demand the fleet's billed hours, committed every hour.
    billed = problem.hours_per_month
    every_hour = committed_hours(1, billed)
    part_time = (
        f" ({every_hour:,.0f} hours a month committed against {billed:,.0f} billed on demand)"
        if every_hour != billed
        else ""
    )
    lines = []
    for term in problem.terms:
        rate, months = rates.committed_usd_per_hour[term], TERM_MONTHS[term]
        breakeven = rate * every_hour / (od * billed) if od > 0 and billed > 0 else math.inf
        pays = (
            f"committing is cheaper for a GPU needed more than {breakeven:.0%} of the term "
            f"({breakeven * months:.1f} of its {months} months)"
            if math.isfinite(breakeven)
            else "committing never pays"
        )
        lines.append(
            f"a GPU committed for {term} at {rate:.2f} USD/h is billed every hour of its {months} months, busy or "
            f"not{part_time}; on demand at {od:.2f} USD/h it is billed only while needed: {pays}"
        )
    for name, why in problem.not_offered.items():
        lines.append(f"no {name}: {why}")
    for commitment in plan.commitments:
        span = [plan.periods[p] for p in commitment.covers]
        busy = sum(1 for p in span if p.gpus_needed >= commitment.gpus)
        lines.append(
            f"commits {commitment.gpus} GPUs for {commitment.term} from {commitment.first_period} to "
            f"{commitment.last_period} ({commitment.cost_usd:,.2f} USD): the fleet needs at least that many in "
            f"{busy} of its {len(span)} periods"
        )
    rented = [p for p in plan.periods if p.on_demand_gpus]
    if rented:
        most = max(rented, key=lambda p: p.on_demand_gpus)
        lines.append(
            f"rents GPUs on demand in {len(rented)} of {len(plan.periods)} periods, at most {most.on_demand_gpus} "
            f"(in {most.period}): needed too briefly to commit"
        )
    if rates.spot_usd_per_hour is not None:
        share = rates.spot_share
        lines.append(
            f"spot at {rates.spot_usd_per_hour:.2f} USD/h, an hour of it taken back with a chance of "
            f"{rates.spot_interruptions_per_hour:.0%}, counts as {share:.2f} of a GPU "
            f"({rates.spot_usd_per_hour / share:.2f} USD/h per GPU it stands for); it carries only load above each "
            "period's protected N+1 (its average load and spares, on committed or on-demand GPUs)"
        )
    spotted = [p for p in plan.periods if p.spot_gpus]
    if spotted:
        lines.append(f"adds spot GPUs in {len(spotted)} of {len(plan.periods)} periods")
    saving = plan.savings_usd
    total = plan.on_demand_cost_usd
    lines.append(
        f"{saving:,.2f} USD ({saving / total:.1%}) less than renting every GPU on demand over the "
        f"{problem.horizon_months}-month horizon"
        if total > 0
        else "nothing to pay for: no GPU is needed"
    )
    return lines

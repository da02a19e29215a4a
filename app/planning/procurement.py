"""Procurement solved: the cheapest way to pay for a forecast's fleet, as an integer program
(scipy.optimize.milp, HiGHS), over a ProcurementProblem (app/sizing/procurement.py).

Variables, all integer and at least 0, in units (a replica of whole cards, or a MIG card):

- c_{k,w}: committed for term k in its window w (the periods w covers);
- o_p: rented on demand in period p;
- s_p: on spot in period p (only when spot is offered).

For every period p, with C_p the sum of the c_{k,w} whose window covers p:

    C_p + o_p                >= protected_p     (the N+1 of the average load, never on spot)
    C_p + o_p + (1 - r) s_p  >= units_p         (the whole fleet, a spot unit counting as 1 - r)

Cost, minimised: sum_{k,w} c_{k,w} x rate_k x committed hours of w (every hour)  +  sum_p (o_p x on-demand + s_p x spot)
x hours_p, every rate per unit (gpus_per_unit x per GPU). Renting every unit on demand is
always feasible, so the program is too. Ties are broken towards on demand, then committed
(flexibility first, then capacity that stays), by a cost far below a cent.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult, milp
from scipy.sparse import coo_array

from app.sizing import budget
from app.sizing.procurement import Procurement, ProcurementProblem, settle

from .mix import MIP_REL_GAP, OPTIMAL

# What one answer may spend solving (the work budget of one request, until a setting replaces it):
# monthly forecasts of up to five years solve to the proven optimum in about a second here;
# a longer one with spot may stop at the limit with the best split found, its gap stated.
TIME_LIMIT_S = 5.0
# Relative cost added to break ties (never a cent on any real bill).
COMMITTED_TIE = 1e-9
SPOT_TIE = 2e-9


def solve(problem: ProcurementProblem) -> Procurement:
    started = time.perf_counter()
    needs, rates = problem.needs, problem.rates
    periods = len(needs)
    committed: list[tuple[str, int, range]] = []
    for term in problem.terms:
        for index, window in enumerate(problem.windows(term)):
            committed.append((term, index, window))
    spot = rates.spot_usd_per_hour is not None
    size = len(committed) + periods * (2 if spot else 1)
    cost = np.zeros(size)
    for column, (term, _, window) in enumerate(committed):
        hours = sum(needs[p].committed_hours for p in window)
        cost[column] = problem.unit_rate(rates.committed_usd_per_hour[term]) * hours * (1 + COMMITTED_TIE)
    on_demand = len(committed)
    spot_start = on_demand + periods
    for p, need in enumerate(needs):
        cost[on_demand + p] = problem.unit_rate(rates.on_demand_usd_per_hour) * need.hours
        if spot:
            assert rates.spot_usd_per_hour is not None
            cost[spot_start + p] = problem.unit_rate(rates.spot_usd_per_hour) * need.hours * (1 + SPOT_TIE)
    # Rows 0..P-1: the protected N+1 of each period; rows P..2P-1: its whole fleet. Sparse: a
    # column touches the periods of its window only.
    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []

    def add(row: int, column: int, value: float) -> None:
        rows.append(row)
        cols.append(column)
        values.append(value)

    for column, (_, _, window) in enumerate(committed):
        for p in window:
            add(p, column, 1.0)
            add(periods + p, column, 1.0)
    for p in range(periods):
        add(p, on_demand + p, 1.0)
        add(periods + p, on_demand + p, 1.0)
        if spot:
            add(periods + p, spot_start + p, rates.spot_share)
    matrix = coo_array((values, (rows, cols)), shape=(2 * periods, size)).tocsr()
    lower = np.array([n.protected_units for n in needs] + [n.units for n in needs], dtype=float)
    result = milp(
        cost,
        integrality=np.ones(size),
        bounds=Bounds(np.zeros(size), np.full(size, np.inf)),
        constraints=LinearConstraint(matrix, lower, np.full(2 * periods, np.inf)),
        options={"mip_rel_gap": MIP_REL_GAP, "time_limit": budget.solver_time_limit_s(TIME_LIMIT_S)},
    )
    budget.check("the procurement's integer program")
    if result.x is None:  # cannot happen (all on demand is feasible) short of the time limit
        counts = [0] * len(committed), [n.units for n in needs], [0] * periods
        status = str(result.message)
    else:
        x = np.rint(result.x).astype(int)
        counts = (
            list(x[:on_demand]),
            list(x[on_demand:spot_start]),
            list(x[spot_start:]) if spot else [0] * periods,
        )
        status = OPTIMAL if result.status == 0 else _stopped(result)
    chosen = {(term, index): int(n) for (term, index, _), n in zip(committed, counts[0], strict=True)}
    return settle(
        problem,
        chosen,
        [int(n) for n in counts[1]],
        [int(n) for n in counts[2]],
        status,
        time.perf_counter() - started,
    )


def _stopped(result: OptimizeResult) -> str:
    """What a solve stopped short of the optimum says: the gap to its bound when it has one."""
    gap = getattr(result, "mip_gap", None)
    if gap is None or not np.isfinite(gap):
        return str(result.message)
    return f"stopped at the {TIME_LIMIT_S:g} s limit with the best split found, at most {gap:.3%} above the optimum"

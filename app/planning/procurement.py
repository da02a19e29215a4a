"""Procurement solved: the cheapest way to pay for a forecast's fleet, as an integer program
(scipy.optimize.milp, HiGHS), over a ProcurementProblem (app/sizing/procurement.py).

Variables, all integer and at least 0, in units (a replica of whole cards, or a MIG card):

- c_{k,w}: committed for term k in its window w (the periods w covers);
- o_p: rented on demand in period p;
- s_p: on spot in period p (only when spot is offered).

For every period p, with C_p the sum of the c_{k,w} whose window covers p:

    C_p + o_p                >= protected_p     (the N+1 of the average load, never on spot)
    C_p + o_p + (1 - r) s_p  >= units_p         (the whole fleet, a spot unit counting as 1 - r)

Cost, minimised: sum_{k,w} c_{k,w} x rate_k x hours of w  +  sum_p (o_p x on-demand + s_p x spot)
x hours_p, every rate per unit (gpus_per_unit x per GPU). Renting every unit on demand is
always feasible, so the program is too. Ties are broken towards on demand, then committed
(flexibility first, then capacity that stays), by a cost far below a cent.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from app.sizing.procurement import Procurement, ProcurementProblem, settle

from .mix import MIP_REL_GAP, OPTIMAL

TIME_LIMIT_S = 10.0
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
        hours = sum(needs[p].hours for p in window)
        cost[column] = problem.unit_rate(rates.committed_usd_per_hour[term]) * hours * (1 + COMMITTED_TIE)
    on_demand = len(committed)
    spot_start = on_demand + periods
    for p, need in enumerate(needs):
        cost[on_demand + p] = problem.unit_rate(rates.on_demand_usd_per_hour) * need.hours
        if spot:
            assert rates.spot_usd_per_hour is not None
            cost[spot_start + p] = problem.unit_rate(rates.spot_usd_per_hour) * need.hours * (1 + SPOT_TIE)
    protected = np.zeros((periods, size))
    whole = np.zeros((periods, size))
    for column, (_, _, window) in enumerate(committed):
        for p in window:
            protected[p, column] = whole[p, column] = 1.0
    for p in range(periods):
        protected[p, on_demand + p] = whole[p, on_demand + p] = 1.0
        if spot:
            whole[p, spot_start + p] = rates.spot_share
    lower = np.array([n.protected_units for n in needs] + [n.units for n in needs], dtype=float)
    result = milp(
        cost,
        integrality=np.ones(size),
        bounds=Bounds(np.zeros(size), np.full(size, np.inf)),
        constraints=LinearConstraint(np.vstack([protected, whole]), lower, np.full(2 * periods, np.inf)),
        options={"mip_rel_gap": MIP_REL_GAP, "time_limit": TIME_LIMIT_S},
    )
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
        status = OPTIMAL if result.status == 0 else str(result.message)
    chosen = {(term, index): int(n) for (term, index, _), n in zip(committed, counts[0], strict=True)}
    return settle(
        problem,
        chosen,
        [int(n) for n in counts[1]],
        [int(n) for n in counts[2]],
        status,
        time.perf_counter() - started,
    )

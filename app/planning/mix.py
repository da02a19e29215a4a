"""Mixed fleets solved: the cost-minimal assignment of length buckets to replica kinds, as a
mixed-integer program (scipy.optimize.milp, HiGHS), beside the best single-kind plan.

The program, over a MixProblem (app/sizing/mix.py) of kinds k and served buckets b:

- y_{k,b} in [0, 1], continuous: the share of bucket b's requests kind k serves, defined only
  where k can serve b (its capacity cap_{k,b} > 0), and sum_k y_{k,b} = 1 for every b.
- x_k >= 0, integer: k's replicas carrying the peak. Without zones
  sum_b rate_b y_{k,b} / cap_{k,b} <= x_k; with Z > 1 zones x_k counts replicas per zone and
  the load must fit in Z - 1 of them: sum_b ... <= (Z - 1) x_k.
- c_k >= 0, integer, on MIG kinds: the whole cards holding k's slices, x_k <= slices per card x c_k
  (per zone with zones).
- u_k in {0, 1} (no zones, spare_replicas s > 0): k is used; x_k <= M_k u_k, where M_k is the
  replicas k would need to carry every bucket it can serve alone.

Monthly cost, minimised: hours_per_month x sum_k of
  s u_k + x_k replicas (or s u_k + c_k cards on MIG) at their hourly price, without zones;
  Z x_k replicas (or Z c_k cards), with zones.
That is fleet.size_fleet's N+1 per pool (see app/sizing/mix.py): every kind used carries its
own spares, so each pool survives losing a replica (or a card) of its own. The best single
kind is priced by the same rule (sizing.mix.pool_size); it is one feasible point of this
program, so the mix is never costlier (the answer falls back on it if rounding says otherwise).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from app.sizing import budget
from app.sizing.fleet_plan import FleetInputs
from app.sizing.mix import (
    LOAD_TOLERANCE,
    LengthBucket,
    MixKind,
    MixProblem,
    PoolSize,
    SingleKindPlan,
    best_single_kind,
    build_problem,
    pool_size,
)
from app.sizing.plan import PlanInputs
from app.sizing.specs import GpuSpec, ModelSpec

# HiGHS is asked for the proven optimum (relative gap 0): these programs are tens of variables.
MIP_REL_GAP = 0.0
TIME_LIMIT_S = 10.0
# Shares below this are the solver's noise, not an assignment.
SHARE_NOISE = 1e-7

OPTIMAL = "optimal"
INFEASIBLE = "infeasible"
NOTHING_TO_SERVE = "nothing to serve"


@dataclass(frozen=True)
class BucketShare:
    """One bucket's part of a pool: which bucket, what share of its requests, at what rate."""

    bucket: int
    prompt_tokens: int
    output_tokens: int
    share: float  # of the bucket's requests
    requests_per_s: float  # at peak, with the headroom
    capacity_per_replica: float  # requests/s of this bucket one replica takes
    meets_slo: bool  # False: a best effort, no kind serving this bucket meets the SLOs
    load: float  # replicas' worth of the pool this share keeps busy at peak


@dataclass(frozen=True)
class MixPool:
    """The replicas of one kind in the mix and what they serve."""

    kind: MixKind
    size: PoolSize
    buckets: tuple[BucketShare, ...]
    monthly_cost_usd: float

    @property
    def utilization_peak(self) -> float:
        """Busy share of the replicas carrying the peak (spares aside)."""
        return self.size.load / self.size.replicas if self.size.replicas else 0.0


@dataclass(frozen=True)
class MixPlan:
    problem: MixProblem
    pools: tuple[MixPool, ...]
    monthly_cost_usd: float
    gpus_total: int
    single: SingleKindPlan | None  # the best single-kind plan, for comparison
    meets_slo: bool
    unserved: tuple[int, ...]  # buckets no kind serves within the SLOs (a best effort)
    dropped: tuple[int, ...]  # buckets no kind can take at all (not in the plan)
    status: str  # OPTIMAL, INFEASIBLE, NOTHING_TO_SERVE, or the solver's message
    solver_message: str
    solve_time_s: float
    build_time_s: float | None = None

    @property
    def savings_usd(self) -> float | None:
        """What the mix saves per month against the best single kind (None: no single kind)."""
        return None if self.single is None else round(self.single.monthly_cost_usd - self.monthly_cost_usd, 2)


def plan_mix(
    model: ModelSpec,
    gpus: Sequence[tuple[str, GpuSpec]],
    plan: PlanInputs,
    inputs: FleetInputs,
    buckets: Sequence[LengthBucket] | None = None,
    *,
    precisions: Sequence[str | None] = (),
) -> MixPlan:
    """The request's mixed fleet over `gpus`: the problem built (sizing.mix.build_problem),
    then solved. `buckets` None: derived from the request's lengths and their cv."""
    started = time.perf_counter()
    problem = build_problem(model, gpus, plan, inputs, buckets, precisions=precisions)
    built = time.perf_counter() - started
    return replace(solve(problem), build_time_s=built)


@dataclass(frozen=True)
class _Columns:
    """Where each variable sits in the solver's vector."""

    x: list[int]
    cards: list[int | None]
    used: list[int | None]
    y: dict[tuple[int, int], int]
    size: int


def _columns(problem: MixProblem, served: Sequence[int], with_used: bool) -> _Columns:
    count = 0

    def new() -> int:
        nonlocal count
        count += 1
        return count - 1

    x, cards, used = [], [], []
    y: dict[tuple[int, int], int] = {}
    for k, kind in enumerate(problem.kinds):
        x.append(new())
        cards.append(new() if kind.replicas_per_card else None)
        used.append(new() if with_used else None)
        for b in served:
            if problem.usable(k, b) is not None:
                y[k, b] = new()
    return _Columns(x, cards, used, y, count)


def solve(problem: MixProblem) -> MixPlan:
    """The cost-minimal mix of the problem's kinds (see the module docstring), by HiGHS."""
    started = time.perf_counter()
    served = problem.served
    meets = not problem.unserved and not problem.dropped
    if not served:
        return _answer(problem, {}, NOTHING_TO_SERVE, "no bucket with traffic that any kind can take", started, meets)
    redundancy = problem.redundancy
    zones = redundancy.zones
    spare = redundancy.spare_replicas if zones == 1 else 0
    cols = _columns(problem, served, with_used=spare > 0)
    cost = np.zeros(cols.size)
    integral = np.zeros(cols.size)
    upper = np.full(cols.size, np.inf)
    rows: list[tuple[dict[int, float], float, float]] = []  # (coefficients, lower, upper)
    for b in served:
        rows.append(({cols.y[k, b]: 1.0 for k in range(len(problem.kinds)) if (k, b) in cols.y}, 1.0, 1.0))
    for k, kind in enumerate(problem.kinds):
        loads = {cols.y[k, b]: load for b in served if (load := problem.load(k, b)) is not None}
        x = cols.x[k]
        integral[x] = 1
        carriers = zones - 1 if zones > 1 else 1
        rows.append(({**loads, x: -float(carriers)}, -np.inf, 0.0))
        card = cols.cards[k]
        if card is not None:
            assert kind.replicas_per_card is not None
            integral[card] = 1
            rows.append(({x: 1.0, card: -float(kind.replicas_per_card)}, -np.inf, 0.0))
            unit_price, unit = kind.price_per_card_hour_usd, card
        else:
            unit_price, unit = kind.price_per_replica_hour_usd, x
        cost[unit] = unit_price * zones
        used = cols.used[k]
        if used is not None:
            integral[used] = 1
            upper[used] = 1
            most = max(1, math.ceil(math.fsum(loads.values()) - LOAD_TOLERANCE))
            rows.append(({x: 1.0, used: -float(most)}, -np.inf, 0.0))
            cost[used] = unit_price * spare  # spare replicas, or on MIG spare whole cards
    for index in cols.y.values():
        upper[index] = 1.0
    matrix = np.zeros((len(rows), cols.size))
    for r, (coefficients, _, _) in enumerate(rows):
        for c, value in coefficients.items():
            matrix[r, c] = value
    result = milp(
        cost * problem.hours_per_month,
        integrality=integral,
        bounds=Bounds(np.zeros(cols.size), upper),
        constraints=LinearConstraint(matrix, [r[1] for r in rows], [r[2] for r in rows]),
        options={"mip_rel_gap": MIP_REL_GAP, "time_limit": budget.solver_time_limit_s(TIME_LIMIT_S)},
    )
    budget.check("the mix's integer program")
    if result.x is None:
        status = INFEASIBLE if result.status == 2 else str(result.message)
        return _answer(problem, {}, status, str(result.message), started, False)
    shares = {key: float(result.x[index]) for key, index in cols.y.items()}
    status = OPTIMAL if result.status == 0 else str(result.message)
    return _answer(problem, shares, status, str(result.message), started, meets)


def _answer(
    problem: MixProblem,
    shares: dict[tuple[int, int], float],
    status: str,
    message: str,
    started: float,
    meets: bool,
) -> MixPlan:
    """The plan from the solver's shares: noise dropped, each bucket's shares renormalised,
    each pool sized by pool_size (the same rule the single kind is sized by)."""
    unserved = set(problem.unserved)
    kept = {key: share for key, share in shares.items() if share > SHARE_NOISE}
    totals: dict[int, float] = {}
    for (_, b), share in kept.items():
        totals[b] = totals.get(b, 0.0) + share
    pools: list[MixPool] = []
    for k, kind in enumerate(problem.kinds):
        parts = []
        for b in problem.served:
            if (k, b) not in kept:
                continue
            share = kept[k, b] / totals[b]
            capacity = problem.usable(k, b)
            assert capacity is not None
            rate = problem.rates[b] * share
            bucket = problem.buckets[b]
            parts.append(
                BucketShare(
                    b,
                    bucket.prompt_tokens,
                    bucket.output_tokens,
                    share,
                    rate,
                    capacity,
                    b not in unserved,
                    rate / capacity,
                )
            )
        if parts:
            size = pool_size(kind, math.fsum(p.load for p in parts), problem.redundancy)
            pools.append(MixPool(kind, size, tuple(parts), _monthly(size.hourly_usd, problem.hours_per_month)))
    single = best_single_kind(problem)
    total = _monthly(math.fsum(p.size.hourly_usd for p in pools), problem.hours_per_month)
    if single is not None and (not pools or single.monthly_cost_usd < total):
        # The single kind is a feasible mix: rounding within the solver's tolerance, not a better plan.
        pools = [_single_pool(problem, single)]
        total = single.monthly_cost_usd
    return MixPlan(
        problem=problem,
        pools=tuple(pools),
        monthly_cost_usd=total,
        gpus_total=sum(p.size.gpus for p in pools),
        single=single,
        meets_slo=meets,
        unserved=problem.unserved,
        dropped=problem.dropped,
        status=status,
        solver_message=message,
        solve_time_s=time.perf_counter() - started,
    )


def _single_pool(problem: MixProblem, single: SingleKindPlan) -> MixPool:
    k = single.kind_index
    unserved = set(problem.unserved)
    parts = []
    for b in problem.served:
        capacity = problem.usable(k, b)
        assert capacity is not None
        bucket = problem.buckets[b]
        rate = problem.rates[b]
        parts.append(
            BucketShare(
                b, bucket.prompt_tokens, bucket.output_tokens, 1.0, rate, capacity, b not in unserved, rate / capacity
            )
        )
    return MixPool(single.kind, single.pool, tuple(parts), single.monthly_cost_usd)


def _monthly(hourly_usd: float, hours_per_month: float) -> float:
    return round(hourly_usd * hours_per_month, 2)

"""Mixed fleets: the workload split into length buckets, every catalog replica kind's capacity
for each bucket at the SLOs, and what a cost-minimal assignment of buckets to kinds is solved
over (app/planning/mix.py solves it as an integer program).

A bucket is one (prompt, output) length pair and the share of requests that have it. Its
arrival rate at peak is requests/s x share x peak_to_average x (1 + headroom); a kind's
capacity for it is the highest request rate one replica takes at the SLO percentile with
every request of the bucket's lengths (length cv 0 inside a bucket: the spread is what the
buckets stand for). Serving a share y of bucket b on kind k takes rate_b x y / cap_{k,b}
replicas of k, and a kind's loads over its buckets add up. That is exact when the pool routes
by length (each replica serving one bucket, up to whole-replica rounding); a replica given a
blend batches long prefills beside short decodes, which the per-bucket capacities, measured
on one length each, do not see: the sum is then an approximation (the harmonic mean of the
capacities), optimistic for the short requests' TPOT when long prompts share their steps.

N+1 on the whole fleet is per pool: every kind that is used carries the plain fleet's own
redundancy (fleet.size_fleet): `spare_replicas` spare replicas, or on MIG slices spare whole
cards (one card's failure takes every slice on it), or with zones Z > 1 enough in each zone
that any Z - 1 carry the peak. So every pool survives losing one of its replicas (or cards,
or a zone), whichever kind fails; a single spare of the largest kind would not cover the loss
of a replica of a pool serving buckets that the largest kind cannot serve. The single-kind
comparison is sized by the same rule (pool_size), so it is one feasible point of the mix.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from . import budget, fleet
from .errors import SizingError
from .fleet_plan import FleetInputs, FleetPlan, plan_fleet, refine, targets
from .plan import PlanInputs, plan_fit
from .queueing import length_nodes
from .simulate import FIXED_LENGTH_CV
from .specs import GpuSpec, ModelSpec
from .vocabulary import CapacityBound, LengthDistribution

LENGTH_BUCKETS = "length_buckets"
# A histogram's shares must sum to 1 within this.
SHARE_TOLERANCE = 1e-6
# Quantile strata per length with a spread: 2 x 2 buckets when both prompt and output vary.
LENGTH_STRATA = 2
# Kinds kept per bucket, cheapest per request/s first (see build_problem).
KEEP_PER_BUCKET = 6
# A pool's load (replicas, a float) is rounded up to whole replicas within this: a millionth
# of a replica is far inside the capacity search's 1% precision, and above the solver's
# feasibility tolerance (1e-7), so the solver's counts and pool_size's agree.
LOAD_TOLERANCE = 1e-6


@dataclass(frozen=True)
class LengthBucket:
    """Requests of one prompt and output length, and their share of all requests."""

    prompt_tokens: int
    output_tokens: int
    share: float


def given_buckets(buckets: Sequence[LengthBucket]) -> tuple[LengthBucket, ...]:
    """A histogram as given, checked: whole lengths >= 1, shares >= 0 summing to 1 (within
    SHARE_TOLERANCE). Refusals name `length_buckets`."""
    if not buckets:
        raise SizingError(LENGTH_BUCKETS, "give at least one length bucket")
    for index, bucket in enumerate(buckets):
        if bucket.prompt_tokens < 1 or bucket.output_tokens < 1:
            raise SizingError(LENGTH_BUCKETS, f"bucket {index}: prompt_tokens and output_tokens must be >= 1")
        if not math.isfinite(bucket.share) or bucket.share < 0:
            raise SizingError(LENGTH_BUCKETS, f"bucket {index}: share must be a number >= 0, not {bucket.share}")
    total = math.fsum(bucket.share for bucket in buckets)
    if abs(total - 1.0) > SHARE_TOLERANCE:
        raise SizingError(LENGTH_BUCKETS, f"the buckets' shares sum to {total:.9g}, not 1")
    return tuple(buckets)


def derived_buckets(
    prompt_tokens: int, output_tokens: int, prompt_tokens_cv: float, output_tokens_cv: float
) -> tuple[LengthBucket, ...]:
    """Buckets from the mean lengths and their spread: LENGTH_STRATA equal-weight strata of
    each length that varies (gamma, the simulator's: the quantiles at the strata's middles,
    scaled back to the mean as queueing.py's nodes are), crossed as independent. One bucket
    at cv 0; 2 x 2 when both vary."""
    prompts = _strata(prompt_tokens, prompt_tokens_cv)
    outputs = _strata(output_tokens, output_tokens_cv)
    share = 1.0 / (len(prompts) * len(outputs))
    return tuple(LengthBucket(p, o, share) for p, o in itertools.product(prompts, outputs))


def _strata(mean: int, cv: float) -> tuple[int, ...]:
    nodes = length_nodes(mean, cv, LengthDistribution.GAMMA, LENGTH_STRATA) if cv >= FIXED_LENGTH_CV else (float(mean),)
    return tuple(max(1, round(node)) for node in nodes)


def buckets_for(
    plan: PlanInputs, inputs: FleetInputs, given: Sequence[LengthBucket] | None = None
) -> tuple[LengthBucket, ...]:
    """The request's buckets: its histogram, checked, or those derived from its mean lengths
    and the arrivals' length cv (none given: one bucket at the mean)."""
    if given is not None:
        return given_buckets(given)
    arrivals = inputs.arrivals
    prompt_cv = arrivals.prompt_tokens_cv if arrivals is not None else 0.0
    output_cv = arrivals.output_tokens_cv if arrivals is not None else 0.0
    return derived_buckets(plan.prompt_tokens, plan.output_tokens, prompt_cv, output_cv)


def bucket_rates(buckets: Sequence[LengthBucket], inputs: FleetInputs) -> tuple[float, ...]:
    """Each bucket's arrival rate at peak, with the headroom: requests/s."""
    scale = inputs.requests_per_s * inputs.peak_to_average * (1 + inputs.redundancy.headroom)
    return tuple(scale * bucket.share for bucket in buckets)


@dataclass(frozen=True)
class MixKind:
    """One replica kind: a GPU (or MIG profile of one) at a TP size and weight format, priced."""

    gpu_label: str
    mig_profile: str | None
    tensor_parallel: int
    weight_precision: str
    price_per_replica_hour_usd: float
    # MIG: the slices of this profile one card holds (the pool buys whole cards); else None.
    replicas_per_card: int | None
    price_per_card_hour_usd: float  # per whole card

    @property
    def name(self) -> str:
        where = self.gpu_label if self.mig_profile is None else f"{self.gpu_label} {self.mig_profile}"
        return f"{where} TP{self.tensor_parallel} {self.weight_precision}"


@dataclass(frozen=True)
class PoolSize:
    """One kind's pool for a load (replicas' worth of work at peak), by the plain fleet's rule."""

    load: float
    replicas: int  # carrying the peak (per zone x zones with zones)
    replicas_total: int  # with the spares
    cards: int | None  # MIG: whole cards holding the slices
    gpus: int  # whole cards
    hourly_usd: float


def pool_size(kind: MixKind, load: float, redundancy: fleet.Redundancy) -> PoolSize:
    """The pool of `kind` carrying `load` replicas' worth of peak work: whole replicas (at
    least one when there is any load), then fleet.size_fleet's N+1, zones and MIG packing
    (the headroom is already in the load). No load: an empty pool, no spare."""
    if load <= LOAD_TOLERANCE:
        return PoolSize(0.0, 0, 0, 0 if kind.replicas_per_card else None, 0, 0.0)
    working = max(1, math.ceil(load - LOAD_TOLERANCE))
    # In units of replicas: a demand of `working` replicas' tokens, one token/s a replica.
    demand = fleet.Demand(float(working), 1.0, 0, 1)
    spares = fleet.Redundancy(redundancy.spare_replicas, redundancy.zones, 0.0)
    sized = fleet.size_fleet(demand, 1.0, kind.tensor_parallel, spares, kind.replicas_per_card)
    cards = sized.gpus_total if kind.replicas_per_card else None
    return PoolSize(
        load,
        sized.replicas_peak if sized.replicas_per_zone is None else sized.replicas_total,
        sized.replicas_total,
        cards,
        sized.gpus_total,
        sized.gpus_total * kind.price_per_card_hour_usd,
    )


@dataclass(frozen=True)
class RuledOut:
    """A GPU or MIG profile (at a TP size, when one was reached) that is no candidate, and why."""

    gpu_label: str
    mig_profile: str | None
    tensor_parallel: int | None
    reason: str


@dataclass(frozen=True)
class MixProblem:
    """What the integer program is solved over: candidate kinds x buckets.

    `capacity[k][b]` is kind k's per-replica capacity for bucket b in requests/s at the SLO
    percentile, None when it cannot serve b within the SLOs (or at all). For a bucket that no
    kind serves within the SLOs, `best_effort[k][b]` is the rate one replica takes serving one
    request at a time (the SLOs missed), None where not even one sequence fits; None for every
    other bucket. `rates[b]` is bucket b's arrival rate at peak with the headroom."""

    kinds: tuple[MixKind, ...]
    buckets: tuple[LengthBucket, ...]
    capacity: tuple[tuple[float | None, ...], ...]
    rates: tuple[float, ...]
    redundancy: fleet.Redundancy
    hours_per_month: float
    best_effort: tuple[tuple[float | None, ...], ...] = ()
    # How many kinds (GPU x MIG profile x TP x weight format) were looked at before pruning.
    considered: int = 0
    ruled_out: tuple[RuledOut, ...] = ()
    # Percentile evaluations the capacity matrix took (the rest were cheap bounds).
    evaluations: int = 0
    # The replica's plan per kind and bucket (None: refused), for the detail an answer shows.
    plans: tuple[tuple[FleetPlan | None, ...], ...] = field(default=(), compare=False, repr=False)

    @cached_property
    def unserved(self) -> tuple[int, ...]:
        """Buckets with traffic that no kind serves within the SLOs."""
        return tuple(
            b for b, rate in enumerate(self.rates) if rate > 0 and not any(_positive(row[b]) for row in self.capacity)
        )

    def usable(self, k: int, b: int) -> float | None:
        """The capacity the solve uses: at the SLOs, or the best effort for an unserved bucket."""
        capacity = self.capacity[k][b]
        if _positive(capacity):
            return capacity
        if b in self.unserved and self.best_effort:
            effort = self.best_effort[k][b]
            return effort if _positive(effort) else None
        return None

    @cached_property
    def served(self) -> tuple[int, ...]:
        """Buckets with traffic that some kind takes (within the SLOs or as a best effort)."""
        return tuple(
            b
            for b, rate in enumerate(self.rates)
            if rate > 0 and any(self.usable(k, b) is not None for k in range(len(self.kinds)))
        )

    @property
    def dropped(self) -> tuple[int, ...]:
        """Buckets with traffic that no kind can take at all (not one sequence fits)."""
        served = set(self.served)
        return tuple(b for b, rate in enumerate(self.rates) if rate > 0 and b not in served)

    def output_tokens_per_request(self) -> float:
        """Output tokens a request of the traffic brings on average, over the buckets the plan
        serves (a dropped bucket's are not served)."""
        return math.fsum(self.buckets[b].share * self.buckets[b].output_tokens for b in self.served)

    def load(self, k: int, b: int) -> float | None:
        """Replicas of kind k that all of bucket b would keep busy at peak (None: cannot)."""
        capacity = self.usable(k, b)
        return None if capacity is None else self.rates[b] / capacity


def _positive(value: float | None) -> bool:
    return value is not None and value > 0


@dataclass(frozen=True)
class SingleKindPlan:
    """The whole served workload on one kind: one integer replica count, the same N+1 rule."""

    kind_index: int
    kind: MixKind
    pool: PoolSize
    monthly_cost_usd: float


def single_kind(problem: MixProblem, k: int) -> SingleKindPlan | None:
    """Kind k alone serving every served bucket (None: it cannot serve one of them)."""
    loads = [problem.load(k, b) for b in problem.served]
    if not loads or any(load is None for load in loads):
        return None
    pool = pool_size(problem.kinds[k], math.fsum(load for load in loads if load is not None), problem.redundancy)
    return SingleKindPlan(k, problem.kinds[k], pool, _monthly(pool.hourly_usd, problem.hours_per_month))


def best_single_kind(problem: MixProblem) -> SingleKindPlan | None:
    """The cheapest kind serving every served bucket alone (build_problem keeps it among the
    candidates, so this is the catalog's best); None when no kind serves them all."""
    plans = [p for k in range(len(problem.kinds)) if (p := single_kind(problem, k)) is not None]
    return min(plans, key=lambda p: (p.monthly_cost_usd, p.pool.gpus), default=None)


def _monthly(hourly_usd: float, hours_per_month: float) -> float:
    return round(hourly_usd * hours_per_month, 2)


# -- building the problem -------------------------------------------------------------------


@dataclass
class _Shape:
    """A kind being looked at: its replica knobs, and per bucket its plan (at a bound until
    tightened), or why it was refused."""

    label: str
    gpu: GpuSpec
    plan: PlanInputs
    entries: list[FleetPlan | str]
    kind: MixKind | None = None


class _Matrix:
    """The capacity matrix, each entry evaluated only as closely as the pruning needs."""

    def __init__(self, shapes: list[_Shape], inputs: Sequence[FleetInputs]) -> None:
        self.shapes = shapes
        self.inputs = inputs
        self.evaluations = 0

    def exact(self, k: int, b: int) -> bool:
        entry = self.shapes[k].entries[b]
        return isinstance(entry, str) or entry.capacity.exact

    def tighten(self, k: int, b: int) -> None:
        entry = self.shapes[k].entries[b]
        if isinstance(entry, str) or entry.capacity.exact:
            return
        tighter = refine(entry, self.inputs[b])
        self.evaluations += tighter.capacity.exact
        self.shapes[k].entries[b] = tighter

    def settle(self, k: int, b: int) -> None:
        while not self.exact(k, b):
            self.tighten(k, b)

    def rate(self, k: int, b: int) -> float | None:
        """Within the SLOs: the capacity (an upper bound until exact), None if it cannot."""
        entry = self.shapes[k].entries[b]
        if isinstance(entry, str) or not entry.meets_slo:
            return None
        rate = _rate(entry)
        return rate if rate > 0 else None

    def effort(self, k: int, b: int) -> float | None:
        """Missing the SLOs: one replica's rate at one request at a time (exact entries)."""
        entry = self.shapes[k].entries[b]
        if isinstance(entry, str):
            return None
        rate = _rate(entry)
        return rate if rate > 0 else None


def _rate(plan: FleetPlan) -> float:
    capacity = plan.capacity
    if capacity.request_rate_per_s is not None:
        return capacity.request_rate_per_s
    return capacity.tokens_per_s / plan.fit.inputs.output_tokens


def _cheapest(
    matrix: _Matrix,
    candidates: Iterable[int],
    cost: Callable[[int], float],
    needs: Callable[[int], Iterable[int]],
    count: int,
) -> list[int]:
    """The `count` kinds cheapest by `cost`, best first. `cost` reads the matrix's capacities
    and never rises when one rises, so on bounds (capacities no lower than the true ones) it
    is a lower bound: a kind is tightened on the buckets it `needs` until exact, and taken
    once no other kind's lower bound is below its exact cost (best-first branch and bound)."""
    counter = itertools.count()
    heap = [(c, next(counter), k) for k in candidates if math.isfinite(c := cost(k))]
    heapq.heapify(heap)
    found: list[int] = []
    while heap and len(found) < count:
        _, _, k = heapq.heappop(heap)
        loose = [b for b in needs(k) if not matrix.exact(k, b)]
        if not loose:
            found.append(k)
            continue
        for b in loose:
            matrix.tighten(k, b)
        if math.isfinite(c := cost(k)):
            heapq.heappush(heap, (c, next(counter), k))
    return found


def _shapes(
    model: ModelSpec,
    gpus: Sequence[tuple[str, GpuSpec]],
    plan: PlanInputs,
    precisions: Sequence[str | None],
    ruled_out: list[RuledOut],
) -> list[_Shape]:
    """Every GPU and MIG profile x weight format x valid TP that holds the weights (or the
    request's TP), as `rank` enumerates the catalog."""
    shapes: list[_Shape] = []
    for label, gpu in gpus:
        for profile in targets(gpu):
            for precision in precisions or (plan.weight_precision,):
                shape = replace(plan, mig_profile=profile, weight_precision=precision)
                if plan.tensor_parallel is not None:
                    shapes.append(_Shape(label, gpu, shape, []))
                    continue
                try:
                    fitted = plan_fit(model, gpu, shape)
                except SizingError as exc:
                    ruled_out.append(RuledOut(label, profile, None, f"{exc.field}: {exc.message}"))
                    continue
                if not fitted.result.fits_weights:
                    ruled_out.append(RuledOut(label, profile, None, "weights do not fit on any valid TP size"))
                    continue
                # One format per kind: the fit's resolved choice (under "auto", the card's own).
                resolved = replace(shape, weight_precision=fitted.weight_precision)
                shapes.extend(
                    _Shape(label, gpu, replace(resolved, tensor_parallel=tp), [])
                    for tp in fitted.valid_tensor_parallel
                    if tp >= fitted.tensor_parallel
                )
    return shapes


def _bucket_inputs(inputs: FleetInputs, bucket: LengthBucket) -> FleetInputs:
    """The traffic of one bucket: its share of the requests, every one of its lengths."""
    arrivals = inputs.arrivals
    if arrivals is not None:
        arrivals = replace(arrivals, prompt_tokens_cv=0.0, output_tokens_cv=0.0)
    return replace(inputs, requests_per_s=inputs.requests_per_s * bucket.share, arrivals=arrivals)


def _evaluate(model: ModelSpec, shape: _Shape, buckets: Sequence[LengthBucket], inputs: Sequence[FleetInputs]) -> None:
    bound = CapacityBound.SATURATION_RATE if inputs[0].arrivals is not None else None
    for bucket, traffic in zip(buckets, inputs, strict=True):
        knobs = replace(shape.plan, prompt_tokens=bucket.prompt_tokens, output_tokens=bucket.output_tokens)
        try:
            shape.entries.append(plan_fleet(model, shape.gpu, shape.label, knobs, traffic, bound=bound))
        except SizingError as exc:
            shape.entries.append(f"{exc.field}: {exc.message}")
    sized = next((e for e in shape.entries if not isinstance(e, str)), None)
    if sized is None or sized.price_per_replica_hour_usd is None or sized.price_per_gpu_hour_usd is None:
        return
    fitted = sized.fit
    shape.kind = MixKind(
        gpu_label=shape.label,
        mig_profile=shape.plan.mig_profile,
        tensor_parallel=fitted.tensor_parallel,
        weight_precision=fitted.weight_precision,
        price_per_replica_hour_usd=sized.price_per_replica_hour_usd,
        replicas_per_card=sized.replicas_per_card,
        price_per_card_hour_usd=sized.price_per_gpu_hour_usd,
    )


def build_problem(
    model: ModelSpec,
    gpus: Sequence[tuple[str, GpuSpec]],
    plan: PlanInputs,
    inputs: FleetInputs,
    buckets: Sequence[LengthBucket] | None = None,
    *,
    precisions: Sequence[str | None] = (),
    keep: int = KEEP_PER_BUCKET,
) -> MixProblem:
    """The candidate kinds and their capacity matrix over `gpus` (catalog (label, spec)
    pairs) for the request's buckets (None: derived from its lengths' spread, buckets_for).

    Pruning. Every kind's capacity for every bucket starts on its cheapest bound (the
    saturation rate, no percentile evaluation) and is tightened (mean latencies, then the
    SLO percentile) only as far as three best-first searches need, which pick, exactly:
    per bucket the `keep` kinds cheapest per request/s of it (price per replica-hour over
    capacity) and the kind cheapest serving that bucket alone (whole replicas and spares);
    and the kind cheapest serving every bucket alone (the single-kind comparison). Only
    those are candidates, their capacities all made exact.

    What it can lose: the solve over the candidates prices every bucket at least as cheaply
    per request/s as any pruned kind could, so a pruned kind can only win on whole-replica
    rounding or its spare: moving a pruned kind's load in bucket b onto b's cheapest kept
    kind costs no more per request/s, plus at most one rounded-up replica and one spare of
    that kind, while the pruned pool's own spare is saved. So the loss is under (1 +
    spare_replicas) replicas of a kept kind per bucket, and it arises only where a bucket is
    a few replicas' worth, where the kind cheapest for the bucket alone (kept) is the
    usual winner anyway. Including the best single kind makes the mix never costlier than it.

    The plain fleet's inputs are taken per bucket (requests/s x share, lengths cv 0); a
    measured per-replica throughput is for one workload, not for each bucket, and is refused.
    """
    if not gpus:
        raise SizingError("gpus", "give at least one GPU (or MIG profile) to mix")
    if inputs.per_replica_tokens_per_s is not None:
        raise SizingError(
            "per_replica_tokens_per_s",
            "a measured replica throughput is for one workload: a mix needs each kind's capacity per length bucket",
        )
    chosen = buckets_for(plan, inputs, buckets)
    rates = bucket_rates(chosen, inputs)
    traffic = [_bucket_inputs(inputs, bucket) for bucket in chosen]
    ruled_out: list[RuledOut] = []
    shapes = _shapes(model, gpus, plan, precisions, ruled_out)
    for shape in shapes:
        budget.check("the mix")
        _evaluate(model, shape, chosen, traffic)
    priced: list[_Shape] = []
    for shape in shapes:
        if shape.kind is not None:
            priced.append(shape)
            continue
        refused = next((e for e in shape.entries if isinstance(e, str)), "no hourly price")
        if any(not isinstance(e, str) for e in shape.entries):
            refused = "no hourly price: pass price_per_gpu_hour_usd for costs"
        ruled_out.append(RuledOut(shape.label, shape.plan.mig_profile, shape.plan.tensor_parallel, refused))
    matrix = _Matrix(priced, traffic)
    kinds = [shape.kind for shape in priced if shape.kind is not None]
    everyone = range(len(kinds))
    busy = [b for b, rate in enumerate(rates) if rate > 0]
    picked: set[int] = set()
    unserved: set[int] = set()
    for b in busy:
        budget.check("the mix")
        per_rate = _per_rate(kinds, matrix.rate, b)
        found = _cheapest(matrix, everyone, per_rate, _only(b), keep)
        if not found:
            # Nobody serves b within the SLOs: settle every entry and rank the best efforts.
            unserved.add(b)
            for k in everyone:
                matrix.settle(k, b)
            found = _cheapest(matrix, everyone, _per_rate(kinds, matrix.effort, b), _only(b), keep)
        picked.update(found)

    def usable(k: int, b: int) -> float | None:
        return matrix.effort(k, b) if b in unserved else matrix.rate(k, b)

    served = [b for b in busy if any(usable(k, b) is not None for k in everyone)]

    def alone(bucket_list: Sequence[int]) -> Callable[[int], float]:
        def cost(k: int) -> float:
            capacities = [usable(k, b) for b in bucket_list]
            if any(c is None for c in capacities):
                return math.inf
            load = math.fsum(rates[b] / c for b, c in zip(bucket_list, capacities, strict=True) if c is not None)
            return pool_size(kinds[k], load, inputs.redundancy).hourly_usd

        return cost

    for b in served:
        picked.update(_cheapest(matrix, everyone, alone([b]), _only(b), 1))
    if served:
        picked.update(_cheapest(matrix, everyone, alone(served), lambda _k: served, 1))

    order = sorted(picked)
    for k in order:
        for b in range(len(chosen)):
            matrix.settle(k, b)
    return MixProblem(
        kinds=tuple(kinds[k] for k in order),
        buckets=chosen,
        capacity=tuple(tuple(matrix.rate(k, b) for b in range(len(chosen))) for k in order),
        rates=rates,
        redundancy=inputs.redundancy,
        hours_per_month=inputs.hours_per_month,
        best_effort=tuple(
            tuple(matrix.effort(k, b) if b in unserved else None for b in range(len(chosen))) for k in order
        ),
        considered=len(shapes),
        ruled_out=tuple(ruled_out),
        evaluations=matrix.evaluations,
        plans=tuple(tuple(_plan_of(priced[k].entries[b]) for b in range(len(chosen))) for k in order),
    )


def _per_rate(kinds: Sequence[MixKind], capacity: Callable[[int, int], float | None], b: int) -> Callable[[int], float]:
    def cost(k: int) -> float:
        rate = capacity(k, b)
        return math.inf if rate is None else kinds[k].price_per_replica_hour_usd / rate

    return cost


def _only(b: int) -> Callable[[int], tuple[int, ...]]:
    """A search that needs one bucket's capacity of every kind."""
    return lambda _k: (b,)


def _plan_of(entry: FleetPlan | str) -> FleetPlan | None:
    return None if isinstance(entry, str) else entry

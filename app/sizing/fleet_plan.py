"""A traffic forecast to a priced fleet: one configuration, or every catalog option ranked."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from . import budget, fleet, memory, speculation
from . import cost as cost_mod
from .errors import SizingError
from .parallelism import valid_tensor_parallel
from .plan import FitPlan, PlanInputs, TimingSetup, plan_fit, prepare_timing
from .precision import AUTO, UnknownPrecision, choose_weight_precision, normalise
from .queueing import (
    LatencyEstimate,
    MeanCore,
    ReplicaModel,
)
from .simulate import Limits, SimulationResult, Traffic, simulate
from .specs import GpuSpec, ModelSpec
from .timing import StepModel
from .vocabulary import Binding, CapacityBound, CostedTokens, Role

MAX_FORECAST_PERIODS = 120


@dataclass(frozen=True)
class Arrivals:
    """How requests arrive at a replica beyond their mean rate, and the percentile the SLOs
    hold at: gamma inter-arrival times of shape `burstiness` (1 is
    Poisson), lengths with coefficients of variation."""

    burstiness: float = 1.0
    prompt_tokens_cv: float = 0.0
    output_tokens_cv: float = 0.0
    slo_percentile: float = 95.0
    e2e_slo_ms: float | None = None
    # The simulator draws (prompt, output) pairs from these instead (mode=simulate).
    length_samples: tuple[tuple[int, int], ...] = ()


# What a replica serves: whole requests, or under a disaggregated topology their prompts
# (the first token) or their decodes (the rest), each on a pool of its own.


@dataclass(frozen=True)
class FleetInputs:
    """Traffic, SLOs, redundancy and money; the replica's own knobs are in PlanInputs."""

    requests_per_s: float
    peak_to_average: float = 1.0
    ttft_slo_ms: float | None = None
    tpot_slo_ms: float | None = None
    per_replica_tokens_per_s: float | None = None
    redundancy: fleet.Redundancy = field(default_factory=fleet.Redundancy)
    hours_per_month: float = cost_mod.HOURS_PER_MONTH
    load_gb_per_s: float = 2.0
    engine_startup_s: float = 60.0
    # None: a replica is sized at the largest steady concurrency meeting the mean SLOs.
    arrivals: Arrivals | None = None
    role: Role = Role.AGGREGATED


@dataclass(frozen=True)
class Period:
    period: str
    requests_per_day: float
    peak_to_average: float | None = None


@dataclass(frozen=True)
class TokenCost:
    """What 10^6 tokens cost: the fleet's (its monthly cost over the tokens its average traffic
    brings in the month) and one fully loaded replica's (its price over its capacity), in
    `tokens`. None without a price or a token served."""

    tokens: CostedTokens
    fleet_usd: float | None
    replica_usd: float | None


def token_cost(
    demand: fleet.Demand,
    capacity: fleet.ReplicaCapacity,
    role: Role,
    monthly_cost_usd: float | None,
    price_per_replica_hour_usd: float | None,
    hours_per_month: float,
) -> TokenCost:
    if role == Role.PREFILL:
        # The capacity counts the one token a request leaves with; it stands for a whole prompt.
        tokens, average = CostedTokens.PROMPT, demand.average_input_tokens_per_s
        replica_tokens_per_s = capacity.tokens_per_s * demand.prompt_tokens / max(1, demand.output_tokens)
    else:
        tokens, average, replica_tokens_per_s = CostedTokens.OUTPUT, demand.average_tokens_per_s, capacity.tokens_per_s
    fleet_usd = (
        None
        if monthly_cost_usd is None
        else cost_mod.monthly_cost_per_million_tokens_usd(monthly_cost_usd, average, hours_per_month)
    )
    replica_usd = (
        None
        if price_per_replica_hour_usd is None
        else cost_mod.cost_per_million_tokens_usd(price_per_replica_hour_usd, 1, replica_tokens_per_s)
    )
    return TokenCost(tokens, fleet_usd, replica_usd)


@dataclass(frozen=True)
class FleetPlan:
    gpu_label: str
    fit: FitPlan
    setup: TimingSetup
    capacity: fleet.ReplicaCapacity
    demand: fleet.Demand
    size: fleet.FleetSize
    replicas_per_card: int | None
    price_per_gpu_hour_usd: float | None  # per whole card
    price_per_replica_hour_usd: float | None
    monthly_cost_usd: float | None
    token_cost: TokenCost
    cold_start_s: float
    host_cpu_cores: float | None
    warnings: list[str]
    # Under random arrivals: the replica's queueing model, for the predicted percentiles.
    queueing: ReplicaModel | None = None

    @property
    def meets_slo(self) -> bool:
        return self.capacity.meets_slo


def _capacity(
    fitted: FitPlan,
    setup: TimingSetup,
    inputs: FleetInputs,
    *,
    bound: CapacityBound | None = None,
    built: ReplicaModel | None = None,
) -> tuple[fleet.ReplicaCapacity, ReplicaModel | None]:
    """The replica's capacity: measured, steady-state, or under random arrivals (at the SLO
    percentile; or with `bound`, the bound a ranking orders by: see _under_arrivals). `built`
    is the replica's queueing model when an earlier look at the same plan built it."""
    plan = fitted.inputs
    assert plan.max_batched_tokens is not None
    # An engine admits at most max_num_seqs sequences, whatever the KV cache holds.
    ceiling = fitted.result.max_concurrency
    if plan.max_num_seqs is not None:
        ceiling = min(ceiling, plan.max_num_seqs)
    tpot_slo_s = None if inputs.tpot_slo_ms is None else inputs.tpot_slo_ms / 1e3
    ttft_slo_s = None if inputs.ttft_slo_ms is None else inputs.ttft_slo_ms / 1e3

    def steady(batch_ceiling: int) -> fleet.ReplicaCapacity:
        derived = fleet.replica_capacity(
            setup.work,
            setup.hardware,
            batch_ceiling,
            plan.max_batched_tokens or 0,
            tpot_slo_s,
            ttft_slo_s,
            None if inputs.role == Role.PREFILL else plan.speculative,
        )
        if derived is None:
            raise SizingError(
                "prompt_tokens",
                f"not one sequence of {plan.prompt_tokens + plan.output_tokens} tokens fits in the KV cache "
                f"of {fitted.tensor_parallel} x {fitted.target.gpu.name}",
            )
        return derived

    if inputs.arrivals is not None and inputs.per_replica_tokens_per_s is None:
        if min(ceiling, plan.max_batched_tokens - 1) < 1:
            steady(ceiling)  # refuses, naming why
        # The steady state is only the best effort at one sequence, when no rate meets the SLOs.
        return _under_arrivals(fitted, setup, inputs, inputs.arrivals, ceiling, lambda: steady(1), bound, built)
    derived = steady(ceiling)
    if derived.bound_by == Binding.KV_CAPACITY and ceiling < fitted.result.max_concurrency:
        # The engine's max_num_seqs, not the KV cache, capped the batch.
        derived = replace(derived, bound_by=Binding.MAX_NUM_SEQS)
    if inputs.per_replica_tokens_per_s is not None:
        # A load-test number is the honest one: it wins, and the SLO is taken as met by it.
        measured = replace(derived, tokens_per_s=inputs.per_replica_tokens_per_s, bound_by=Binding.MEASURED)
        return replace(measured, meets_slo=True), None
    return derived, None


# The capacity search's precision: 1% of the rate is well inside the model's own error.
RATE_TOLERANCE = 0.01


def _under_arrivals(
    fitted: FitPlan,
    setup: TimingSetup,
    inputs: FleetInputs,
    arrivals: Arrivals,
    ceiling: int,
    best_effort: Callable[[], fleet.ReplicaCapacity],
    bound: CapacityBound | None,
    built: ReplicaModel | None = None,
) -> tuple[fleet.ReplicaCapacity, ReplicaModel]:
    """The highest arrival rate whose SLO percentiles hold (queueing.py), as the replica's
    capacity. When no rate does, the steady state at concurrency 1 is the best effort.

    With a `bound`, a rate no lower than that, much cheaper, which bounds the fleet's cost
    from below: what lets a ranking size at the percentile only the options that could still
    win. CapacityBound.MEAN_LATENCIES: the highest rate whose *means* meet the SLOs, from the queueing model's
    mean core (microseconds an evaluation, against a millisecond with percentiles; a mean is
    below the SLO percentiles). CapacityBound.SATURATION_RATE: the saturation rate itself (no evaluation;
    no rate above it is stable), which says nothing of the SLOs."""
    plan = fitted.inputs
    # The seats are the KV cache's when it holds fewer sequences of the full length than the
    # engine's cap: the queueing model names a seat-bound capacity after them.
    cap = plan.max_num_seqs
    from_kv = ceiling == fitted.result.max_concurrency and (cap is None or ceiling < cap)
    model = built or arrival_model(
        fitted, setup, arrivals, ceiling, inputs.role, Binding.KV_CAPACITY if from_kv else Binding.MAX_NUM_SEQS
    )
    slos = slos_s(inputs.ttft_slo_ms, inputs.tpot_slo_ms, arrivals.e2e_slo_ms)
    if bound == CapacityBound.SATURATION_RATE:
        saturation = model.saturation_rate_per_s
        return (
            fleet.ReplicaCapacity(
                concurrency=ceiling,
                tokens_per_s=saturation * plan.output_tokens,
                time_per_token_s=None,
                ttft_s=None,
                bound_by=model.saturation_bound,
                meets_slo=True,
                request_rate_per_s=saturation,
                max_num_seqs=ceiling,
                bound=bound,
            ),
            model,
        )
    if bound is None:
        found = model.max_request_rate(*slos, arrivals.slo_percentile, relative_tolerance=RATE_TOLERANCE)
        rate, bound_by, estimate = found.rate_per_s, found.bound_by, found.estimate
        meets = found.meets_slo and estimate is not None and rate > 0
        times, queued = None, 0.0
        if meets and estimate is not None:
            pct = arrivals.slo_percentile
            times = (estimate.tpot_s.at(pct), estimate.ttft_s.at(pct), estimate.in_flight_mean)
            queued = rate * estimate.queue_wait_s.mean  # Little's law on the prefill queue
    else:
        core, rate, bound_by = _mean_bound_rate(model, slos)
        # The times shown are the last rate that passed; the capacity is the bound above it.
        meets = core is not None
        times = (core.tpot_s, core.ttft_s, core.rate_per_s * core.e2e_s) if core is not None else None
        queued = core.rate_per_s * core.queue_wait_s if core is not None else 0.0
    if not meets or times is None:
        return replace(best_effort(), concurrency=1, meets_slo=False, bound_by=bound_by, max_num_seqs=ceiling), model
    tpot_s, ttft_s, in_flight = times
    capacity = fleet.ReplicaCapacity(
        concurrency=max(1, math.ceil(in_flight)),
        tokens_per_s=rate * plan.output_tokens,
        time_per_token_s=tpot_s,
        ttft_s=ttft_s,
        bound_by=bound_by,
        meets_slo=True,
        request_rate_per_s=rate,
        max_num_seqs=ceiling,
        bound=bound,
        queue_length=queued,
    )
    return capacity, model


def arrival_model(
    fitted: FitPlan,
    setup: TimingSetup,
    arrivals: Arrivals,
    seats: int,
    role: Role = Role.AGGREGATED,
    seat_cap: Binding = Binding.MAX_NUM_SEQS,
) -> ReplicaModel:
    """One replica under the request's arrivals (queueing.py): its step-time model, its
    lengths and their spread, and what the engine holds (the step token budget, `seats`
    running sequences, the fit's KV tokens). /v1/fleet and /v1/latency build it alike.

    A Role.PREFILL replica of a disaggregated deployment is the same model with one output token
    (the fit's PlanInputs say so): each request leaves once its first token is computed. A
    Role.DECODE replica computes no prompt: its steps cost nothing for them (the KV arrives over
    a link) and its step budget does not bind (no step carries more prompt tokens than the
    KV cache holds). `seat_cap` names what `seats` stands for (ReplicaModel.build)."""
    plan = fitted.inputs
    assert plan.max_batched_tokens is not None  # resolve_defaults sets it for every engine
    traffic = Traffic(
        1.0,
        plan.prompt_tokens,
        plan.output_tokens,
        arrivals.prompt_tokens_cv,
        0.0 if role == Role.PREFILL else arrivals.output_tokens_cv,
        arrivals.burstiness,
        prefix_cache_hit_rate=plan.prefix_cache_hit_rate,
        shared_prefix_tokens=fitted.result.shared_prefix_tokens,
        # A prefill replica's requests leave with their first token.
        length_samples=tuple((p, 1) for p, _ in arrivals.length_samples)
        if role == Role.PREFILL
        else arrivals.length_samples,
    )
    kv_tokens = fitted.result.kv_capacity_tokens
    steps = StepModel.build(setup.work, setup.hardware)
    # Speculation runs where tokens are decoded: not on a prefill replica.
    if plan.speculative is not None and role != Role.PREFILL:
        steps = speculation.step_model(plan.speculative, setup.work, setup.hardware, steps)
    budget = plan.max_batched_tokens
    if role == Role.DECODE:
        steps, budget = steps.decode_only(), budget + max(0, math.ceil(kv_tokens))
    return ReplicaModel.build(steps, traffic, Limits(budget, seats, kv_tokens), seat_cap)


def slos_s(
    ttft_ms: float | None, tpot_ms: float | None, e2e_ms: float | None
) -> tuple[float | None, float | None, float | None]:
    """TTFT, TPOT and E2E objectives in seconds (None: not asked)."""
    return tuple(None if ms is None else ms / 1e3 for ms in (ttft_ms, tpot_ms, e2e_ms))  # type: ignore[return-value]


# Halvings of (0, saturation) the mean-based bound takes: within 1/128 of the saturation rate.
MEAN_BISECTIONS = 7


def _mean_bound_rate(
    model: ReplicaModel, slos: tuple[float | None, float | None, float | None]
) -> tuple[MeanCore | None, float, Binding]:
    """The bisection's ends around the highest rate whose mean TTFT, TPOT and E2E meet the
    objectives: the mean core of a rate that passes (None when even a trickle misses them),
    a rate no lower than that highest (the bound, never an underestimate; 0 with no pass),
    and what stops a higher one."""
    ttft, tpot, e2e = slos

    def missed(core: MeanCore) -> Binding | None:
        if not core.stable:
            return Binding.SATURATION
        for slo, value, name in (
            (ttft, core.ttft_s, Binding.TTFT_SLO),
            (tpot, core.tpot_s, Binding.TPOT_SLO),
            (e2e, core.e2e_s, Binding.E2E_SLO),
        ):
            if slo is not None and value > slo:
                return name
        return None

    lo, hi, reason = 0.0, model.saturation_rate_per_s, model.saturation_bound
    passing = None
    for _ in range(MEAN_BISECTIONS):
        mid = (lo + hi) / 2
        core = model.mean_core(mid)
        if (why := missed(core)) is None:
            lo, passing = mid, core
        else:
            hi, reason = mid, why
    if passing is None:  # not even 1/128 of saturation: try a trickle
        trickle = model.mean_core(hi * 1e-6)
        if (why := missed(trickle)) is not None:
            return None, 0.0, why
        passing = trickle
    return passing, hi, reason


# Each bound's next, tighter one: the saturation rate, the mean latencies, the percentile.
TIGHTER = {CapacityBound.SATURATION_RATE: CapacityBound.MEAN_LATENCIES, CapacityBound.MEAN_LATENCIES: None}
# The mean latencies bound the capacity at a tail percentile (the p90 and above of a
# right-skewed TTFT or TPOT lie above its mean), not at the median.
MEAN_BOUND_MIN_PERCENTILE = 90.0
# How far each bound is from the percentile's sizing: a ranking's tie-break.
BOUND_LOOSENESS = {CapacityBound.MEAN_LATENCIES: 0, CapacityBound.SATURATION_RATE: 1, CapacityBound.MINIMUM_FLEET: 2}


def refine(plan: FleetPlan, inputs: FleetInputs) -> FleetPlan:
    """A plan sized on a bound, sized again on the next tighter one (at last, the SLO
    percentile)."""
    if plan.capacity.exact:
        return plan
    assert plan.capacity.bound is not None
    tighter = TIGHTER[plan.capacity.bound]
    percentile = inputs.arrivals.slo_percentile if inputs.arrivals is not None else None
    if tighter == CapacityBound.MEAN_LATENCIES and (percentile is None or percentile < MEAN_BOUND_MIN_PERCENTILE):
        # A median sits below the mean of a right-skewed latency: the means are no bound on it.
        tighter = None
    # The same replica under the same arrivals: the model its looser bound was read from.
    capacity, queueing = _capacity(plan.fit, plan.setup, inputs, bound=tighter, built=plan.queueing)
    return replace(size(plan.fit, plan.setup, capacity, plan.demand, inputs, plan.gpu_label), queueing=queueing)


# Above this utilization at the planned peak, queueing models are optimistic (bursts).
OPTIMISTIC_UTILIZATION = 0.8


@dataclass(frozen=True)
class PlannedLoad:
    """How loaded a replica of the plan runs (arrival rate over its saturation rate), and its
    predicted latency at the planned peak."""

    peak_rate_per_s: float  # arriving at one replica at peak
    utilization_peak: float
    utilization_average: float
    predicted: LatencyEstimate

    @property
    def optimistic(self) -> bool:
        return self.utilization_peak > OPTIMISTIC_UTILIZATION


def planned_load(plan: FleetPlan) -> PlannedLoad | None:
    """The per-replica load at peak (over the peak's replicas) and at average (over the
    average's, as an autoscaler runs it); None without a queueing model."""
    model = plan.queueing
    if model is None:
        return None
    demand = plan.demand
    peak = _peak_rate_per_replica(plan)
    average = demand.requests_per_s / max(1, plan.size.replicas_average)
    saturation = model.saturation_rate_per_s
    return PlannedLoad(peak, peak / saturation, average / saturation, model.latency(peak))


def _peak_rate_per_replica(plan: FleetPlan) -> float:
    demand = plan.demand
    return demand.requests_per_s * demand.peak_to_average / max(1, plan.size.replicas_peak)


def simulated_at_peak(plan: FleetPlan, *, seed: int, requests: int) -> SimulationResult | None:
    """The planned peak load of one replica, simulated (mode=simulate): the precise mode's
    check of the analytic capacity. None without a queueing model (a measured capacity)."""
    model = plan.queueing
    if model is None:
        return None
    traffic = replace(model.traffic, rate_per_s=_peak_rate_per_replica(plan))
    return simulate(model.steps, traffic, model.limits, seed=seed, requests=requests)


def size(
    fitted: FitPlan,
    setup: TimingSetup,
    capacity: fleet.ReplicaCapacity,
    demand: fleet.Demand,
    inputs: FleetInputs,
    gpu_label: str,
) -> FleetPlan:
    profile = fitted.target.mig_profile
    replicas_per_card = profile.max_instances if profile else None
    gpus_per_replica = fitted.tensor_parallel
    sized = fleet.size_fleet(demand, capacity.tokens_per_s, gpus_per_replica, inputs.redundancy, replicas_per_card)
    # The setup's price is per GPU of the replica: a whole card, or one slice of one.
    card_price = setup.price_per_gpu_hour_usd
    if profile is not None and card_price is not None:
        card_price *= profile.max_instances
    warnings = list(fitted.warnings)
    replica_price = None
    if card_price is not None:
        replica_price = card_price / replicas_per_card if replicas_per_card else card_price * gpus_per_replica
    # Money in cents: a bill is not more precise than that.
    monthly = None if card_price is None else round(sized.gpus_total * card_price * inputs.hours_per_month, 2)
    if card_price is None:
        warnings.append("no hourly price for this GPU: pass price_per_gpu_hour_usd for costs")
    cores = fitted.target.gpu.host_cpu_cores
    return FleetPlan(
        gpu_label=gpu_label,
        fit=fitted,
        setup=setup,
        capacity=capacity,
        demand=demand,
        size=sized,
        replicas_per_card=replicas_per_card,
        price_per_gpu_hour_usd=card_price,
        price_per_replica_hour_usd=replica_price,
        monthly_cost_usd=monthly,
        token_cost=token_cost(demand, capacity, inputs.role, monthly, replica_price, inputs.hours_per_month),
        cold_start_s=fleet.cold_start_s(fitted.result.weights_bytes, inputs.load_gb_per_s, inputs.engine_startup_s),
        host_cpu_cores=None if cores is None else cores * gpus_per_replica * sized.replicas_total,
        warnings=warnings,
    )


def _card_priced_inputs(plan: PlanInputs, gpu: GpuSpec) -> PlanInputs:
    """A request's price is per whole card; the timing setup of a slice wants the slice's."""
    if plan.price_per_gpu_hour_usd is None or plan.mig_profile is None:
        return plan
    for profile in gpu.mig_profiles:
        if profile.name == plan.mig_profile:
            return replace(plan, price_per_gpu_hour_usd=plan.price_per_gpu_hour_usd / profile.max_instances)
    return plan


def plan_fleet(
    model: ModelSpec,
    gpu: GpuSpec,
    gpu_label: str,
    plan: PlanInputs,
    inputs: FleetInputs,
    *,
    bound: CapacityBound | None = None,
) -> FleetPlan:
    """Size a fleet on one GPU (or MIG profile) for the request's traffic (`bound`: see
    _under_arrivals)."""
    plan = _card_priced_inputs(plan, gpu)
    fitted = plan_fit(model, gpu, plan)
    if not fitted.result.fits_weights:
        raise SizingError(
            "tensor_parallel",
            f"{model.name} does not fit on {fitted.tensor_parallel} x {fitted.target.gpu.name} "
            f"(valid sizes {fitted.valid_tensor_parallel})",
        )
    setup = prepare_timing(fitted)
    capacity, queueing = _capacity(fitted, setup, inputs, bound=bound)
    demand = fleet.Demand(inputs.requests_per_s, inputs.peak_to_average, plan.prompt_tokens, plan.output_tokens)
    return replace(size(fitted, setup, capacity, demand, inputs, gpu_label), queueing=queueing)


def forecast(base: FleetPlan, periods: Sequence[Period], inputs: FleetInputs) -> list[tuple[Period, FleetPlan]]:
    """The same replica under each period's traffic: one sized fleet per period."""
    rows = []
    for period in periods:
        budget.check("the forecast")
        demand = fleet.Demand.per_day(
            period.requests_per_day,
            period.peak_to_average if period.peak_to_average is not None else inputs.peak_to_average,
            base.demand.prompt_tokens,
            base.demand.output_tokens,
        )
        sized = size(base.fit, base.setup, base.capacity, demand, inputs, base.gpu_label)
        rows.append((period, replace(sized, queueing=base.queueing)))
    return rows


@dataclass(frozen=True)
class Floor:
    """A pending option's lower bound: the minimum fleet (fleet.minimum_fleet) at its GPUs per
    replica and card price, known before the option is fitted or timed."""

    size: fleet.FleetSize
    price_per_gpu_hour_usd: float  # per whole card
    monthly_cost_usd: float


@dataclass(frozen=True)
class Option:
    """One ranked configuration, or one ruled out and why, or one still pending on its floor
    (a ranking never needed to evaluate it: its floor already costs more than the best)."""

    gpu: str
    mig_profile: str | None
    tensor_parallel: int | None
    weight_precision: str | None
    plan: FleetPlan | None
    ruled_out: str | None = None
    why: str = ""
    floor: Floor | None = None
    # A pending option's evaluation: the options it stands for (one per valid TP size, or
    # itself sized on its saturation bound). None once evaluated.
    expand: Callable[[], list[Option]] | None = field(default=None, compare=False, repr=False)
    # Planned with speculative decoding (under `speculative.auto`, each shape is two options).
    speculative: bool = False

    @property
    def eligible(self) -> bool:
        """Sized, or pending, and not ruled out (a pending option may yet be, if evaluated)."""
        return self.ruled_out is None and (self.plan is not None or self.floor is not None)

    @property
    def monthly_cost_usd(self) -> float | None:
        if self.plan is not None:
            return self.plan.monthly_cost_usd
        return None if self.floor is None else self.floor.monthly_cost_usd

    @property
    def bound(self) -> CapacityBound | None:
        """What the option's cost is a lower bound from (None: sized at the SLO percentile)."""
        if self.plan is not None:
            return self.plan.capacity.bound
        return CapacityBound.MINIMUM_FLEET if self.floor is not None else None


def targets(gpu: GpuSpec) -> Iterable[str | None]:
    """What a replica can run on of this GPU: the whole card (None), then each MIG profile."""
    yield None
    for profile in gpu.mig_profiles:
        yield profile.name


def rank(
    model: ModelSpec,
    gpus: Sequence[tuple[str, GpuSpec]],
    plan: PlanInputs,
    inputs: FleetInputs,
    precisions: Sequence[str | None] = (),
) -> list[Option]:
    """Every GPU and MIG profile x valid TP that holds the weights, at the requested
    precision (or each card's own under "auto", or each of `precisions`), ranked by monthly
    cost among those that meet the SLOs; the rest follow with the reason they were ruled out."""
    options: list[Option] = []
    for label, gpu in gpus:
        for profile in targets(gpu):
            for precision in precisions or (plan.weight_precision,):
                for choice in speculation_choices(plan):
                    budget.check("the ranking")
                    shape = replace(choice, mig_profile=profile, tensor_parallel=None, weight_precision=precision)
                    options.extend(_pending_card(model, gpu, label, shape, inputs))
    return _settle(options, inputs)


def shapes(
    model: ModelSpec,
    gpu: GpuSpec,
    label: str,
    plan: PlanInputs,
    inputs: FleetInputs,
    precisions: Sequence[str | None] = (),
) -> list[Option]:
    """On one GPU (or the request's MIG profile of it): every valid TP that holds the weights
    (or the request's TP), at each of `precisions` (else the request's), ranked as `rank`
    ranks the catalog. The smallest TP that holds the weights is rarely the cheapest fleet: a
    larger one leaves room for KV and batches more per GPU."""
    options: list[Option] = []
    for precision in precisions or (plan.weight_precision,):
        for choice in speculation_choices(plan):
            budget.check("the ranking")
            options.extend(_shapes_on(model, gpu, label, replace(choice, weight_precision=precision), inputs))
    return _settle(options, inputs)


def resumed(options: Sequence[Option], inputs: FleetInputs, keep: Callable[[Option], bool]) -> list[Option]:
    """The ranking of the options `keep` holds, resumed from where a ranking left them rather
    than started again: each option's bound or size is already at least as tight as a fresh
    ranking's would be, so the branch and bound finds the same cheapest option meeting the SLOs,
    and evaluates only what the first ranking had no need to."""
    return _settle([o for o in options if keep(o)], inputs)


def _floor(gpu: GpuSpec, plan: PlanInputs, inputs: FleetInputs, gpus_per_replica: int) -> Floor | None:
    """The shape's minimum fleet and its cost (None without a price: nothing to bound)."""
    card_price = plan.price_per_gpu_hour_usd if plan.price_per_gpu_hour_usd is not None else gpu.hourly_price_usd
    if card_price is None:
        return None
    profile = next((p for p in gpu.mig_profiles if p.name == plan.mig_profile), None)
    per_card = profile.max_instances if profile is not None else None
    demand = fleet.Demand(inputs.requests_per_s, inputs.peak_to_average, plan.prompt_tokens, plan.output_tokens)
    sized = fleet.minimum_fleet(demand, gpus_per_replica, inputs.redundancy, per_card)
    return Floor(sized, card_price, round(sized.gpus_total * card_price * inputs.hours_per_month, 2))


def _pending(
    gpu: GpuSpec,
    label: str,
    plan: PlanInputs,
    inputs: FleetInputs,
    gpus_per_replica: int,
    expand: Callable[[], list[Option]],
) -> list[Option]:
    """An option left on its floor for the ranking to evaluate when it must; evaluated now
    when it has no price (no floor to order it by)."""
    floor = _floor(gpu, plan, inputs, gpus_per_replica)
    if floor is None:
        return expand()
    return [
        Option(
            label,
            plan.mig_profile,
            plan.tensor_parallel,
            _shown(plan.weight_precision),
            None,
            floor=floor,
            expand=expand,
            speculative=_on(plan),
        )
    ]


def _on(plan: PlanInputs) -> bool:
    return plan.speculative is not None


def speculation_choices(plan: PlanInputs) -> tuple[PlanInputs, ...]:
    """The plan, or under `speculative.auto` the plan with speculation and without: a fleet
    search sizes both and keeps the cheaper (speculation pays at a small batch, loses where
    the verification's k + 1 tokens a sequence turn the step compute-bound)."""
    spec = plan.speculative
    if spec is None or not spec.auto:
        return (plan,)
    return plan, replace(plan, speculative=None)


def _shown(precision: str | None) -> str | None:
    """A pending option's weight format as its row shows it: the one asked, normalised (None
    for the checkpoint's own or `auto`, which only the fit resolves)."""
    if precision is None or precision.strip().lower() == AUTO:
        return None
    try:
        return normalise(precision)
    except UnknownPrecision:
        return None


def _pending_card(model: ModelSpec, gpu: GpuSpec, label: str, plan: PlanInputs, inputs: FleetInputs) -> list[Option]:
    """A GPU (or MIG profile) at one precision, not yet fitted: its floor is one GPU a replica
    (TP 1 is always a valid size, and a slice is one GPU). A target whose whole memory, at its
    largest TP size, is well short of the weights is ruled out without a fit."""
    if (precision := _too_small_for(model, gpu, plan)) is not None:
        return [Option(label, plan.mig_profile, None, precision, None, WEIGHTS_DO_NOT_FIT, speculative=_on(plan))]
    return _pending(gpu, label, plan, inputs, 1, lambda: _shapes_on(model, gpu, label, plan, inputs))


WEIGHTS_DO_NOT_FIT = "weights do not fit on any valid TP size"
# The weights a fit counts (components, scales) may differ a little from params x bytes: the
# shortcut rules out only targets short of them by more than this.
WEIGHTS_SLACK = 0.8


def _too_small_for(model: ModelSpec, gpu: GpuSpec, plan: PlanInputs) -> str | None:
    """The weight format, when the weights in it exceed the target's whole memory (a MIG
    slice's own, or the card's times its largest valid TP size) by a wide margin; else None,
    and the fit decides (it also says why when it refuses for any other reason)."""
    profile = next((p for p in gpu.mig_profiles if p.name == plan.mig_profile), None)
    memory_gb = profile.memory_gb if profile is not None else gpu.memory_gb
    if memory_gb is None or (plan.mig_profile is not None and profile is None):
        return None
    try:
        precision = choose_weight_precision(plan.weight_precision, model, gpu).weight_precision
        weights = memory.weights_bytes(model, precision)
    except (UnknownPrecision, SizingError):
        return None
    group = 1 if profile is not None else max(valid_tensor_parallel(model, gpu.gpus_per_node))
    return precision if weights * WEIGHTS_SLACK > group * memory_gb * 1e9 else None


def _shapes_on(model: ModelSpec, gpu: GpuSpec, label: str, plan: PlanInputs, inputs: FleetInputs) -> list[Option]:
    """The plan's TP, or every valid one that holds the weights when it gives none: each
    pending on its floor."""
    profile = plan.mig_profile
    if plan.tensor_parallel is not None:
        return [_option(model, gpu, label, profile, plan, inputs)]
    try:
        fitted = plan_fit(model, gpu, _card_priced_inputs(plan, gpu))
    except SizingError as exc:
        return [
            Option(
                label, profile, None, plan.weight_precision, None, f"{exc.field}: {exc.message}", speculative=_on(plan)
            )
        ]
    if not fitted.result.fits_weights:
        return [Option(label, profile, None, fitted.weight_precision, None, WEIGHTS_DO_NOT_FIT, speculative=_on(plan))]
    options: list[Option] = []
    for tp in fitted.valid_tensor_parallel:
        if tp >= fitted.tensor_parallel:
            shape = replace(plan, tensor_parallel=tp)
            evaluate = partial(_evaluated, model, gpu, label, profile, shape, inputs)
            options.extend(_pending(gpu, label, shape, inputs, tp, evaluate))
    return options


def _evaluated(
    model: ModelSpec, gpu: GpuSpec, label: str, profile: str | None, plan: PlanInputs, inputs: FleetInputs
) -> list[Option]:
    return [_option(model, gpu, label, profile, plan, inputs)]


def _option(
    model: ModelSpec, gpu: GpuSpec, label: str, profile: str | None, plan: PlanInputs, inputs: FleetInputs
) -> Option:
    try:
        sized = plan_fleet(model, gpu, label, plan, inputs, bound=CapacityBound.SATURATION_RATE)
    except SizingError as exc:
        why = f"{exc.field}: {exc.message}"
        return Option(label, profile, plan.tensor_parallel, plan.weight_precision, None, why, speculative=_on(plan))
    return Option(
        label,
        profile,
        plan.tensor_parallel,
        sized.fit.weight_precision,
        sized,
        _ruled_out(sized),
        speculative=_on(plan),
    )


def _ruled_out(sized: FleetPlan) -> str | None:
    if not sized.meets_slo:
        return f"misses the {sized.capacity.bound_by.replace('_', ' ')} even at concurrency 1"
    if sized.monthly_cost_usd is None:
        return "no hourly price"
    return None


def _reassessed(option: Option, inputs: FleetInputs) -> list[Option]:
    """The option's next, tighter look: a pending one evaluated, a sized one refined."""
    if option.expand is not None:
        return option.expand()
    assert option.plan is not None
    sized = refine(option.plan, inputs)
    return [replace(option, plan=sized, ruled_out=_ruled_out(sized))]


def _settle(options: list[Option], inputs: FleetInputs) -> list[Option]:
    """Best-first branch and bound. Every option starts on its cheapest bound (the minimum
    fleet of its shape: no evaluation at all); the one whose bound cost is lowest is looked at
    more closely: fitted into its TP sizes, sized on its saturation rate, then on its mean
    latencies, then at the SLO percentile, until no remaining bound is cheaper than the best
    option so sized. Rank 1 is then the cheapest option that meets the SLOs at the percentile,
    and the others keep a bound (`bound`) that no tightening could bring below it."""
    settled: list[Option] = []
    # At equal bound cost the tightest bound is looked at first: it is the nearest to sized.
    frontier: list[tuple[float, int, int, Option]] = []
    counter = itertools.count()
    best = math.inf

    def place(option: Option) -> None:
        nonlocal best
        cost = option.monthly_cost_usd
        if not option.eligible or cost is None:
            settled.append(option)
        elif option.bound is None:
            settled.append(option)
            best = min(best, cost)
        else:
            heapq.heappush(frontier, (cost, BOUND_LOOSENESS[option.bound], next(counter), option))

    for option in options:
        place(option)
    while frontier and frontier[0][0] < best:
        *_, option = heapq.heappop(frontier)
        budget.check("the ranking")
        for looked in _reassessed(option, inputs):
            place(looked)
    settled.extend(option for *_, option in sorted(frontier, key=lambda entry: entry[:3]))
    return _order(settled)


def _usd(amount: float) -> str:
    return f"${amount:,.2f}"


def _order(options: list[Option]) -> list[Option]:
    eligible = sorted(
        (o for o in options if o.eligible),
        # At equal cost an option sized at the SLO percentile ranks before one left at a bound.
        # At equal cost, the plainer deployment first: no speculation.
        key=lambda o: (
            o.monthly_cost_usd,
            o.bound is not None,
            (o.plan.token_cost.replica_usd or 0.0) if o.plan is not None else 0.0,
            o.speculative,
        ),
    )
    # Those ruled out by catalog name, however far the search went to rule each out.
    rest = sorted(
        (o for o in options if not o.eligible),
        key=lambda o: (o.gpu, o.mig_profile or "", o.tensor_parallel or 0, o.weight_precision or "", o.speculative),
    )
    ranked: list[Option] = []
    if eligible:
        best = eligible[0].monthly_cost_usd
        assert best is not None
        for index, option in enumerate(eligible):
            cost = option.monthly_cost_usd
            assert cost is not None
            if index == 0:
                why = "cheapest per month among the options that meet the SLOs"
            elif (bound := option.bound) is not None:
                more = f"{_usd(cost - best)} a month more than" if cost - best >= 0.005 else "as much as"
                why = f"not sized: on its {bound} alone it already costs at least {more} the best"
            elif (extra := cost - best) < 0.005:
                why = "meets the SLOs at the best's monthly cost, at a higher cost per token of a loaded replica"
            else:
                why = f"meets the SLOs but costs {_usd(extra)} a month more than the best"
            ranked.append(replace(option, why=why))
    ranked.extend(replace(o, why=f"ruled out: {o.ruled_out}") for o in rest)
    return ranked

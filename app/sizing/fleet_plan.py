"""A traffic forecast to a priced fleet: one configuration, or every catalog option ranked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from . import cost as cost_mod
from . import fleet
from .errors import SizingError
from .plan import FitPlan, PlanInputs, TimingSetup, plan_fit, prepare_timing
from .specs import GpuSpec, ModelSpec

MAX_FORECAST_PERIODS = 120


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


@dataclass(frozen=True)
class Period:
    period: str
    requests_per_day: float
    peak_to_average: float | None = None


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
    cost_per_million_output_tokens_usd: float | None
    cold_start_s: float
    host_cpu_cores: float | None
    warnings: list[str]

    @property
    def meets_slo(self) -> bool:
        return self.capacity.meets_slo


def _capacity(fitted: FitPlan, setup: TimingSetup, inputs: FleetInputs) -> fleet.ReplicaCapacity:
    plan = fitted.inputs
    assert plan.max_batched_tokens is not None
    # An engine admits at most max_num_seqs sequences, whatever the KV cache holds.
    ceiling = fitted.result.max_concurrency
    if plan.max_num_seqs is not None:
        ceiling = min(ceiling, plan.max_num_seqs)
    derived = fleet.replica_capacity(
        setup.work,
        setup.hardware,
        ceiling,
        plan.max_batched_tokens,
        None if inputs.tpot_slo_ms is None else inputs.tpot_slo_ms / 1e3,
        None if inputs.ttft_slo_ms is None else inputs.ttft_slo_ms / 1e3,
    )
    if derived is None:
        raise SizingError(
            "prompt_tokens",
            f"not one sequence of {plan.prompt_tokens + plan.output_tokens} tokens fits in the KV cache "
            f"of {fitted.tensor_parallel} x {fitted.target.gpu.name}",
        )
    if derived.bound_by == fleet.KV_CAPACITY and ceiling < fitted.result.max_concurrency:
        # The engine's max_num_seqs, not the KV cache, capped the batch.
        derived = replace(derived, bound_by=fleet.MAX_NUM_SEQS)
    if inputs.per_replica_tokens_per_s is not None:
        # A load-test number is the honest one: it wins, and the SLO is taken as met by it.
        return replace(derived, tokens_per_s=inputs.per_replica_tokens_per_s, bound_by=fleet.MEASURED, meets_slo=True)
    return derived


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
    per_million = (
        None if replica_price is None else cost_mod.cost_per_million_tokens_usd(replica_price, 1, capacity.tokens_per_s)
    )
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
        cost_per_million_output_tokens_usd=per_million,
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


def plan_fleet(model: ModelSpec, gpu: GpuSpec, gpu_label: str, plan: PlanInputs, inputs: FleetInputs) -> FleetPlan:
    """Size a fleet on one GPU (or MIG profile) for the request's traffic."""
    plan = _card_priced_inputs(plan, gpu)
    fitted = plan_fit(model, gpu, plan)
    if not fitted.result.fits_weights:
        raise SizingError(
            "tensor_parallel",
            f"{model.name} does not fit on {fitted.tensor_parallel} x {fitted.target.gpu.name} "
            f"(valid sizes {fitted.valid_tensor_parallel})",
        )
    setup = prepare_timing(fitted)
    capacity = _capacity(fitted, setup, inputs)
    demand = fleet.Demand(inputs.requests_per_s, inputs.peak_to_average, plan.prompt_tokens, plan.output_tokens)
    return size(fitted, setup, capacity, demand, inputs, gpu_label)


def forecast(base: FleetPlan, periods: Sequence[Period], inputs: FleetInputs) -> list[tuple[Period, FleetPlan]]:
    """The same replica under each period's traffic: one sized fleet per period."""
    rows = []
    for period in periods:
        demand = fleet.Demand.per_day(
            period.requests_per_day,
            period.peak_to_average if period.peak_to_average is not None else inputs.peak_to_average,
            base.demand.prompt_tokens,
            base.demand.output_tokens,
        )
        rows.append((period, size(base.fit, base.setup, base.capacity, demand, inputs, base.gpu_label)))
    return rows


@dataclass(frozen=True)
class Option:
    """One ranked configuration, or one ruled out and why."""

    gpu: str
    mig_profile: str | None
    tensor_parallel: int | None
    weight_precision: str | None
    plan: FleetPlan | None
    ruled_out: str | None = None
    why: str = ""

    @property
    def eligible(self) -> bool:
        return self.plan is not None and self.ruled_out is None


def _targets(gpu: GpuSpec) -> Iterable[str | None]:
    yield None
    for profile in gpu.mig_profiles:
        yield profile.name


def rank(
    model: ModelSpec,
    gpus: Sequence[tuple[str, GpuSpec]],
    plan: PlanInputs,
    inputs: FleetInputs,
) -> list[Option]:
    """Every GPU and MIG profile x valid TP that holds the weights, at the requested
    precision (or each card's own under "auto"), ranked by monthly cost among those that
    meet the SLOs; the rest follow with the reason they were ruled out."""
    options: list[Option] = []
    for label, gpu in gpus:
        for profile in _targets(gpu):
            options.extend(_shapes_on(model, gpu, label, replace(plan, mig_profile=profile), inputs))
    return _order(options)


def shapes(model: ModelSpec, gpu: GpuSpec, label: str, plan: PlanInputs, inputs: FleetInputs) -> list[Option]:
    """On one GPU (or the request's MIG profile of it): every valid TP that holds the weights,
    ranked as `rank` ranks the catalog. The smallest TP that holds the weights is rarely the
    cheapest fleet: a larger one leaves room for KV and batches more per GPU."""
    return _order(_shapes_on(model, gpu, label, plan, inputs))


def _shapes_on(model: ModelSpec, gpu: GpuSpec, label: str, plan: PlanInputs, inputs: FleetInputs) -> list[Option]:
    profile = plan.mig_profile
    target_plan = replace(plan, tensor_parallel=None)
    try:
        fitted = plan_fit(model, gpu, _card_priced_inputs(target_plan, gpu))
    except SizingError as exc:
        return [Option(label, profile, None, None, None, f"{exc.field}: {exc.message}")]
    if not fitted.result.fits_weights:
        return [Option(label, profile, None, fitted.weight_precision, None, "weights do not fit on any valid TP size")]
    fitting = [tp for tp in fitted.valid_tensor_parallel if tp >= fitted.tensor_parallel]
    return [_option(model, gpu, label, profile, replace(target_plan, tensor_parallel=tp), inputs) for tp in fitting]


def _option(
    model: ModelSpec, gpu: GpuSpec, label: str, profile: str | None, plan: PlanInputs, inputs: FleetInputs
) -> Option:
    try:
        sized = plan_fleet(model, gpu, label, plan, inputs)
    except SizingError as exc:
        return Option(label, profile, plan.tensor_parallel, plan.weight_precision, None, f"{exc.field}: {exc.message}")
    reason = None
    if not sized.meets_slo:
        reason = f"misses the {sized.capacity.bound_by.replace('_', ' ')} even at concurrency 1"
    elif sized.monthly_cost_usd is None:
        reason = "no hourly price"
    return Option(label, profile, plan.tensor_parallel, sized.fit.weight_precision, sized, reason)


def _order(options: list[Option]) -> list[Option]:
    eligible = sorted(
        (o for o in options if o.eligible),
        key=lambda o: (o.plan.monthly_cost_usd, o.plan.cost_per_million_output_tokens_usd or 0.0),  # type: ignore[union-attr]
    )
    rest = [o for o in options if not o.eligible]
    ranked: list[Option] = []
    if eligible:
        best = eligible[0].plan
        assert best is not None and best.monthly_cost_usd is not None
        for index, option in enumerate(eligible):
            assert option.plan is not None and option.plan.monthly_cost_usd is not None
            if index == 0:
                why = "cheapest per month among the options that meet the SLOs"
            elif (extra := option.plan.monthly_cost_usd - best.monthly_cost_usd) < 0.005:
                why = "meets the SLOs at the best's monthly cost, at a higher cost per token"
            else:
                why = f"meets the SLOs but costs {extra:.2f} USD more per month than the best"
            ranked.append(replace(option, why=why))
    ranked.extend(replace(o, why=f"ruled out: {o.ruled_out}") for o in rest)
    return ranked

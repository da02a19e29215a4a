"""Typed planning requests: what the API's schemas load into (app/api/schemas.py), and what
the services and the CLI take. A slug stays a string until a service resolves it in the
catalog; an inline model or GPU arrives already as a spec."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.sizing.fleet_plan import Arrivals, FleetInputs, Period
from app.sizing.mix import LengthBucket
from app.sizing.plan import PlanInputs
from app.sizing.simulate import DEFAULT_BURST_REQUESTS
from app.sizing.specs import GpuPrices, GpuSpec, ModelSpec
from app.sizing.vocabulary import FleetLayout, Pricing

ModelRef = str | ModelSpec
GpuRef = str | GpuSpec


@dataclass(frozen=True)
class PlanRequest:
    """One replica's request (/v1/fit, /v1/throughput). `inputs.engine` is left None: the
    service resolves `engine` in the catalog. `given` names the fields the request states
    itself, which win over a stored calibration's."""

    model: ModelRef
    gpu: GpuRef
    engine: str | None  # None: the service's DEFAULT_ENGINE
    inputs: PlanInputs
    given: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CostRequest:
    """/v1/cost: a price (given, or the GPU's) and tokens/s (given, or planned for `model`)."""

    model: ModelRef | None
    gpu: GpuRef | None
    engine: str | None  # None: the service's DEFAULT_ENGINE
    inputs: PlanInputs
    tokens_per_s: float | None
    gpus: float | None
    hours_per_month: float
    utilization: float
    given: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RooflineRequest:
    """/v1/roofline: one GEMM C[M,N] = A[M,K] x B[K,N] on a GPU or on given peaks."""

    m: int
    k: int
    n: int
    gpu: GpuRef | None
    peak_tflops: float | None
    memory_bandwidth_tb_per_s: float | None
    compute_precision: str
    activation_precision: str
    weight_precision: str


@dataclass(frozen=True)
class Simulation:
    """mode=simulate: the simulator's seed and the requests it simulates per rate."""

    seed: int = 0
    requests: int = 5_000


@dataclass(frozen=True)
class OwnershipInputs:
    """Owning the fleet: the months its purchase is written off over, and what running it
    costs (electricity per kWh, the hall per kW of board power and month)."""

    amortization_months: int
    electricity_usd_per_kwh: float
    hosting_usd_per_kw_month: float


@dataclass(frozen=True)
class Finance:
    """How a fleet is paid for and what it draws, beyond its on-demand price
    (app/planning/finance.py). Prices are per whole card; None: the catalog's."""

    pricing: Pricing = Pricing.ON_DEMAND
    # pricing=optimize: the terms it may commit for (None: each the card has a rate for that
    # fits the horizon), spot (None: when the card has its price and interruption rate), the
    # forecast's period length and a flat traffic's horizon, months (None: the defaults).
    commitments: tuple[str, ...] | None = None
    spot: bool | None = None
    period_months: int | None = None
    horizon_months: int | None = None
    prices: GpuPrices = field(default_factory=GpuPrices)
    pue: float = 1.0
    ownership: OwnershipInputs | None = None
    grid_g_co2_per_kwh: float | None = None
    api_usd_per_million_input: float | None = None
    api_usd_per_million_output: float | None = None


@dataclass(frozen=True)
class FleetRequest:
    """/v1/fleet: the replica's knobs, the traffic and its forecast, and what a generated
    `vllm serve` line and KEDA policy need. No `gpu`: rank every catalog GPU and MIG profile."""

    model: ModelRef
    gpu: GpuRef | None
    engine: str | None  # None: the service's DEFAULT_ENGINE
    inputs: PlanInputs
    traffic: FleetInputs
    forecast: tuple[Period, ...] = ()
    limit: int = 20
    deployment: str | None = None
    prometheus_url: str = "http://prometheus.monitoring:9090"
    # The name the engine serves and labels its metrics with (None: the checkpoint's repo).
    served_model_name: str | None = None
    # format=keda: minReplicaCount 0, KEDA's cooldownPeriod the way down to it.
    scale_to_zero: bool = False
    # Set: the chosen option's planned peak is simulated, to check the analytic capacity.
    simulation: Simulation | None = None
    # More than one: the weight formats the search may choose from (else inputs' one).
    weight_precisions: tuple[str, ...] = ()
    given: frozenset[str] = field(default_factory=frozenset)
    # One kind of replica, prefill and decode pools (app/sizing/disaggregated.py), or a mix of
    # kinds over `gpus` on `length_buckets` (app/sizing/mix.py); the API reads it from
    # `topology` and `mix`.
    layout: FleetLayout = FleetLayout.AGGREGATED
    # The network between a prefill and a decode replica, GB/s per GPU (None: the node's own).
    network_gb_per_s: float | None = None
    # The GPUs a ranking or a mix may choose from (None: the whole catalog).
    gpus: tuple[GpuRef, ...] | None = None
    # A mixed fleet's length buckets (None: from the spread).
    length_buckets: tuple[LengthBucket, ...] | None = None
    finance: Finance = field(default_factory=Finance)


@dataclass(frozen=True)
class Workload:
    """How requests arrive and how long they are beyond their means (`arrivals`, with the
    percentile the SLOs hold at and the end-to-end one), and the TTFT and TPOT objectives
    (milliseconds; None: not asked)."""

    arrivals: Arrivals = field(default_factory=Arrivals)
    ttft_slo_ms: float | None = None
    tpot_slo_ms: float | None = None


@dataclass(frozen=True)
class LatencyRequest:
    """/v1/latency: one replica (the knobs of /v1/throughput) under random arrivals at each
    of `rates` (requests/s arriving at it), by the analytic model or the simulator."""

    model: ModelRef
    gpu: GpuRef
    engine: str | None  # None: the service's DEFAULT_ENGINE
    inputs: PlanInputs
    workload: Workload
    rates: tuple[float, ...]
    # None: the analytic model.
    simulation: Simulation | None = None
    given: frozenset[str] = frozenset()
    # FleetLayout.DISAGGREGATED: one P/D unit, a prefill and a decode replica of this shape.
    topology: FleetLayout = FleetLayout.AGGREGATED
    network_gb_per_s: float | None = None


@dataclass(frozen=True)
class BatchRequest:
    """/v1/batch: an offline batch on one replica (the knobs of /v1/throughput): `requests`
    requests queued at once, their lengths of the inputs' means spread by the coefficients
    of variation (gamma), simulated to the last completion with `seed`."""

    model: ModelRef
    gpu: GpuRef
    engine: str | None  # None: the service's DEFAULT_ENGINE
    inputs: PlanInputs
    requests: int = DEFAULT_BURST_REQUESTS
    prompt_tokens_cv: float = 0.0
    output_tokens_cv: float = 0.0
    seed: int = 0
    given: frozenset[str] = frozenset()


@dataclass(frozen=True)
class DayPolicy:
    """/v1/autoscaling/simulate's policy; None: the default (the plan's triggers and bounds,
    a cold start's delay, the KEDA policy's scale-down window)."""

    trigger: str | None = None
    threshold: float | None = None
    scale_up_delay_s: float | None = None
    scale_down_delay_s: float | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    warm_pool: int = 0


@dataclass(frozen=True)
class DayRequest:
    """/v1/autoscaling/simulate: one replica (the knobs of /v1/latency), the requests arriving
    in each hour, the policy, and whether to recommend the cheapest policy meeting
    `max_violation_rate`."""

    model: ModelRef
    gpu: GpuRef
    engine: str | None  # None: the service's DEFAULT_ENGINE
    inputs: PlanInputs
    workload: Workload
    hourly_requests: tuple[float, ...]
    policy: DayPolicy = field(default_factory=DayPolicy)
    node_provisioning_s: float = 180.0
    load_gb_per_s: float = 2.0
    engine_startup_s: float = 60.0
    spare_replicas: int = 1
    recommend: bool = False
    max_violation_rate: float = 0.01
    seed: int = 0
    served_model_name: str | None = None
    given: frozenset[str] = frozenset()

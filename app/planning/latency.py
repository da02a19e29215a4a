"""/v1/latency: one replica under random arrivals, percentiles against request rate.

The replica is /v1/throughput's (the same fit, engine profile, calibration and step-time
model); what arrives is the request's workload. `mode=analytic` evaluates the queueing model
(app/sizing/queueing.py, microseconds per rate), `mode=simulate` the discrete-event simulator
(app/sizing/simulate.py, about 60 ms per 5,000 requests here, half a second with the
capacity search), whose
percentiles come with 95% confidence half-widths. Either way the answer names the highest
rate meeting the given SLOs at `slo_percentile` and what binds it: by bisection on the
analytic model, or with `mode=simulate` on simulations of the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.sizing.disaggregated import UnitEstimate, pd_unit, prefill_plan
from app.sizing.errors import SizingError
from app.sizing.fleet_plan import arrival_model, slos_s
from app.sizing.plan import ARRIVALS_LEAVES_OUT, ENGINE_ARRIVALS_LEAVES_OUT, MS, FitPlan, plan_fit, prepare_timing
from app.sizing.queueing import LatencyEstimate, ReplicaModel
from app.sizing.simulate import (
    SATURATION_REQUESTS,
    Percentiles,
    SimulationResult,
    WorkLimitExceeded,
    saturation_rate,
    simulate,
)
from app.sizing.specs import GpuSpec, ModelSpec
from app.sizing.vocabulary import Arrival, Binding, FleetLayout, LatencyMode

from . import work
from .answers import LatencyAnswer, LatencyRow, PairLatencyAnswer, Provenance, SimulatedRow
from .calibration.basis import Applied, apply, basis
from .context import Context
from .replica import engine_figures, speculation_planned, with_engine
from .requests import LatencyRequest, Workload


@dataclass(frozen=True)
class Replica:
    """One replica made ready for arrivals: its fit and its queueing model (which holds the
    step-time model, the workload's shape and the engine's limits)."""

    fit: FitPlan
    model: ReplicaModel
    # Per GPU-hour: the request's price, else the GPU's (None: unknown).
    price_per_gpu_hour_usd: float | None = None

    def simulate(self, rate_per_s: float, seed: int, requests: int, saturation: float) -> SimulationResult:
        """One simulation at `rate_per_s` (the saturation rate given: computed once per answer)."""
        model = self.model
        traffic = replace(model.traffic, rate_per_s=rate_per_s)
        return simulate(
            model.steps, traffic, model.limits, seed=seed, requests=requests, saturation_rate_per_s=saturation
        )


def replica(fitted: FitPlan, workload: Workload) -> Replica:
    """The queueing model of a fitted replica (KV capacity from the fit, the token budget and
    max_num_seqs from the engine's defaults or the request)."""
    inputs = fitted.inputs
    if not fitted.result.fits_weights or fitted.result.max_concurrency < 1:
        raise SizingError(
            "prompt_tokens",
            f"not one sequence of {inputs.prompt_tokens + inputs.output_tokens} tokens fits in the KV cache "
            f"of {fitted.tensor_parallel} x {fitted.target.gpu.name}",
        )
    # engine=ideal has no cap of its own: the KV cache is the only limit.
    seats = inputs.max_num_seqs or fitted.result.max_concurrency
    setup = prepare_timing(fitted)
    return Replica(fitted, arrival_model(fitted, setup, workload.arrivals, seats), setup.price_per_gpu_hour_usd)


def spread_ms(p: Percentiles, stable: bool = True) -> dict[str, float | None]:
    """A Percentiles in seconds as milliseconds; unstable (or not a number): null."""

    def ms(value: float) -> float | None:
        return value * MS if stable and math.isfinite(value) else None

    return {"mean": ms(p.mean), "p50": ms(p.p50), "p90": ms(p.p90), "p95": ms(p.p95), "p99": ms(p.p99)}


def _missed(workload: Workload, ttft: Percentiles, tpot: Percentiles, e2e: Percentiles) -> Binding | None:
    """The first SLO given that the figures miss at the workload's percentile, or None."""
    percentile = workload.arrivals.slo_percentile
    checks = ((workload.ttft_slo_ms, ttft, Binding.TTFT_SLO), (workload.tpot_slo_ms, tpot, Binding.TPOT_SLO))
    for slo, observed, name in (*checks, (workload.arrivals.e2e_slo_ms, e2e, Binding.E2E_SLO)):
        if slo is not None and not observed.at(percentile) * MS <= slo:  # NaN misses too
            return name
    return None


def _slos_given(workload: Workload) -> bool:
    return any(slo is not None for slo in (workload.ttft_slo_ms, workload.tpot_slo_ms, workload.arrivals.e2e_slo_ms))


def _meets(workload: Workload, ttft: Percentiles, tpot: Percentiles, e2e: Percentiles, stable: bool) -> bool | None:
    """Whether the SLOs hold at the percentile; None when none is given."""
    if not _slos_given(workload):
        return None
    return stable and _missed(workload, ttft, tpot, e2e) is None


def _row(figures: LatencyEstimate | SimulationResult | UnitEstimate, workload: Workload, kv_fits: bool) -> LatencyRow:
    """The figures every row has, from the analytic model or a simulation alike."""
    stable = figures.stable
    return LatencyRow(
        request_rate=figures.rate_per_s,
        utilization=figures.utilization,
        stable=stable,
        in_flight_mean=figures.in_flight_mean if stable else None,
        queue_wait_ms=spread_ms(figures.queue_wait_s, stable),
        ttft_ms=spread_ms(figures.ttft_s, stable),
        tpot_ms=spread_ms(figures.tpot_s, stable),
        itl_ms=spread_ms(figures.itl_s, stable),
        e2e_ms=spread_ms(figures.e2e_s, stable),
        output_tokens_per_s=figures.output_tokens_per_s if stable else None,
        kv_fits=kv_fits,
        meets_slo=_meets(workload, figures.ttft_s, figures.tpot_s, figures.e2e_s, stable and kv_fits),
    )


def analytic_row(estimate: LatencyEstimate | UnitEstimate, workload: Workload) -> LatencyRow:
    """A rate's row from the queueing model (of one replica or of a prefill/decode pair)."""
    return _row(estimate, workload, estimate.kv_ok)


def simulated_row(result: SimulationResult, workload: Workload) -> SimulatedRow:
    """A simulated rate's row: the figures, their 95% half-widths by batch means (the
    simulator's own sampling error), and what the simulation did."""
    stable = result.stable
    return SimulatedRow(
        figures=_row(result, workload, result.preemptions == 0),
        confidence_95_ms={
            "queue_wait_ms": spread_ms(result.queue_wait_ci, stable),
            "ttft_ms": spread_ms(result.ttft_ci, stable),
            "tpot_ms": spread_ms(result.tpot_ci, stable),
            "e2e_ms": spread_ms(result.e2e_ci, stable),
        },
        preemptions=result.preemptions,
        measured_requests=result.measured_requests,
    )


@dataclass(frozen=True)
class Capacity:
    """The highest rate meeting the SLOs at the percentile, what stops a higher one, and
    whether any rate meets them."""

    rate_per_s: float
    bound_by: Binding
    meets_slo: bool


# Halvings of (0, saturation) the simulator's capacity search takes: 1/256 of saturation,
# each on at most CAPACITY_REQUESTS requests (the percentiles' noise there is a few percent).
SIMULATED_BISECTIONS = 8
CAPACITY_REQUESTS = 10_000


def _failing(result: SimulationResult, workload: Workload) -> Binding | None:
    """What a simulated rate misses first, or None when it meets every SLO given."""
    if not result.stable:
        return Binding.SATURATION
    if result.preemptions:
        return Binding.KV_CAPACITY
    return _missed(workload, result.ttft_s, result.tpot_s, result.e2e_s)


def simulated_capacity(shape: Replica, workload: Workload, seed: int, requests: int, saturation: float) -> Capacity:
    """`max_request_rate` by bisection on simulations (the same seed at every rate: common
    random numbers, so the comparison between rates is not noise)."""
    lo, hi, reason = 0.0, saturation, Binding.SATURATION
    for _ in range(SIMULATED_BISECTIONS):
        mid = (lo + hi) / 2
        result = shape.simulate(mid, seed, min(requests, CAPACITY_REQUESTS), saturation)
        why = _failing(result, workload)
        if why is None:
            lo = mid
        else:
            hi, reason = mid, why
    return Capacity(lo, reason, lo > 0)


def latency(request: LatencyRequest, context: Context) -> LatencyAnswer | PairLatencyAnswer:
    """Percentiles of queue wait, TTFT, TPOT, ITL and E2E at each rate, and the capacity."""
    model, model_label = context.model(request.model)
    gpu, gpu_label = context.gpu(request.gpu)
    inputs = with_engine(context, request.engine, request.inputs)
    applied = apply(context, request.model, request.gpu, inputs, request.given)
    workload = request.workload
    shape = replica(plan_fit(model, gpu, applied.inputs), workload)
    if request.topology == FleetLayout.DISAGGREGATED:
        return _pd_unit(request, shape, model, gpu, model_label, gpu_label, applied, context.notes)
    analytic = shape.model
    simulation = request.simulation
    rows: Sequence[LatencyRow | SimulatedRow]
    if simulation is not None:
        n = simulation.requests
        size_fields = ("requests", "request_rate" if len(request.rates) == 1 else "sweep_rates")
        runs = [min(n, SATURATION_REQUESTS), *(n for _ in request.rates)]
        work.check_predicted(
            [work.Runs(analytic, [*runs, *[min(n, CAPACITY_REQUESTS)] * SIMULATED_BISECTIONS])], size_fields
        )
        try:
            saturation = saturation_rate(
                analytic.steps, analytic.traffic, analytic.limits, seed=simulation.seed, requests=runs[0]
            )
            results = [shape.simulate(rate, simulation.seed, n, saturation) for rate in request.rates]
            rows = [simulated_row(result, workload) for result in results]
            capacity = simulated_capacity(shape, workload, simulation.seed, n, saturation)
        except WorkLimitExceeded as over:
            raise work.over_budget(over, size_fields) from None
    else:
        saturation = analytic.saturation_rate_per_s
        rows = [analytic_row(analytic.latency(rate), workload) for rate in request.rates]
        slos = slos_s(workload.ttft_slo_ms, workload.tpot_slo_ms, workload.arrivals.e2e_slo_ms)
        found = analytic.max_request_rate(*slos, workload.arrivals.slo_percentile)
        capacity = Capacity(found.rate_per_s, found.bound_by, found.meets_slo)
    return _answer(request, shape, (model_label, gpu_label), applied, saturation, capacity, rows, context.notes)


def _answer(
    request: LatencyRequest,
    shape: Replica,
    labels: tuple[str, str],
    applied: Applied,
    saturation: float,
    capacity: Capacity,
    rows: Sequence[LatencyRow | SimulatedRow],
    notes: tuple[str, ...],
    topology: FleetLayout = FleetLayout.AGGREGATED,
) -> LatencyAnswer:
    fitted, workload = shape.fit, request.workload
    unstable = [row.request_rate for row in (_figures(row) for row in rows) if not row.stable]
    warnings = [*fitted.warnings, *notes, *applied.notes(fitted.tensor_parallel, fitted.kv_precision)]
    if unstable:
        warnings.append(
            f"past capacity ({saturation:.3g} requests/s): no steady state at "
            + ", ".join(f"{rate:g}" for rate in unstable)
            + " requests/s; the queue grows without bound"
        )
    arrivals = workload.arrivals
    return LatencyAnswer(
        model=labels[0],
        gpu=labels[1],
        mig_profile=fitted.target.mig_profile.name if fitted.target.mig_profile else None,
        mode=LatencyMode.ANALYTIC if request.simulation is None else LatencyMode.SIMULATE,
        tensor_parallel=fitted.tensor_parallel,
        weight_precision=fitted.weight_precision,
        kv_precision=fitted.kv_precision,
        engine_figures=engine_figures(fitted),
        kv_capacity_tokens=fitted.result.kv_capacity_tokens,
        prompt_tokens=fitted.inputs.prompt_tokens,
        output_tokens=fitted.inputs.output_tokens,
        prompt_tokens_cv=arrivals.prompt_tokens_cv,
        output_tokens_cv=arrivals.output_tokens_cv,
        arrival=Arrival.POISSON if arrivals.burstiness == 1 else Arrival.GAMMA,
        burstiness=arrivals.burstiness,
        saturation_rate=saturation,
        slo_percentile=arrivals.slo_percentile,
        ttft_slo_ms=workload.ttft_slo_ms,
        tpot_slo_ms=workload.tpot_slo_ms,
        e2e_slo_ms=arrivals.e2e_slo_ms,
        max_request_rate=capacity.rate_per_s,
        max_request_rate_bound_by=capacity.bound_by,
        max_request_rate_meets_slo=capacity.meets_slo if _slos_given(workload) else None,
        speculative=speculation_planned(fitted.inputs.speculative),
        rates=tuple(rows),
        provenance=Provenance(
            basis(applied),
            applied.used(),
            ARRIVALS_LEAVES_OUT if fitted.engine is None else ENGINE_ARRIVALS_LEAVES_OUT,
            tuple(warnings),
        ),
        topology=topology,
    )


def _figures(row: LatencyRow | SimulatedRow) -> LatencyRow:
    return row.figures if isinstance(row, SimulatedRow) else row


def _pd_unit(
    request: LatencyRequest,
    decode: Replica,
    model: ModelSpec,
    gpu: GpuSpec,
    model_label: str,
    gpu_label: str,
    applied: Applied,
    notes: tuple[str, ...],
) -> PairLatencyAnswer:
    """topology=disaggregated: one prefill and one decode replica of the request's shape."""
    workload = request.workload
    prefill_fit = plan_fit(model, gpu, prefill_plan(applied.inputs))
    seats = tuple(fit.inputs.max_num_seqs or fit.result.max_concurrency for fit in (prefill_fit, decode.fit))
    unit = pd_unit(model, prefill_fit, decode.fit, workload.arrivals, seats, request.network_gb_per_s)  # type: ignore[arg-type]
    rows = [analytic_row(unit.latency(rate), workload) for rate in request.rates]
    ttft_s, tpot_s, _ = slos_s(workload.ttft_slo_ms, workload.tpot_slo_ms, None)
    found, pool = unit.max_request_rate(ttft_s, tpot_s, workload.arrivals.slo_percentile)
    capacity = Capacity(found.rate_per_s, found.bound_by, found.meets_slo)
    labels = (model_label, gpu_label)
    saturation = unit.saturation_rate_per_s
    return PairLatencyAnswer(
        answer=_answer(request, decode, labels, applied, saturation, capacity, rows, notes, FleetLayout.DISAGGREGATED),
        max_request_rate_pool=pool,
        prefill_saturation_rate=unit.prefill.saturation_rate_per_s,
        decode_saturation_rate=unit.decode.saturation_rate_per_s,
        kv_transfer=unit.transfer,
    )

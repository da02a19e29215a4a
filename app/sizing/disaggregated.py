"""Disaggregated serving: prompts on a prefill pool, decodes on a decode pool.

NVIDIA Dynamo, llm-d, SGLang's PD mode and DistServe/Splitwise run the two phases of a request
on separate replicas: a prefill replica computes the prompt and the first token, ships the
prompt's KV cache to a decode replica, which generates the rest. Each pool is sized for its own
objective, with its own GPU, TP and weight format, and its own N+1:

- the prefill pool on TTFT at the SLO percentile, less the KV transfer: a replica of the
  queueing model (queueing.py) whose requests leave after one token, so its steps carry
  prompts only, packed up to the step budget, and its queue is the prompts waiting;
- the decode pool on TPOT at the percentile: a replica whose prompts cost nothing (their KV
  arrives), so no step carries prefill and TPOT has no prefill interference; its seats are
  the KV cache's for the whole context, or the engine's max_num_seqs;
- the KV transfer: the prompt's KV bytes over the link, split across the ranks that hold
  them (each sends its shard); NVLink when one prefill and one decode replica share a node
  (same GPU kind, both TP groups inside its NVLink domain), else the network.

The aggregated plan for the same traffic is sized beside it, and the answer says which costs
less. Left out: the decode replica's wait for a seat is not added to TTFT (it delays the
second token), the transfer's contention with other traffic on the link, prefix caching, and
a router's own latency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from . import cost as cost_mod
from . import memory
from .fleet_plan import (
    Arrivals,
    FleetInputs,
    FleetPlan,
    Option,
    arrival_model,
    rank,
    shapes,
)
from .plan import FitPlan, PlanInputs, prepare_timing
from .queueing import MaxRate, ReplicaModel
from .simulate import Percentiles
from .specs import GpuSpec, ModelSpec
from .vocabulary import FleetLayout, Link, Role

# The `topology` field's values (a mix is asked for by `mix`, not by a topology).
TOPOLOGIES = (FleetLayout.AGGREGATED, FleetLayout.DISAGGREGATED)
# The network bandwidth per GPU a node of each kind typically has, GB/s one way: DGX/HGX A100
# carry one 200 Gb/s HDR NIC per GPU, H100/H200/B200 and MI300X platforms one 400 Gb/s NDR per
# GPU; a PCIe server one 100 Gb/s link per GPU. `network_gb_per_s` overrides it.
NETWORK_GB_PER_S_BY_INTERCONNECT = {
    "nvlink3": 25.0,
    "nvlink4": 50.0,
    "nvlink5": 50.0,
    "infinity-fabric": 50.0,
}
PCIE_SERVER_NETWORK_GB_PER_S = 12.5
NETWORK_LATENCY_US = 20.0
NVLINK_KINDS = ("nvlink", "infinity-fabric")


def network_gb_per_s(gpu: GpuSpec) -> float:
    """The default network bandwidth per GPU of the node this GPU sits in, GB/s."""
    kind = gpu.interconnect_kind or ""
    return NETWORK_GB_PER_S_BY_INTERCONNECT.get(kind, PCIE_SERVER_NETWORK_GB_PER_S)


@dataclass(frozen=True)
class KvTransfer:
    """Moving one request's prompt KV from its prefill replica to its decode replica."""

    bytes_per_request: float
    link: Link
    gb_per_s_per_gpu: float
    parallel_gpus: int  # ranks sending a shard each
    seconds: float


def kv_transfer(
    model: ModelSpec,
    kv_precision: str,
    prompt_tokens: float,
    prefill: tuple[GpuSpec, int],
    decode: tuple[GpuSpec, int],
    network_gb_per_s_override: float | None = None,
) -> KvTransfer:
    """The prompt's KV bytes (all layers, every KV head) over the link: NVLink when a prefill
    and a decode replica fit one NVLink domain of the same GPU kind, else the network, each
    of min(TP) ranks sending its share in parallel."""
    (gpu_p, tp_p), (gpu_d, tp_d) = prefill, decode
    total = memory.kv_bytes_for_context(model, kv_precision, prompt_tokens)
    same_node = (
        gpu_p.name == gpu_d.name
        and tp_p + tp_d <= gpu_p.gpus_per_node
        and (gpu_p.interconnect_kind or "").startswith(NVLINK_KINDS)
        and gpu_p.interconnect_bandwidth_gb_per_s is not None
    )
    parallel = max(1, min(tp_p, tp_d))
    if same_node:
        assert gpu_p.interconnect_bandwidth_gb_per_s is not None
        bandwidth, latency_us = gpu_p.interconnect_bandwidth_gb_per_s, gpu_p.interconnect_latency_us or 0.0
        return _transfer(total, Link.NVLINK, bandwidth, latency_us, parallel)
    if network_gb_per_s_override is not None:
        bandwidth = network_gb_per_s_override
    else:
        bandwidth = min(network_gb_per_s(gpu_p), network_gb_per_s(gpu_d))
    return _transfer(total, Link.NETWORK, bandwidth, NETWORK_LATENCY_US, parallel)


def _transfer(total_bytes: float, link: Link, gb_per_s: float, latency_us: float, parallel: int) -> KvTransfer:
    seconds = latency_us * 1e-6 + total_bytes / (gb_per_s * 1e9 * parallel)
    return KvTransfer(total_bytes, link, gb_per_s, parallel, seconds)


@dataclass(frozen=True)
class DisaggregatedPlan:
    prefill: FleetPlan | None
    decode: FleetPlan | None
    prefill_options: list[Option]
    decode_options: list[Option]
    transfer: KvTransfer | None
    aggregated: FleetPlan | None
    aggregated_options: list[Option]
    # TTFT the prefill pool was held to: the SLO less the transfer (None: no TTFT SLO).
    prefill_ttft_budget_ms: float | None
    # Each pool's traffic and objectives, as it was sized on them.
    prefill_inputs: FleetInputs | None = None
    decode_inputs: FleetInputs | None = None

    @property
    def meets_slo(self) -> bool:
        return (
            self.prefill is not None
            and self.decode is not None
            and self.prefill.meets_slo
            and self.decode.meets_slo
            and (self.prefill_ttft_budget_ms is None or self.prefill_ttft_budget_ms > 0)
        )

    @property
    def gpus_total(self) -> int | None:
        if self.prefill is None or self.decode is None:
            return None
        return self.prefill.size.gpus_total + self.decode.size.gpus_total

    @property
    def monthly_cost_usd(self) -> float | None:
        if self.prefill is None or self.decode is None:
            return None
        if self.prefill.monthly_cost_usd is None or self.decode.monthly_cost_usd is None:
            return None
        return round(self.prefill.monthly_cost_usd + self.decode.monthly_cost_usd, 2)

    @property
    def cost_per_million_output_tokens_usd(self) -> float | None:
        """Both pools' monthly cost over the output tokens the traffic brings in the month."""
        monthly = self.monthly_cost_usd
        if monthly is None or self.decode is None or self.decode_inputs is None:
            return None
        return cost_mod.monthly_cost_per_million_tokens_usd(
            monthly, self.decode.demand.average_tokens_per_s, self.decode_inputs.hours_per_month
        )

    @property
    def ttft_ms(self) -> float | None:
        """TTFT at the SLO percentile at capacity: the prefill replica's plus the transfer."""
        if self.prefill is None or self.transfer is None or self.prefill.capacity.ttft_s is None:
            return None
        return (self.prefill.capacity.ttft_s + self.transfer.seconds) * 1e3

    @property
    def prefill_to_decode_gpus(self) -> float | None:
        if self.prefill is None or self.decode is None or not self.decode.size.gpus_total:
            return None
        return self.prefill.size.gpus_total / self.decode.size.gpus_total


def _best(options: list[Option]) -> FleetPlan | None:
    """The ranking's chosen plan: its first eligible option (sized at the percentile)."""
    for option in options:
        if option.eligible and option.plan is not None:
            return option.plan
    return None


def prefill_plan(plan: PlanInputs) -> PlanInputs:
    """A prefill replica's inputs: each request leaves with its first token, so it decodes
    nothing and holds no speculative drafter."""
    return replace(plan, output_tokens=1, speculative=None)


def plan_disaggregated(
    model: ModelSpec,
    gpus: Sequence[tuple[str, GpuSpec]],
    plan: PlanInputs,
    inputs: FleetInputs,
    *,
    named_gpu: bool,
    precisions: Sequence[str | None] = (),
    network_gb_per_s_override: float | None = None,
) -> DisaggregatedPlan:
    """Both pools, each the cheapest shape for its objective on `gpus` (the catalog ranked, or
    with `named_gpu` every valid TP of the one GPU given), and the aggregated plan beside them.

    The decode pool is sized first, then the prefill pool is held to the TTFT SLO less the
    slowest transfer it could meet: over the slowest network among the GPUs it may be placed
    on and the decode pool's, one rank sending (a plan whose replicas then share a node, or
    send in parallel, only gains)."""
    assert inputs.arrivals is not None, "a disaggregated plan sizes pools under random arrivals"
    arrivals = inputs.arrivals

    def search(shape: PlanInputs, pool: FleetInputs) -> list[Option]:
        if named_gpu:
            ((label, gpu),) = gpus
            return shapes(model, gpu, label, shape, pool, precisions)
        return rank(model, gpus, shape, pool, precisions)

    no_e2e = replace(arrivals, e2e_slo_ms=None)
    decode_inputs = replace(inputs, role=Role.DECODE, ttft_slo_ms=None, arrivals=no_e2e)
    decode_options = search(plan, decode_inputs)
    decode = _best(decode_options)
    aggregated_options = search(plan, inputs)
    aggregated = _best(aggregated_options)
    if decode is None:
        return DisaggregatedPlan(
            None, None, [], decode_options, None, aggregated, aggregated_options, None, None, decode_inputs
        )

    kv_precision = decode.fit.kv_precision
    # The budget assumes the slowest case, the prefill replica not known yet: the slowest
    # network it could sit behind, one rank sending.
    slowest = min(network_gb_per_s(gpu) for gpu in (decode.fit.target.gpu, *(gpu for _, gpu in gpus)))
    bandwidth = network_gb_per_s_override or slowest
    kv_bytes = memory.kv_bytes_for_context(model, kv_precision, plan.prompt_tokens)
    over_network = _transfer(kv_bytes, Link.NETWORK, bandwidth, NETWORK_LATENCY_US, 1)
    budget_ms = None
    if inputs.ttft_slo_ms is not None:
        budget_ms = inputs.ttft_slo_ms - over_network.seconds * 1e3
    prefill_inputs = replace(
        inputs,
        role=Role.PREFILL,
        tpot_slo_ms=None,
        # A TTFT no transfer leaves room for: the prefill pool is sized on the smallest one it
        # can (and the plan says it misses the SLO).
        ttft_slo_ms=None if budget_ms is None else max(budget_ms, 1e-3),
        arrivals=replace(no_e2e, output_tokens_cv=0.0),
    )
    prefill_options = search(prefill_plan(plan), prefill_inputs)
    prefill = _best(prefill_options)
    transfer = over_network
    if prefill is not None:
        transfer = kv_transfer(
            model,
            kv_precision,
            plan.prompt_tokens,
            (prefill.fit.target.gpu, prefill.fit.tensor_parallel),
            (decode.fit.target.gpu, decode.fit.tensor_parallel),
            network_gb_per_s_override,
        )
    return DisaggregatedPlan(
        prefill,
        decode,
        prefill_options,
        decode_options,
        transfer,
        aggregated,
        aggregated_options,
        budget_ms,
        prefill_inputs,
        decode_inputs,
    )


def cheaper(plan: DisaggregatedPlan) -> tuple[FleetLayout | None, str]:
    """Which topology costs less for this workload, and why, in a sentence."""
    agg = plan.aggregated
    disagg_cost = plan.monthly_cost_usd if plan.meets_slo else None
    agg_cost = agg.monthly_cost_usd if agg is not None and agg.meets_slo else None
    if disagg_cost is None and agg_cost is None:
        return None, "neither topology meets the SLOs"
    if disagg_cost is None:
        return FleetLayout.AGGREGATED, "the disaggregated pools do not meet the SLOs; the aggregated replicas do"
    if agg_cost is None or agg is None:
        return FleetLayout.DISAGGREGATED, "the aggregated replicas do not meet the SLOs; the disaggregated pools do"
    assert plan.prefill is not None and plan.decode is not None
    agg_rate = agg.capacity.request_rate_per_s or 0.0
    decode_rate = plan.decode.capacity.request_rate_per_s or 0.0
    prefill_rate = plan.prefill.capacity.request_rate_per_s or 0.0
    agg_gpus = agg.fit.tensor_parallel
    detail = (
        f"an aggregated replica ({agg_gpus} GPU{'s' if agg_gpus > 1 else ''}) takes "
        f"{agg_rate:.3g} requests/s, bound by {agg.capacity.bound_by}; a decode replica "
        f"({plan.decode.fit.tensor_parallel}) takes {decode_rate:.3g} with no prefill in its steps and a "
        f"prefill replica ({plan.prefill.fit.tensor_parallel}) {prefill_rate:.3g}"
    )
    if math.isclose(disagg_cost, agg_cost, abs_tol=0.005):
        return FleetLayout.AGGREGATED, f"they cost the same; the aggregated plan has one pool to run: {detail}"
    if disagg_cost < agg_cost:
        return FleetLayout.DISAGGREGATED, f"{agg_cost - disagg_cost:.2f} USD a month less: {detail}"
    return FleetLayout.AGGREGATED, (
        f"{disagg_cost - agg_cost:.2f} USD a month less: {detail}, and two pools carry two sets of spares"
    )


def _shifted(p: Percentiles, seconds: float) -> Percentiles:
    return Percentiles(p.mean + seconds, p.p50 + seconds, p.p90 + seconds, p.p95 + seconds, p.p99 + seconds)


def _summed(a: Percentiles, b: Percentiles) -> Percentiles:
    """Quantile by quantile: the sum's quantile when the two move together, else above it
    (an upper bound on the tail of two stages in a row)."""
    return Percentiles(a.mean + b.mean, a.p50 + b.p50, a.p90 + b.p90, a.p95 + b.p95, a.p99 + b.p99)


@dataclass(frozen=True)
class UnitEstimate:
    """One P/D unit at a rate, in the figures a /v1/latency row gives (LatencyEstimate's)."""

    rate_per_s: float
    utilization: float
    stable: bool
    in_flight_mean: float
    queue_wait_s: Percentiles
    ttft_s: Percentiles
    tpot_s: Percentiles
    itl_s: Percentiles
    e2e_s: Percentiles
    output_tokens_per_s: float
    kv_ok: bool


@dataclass(frozen=True)
class PdUnit:
    """One prefill replica and one decode replica, the prompt's KV moved between them: TTFT is
    the prefill replica's plus the transfer, TPOT and ITL the decode replica's, and E2E the
    TTFT plus the decode replica's own time (its wait for a seat, then the decodes), summed
    quantile by quantile (conservative)."""

    prefill: ReplicaModel
    decode: ReplicaModel
    transfer: KvTransfer

    @property
    def saturation_rate_per_s(self) -> float:
        return min(self.prefill.saturation_rate_per_s, self.decode.saturation_rate_per_s)

    def latency(self, rate_per_s: float) -> UnitEstimate:
        p, d = self.prefill.latency(rate_per_s), self.decode.latency(rate_per_s)
        stable = p.stable and d.stable
        ttft = _shifted(p.ttft_s, self.transfer.seconds)
        e2e = _summed(ttft, d.e2e_s)
        return UnitEstimate(
            rate_per_s,
            max(p.utilization, d.utilization),
            stable,
            rate_per_s * e2e.mean,
            p.queue_wait_s,
            ttft,
            d.tpot_s,
            d.itl_s,
            e2e,
            d.output_tokens_per_s,
            p.kv_ok and d.kv_ok,
        )

    def max_request_rate(
        self, ttft_slo_s: float | None, tpot_slo_s: float | None, percentile: float
    ) -> tuple[MaxRate, Role]:
        """The unit's capacity: the lower of the prefill replica's (TTFT less the transfer)
        and the decode replica's (TPOT), and which pool it is."""
        budget = None if ttft_slo_s is None else max(ttft_slo_s - self.transfer.seconds, 1e-6)
        prefill = self.prefill.max_request_rate(budget, None, None, percentile)
        decode = self.decode.max_request_rate(None, tpot_slo_s, None, percentile)
        if prefill.rate_per_s <= decode.rate_per_s:
            return replace(prefill, meets_slo=prefill.meets_slo and decode.meets_slo), Role.PREFILL
        return replace(decode, meets_slo=prefill.meets_slo and decode.meets_slo), Role.DECODE


def pd_unit(
    model: ModelSpec,
    prefill_fit: FitPlan,
    decode_fit: FitPlan,
    arrivals: Arrivals,
    seats: tuple[int, int],
    network_gb_per_s_override: float | None = None,
) -> PdUnit:
    """A P/D unit from the fits of its two replicas (the prefill one at one output token) and
    the seats each runs."""
    prefill = arrival_model(prefill_fit, prepare_timing(prefill_fit), arrivals, seats[0], Role.PREFILL)
    decode = arrival_model(decode_fit, prepare_timing(decode_fit), arrivals, seats[1], Role.DECODE)
    transfer = kv_transfer(
        model,
        decode_fit.kv_precision,
        decode_fit.inputs.prompt_tokens,
        (prefill_fit.target.gpu, prefill_fit.tensor_parallel),
        (decode_fit.target.gpu, decode_fit.tensor_parallel),
        network_gb_per_s_override,
    )
    return PdUnit(prefill, decode, transfer)

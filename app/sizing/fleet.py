"""Fleet: traffic to replicas and GPUs, with redundancy, zones, MIG packing and the numbers
an autoscaler needs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import speculation, timing
from .vocabulary import Binding, CapacityBound

SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class Demand:
    """Traffic as output (and input) tokens per second, on average and at peak."""

    requests_per_s: float
    peak_to_average: float
    prompt_tokens: int
    output_tokens: int

    @classmethod
    def per_day(cls, requests_per_day: float, peak_to_average: float, prompt: int, output: int) -> Demand:
        return cls(requests_per_day / SECONDS_PER_DAY, peak_to_average, prompt, output)

    @property
    def average_tokens_per_s(self) -> float:
        return self.requests_per_s * self.output_tokens

    @property
    def peak_tokens_per_s(self) -> float:
        return self.average_tokens_per_s * self.peak_to_average

    @property
    def average_input_tokens_per_s(self) -> float:
        return self.requests_per_s * self.prompt_tokens

    @property
    def peak_input_tokens_per_s(self) -> float:
        return self.average_input_tokens_per_s * self.peak_to_average


@dataclass(frozen=True)
class ReplicaCapacity:
    """What one replica sustains: the concurrency chosen and what binds it. Under random
    arrivals (`request_rate_per_s` set) the rate is the highest whose SLO percentile holds,
    `concurrency` the requests in flight there on average, and the times that percentile's."""

    concurrency: int
    tokens_per_s: float
    time_per_token_s: float | None
    ttft_s: float | None
    bound_by: Binding
    meets_slo: bool
    request_rate_per_s: float | None = None
    # The engine's cap on running sequences the capacity assumed (steady state: concurrency).
    max_num_seqs: int | None = None
    # Set when the capacity is a bound a ranking orders by, not yet the SLO percentile's: the
    # rate is at least the true one, the cost at most.
    bound: CapacityBound | None = None
    # Under random arrivals: requests waiting for prefill at the capacity rate, on average.
    queue_length: float | None = None

    @property
    def exact(self) -> bool:
        return self.bound is None


def _meets(state: timing.SteadyState, tpot_slo_s: float | None, ttft_slo_s: float | None) -> bool:
    if tpot_slo_s is not None and state.time_per_token_s > tpot_slo_s:
        return False
    return not (ttft_slo_s is not None and state.ttft_s > ttft_slo_s)


def replica_capacity(
    work: timing.Workload,
    hw: timing.Hardware,
    max_concurrency: int,
    max_batched_tokens: int,
    tpot_slo_s: float | None = None,
    ttft_slo_s: float | None = None,
    speculative: speculation.Speculation | None = None,
) -> ReplicaCapacity | None:
    """The largest concurrency within KV capacity (and the per-step token budget) whose
    continuously batched time per token and TTFT meet the SLOs. None when not even one
    sequence fits in the KV cache. Under `speculative` decoding each decode takes k + 1 of
    the budget's tokens and the steady state is speculation's.

    Both observed TPOT and TTFT grow with the concurrency, so the largest feasible one is
    found by bisection. When even one sequence misses the SLO, that one is returned with
    meets_slo False: the best this configuration can do.
    """
    # The budget must leave room for at least one prompt token beside the decodes.
    queries = 1 if speculative is None else speculative.num_speculative_tokens + 1
    ceiling = min(max_concurrency, (max_batched_tokens - 1) // queries)
    if ceiling < 1:
        return None

    def state(batch: int) -> timing.SteadyState:
        if speculative is None:
            steady = timing.continuous_batching(work, hw, batch, max_batched_tokens)
        else:
            steady = speculation.steady_state(speculative, work, hw, batch, max_batched_tokens)[0]
        assert steady is not None  # batch x queries < max_batched_tokens
        return steady

    low_state = state(1)
    if not _meets(low_state, tpot_slo_s, ttft_slo_s):
        missed = (
            Binding.TPOT_SLO if tpot_slo_s is not None and low_state.time_per_token_s > tpot_slo_s else Binding.TTFT_SLO
        )
        return ReplicaCapacity(1, low_state.tokens_per_s, low_state.time_per_token_s, low_state.ttft_s, missed, False)
    low, high = 1, ceiling
    best = low_state
    # (At a ceiling of 1 the one sequence already evaluated is the answer.)
    if ceiling > 1 and _meets(top := state(ceiling), tpot_slo_s, ttft_slo_s):
        low, best = ceiling, top
    else:
        while high - low > 1:
            mid = (low + high) // 2
            mid_state = state(mid)
            if _meets(mid_state, tpot_slo_s, ttft_slo_s):
                low, best = mid, mid_state
            else:
                high = mid
    if low == max_concurrency:
        bound = Binding.KV_CAPACITY
    elif low == ceiling:
        bound = Binding.TOKEN_BUDGET
    else:
        after = state(low + 1)
        bound = Binding.TPOT_SLO if tpot_slo_s is not None and after.time_per_token_s > tpot_slo_s else Binding.TTFT_SLO
    return ReplicaCapacity(low, best.tokens_per_s, best.time_per_token_s, best.ttft_s, bound, True)


@dataclass(frozen=True)
class Redundancy:
    spare_replicas: int = 1  # N+1
    zones: int = 1
    headroom: float = 0.0


@dataclass(frozen=True)
class FleetSize:
    replicas_average: int
    replicas_peak: int
    replicas_total: int
    replicas_per_zone: int | None
    gpus_average: int
    gpus_peak: int
    gpus_total: int
    min_replicas: int
    max_replicas: int


def replicas_for(tokens_per_s: float, per_replica_tokens_per_s: float) -> int:
    return math.ceil(tokens_per_s / per_replica_tokens_per_s - 1e-9)


def gpus_for(replicas: int, gpus_per_replica: int, replicas_per_card: int | None) -> int:
    """Whole cards: replicas x GPUs each, or for MIG slices the cards that hold them."""
    if replicas_per_card:
        return math.ceil(replicas / replicas_per_card)
    return replicas * gpus_per_replica


def size_fleet(
    demand: Demand,
    per_replica_tokens_per_s: float,
    gpus_per_replica: int,
    redundancy: Redundancy,
    replicas_per_card: int | None = None,
) -> FleetSize:
    """Replicas for average and peak demand (scaled by headroom), plus N+1: a spare replica,
    or with zones Z > 1 enough in each zone to carry the peak with one zone lost.

    MIG slices share their card's fate: one card failure takes every replica on it. So on
    slices the spares are whole cards, and the replicas spread over the cards so that losing
    any `spare_replicas` of them still leaves the peak carried; and no card holds replicas of
    two zones."""
    scale = 1 + redundancy.headroom
    average = replicas_for(demand.average_tokens_per_s * scale, per_replica_tokens_per_s)
    peak = replicas_for(demand.peak_tokens_per_s * scale, per_replica_tokens_per_s)
    per_zone = None
    spare = redundancy.spare_replicas
    if redundancy.zones > 1:
        per_zone = math.ceil(peak / (redundancy.zones - 1))
        total = per_zone * redundancy.zones
        # Losing any one zone must still leave the average carried: the floor is per zone too.
        minimum = math.ceil(average / (redundancy.zones - 1)) * redundancy.zones
        gpus_total = gpus_for(per_zone, gpus_per_replica, replicas_per_card) * redundancy.zones
    elif replicas_per_card and spare:
        holding = math.ceil(peak / replicas_per_card)  # the cards the peak needs
        cards = holding + spare
        per_card = max(1, math.ceil(peak / max(1, holding)))
        total = per_card * cards
        minimum = average + per_card * spare
        gpus_total = cards
    else:
        total = peak + spare
        minimum = average + spare
        gpus_total = gpus_for(total, gpus_per_replica, replicas_per_card)
    return FleetSize(
        replicas_average=average,
        replicas_peak=peak,
        replicas_total=total,
        replicas_per_zone=per_zone,
        gpus_average=gpus_for(average, gpus_per_replica, replicas_per_card),
        gpus_peak=gpus_for(peak, gpus_per_replica, replicas_per_card),
        gpus_total=gpus_total,
        min_replicas=min(minimum, total),
        max_replicas=total,
    )


def minimum_fleet(
    demand: Demand, gpus_per_replica: int, redundancy: Redundancy, replicas_per_card: int | None = None
) -> FleetSize:
    """The smallest fleet any replica of `gpus_per_replica` GPUs could be sized to: one that
    carries the whole peak alone, plus the spares and zones. size_fleet never gives fewer
    GPUs for a slower replica, so this bounds every capacity's fleet from below, before the
    replica is fitted or timed at all."""
    carried = max(demand.peak_tokens_per_s, demand.average_tokens_per_s) * (1 + redundancy.headroom)
    return size_fleet(demand, carried if carried > 0 else 1.0, gpus_per_replica, redundancy, replicas_per_card)


def cold_start_s(weights_bytes: float, load_gb_per_s: float, engine_startup_s: float) -> float:
    """Weights off storage at `load_gb_per_s`, then the engine's own start-up (CUDA graphs,
    KV allocation): why the minimum keeps a spare warm."""
    return weights_bytes / (load_gb_per_s * 1e9) + engine_startup_s

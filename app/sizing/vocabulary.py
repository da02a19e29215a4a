"""The closed vocabularies of a plan: what binds a replica, which bound a ranked option's
capacity was taken from, what a replica serves, how a fleet is laid out, how latency is
estimated, what carries KV between pools, how a fleet is paid for, how requests arrive and
their lengths spread, which context a decode reads at, and which tokens a cost counts. Each
is a StrEnum whose values are the strings the API writes, so a member is its own wire form
(JSON, CSV and `==` with a string all see the value); the prose that explains a value lives
with the API's field descriptions, never in the key."""

from __future__ import annotations

from enum import StrEnum


class RooflineBound(StrEnum):
    """Which roof a step or a GEMM sits under: memory bandwidth, or compute peak."""

    MEMORY = "memory"
    COMPUTE = "compute"


class Binding(StrEnum):
    """What stops a replica's load from growing: an SLO, the KV cache, one of the engine's
    caps, or (under random arrivals) the saturation rate itself."""

    TPOT_SLO = "tpot_slo"
    TTFT_SLO = "ttft_slo"
    E2E_SLO = "e2e_slo"
    KV_CAPACITY = "kv_capacity"
    # The per-step token budget (the engine's max_num_batched_tokens).
    TOKEN_BUDGET = "max_batched_tokens"
    MAX_NUM_SEQS = "max_num_seqs"
    SATURATION = "saturation"
    # The replica's rate is the one measured (a calibration's), not a modelled one.
    MEASURED = "measured"


class CapacityBound(StrEnum):
    """What a ranked option's capacity was taken from before its SLO percentile's was
    computed: each is at least the true rate, so the cost it gives is at most the true cost."""

    # The fewest GPUs any replica of the shape could need (no fit computed).
    MINIMUM_FLEET = "minimum fleet"
    # Any rate meeting the SLOs is below the saturation rate.
    SATURATION_RATE = "saturation rate"
    # The highest rate whose mean latencies meet the SLOs (means are below percentiles).
    MEAN_LATENCIES = "mean latencies"


class Role(StrEnum):
    """What a replica serves: whole requests, or under a disaggregated layout their prompts
    (the first token) or their decodes (the rest), each on a pool of its own."""

    AGGREGATED = "aggregated"
    PREFILL = "prefill"
    DECODE = "decode"


class FleetLayout(StrEnum):
    """How a fleet is made: replicas of one kind, a prefill and a decode pool, or a mix of
    replica kinds over length buckets. The API reads it from `topology` and `mix`."""

    AGGREGATED = "aggregated"
    DISAGGREGATED = "disaggregated"
    MIXED = "mixed"

    @classmethod
    def of(cls, topology: str, mix: bool) -> FleetLayout:
        """The layout a request's `topology` and `mix` ask for (mix: a mix of aggregated kinds)."""
        return cls.MIXED if mix else cls(topology)


class LatencyMode(StrEnum):
    """How latency under random arrivals is estimated: the queueing model, or the simulator."""

    ANALYTIC = "analytic"
    SIMULATE = "simulate"


class Link(StrEnum):
    """What carries a prompt's KV from a prefill replica to a decode replica: NVLink inside one
    node, or the network between nodes."""

    NVLINK = "nvlink"
    NETWORK = "network"


class Pricing(StrEnum):
    """How a fleet is paid for: every GPU on demand, or the forecast's cheapest mix of
    commitments, on-demand and spot capacity (app/sizing/procurement.py)."""

    ON_DEMAND = "on_demand"
    OPTIMIZE = "optimize"


class Arrival(StrEnum):
    """How requests arrive: a Poisson process, or gamma-distributed gaps of a given burstiness
    (vLLM's benchmark convention: the shape k, squared CV of the gaps 1/k)."""

    POISSON = "poisson"
    GAMMA = "gamma"


class LengthDistribution(StrEnum):
    """How a workload's prompt and output lengths spread about their means."""

    GAMMA = "gamma"
    LOGNORMAL = "lognormal"


class KvReadContext(StrEnum):
    """The context a decode step's KV read is timed at: the request's average over its decode
    (prompt plus half the output), or its full length (the last token's, an upper bound)."""

    AVERAGE = "average"
    FULL = "full"


class CostedTokens(StrEnum):
    """The tokens a plan's cost is counted in: what its replicas hand back. A prefill pool's
    replicas take prompts and give one token each, so theirs is the prompt."""

    OUTPUT = "output"
    PROMPT = "prompt"

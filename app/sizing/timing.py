"""Time: decode is memory-bound, prefill compute-bound.

Each phase takes as long as the slower of moving its bytes and doing its arithmetic, at a
fraction (the efficiencies) of the datasheet peaks, plus tensor-parallel all-reduces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .memory import attended_tokens, kv_bytes_for_context, kv_bytes_per_token_per_layer
from .parallelism import ep_all_to_all_s, tp_communication_s
from .precision import bytes_per_param
from .specs import MLA, ModelSpec
from .vocabulary import RooflineBound

# Crossovers beyond this many sequences are reported as none: no KV cache holds them.
CROSSOVER_SEARCH_LIMIT = 10_000_000


@dataclass(frozen=True)
class Workload:
    """What one replica runs: a model at given precisions over `tp` GPUs."""

    model: ModelSpec
    weight_precision: str
    kv_precision: str
    tp: int
    prompt_tokens: int
    output_tokens: int
    # Under an engine, the checkpoint's bytes a step streams (memory.COMPONENTS but the
    # embeddings, which are looked up, not streamed), dense part and all experts; None:
    # params x bytes (the seeds').
    streamed_weight_bytes: tuple[float, float] | None = None
    expert_parallel: int = 1
    # Under an engine, the parameters a token multiplies: decode leaves out the embedding
    # table (a lookup), prefill the lm_head too (logits of the last token only). None: all
    # active parameters (the seeds').
    matmul_params: tuple[float, float] | None = None
    # Prompt tokens of each request found in the prefix cache: no linear-layer work, but the
    # computed tokens still attend to them (their KV is read in attention).
    cached_prompt_tokens: float = 0.0

    @property
    def computed_prompt_tokens(self) -> float:
        return self.prompt_tokens - self.cached_prompt_tokens

    def prompt_prefill_flops(self, prompts: float = 1.0) -> float:
        """`prompts` prompts' prefill: the whole prompt's less that of its cached prefix."""
        whole = prefill_flops(self.model, prompts, self.prompt_tokens, self.prefill_params)
        if not self.cached_prompt_tokens:
            return whole
        return whole - prefill_flops(self.model, prompts, self.cached_prompt_tokens, self.prefill_params)

    @property
    def decode_params(self) -> float:
        return self.model.active_params if self.matmul_params is None else self.matmul_params[0]

    @property
    def prefill_params(self) -> float:
        return self.model.active_params if self.matmul_params is None else self.matmul_params[1]


@dataclass(frozen=True)
class Hardware:
    """One replica's GPUs as the roofline sees them."""

    bandwidth_bytes_per_s: float  # per GPU
    peak_flops: float  # per GPU, at the compute precision
    memory_efficiency: float = 0.7
    compute_efficiency: float = 0.5
    link_gb_per_s: float | None = None
    link_latency_us: float | None = None
    include_communication: bool = True
    # What an engine adds to every forward step (scheduler, sampling, launches), seconds.
    step_overhead_s: float = 0.0
    # ... and per sequence a step runs (sampling, detokenising, scheduling), seconds.
    sequence_overhead_s: float = 0.0
    # ... per collective under tensor/expert parallel beyond the link's latency, seconds.
    collective_latency_s: float = 0.0
    # ... per expert GEMM per MoE layer on each GPU (grouped-GEMM tile scheduling), seconds.
    expert_overhead_s: float = 0.0
    # Grouped expert GEMMs stream weights at this share of memory_efficiency.
    moe_memory_efficiency: float = 1.0
    # A request's TPOT carries the prefill chunks of the others only (engines); the lab's
    # steady state charges every arriving prompt to every request.
    tpot_excludes_own_prefill: bool = False
    # What a request waits before its first step and after its last under an engine: the
    # API server's tokenising and scheduling, and the rest of the step already running.
    request_overhead_s: float = 0.0

    def memory_s(self, nbytes: float, gpus: int) -> float:
        return nbytes / (self.bandwidth_bytes_per_s * self.memory_efficiency * gpus)

    def compute_s(self, flops: float, gpus: int) -> float:
        return flops / (self.peak_flops * self.compute_efficiency * gpus)

    @property
    def ridge_flops_per_byte(self) -> float:
        return self.peak_flops / self.bandwidth_bytes_per_s


def expert_fraction(model: ModelSpec, tokens: float) -> float:
    """Expected share of experts a step touches when `tokens` tokens each pick k of E
    uniformly and independently: 1 - (1 - k/E)^tokens. A dense model reads everything."""
    if not model.is_moe:
        return 1.0
    assert model.experts and model.experts_per_token
    return 1.0 - float((1.0 - model.experts_per_token / model.experts) ** tokens)


@dataclass(frozen=True)
class WeightRead:
    shared_bytes: float
    expert_bytes: float

    @property
    def total(self) -> float:
        return self.shared_bytes + self.expert_bytes


def weights_read(work: Workload, tokens: float) -> WeightRead:
    """What a step over `tokens` tokens streams from HBM, split into the dense part and the
    experts it touches. Under an engine the checkpoint's real bytes, embeddings left out."""
    model = work.model
    fraction = expert_fraction(model, tokens)
    if work.streamed_weight_bytes is None:
        per_param = bytes_per_param(work.weight_precision)
        expert = (model.expert_params or 0) * fraction * per_param if model.is_moe else 0.0
        return WeightRead(model.non_expert_params * per_param, expert)
    shared, experts = work.streamed_weight_bytes
    return WeightRead(shared, experts * fraction)


def weights_memory_s(hw: Hardware, read: WeightRead, gpus: int) -> float:
    """Grouped expert GEMMs stream at a constant share of the dense bandwidth; what a few
    tokens per expert cost beyond it is a fixed cost per expert GEMM (`expert_overhead_s`),
    not a bandwidth that rises with the batch (which would make a longer prompt cheaper)."""
    return hw.memory_s(read.shared_bytes, gpus) + hw.memory_s(read.expert_bytes, gpus) / hw.moe_memory_efficiency


def expert_gemms_per_gpu(model: ModelSpec, tokens: float, expert_parallel: int) -> float:
    """Expert GEMMs one GPU runs in a step over `tokens` tokens, over all MoE layers: every
    touched expert in every layer (tensor parallel shards each expert across the GPUs; expert
    parallel splits the experts between them)."""
    if not model.is_moe or tokens <= 0:
        return 0.0
    assert model.experts
    return model.layers * model.experts * expert_fraction(model, tokens) / max(1, expert_parallel)


def step_overhead_s(work: Workload, hw: Hardware, sequences: float, tokens: float) -> float:
    """What a step costs beyond the roofline: the engine's fixed and per-layer part, its
    per-sequence part and its per-expert-GEMM part."""
    overhead = hw.step_overhead_s + hw.sequence_overhead_s * sequences
    if hw.expert_overhead_s:
        overhead += hw.expert_overhead_s * expert_gemms_per_gpu(work.model, tokens, work.expert_parallel)
    return overhead


def attention_flops_per_context_token(model: ModelSpec) -> float:
    """FLOPs one query token spends per cached token per layer (QK^T and AV, 2 each per dim).

    MLA decodes in the absorbed form: scores over the latent plus the rope key, values over
    the latent, per head."""
    if model.attention == MLA:
        assert model.kv_lora_rank is not None and model.qk_rope_head_dim is not None
        return 2 * model.attention_heads * (2 * model.kv_lora_rank + model.qk_rope_head_dim)
    return 4 * model.attention_heads * model.head_dim


def communication_s(work: Workload, hw: Hardware, tokens: float) -> float:
    if not hw.include_communication or work.tp <= 1:
        return 0.0
    if hw.link_gb_per_s is None or hw.link_latency_us is None:
        raise ValueError("interconnect bandwidth and latency are needed for tensor parallel")
    model = work.model
    # Each collective waits the link's latency and NCCL's own small-message latency.
    latency_us = hw.link_latency_us + hw.collective_latency_s * 1e6
    total = tp_communication_s(tokens, model.hidden_size, model.layers, work.tp, hw.link_gb_per_s, latency_us)
    if work.expert_parallel > 1 and model.is_moe:
        assert model.experts_per_token is not None
        total += ep_all_to_all_s(
            tokens,
            model.hidden_size,
            model.layers,
            model.experts_per_token,
            work.expert_parallel,
            hw.link_gb_per_s,
            latency_us,
        )
    return total


@dataclass(frozen=True)
class Step:
    """One forward step: what it moves, what it computes, how long each takes."""

    weight_bytes: float
    kv_bytes: float
    flops: float
    memory_s: float
    compute_s: float
    communication_s: float
    expert_fraction: float
    overhead_s: float = 0.0

    @property
    def time_s(self) -> float:
        return max(self.memory_s, self.compute_s) + self.communication_s + self.overhead_s

    @property
    def bound(self) -> RooflineBound:
        return RooflineBound.COMPUTE if self.compute_s >= self.memory_s else RooflineBound.MEMORY

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / (self.weight_bytes + self.kv_bytes)


def forward_step(
    work: Workload,
    hw: Hardware,
    decodes: int,
    context_tokens: float,
    prefill_tokens: float = 0.0,
    prefill_flops_total: float = 0.0,
    queries_per_decode: int = 1,
) -> Step:
    """One engine step: `decodes` sequences each decoding one token at an average
    `context_tokens`, and `prefill_tokens` prompt tokens costing `prefill_flops_total`.

    The step reads the weights once for decodes and chunk alike (MoE: the experts either
    touches), reads the decodes' KV, writes the chunk's, and computes both. A speculative
    verification runs `queries_per_decode` (k + 1) query tokens per sequence: k + 1 times
    the arithmetic (and the tokens the experts and collectives see) over the KV read once."""
    model = work.model
    queries = decodes * queries_per_decode
    tokens = queries + prefill_tokens if prefill_tokens else queries
    weights = weights_read(work, tokens)
    kv = decodes * kv_bytes_for_context(model, work.kv_precision, context_tokens, work.tp)
    kv_write = kv_bytes_for_context(model, work.kv_precision, prefill_tokens, work.tp) if prefill_tokens else 0.0
    flops = queries * (
        2 * work.decode_params + attention_flops_per_context_token(model) * attended_tokens(model, context_tokens)
    )
    return Step(
        weight_bytes=weights.total,
        kv_bytes=kv,
        flops=flops,
        memory_s=weights_memory_s(hw, weights, work.tp) + hw.memory_s(kv + kv_write, work.tp),
        compute_s=hw.compute_s(flops + prefill_flops_total, work.tp),
        communication_s=communication_s(work, hw, tokens),
        expert_fraction=expert_fraction(model, tokens),
        overhead_s=step_overhead_s(work, hw, decodes + (1 if prefill_tokens else 0), tokens),
    )


def decode_step(work: Workload, hw: Hardware, batch: int, context_tokens: float) -> Step:
    """One decode step with `batch` sequences in flight at an average `context_tokens`."""
    return forward_step(work, hw, batch, context_tokens)


def prefill_flops(model: ModelSpec, prompts: float, prompt_tokens: float, params: float | None = None) -> float:
    """Linear layers 2 x `params` (default: the active ones) per token; causal attention half
    of a full P x P score matrix, windowed layers capped at their window."""
    per_token = model.active_params if params is None else params
    attention = attention_flops_per_context_token(model) / 2 * prompt_tokens * attended_tokens(model, prompt_tokens)
    return prompts * (2 * per_token * prompt_tokens + attention)


def prefill(work: Workload, hw: Hardware, batch: int) -> Step:
    """The lab's TTFT: `batch` prompts prefilled together in one pass."""
    model, prompt = work.model, work.prompt_tokens
    # Cached tokens are read, not computed: the KV of the whole prompt is moved either way.
    tokens = batch * work.computed_prompt_tokens
    weights = weights_read(work, tokens)
    kv = batch * kv_bytes_for_context(model, work.kv_precision, prompt, work.tp)
    flops = work.prompt_prefill_flops(batch)
    return Step(
        weight_bytes=weights.total,
        kv_bytes=kv,
        flops=flops,
        memory_s=weights_memory_s(hw, weights, work.tp) + hw.memory_s(kv, work.tp),
        compute_s=hw.compute_s(flops, work.tp),
        communication_s=communication_s(work, hw, tokens),
        expert_fraction=expert_fraction(model, tokens),
        overhead_s=step_overhead_s(work, hw, batch, tokens),
    )


def crossover_concurrency(work: Workload, hw: Hardware, context_tokens: float) -> int | None:
    """Smallest batch at which a decode step's arithmetic outlasts its memory traffic.

    None when the KV traffic each added sequence brings outgrows its compute (long contexts):
    then decode stays memory-bound at any batch."""

    def compute_wins(batch: int) -> bool:
        step = decode_step(work, hw, batch, context_tokens)
        return step.compute_s >= step.memory_s

    one = decode_step(work, hw, 1, context_tokens)
    kv_s_per_sequence = hw.memory_s(one.kv_bytes, work.tp)
    compute_s_per_sequence = one.compute_s
    if compute_s_per_sequence <= kv_s_per_sequence:
        return None
    # With every weight read (expert fraction 1) the crossover is linear; MoE's partial reads
    # only bring it earlier, so this bounds the search.
    all_weights_s = hw.memory_s(work.model.params_total * bytes_per_param(work.weight_precision), work.tp)
    high = math.ceil(all_weights_s / (compute_s_per_sequence - kv_s_per_sequence)) + 1
    if high > CROSSOVER_SEARCH_LIMIT:
        return None
    low = 1
    if compute_wins(low):
        return low
    # compute - memory is convex in the batch (the expert fraction is concave), so once
    # compute wins it keeps winning: bisect.
    while high - low > 1:
        mid = (low + high) // 2
        if compute_wins(mid):
            high = mid
        else:
            low = mid
    return high


@dataclass(frozen=True)
class SteadyState:
    """A continuously batched replica holding `concurrency` sequences in flight."""

    concurrency: int
    chunks_per_prompt: int
    chunk_tokens: float
    decode_step_s: float
    mixed_step_s: float
    time_per_token_s: float
    ttft_s: float
    tokens_per_s: float
    requests_per_s: float


def continuous_batching(
    work: Workload,
    hw: Hardware,
    concurrency: int,
    max_batched_tokens: int,
    queries_per_decode: int = 1,
    tokens_per_step: float = 1.0,
    draft_s: float = 0.0,
) -> SteadyState | None:
    """Chunked prefill mixed into decode steps under a per-step token budget (vLLM's
    max_num_batched_tokens). None when the decodes alone fill the budget: no prompt could
    ever be admitted.

    Under speculative decoding each step verifies `queries_per_decode` (k + 1) tokens per
    sequence (they count against the budget), after `draft_s` of drafting, and finishes
    `tokens_per_step` of them on average (app/sizing/speculation.py)."""
    prompt, output = work.prompt_tokens, work.output_tokens
    room = max_batched_tokens - concurrency * queries_per_decode
    if room <= 0:
        return None
    # Only the tokens missing from the prefix cache are chunked in.
    chunks = math.ceil(work.computed_prompt_tokens / room)
    chunk = work.computed_prompt_tokens / chunks
    context = prompt + output / 2
    decode_s = forward_step(work, hw, concurrency, context, queries_per_decode=queries_per_decode).time_s + draft_s
    # The chunk attends to the prompt so far: on average, the prompt's attention over chunks.
    mixed = (
        forward_step(
            work, hw, concurrency, context, chunk, work.prompt_prefill_flops() / chunks, queries_per_decode
        ).time_s
        + draft_s
    )
    extra_per_prompt = chunks * max(0.0, mixed - decode_s)
    # Each step finishes `concurrency` x tokens_per_step tokens; a request lasts `output` /
    # tokens_per_step steps, so that many new prompts arrive per step to keep the batch full.
    finished = concurrency * tokens_per_step
    step = decode_s + finished / output * extra_per_prompt
    tokens_per_s = finished / step
    # A request's own prompt is behind it once it decodes: its TPOT sees the other B - 1.
    others = concurrency - 1 if hw.tpot_excludes_own_prefill else concurrency
    observed = (decode_s + others * tokens_per_step / output * extra_per_prompt) / tokens_per_step
    # An arrival among running requests first waits out the step in flight (half, on average).
    residual = decode_s / 2 if hw.tpot_excludes_own_prefill and concurrency > 1 else 0.0
    if hw.tpot_excludes_own_prefill and concurrency > 1:
        residual += prefill_wait_s(
            tokens_per_s / output * (concurrency - 1) / concurrency, chunks * mixed, others=concurrency - 1
        )
    return SteadyState(
        concurrency=concurrency,
        chunks_per_prompt=chunks,
        chunk_tokens=chunk,
        decode_step_s=decode_s,
        mixed_step_s=mixed,
        time_per_token_s=observed,
        ttft_s=chunks * mixed + hw.request_overhead_s + residual,
        tokens_per_s=tokens_per_s,
        requests_per_s=tokens_per_s / output,
    )


def prefill_wait_s(arrivals_per_s: float, prefill_s: float, others: float = math.inf) -> float:
    """Mean wait of a new prompt behind the others' prefills: the prompts share one prefill
    stream (the step budget holds about one at a time), arriving at random, each taking the
    same time: M/D/1, W = rho S / (2 (1 - rho)). Saturated (rho >= 1) it is held at rho = 0.95,
    where the steady state has no meaning anyway.

    In a closed loop of B sequences at most the `others` (B - 1) can be ahead of a prompt, so
    the wait never exceeds others x S: M/D/1's unbounded queue would otherwise let a faster
    card, cycling more prompts through the same batch, show a longer TTFT than a slower one."""
    rho = min(0.95, arrivals_per_s * prefill_s)
    return min(rho * prefill_s / (2 * (1 - rho)), others * prefill_s)


@dataclass(frozen=True)
class Gemm:
    flops: float
    bytes_moved: float
    ridge_flops_per_byte: float
    arithmetic_intensity: float
    attainable_flops: float
    time_s: float
    bound: RooflineBound


def gemm_roofline(
    m: int,
    k: int,
    n: int,
    peak_flops: float,
    bandwidth_bytes_per_s: float,
    activation_bytes: float = 2,
    weight_bytes: float | None = None,
) -> Gemm:
    """C[M,N] = A[M,K] x B[K,N], each matrix moved once between HBM and the chip (seed 004).
    `weight_bytes` sizes B (the weights) when it is stored narrower than the activations."""
    weight_bytes = activation_bytes if weight_bytes is None else weight_bytes
    flops = 2 * m * k * n
    moved = activation_bytes * (m * k + m * n) + weight_bytes * k * n
    intensity = flops / moved
    ridge = peak_flops / bandwidth_bytes_per_s
    return Gemm(
        flops=flops,
        bytes_moved=moved,
        ridge_flops_per_byte=ridge,
        arithmetic_intensity=intensity,
        attainable_flops=min(peak_flops, intensity * bandwidth_bytes_per_s),
        time_s=max(flops / peak_flops, moved / bandwidth_bytes_per_s),
        bound=RooflineBound.COMPUTE if intensity >= ridge else RooflineBound.MEMORY,
    )


@dataclass(frozen=True)
class StepModel:
    """The step-time model of `forward_step` reduced to a few float operations, built once
    per replica for the simulator and the queueing model (the same arithmetic: one source of
    step times for `continuous_batching`, `simulate` and `queueing`).

    `time_s(decodes, decode_context_tokens, prefill_tokens, prefill_context_tokens)`: one
    step carrying `decodes` decode tokens whose contexts sum to `decode_context_tokens`, and
    a prefill chunk of `prefill_tokens` tokens placed after `prefill_context_tokens` tokens of
    its prompt already in the cache. Several chunks in one step: sum their
    `chunk_attention_flops` and pass the totals to `time_parts_s`.

    Linear in the contexts (the roofline is), except the weights a MoE step streams (the
    expert fraction) and sliding-window layers (attended tokens capped). Agrees with
    `forward_step` to rounding (tests/sizing/test_simulate.py).
    """

    work: Workload
    hw: Hardware
    # Seconds of memory traffic per layer-token of KV read or written.
    kv_s_per_layer_token: float
    # Seconds of arithmetic per FLOP, per decode token (linear layers), per prefill token.
    s_per_flop: float
    decode_flops_per_token: float
    prefill_flops_per_token: float
    # FLOPs one query token spends per cached layer-token (QK^T and AV).
    attention_flops_per_layer_token: float
    # Tensor/expert-parallel collectives: a fixed part per step and a part per token.
    communication_fixed_s: float
    communication_per_token_s: float
    overhead_s: float
    layers: int
    windowed: bool
    # Weights streaming time for a dense model (any token count); None for MoE.
    dense_weights_s: float | None
    # MoE: the dense part's time, all experts' time at full efficiency, 1 - k/E, and the
    # share of the bandwidth the experts' GEMMs stream at (weights_read, weights_memory_s).
    moe_shared_s: float = 0.0
    moe_experts_s: float = 0.0
    moe_miss: float = 1.0
    moe_efficiency: float = 1.0
    # Per sequence a step runs, and the per-expert-GEMM cost were every expert touched (MoE:
    # times the expert fraction of the step's tokens).
    sequence_overhead_s: float = 0.0
    all_experts_overhead_s: float = 0.0
    # What a prompt's tokens cost a step: 1, or 0 on a decode replica of a disaggregated
    # deployment, whose prompts were computed elsewhere (their KV arrives over a link).
    prefill_cost: float = 1.0
    # Speculative decoding (`speculating`): a verification step runs `queries_per_decode`
    # (k + 1) query tokens per decode and finishes `tokens_per_step` (E) of them on average,
    # after `draft_passes` passes of `drafter` over the decodes, each `draft_scale` of its
    # step (a head's share of the target's; 1 for a draft model), whose layers are
    # `draft_layer_ratio` of the target's.
    queries_per_decode: int = 1
    tokens_per_step: float = 1.0
    drafter: StepModel | None = None
    draft_passes: int = 0
    draft_scale: float = 1.0
    draft_layer_ratio: float = 1.0

    @classmethod
    def build(cls, work: Workload, hw: Hardware) -> StepModel:
        model = work.model
        per_layer_token = kv_bytes_per_token_per_layer(model, work.kv_precision, work.tp)
        # Collectives are linear in the tokens: their latencies, then bytes per token.
        comm0 = communication_s(work, hw, 0.0)
        comm1 = communication_s(work, hw, 1.0) - comm0
        dense = None if model.is_moe else weights_memory_s(hw, weights_read(work, 1.0), work.tp)
        plain = cls(
            work=work,
            hw=hw,
            kv_s_per_layer_token=hw.memory_s(per_layer_token, work.tp),
            s_per_flop=hw.compute_s(1.0, work.tp),
            decode_flops_per_token=2 * work.decode_params,
            prefill_flops_per_token=2 * work.prefill_params,
            attention_flops_per_layer_token=attention_flops_per_context_token(model),
            communication_fixed_s=comm0,
            communication_per_token_s=comm1,
            overhead_s=hw.step_overhead_s,
            sequence_overhead_s=hw.sequence_overhead_s,
            layers=model.layers,
            windowed=bool(model.sliding_window and model.sliding_window_layers),
            dense_weights_s=dense,
        )
        if not model.is_moe:
            return plain
        assert model.experts and model.experts_per_token
        every = weights_read(work, math.inf)  # every expert touched
        return replace(
            plain,
            moe_shared_s=hw.memory_s(every.shared_bytes, work.tp),
            moe_experts_s=hw.memory_s(every.expert_bytes, work.tp),
            moe_miss=1.0 - model.experts_per_token / model.experts,
            moe_efficiency=hw.moe_memory_efficiency,
            all_experts_overhead_s=hw.expert_overhead_s * model.layers * model.experts / max(1, work.expert_parallel),
        )

    def decode_only(self) -> StepModel:
        """The same replica serving only decodes: prompts cost its steps nothing."""
        return replace(self, prefill_cost=0.0)

    def speculating(
        self,
        num_speculative_tokens: int,
        tokens_per_step: float,
        drafter: StepModel | None,
        draft_scale: float = 1.0,
    ) -> StepModel:
        """The same replica under speculative decoding, in steps of one token: a step of the
        returned model is one E-th of a verification step. It advances every decode by one
        token on average (E per verification), carries an E-th of the verification's prompt
        chunk (`prefill_room`) and lasts an E-th of draft plus verification, so the
        simulator and the queueing model, which count a token a decode a step, keep their
        means exact; what they lose is that tokens arrive E at a time (ITL's spread).
        `drafter`: the model drafting (the target's own plain steps for a head, scaled by
        `draft_scale`); None: drafting is free (n-gram lookup)."""
        return replace(
            self,
            queries_per_decode=num_speculative_tokens + 1,
            tokens_per_step=tokens_per_step,
            drafter=drafter,
            draft_passes=num_speculative_tokens if drafter is not None else 0,
            draft_scale=draft_scale,
            draft_layer_ratio=1.0 if drafter is None else drafter.layers / self.layers,
        )

    @property
    def speculative(self) -> bool:
        return self.queries_per_decode != 1

    def prefill_room(self, budget: float, decodes: float) -> float:
        """Prompt tokens a step can carry beside `decodes` decodes under a token budget of
        `budget` (vLLM's max_num_batched_tokens): what the decodes' queries leave, an E-th of
        it a step under speculation."""
        return (budget - decodes * self.queries_per_decode) / self.tokens_per_step

    def max_decodes(self, budget: int) -> int:
        """Decodes a step's token budget holds: one query each, k + 1 under speculation
        (at least one)."""
        return max(1, budget // self.queries_per_decode)

    def weights_s(self, tokens: float) -> float:
        """Time to stream the weights a step over `tokens` tokens touches."""
        if self.dense_weights_s is not None:
            return self.dense_weights_s
        if tokens <= 0:
            return self.moe_shared_s
        fraction = 1.0 - math.pow(self.moe_miss, tokens)
        return self.moe_shared_s + self.moe_experts_s * fraction / self.moe_efficiency

    def expert_overhead_s(self, tokens: float) -> float:
        """The per-expert-GEMM cost of a step over `tokens` tokens (expert_gemms_per_gpu)."""
        if not self.all_experts_overhead_s or tokens <= 0:
            return 0.0
        return self.all_experts_overhead_s * (1.0 - math.pow(self.moe_miss, tokens))

    def attended(self, context_tokens: float) -> float:
        """Layer-tokens of cache one sequence of `context_tokens` holds."""
        if self.windowed:
            return attended_tokens(self.work.model, context_tokens)
        return self.layers * context_tokens

    def chunk_attention_flops(self, prefill_tokens: float, prefill_context_tokens: float) -> float:
        """Causal attention of a chunk of `prefill_tokens` after `prefill_context_tokens`:
        the prompt's attention to its end less that to the chunk's start (prefill_flops)."""
        end = prefill_context_tokens + prefill_tokens
        half = self.attention_flops_per_layer_token / 2
        return half * (end * self.attended(end) - prefill_context_tokens * self.attended(prefill_context_tokens))

    def time_parts_s(
        self,
        decodes: float,
        decode_attended_layer_tokens: float,
        prefill_tokens: float,
        prefill_attention_flops: float,
        prefill_written_layer_tokens: float,
    ) -> float:
        """One step from its parts: the decodes' attended layer-tokens (sum over sequences
        of `attended(context)`), the prefill tokens with their attention FLOPs and the
        layer-tokens of KV they write.

        Under speculation (`speculating`) the step is an E-th of a verification step: each
        decode runs `queries_per_decode` query tokens over its KV (read once), the chunk is E
        of this step's prompt tokens, and drafting is added."""
        speculative = self.queries_per_decode != 1
        if speculative:
            e = self.tokens_per_step
            prefill_tokens *= e
            prefill_attention_flops *= e
            prefill_written_layer_tokens *= e
        if self.prefill_cost != 1.0:
            prefill_tokens *= self.prefill_cost
            prefill_attention_flops *= self.prefill_cost
            prefill_written_layer_tokens *= self.prefill_cost
        queries = decodes * self.queries_per_decode
        tokens = queries + prefill_tokens
        if tokens <= 0:
            return 0.0
        memory = self.weights_s(tokens) + self.kv_s_per_layer_token * (
            decode_attended_layer_tokens + prefill_written_layer_tokens
        )
        compute = self.s_per_flop * (
            queries * self.decode_flops_per_token
            + self.queries_per_decode * self.attention_flops_per_layer_token * decode_attended_layer_tokens
            + prefill_tokens * self.prefill_flops_per_token
            + prefill_attention_flops
        )
        communication = self.communication_fixed_s + self.communication_per_token_s * tokens
        # The sequences a step runs: its decodes and (at least) the one prompt it chunks.
        sequences = decodes + (1.0 if prefill_tokens > 0 else 0.0)
        overhead = self.overhead_s + self.sequence_overhead_s * sequences + self.expert_overhead_s(tokens)
        step = (memory if memory > compute else compute) + communication + overhead
        if speculative:
            return (step + self.draft_s(decodes, decode_attended_layer_tokens)) / self.tokens_per_step
        return step

    def draft_s(self, decodes: float, decode_attended_layer_tokens: float) -> float:
        """Drafting for one verification step: `draft_passes` decode steps of the drafter."""
        if self.drafter is None or decodes <= 0:
            return 0.0
        step = self.drafter.time_parts_s(decodes, decode_attended_layer_tokens * self.draft_layer_ratio, 0, 0.0, 0.0)
        return self.draft_passes * self.draft_scale * step

    def time_s(
        self,
        decodes: float,
        decode_context_tokens: float,
        prefill_tokens: float = 0.0,
        prefill_context_tokens: float = 0.0,
    ) -> float:
        """One step: `decodes` decode tokens whose contexts sum to `decode_context_tokens`
        (each decode's KV is read at the mean context), and one prefill chunk."""
        if self.windowed:
            attended = decodes * self.attended(decode_context_tokens / decodes) if decodes else 0.0
        else:
            attended = self.layers * decode_context_tokens
        flops = self.chunk_attention_flops(prefill_tokens, prefill_context_tokens) if prefill_tokens else 0.0
        written = self.attended(prefill_tokens) if prefill_tokens else 0.0
        return self.time_parts_s(decodes, attended, prefill_tokens, flops, written)


def step_time_s(
    work: Workload,
    hw: Hardware,
    decodes: int,
    prefill_tokens: float,
    decode_context_tokens: float,
    prefill_context_tokens: float = 0.0,
) -> float:
    """Duration of one engine step (see StepModel.time_s); builds the model each call: use
    `StepModel.build(work, hw)` once when evaluating many steps."""
    return StepModel.build(work, hw).time_s(decodes, decode_context_tokens, prefill_tokens, prefill_context_tokens)

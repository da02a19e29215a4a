"""Memory: weights, KV cache, and how many conversations fit.

Capacities are in bytes throughout; GB means 10^9 bytes because that is what vendors print.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .precision import (
    KEPT_PRECISION,
    bytes_per_param,
    is_quantized,
    quantized_by_default,
    scale_bytes_per_param,
)
from .specs import MLA, ModelSpec

GB = 10**9
# The rough planning rule of seed 002: weights x 1.3 in 90% of the card.
ROUGH_OVERHEAD = 1.3
ROUGH_USABLE_FRACTION = 0.9


def weights_bytes(model: ModelSpec, weight_precision: str) -> float:
    return model.params_total * bytes_per_param(weight_precision)


def kv_heads_stored(model: ModelSpec, tp: int) -> int:
    """KV heads held across a tensor-parallel group of `tp` GPUs.

    Each GPU holds at least one whole head, so with tp > kv_heads vLLM replicates heads:
    tp x ceil(kv_heads / tp). For tp <= kv_heads (tp dividing kv_heads) this is kv_heads.
    """
    return tp * math.ceil(model.kv_heads / tp)


def kv_bytes_per_token_per_layer(model: ModelSpec, kv_precision: str, tp: int = 1) -> float:
    """Bytes one token adds to one layer's cache, summed over the GPUs of the replica."""
    kv_bytes = bytes_per_param(kv_precision)
    if model.attention == MLA:
        assert model.kv_lora_rank is not None and model.qk_rope_head_dim is not None
        # The latent has no head dimension to shard: every GPU of the group holds all of it.
        return tp * (model.kv_lora_rank + model.qk_rope_head_dim) * kv_bytes
    return 2 * kv_heads_stored(model, tp) * model.head_dim * kv_bytes


def kv_bytes_per_token(model: ModelSpec, kv_precision: str, tp: int = 1) -> float:
    """Bytes a token within every layer's reach costs (all layers hold it)."""
    return model.layers * kv_bytes_per_token_per_layer(model, kv_precision, tp)


def attended_tokens(model: ModelSpec, context_tokens: float) -> float:
    """Layer-tokens of cache a sequence of `context_tokens` holds (and attention reads):
    full layers hold the whole context, sliding-window layers at most the window."""
    windowed = model.sliding_window_layers if model.sliding_window else 0
    full = model.layers - windowed
    held = full * context_tokens
    if windowed:
        assert model.sliding_window is not None
        held += windowed * min(context_tokens, model.sliding_window)
    return held


def kv_bytes_for_context(model: ModelSpec, kv_precision: str, context_tokens: float, tp: int = 1) -> float:
    """KV bytes one sequence holds at `context_tokens`, sliding windows accounted for."""
    return attended_tokens(model, context_tokens) * kv_bytes_per_token_per_layer(model, kv_precision, tp)


def usable_bytes(memory_gb: float, gpus: int, gpu_memory_utilization: float, reserved_gb: float) -> float:
    """What the engine may fill: vLLM's utilisation fraction, minus a per-GPU reserve."""
    return (memory_gb * GB * gpu_memory_utilization - reserved_gb * GB) * gpus


@dataclass(frozen=True)
class FitResult:
    weights_bytes: float
    kv_bytes_per_token: float
    kv_bytes_per_sequence: float
    usable_bytes: float
    kv_budget_bytes: float
    kv_capacity_tokens: int
    max_concurrency: int
    fits_weights: bool
    fits: bool
    kv_bytes_at_concurrency: float
    memory_used_bytes: float
    # A prompt prefix common to every sequence, held once (whole blocks), tokens and bytes;
    # and the KV that max_concurrency sequences would repeat without sharing it.
    shared_prefix_tokens: int = 0
    shared_prefix_kv_bytes: float = 0.0
    kv_bytes_saved: float = 0.0


def fit(
    model: ModelSpec,
    *,
    memory_gb: float,
    gpus: int,
    weight_precision: str,
    kv_precision: str,
    prompt_tokens: int,
    output_tokens: int,
    concurrency: int = 1,
    gpu_memory_utilization: float = 0.9,
    reserved_gb: float = 0.0,
) -> FitResult:
    """Does a replica of `gpus` cards (tensor parallel) hold the weights, and how many
    sequences of prompt + output tokens does the rest hold?"""
    weights = weights_bytes(model, weight_precision)
    usable = usable_bytes(memory_gb, gpus, gpu_memory_utilization, reserved_gb)
    return fit_budget(
        model,
        weights=weights,
        usable=usable,
        gpus=gpus,
        kv_precision=kv_precision,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        concurrency=concurrency,
    )


def fit_budget(
    model: ModelSpec,
    *,
    weights: float,
    usable: float,
    gpus: int,
    kv_precision: str,
    prompt_tokens: int,
    output_tokens: int,
    concurrency: int = 1,
    block_size: int = 1,
    shared_prefix_tokens: int = 0,
    draft_kv_bytes_per_token: float = 0.0,
) -> FitResult:
    """The KV cache left of `usable` bytes (over the replica) once `weights` are in, as
    tokens and as whole sequences. Engines page the cache in blocks of `block_size` tokens:
    capacity rounds down to whole blocks and each sequence takes whole blocks. A prefix of
    `shared_prefix_tokens` common to every prompt is held once, in the whole blocks it fills
    (a prefix cache shares full blocks only; the partial last one is each sequence's).
    A speculative drafter keeps `draft_kv_bytes_per_token` more for every token, in the same
    blocks (vLLM sizes one cache for both)."""
    budget = usable - weights
    per_token = kv_bytes_per_token(model, kv_precision, gpus) + draft_kv_bytes_per_token
    context = prompt_tokens + output_tokens
    if block_size > 1:
        context = math.ceil(context / block_size) * block_size
    shared_tokens = shared_prefix_tokens - shared_prefix_tokens % block_size
    shared_bytes = kv_bytes_for_context(model, kv_precision, shared_tokens, gpus) if shared_tokens else 0.0
    shared_bytes += draft_kv_bytes_per_token * shared_tokens
    per_sequence = kv_bytes_for_context(model, kv_precision, context, gpus) + draft_kv_bytes_per_token * context
    per_sequence -= shared_bytes
    fits_weights = budget > 0
    capacity_tokens = math.floor(budget / per_token) if fits_weights else 0
    if block_size > 1:
        capacity_tokens -= capacity_tokens % block_size
        budget_in_blocks = capacity_tokens * per_token
    else:
        budget_in_blocks = budget
    room = budget_in_blocks - shared_bytes
    max_concurrency = math.floor(room / per_sequence) if fits_weights and room > 0 else 0
    kv_at_concurrency = per_sequence * concurrency + (shared_bytes if concurrency else 0.0)
    return FitResult(
        weights_bytes=weights,
        kv_bytes_per_token=per_token,
        kv_bytes_per_sequence=per_sequence,
        usable_bytes=usable,
        kv_budget_bytes=budget,
        kv_capacity_tokens=capacity_tokens,
        max_concurrency=max_concurrency,
        fits_weights=fits_weights,
        fits=fits_weights and concurrency <= max_concurrency,
        kv_bytes_at_concurrency=kv_at_concurrency,
        memory_used_bytes=weights + kv_at_concurrency,
        shared_prefix_tokens=shared_tokens,
        shared_prefix_kv_bytes=shared_bytes,
        kv_bytes_saved=shared_bytes * max(0, max_concurrency - 1),
    )


def rough_gpus(weights: float, memory_gb: float) -> int:
    """Seed 002's planning rule: ceil(weights x 1.3 / (0.9 x memory))."""
    return math.ceil(weights * ROUGH_OVERHEAD / (ROUGH_USABLE_FRACTION * memory_gb * GB))


# --- What a real checkpoint weighs (engines) -----------------------------------------------

ATTENTION = "attention"
DENSE_MLP = "dense_mlp"
EXPERTS = "experts"
EMBEDDINGS = "embeddings"
LM_HEAD = "lm_head"
COMPONENTS = (ATTENTION, DENSE_MLP, EXPERTS, EMBEDDINGS, LM_HEAD)


def params_by_component(model: ModelSpec) -> dict[str, float]:
    return dict(_params_by_component(model))


@lru_cache(maxsize=1024)
def _params_by_component(model: ModelSpec) -> tuple[tuple[str, float], ...]:
    """Parameters per component, from the architecture.

    Attention counts the Q, K, V and output projections of a GQA/MHA layer; MLA's low-rank
    projections are not described by the catalog's fields, so they stay in `dense_mlp` (the
    non-expert linear weights; shared experts, routers and norms too). Without a vocabulary
    size the embeddings cannot be told apart and count as linear weights."""
    vocab = model.vocab_size or 0
    embeddings = float(vocab * model.hidden_size)
    lm_head = 0.0 if model.tie_word_embeddings else embeddings
    attention = 0.0
    if model.attention != MLA:
        q_width = model.attention_heads * model.head_dim
        kv_width = model.kv_heads * model.head_dim
        attention = float(model.layers * model.hidden_size * (2 * q_width + 2 * kv_width))
    experts = float(model.expert_params or 0) if model.is_moe else 0.0
    dense = model.params_total - attention - experts - embeddings - lm_head
    if dense < 0:
        # The architecture fields and params_total disagree (an inline spec): keep the total.
        attention, dense = 0.0, float(model.params_total - experts - embeddings - lm_head)
        if dense < 0:
            embeddings = lm_head = 0.0
            dense = float(model.params_total - experts)
    return (
        (ATTENTION, attention),
        (DENSE_MLP, dense),
        (EXPERTS, experts),
        (EMBEDDINGS, embeddings),
        (LM_HEAD, lm_head),
    )


def checkpoint_weights_by_component(
    model: ModelSpec, weight_precision: str, quantized: tuple[str, ...] | None = None
) -> dict[str, float]:
    return dict(_checkpoint_weights(model, weight_precision, quantized))


@lru_cache(maxsize=1024)
def _checkpoint_weights(
    model: ModelSpec, weight_precision: str, quantized: tuple[str, ...] | None
) -> tuple[tuple[str, float], ...]:
    """Bytes per component as a checkpoint in `weight_precision` stores them: the quantized
    components in that format with its block scales, the rest in bf16 (the format's
    convention unless the checkpoint names its own, e.g. Meta's FP8 405B keeps attention in
    bf16). A 16-bit or wider format stores everything in itself."""
    params = params_by_component(model)
    if not is_quantized(weight_precision):
        per_param = bytes_per_param(weight_precision)
        return tuple((name, count * per_param) for name, count in params.items())
    if quantized is None:
        quantized = quantized_by_default(weight_precision)
    quantized_bytes = bytes_per_param(weight_precision) + scale_bytes_per_param(weight_precision)
    kept = bytes_per_param(KEPT_PRECISION)
    return tuple((name, count * (quantized_bytes if name in quantized else kept)) for name, count in params.items())

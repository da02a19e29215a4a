"""Memory: weights, KV cache, and how many conversations fit (MODEL.md section 1).

Capacities are in bytes throughout; GB means 10^9 bytes because that is what vendors print.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .precision import bytes_per_param
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
    budget = usable - weights
    per_token = kv_bytes_per_token(model, kv_precision, gpus)
    per_sequence = kv_bytes_for_context(model, kv_precision, prompt_tokens + output_tokens, gpus)
    fits_weights = budget > 0
    max_concurrency = math.floor(budget / per_sequence) if fits_weights else 0
    capacity_tokens = math.floor(budget / per_token) if fits_weights else 0
    kv_at_concurrency = per_sequence * concurrency
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
    )


def rough_gpus(weights: float, memory_gb: float) -> int:
    """Seed 002's planning rule: ceil(weights x 1.3 / (0.9 x memory))."""
    return math.ceil(weights * ROUGH_OVERHEAD / (ROUGH_USABLE_FRACTION * memory_gb * GB))

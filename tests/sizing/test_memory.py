"""Memory (MODEL.md section 1) against the seed figures and hand calculations."""

import math

import pytest

from app.sizing import memory
from app.sizing.specs import ModelSpec

from .specs import DEEPSEEK_V3, LLAMA_2_7B, LLAMA_31_8B, LLAMA_31_70B

GIB = 2**30


def fit(model, memory_gb=80, gpus=1, prompt=2048, output=512, **kw):
    kw.setdefault("weight_precision", "bf16")
    kw.setdefault("kv_precision", "bf16")
    return memory.fit(model, memory_gb=memory_gb, gpus=gpus, prompt_tokens=prompt, output_tokens=output, **kw)


def test_llama_3_1_8b_weights_are_16_06_gb_in_bf16():
    assert memory.weights_bytes(LLAMA_31_8B, "bf16") == 8_030_261_248 * 2


def test_llama_3_1_8b_caches_131072_bytes_per_token():
    assert memory.kv_bytes_per_token(LLAMA_31_8B, "bf16") == 2 * 32 * 8 * 128 * 2 == 131_072


def test_llama_2_7b_caches_four_times_more_without_gqa():
    assert memory.kv_bytes_per_token(LLAMA_2_7B, "bf16") == 524_288


def test_a_32k_conversation_holds_4_gib():
    assert memory.kv_bytes_for_context(LLAMA_31_8B, "bf16", 32_768) == 4 * GIB


def test_llama_3_1_8b_holds_166_conversations_of_2048_plus_512_on_an_h100():
    assert fit(LLAMA_31_8B).max_concurrency == 166


def test_32k_prompts_leave_12_conversations_for_llama_3_1_8b_and_3_for_llama_2_7b():
    assert fit(LLAMA_31_8B, prompt=32_768).max_concurrency == 12
    assert fit(LLAMA_2_7B, prompt=32_768).max_concurrency == 3


def test_70b_bf16_does_not_fit_one_h100_but_fits_two_or_int4():
    assert not fit(LLAMA_31_70B).fits_weights
    assert fit(LLAMA_31_70B).max_concurrency == 0
    assert fit(LLAMA_31_70B, gpus=2).fits_weights
    assert fit(LLAMA_31_70B, weight_precision="int4").fits_weights


def test_rough_rule_gives_three_h100s_for_70b_bf16():
    assert memory.rough_gpus(memory.weights_bytes(LLAMA_31_70B, "bf16"), 80) == 3


def test_usable_memory_takes_utilisation_then_a_per_gpu_reserve():
    assert memory.usable_bytes(80, 2, 0.9, 1.5) == (80e9 * 0.9 - 1.5e9) * 2


def test_fits_compares_the_requested_concurrency_with_capacity():
    assert fit(LLAMA_31_8B, concurrency=166).fits
    assert not fit(LLAMA_31_8B, concurrency=167).fits


def test_kv_capacity_tokens_is_the_budget_over_bytes_per_token():
    result = fit(LLAMA_31_8B)
    assert result.kv_capacity_tokens == math.floor((72e9 - 16_060_522_496) / 131_072)


def test_kv_heads_replicate_when_tp_exceeds_them():
    model = ModelSpec("tiny", 10**9, 16, 2048, 16, 2, 128)
    # tp 4 over 2 KV heads: each GPU still holds one whole head, 4 heads in all.
    assert memory.kv_bytes_per_token(model, "bf16", tp=4) == 4 * 2 * 16 * 128 * 2
    assert memory.kv_bytes_per_token(model, "bf16", tp=2) == 2 * 2 * 16 * 128 * 2


def test_mla_caches_the_latent_plus_rope_key_per_layer():
    assert memory.kv_bytes_per_token(DEEPSEEK_V3, "bf16") == 61 * (512 + 64) * 2 == 70_272


def test_mla_latent_is_whole_on_every_gpu_of_a_tp_group():
    assert memory.kv_bytes_per_token(DEEPSEEK_V3, "bf16", tp=8) == 8 * 70_272


def test_sliding_window_layers_stop_growing_at_the_window():
    # gpt-oss-style: half of 24 layers windowed at 128 tokens.
    model = ModelSpec("windowed", 10**9, 24, 2880, 64, 8, 64, sliding_window=128, sliding_window_layers=12)
    per_layer = 2 * 8 * 64 * 2
    assert memory.kv_bytes_for_context(model, "bf16", 8192) == (12 * 8192 + 12 * 128) * per_layer
    assert memory.kv_bytes_for_context(model, "bf16", 100) == 24 * 100 * per_layer


def test_fp8_kv_halves_the_cache():
    assert memory.kv_bytes_per_token(LLAMA_31_8B, "fp8") == 65_536


@pytest.mark.parametrize(("precision", "expected"), [("fp32", 4), ("bf16", 2), ("fp8", 1), ("int4", 0.5)])
def test_weights_follow_bytes_per_parameter(precision, expected):
    assert memory.weights_bytes(LLAMA_31_8B, precision) == 8_030_261_248 * expected

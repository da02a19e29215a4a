"""The engine step terms beyond the roofline: per running sequence, per collective, per expert
GEMM and per MLA layer, each counted where it belongs and nowhere else."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.sizing import engine as eng
from app.sizing import timing
from app.sizing.parallelism import ALL_REDUCES_PER_LAYER

from .specs import DEEPSEEK_V3, LLAMA_31_8B, LLAMA_31_70B, QWEN3_30B_A3B

H100 = timing.Hardware(3.35e12, 989e12, memory_efficiency=0.8, link_gb_per_s=450, link_latency_us=10)


def work(model=LLAMA_31_8B, tp=1, ep=1) -> timing.Workload:
    return timing.Workload(model, "bf16", "bf16", tp, 1000, 200, expert_parallel=ep)


def test_every_running_sequence_adds_its_cost_to_the_step():
    hw = replace(H100, sequence_overhead_s=10e-6)
    base = timing.decode_step(work(), H100, 64, 1100.0).time_s
    # 64 sequences at 10 us each: 0.64 ms more, and a step with a prefill chunk runs one more.
    assert timing.decode_step(work(), hw, 64, 1100.0).time_s == pytest.approx(base + 64 * 10e-6)
    flops = timing.prefill_flops(LLAMA_31_8B, 1, 500)
    mixed = timing.forward_step(work(), hw, 64, 1100.0, 500, flops).time_s
    assert mixed == pytest.approx(timing.forward_step(work(), H100, 64, 1100.0, 500, flops).time_s + 65 * 10e-6)


def test_each_collective_waits_nccl_latency_beyond_the_link_and_only_under_parallel():
    hw = replace(H100, collective_latency_s=8e-6)
    # Tensor parallel 4 on an 80-layer model: two all-reduces a layer, 8 us more each.
    extra = timing.communication_s(work(LLAMA_31_70B, tp=4), hw, 32) - timing.communication_s(
        work(LLAMA_31_70B, tp=4), H100, 32
    )
    assert extra == pytest.approx(ALL_REDUCES_PER_LAYER * 80 * 8e-6)
    assert timing.communication_s(work(LLAMA_31_8B, tp=1), hw, 32) == 0.0
    # Expert parallel adds its all-to-all pair per MoE layer (48 layers), 8 us more each.
    ep = work(QWEN3_30B_A3B, tp=2, ep=2)
    extra = timing.communication_s(ep, hw, 32) - timing.communication_s(ep, H100, 32)
    assert extra == pytest.approx((ALL_REDUCES_PER_LAYER * 48 + 2 * 48) * 8e-6)


def test_mla_models_pay_their_extra_per_layer_cost_and_others_do_not():
    profile = eng.EngineProfile(
        "e", "E", "1", eng.UTIL_OF_VISIBLE, 0.9, 2048, 256, 16, step_overhead_ms=1.0, layer_overhead_us=10.0,
        mla_layer_overhead_us=40.0,
    )  # fmt: skip
    # DeepSeek-V3's 61 layers at 10 + 40 us, Llama's 32 at 10 us, both after the fixed 1 ms.
    assert profile.step_overhead_s(DEEPSEEK_V3.layers, mla=True) == pytest.approx(1e-3 + 61 * 50e-6)
    assert profile.step_overhead_s(LLAMA_31_8B.layers) == pytest.approx(1e-3 + 32 * 10e-6)


@settings(max_examples=40, deadline=None)
@given(
    batch=st.integers(1, 512),
    more=st.integers(1, 512),
    context=st.floats(1.0, 32_000.0),
    model=st.sampled_from([LLAMA_31_8B, QWEN3_30B_A3B, DEEPSEEK_V3]),
)
def test_with_every_term_a_decode_step_never_shortens_as_the_batch_grows(batch, more, context, model):
    hw = replace(H100, sequence_overhead_s=6e-6, collective_latency_s=8e-6, expert_overhead_s=1e-6)
    w = work(model, tp=8 if model is DEEPSEEK_V3 else 1)
    assert timing.decode_step(w, hw, batch + more, context).time_s >= timing.decode_step(w, hw, batch, context).time_s


@settings(max_examples=40, deadline=None)
@given(prompt=st.integers(1, 16_000), more=st.integers(1, 16_000))
def test_a_moe_prefill_never_shortens_as_the_prompt_grows(prompt, more):
    # Expert weights stream at a constant share, and every expert GEMM adds its fixed cost: a
    # longer prompt touches no fewer experts and moves no fewer bytes.
    hw = replace(H100, moe_memory_efficiency=0.5, expert_overhead_s=2e-6)
    short = timing.prefill(replace(work(QWEN3_30B_A3B), prompt_tokens=prompt), hw, 1).time_s
    long = timing.prefill(replace(work(QWEN3_30B_A3B), prompt_tokens=prompt + more), hw, 1).time_s
    assert long >= short

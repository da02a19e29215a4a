"""Prefix caching in the memory plan, the lab's prefill and the continuous-batching steady
state (MODEL.md section 8), with the arithmetic written out."""

from __future__ import annotations

import math

import pytest

from app.sizing.plan import PlanInputs, plan_fit, plan_throughput

from .specs import H100_SXM, LLAMA_31_8B

KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # 131,072 B: layers x K,V x kv heads x head_dim x bf16
PARAMS = 8_030_261_248
FLOPS_S = 989e12 * 0.5  # bf16 peak x compute efficiency (ideal)


def test_a_hit_rate_of_0_75_cuts_compute_bound_ttft_of_8000_token_prompts_to_about_a_quarter() -> None:
    prompt = 8000
    whole = plan_throughput(LLAMA_31_8B, H100_SXM, PlanInputs(prompt_tokens=prompt, output_tokens=200))
    cached = plan_throughput(
        LLAMA_31_8B, H100_SXM, PlanInputs(prompt_tokens=prompt, output_tokens=200, prefix_cache_hit_rate=0.75)
    )
    assert whole.point.prefill.bound == cached.point.prefill.bound == "compute"
    # Linear layers: 2 x params a computed token; causal attention: 2 x layers x heads x head_dim
    # per pair of tokens, and the computed tokens (6,000..8,000) still attend to the cached ones.
    linear = 2 * PARAMS * prompt
    attention = 2 * 32 * 32 * 128 * prompt**2
    assert whole.point.prefill.compute_s == pytest.approx((linear + attention) / FLOPS_S, rel=1e-9)
    computed = 2 * PARAMS * 2000 + 2 * 32 * 32 * 128 * (prompt**2 - 6000**2)
    assert cached.point.prefill.compute_s == pytest.approx(computed / FLOPS_S, rel=1e-9)
    ratio = cached.point.prefill.time_s / whole.point.prefill.time_s
    assert ratio == pytest.approx(computed / (linear + attention), rel=1e-6)
    assert 0.25 < ratio < 0.28  # a quarter, plus the attention over the cached 6,000 tokens
    assert cached.work.computed_prompt_tokens == 2000


def test_cached_tokens_shrink_the_steady_state_s_prefill_chunks() -> None:
    inputs = PlanInputs(prompt_tokens=8000, output_tokens=200, concurrency=16, max_batched_tokens=2048)
    whole = plan_throughput(LLAMA_31_8B, H100_SXM, inputs).point.steady
    cached = plan_throughput(
        LLAMA_31_8B, H100_SXM, PlanInputs(**{**inputs.__dict__, "prefix_cache_hit_rate": 0.75})
    ).point.steady
    assert whole is not None and cached is not None
    # 8,000 tokens in chunks of at most 2,048 - 16: 4; the 2,000 computed ones: 1.
    assert (whole.chunks_per_prompt, cached.chunks_per_prompt) == (math.ceil(8000 / 2032), 1)
    assert cached.ttft_s < whole.ttft_s / 3
    assert cached.tokens_per_s > whole.tokens_per_s
    # Decoding still reads the whole context's KV: the decode step is the same.
    assert cached.decode_step_s == whole.decode_step_s


def test_a_2000_token_shared_system_prompt_raises_max_concurrency_by_the_kv_it_no_longer_repeats() -> None:
    plain = plan_fit(LLAMA_31_8B, H100_SXM, PlanInputs(prompt_tokens=2048, output_tokens=512))
    shared = plan_fit(
        LLAMA_31_8B, H100_SXM, PlanInputs(prompt_tokens=2048, output_tokens=512, shared_prefix_tokens=2000)
    )
    budget = 0.9 * 80e9 - PARAMS * 2
    assert plain.result.max_concurrency == math.floor(budget / (2560 * KV_PER_TOKEN)) == 166  # the seed's figure
    # The prefix once, then 560 private tokens a sequence.
    expected = math.floor((budget - 2000 * KV_PER_TOKEN) / (560 * KV_PER_TOKEN))
    assert shared.result.max_concurrency == expected == 758
    assert shared.result.shared_prefix_kv_bytes == 2000 * KV_PER_TOKEN
    assert shared.result.kv_bytes_per_sequence == 560 * KV_PER_TOKEN
    assert shared.result.kv_bytes_saved == 2000 * KV_PER_TOKEN * (758 - 1)
    # The shared prefix is cached for every request after the first.
    timed = plan_throughput(LLAMA_31_8B, H100_SXM, PlanInputs(prompt_tokens=2048, shared_prefix_tokens=2000))
    assert timed.work.computed_prompt_tokens == 48


def test_only_whole_blocks_of_a_shared_prefix_are_shared_under_an_engine() -> None:
    from tests.sizing.test_engine import VLLM

    inputs = PlanInputs(prompt_tokens=2048, output_tokens=512, engine=VLLM)
    plain = plan_fit(LLAMA_31_8B, H100_SXM, inputs).result
    shared = plan_fit(LLAMA_31_8B, H100_SXM, PlanInputs(**{**inputs.__dict__, "shared_prefix_tokens": 2010})).result
    block = VLLM.block_size
    held = 2010 - 2010 % block
    assert shared.shared_prefix_tokens == held
    assert shared.kv_bytes_per_sequence == plain.kv_bytes_per_sequence - held * KV_PER_TOKEN
    assert shared.kv_capacity_tokens == plain.kv_capacity_tokens


def test_no_cache_changes_nothing_and_the_last_token_is_always_computed() -> None:
    inputs = PlanInputs(prompt_tokens=2048, output_tokens=512)
    assert inputs.cached_prompt_tokens() == 0
    assert PlanInputs(prompt_tokens=2048, prefix_cache_hit_rate=1.0).cached_prompt_tokens() == 2047
    assert (
        PlanInputs(prompt_tokens=100, prefix_cache_hit_rate=0.2, shared_prefix_tokens=50).cached_prompt_tokens() == 50
    )
    assert (
        PlanInputs(prompt_tokens=100, prefix_cache_hit_rate=0.7, shared_prefix_tokens=50).cached_prompt_tokens() == 70
    )


# --- the simulator ------------------------------------------------------------------------------


def _burst(prompt: int, output: int, limits, requests: int, **prefix: float):
    from app.sizing import timing
    from app.sizing.simulate import Traffic, burst
    from tests.sizing.test_burst import H100_ENGINE

    work = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, prompt, output)
    steps = timing.StepModel.build(work, H100_ENGINE)
    return burst(steps, Traffic(1.0, prompt, output, **prefix), limits, requests=requests), work, H100_ENGINE


def test_the_simulator_computes_only_the_uncached_part_of_a_prompt_in_chunks() -> None:
    from app.sizing import timing
    from app.sizing.simulate import Limits

    # One 8,000-token prompt, 6,000 cached: its 2,000 computed tokens fit one 2,048-token step,
    # attending to the 6,000 before them (prefill_flops to 8,000 less that to 6,000).
    limits = Limits(2048, 256, 10_000_000)
    result, work, hw = _burst(8000, 50, limits, 1, prefix_cache_hit_rate=0.75)
    params = work.prefill_params
    flops = timing.prefill_flops(work.model, 1, 8000, params) - timing.prefill_flops(work.model, 1, 6000, params)
    chunk_s = timing.forward_step(work, hw, 0, 0.0, 2000, flops).time_s
    decode_s = sum(timing.decode_step(work, hw, 1, 8000 + j).time_s for j in range(49))
    assert result.steps == 1 + 49
    assert result.ttft_s.p50 == pytest.approx(chunk_s + hw.request_overhead_s, rel=1e-9)
    assert result.makespan_s == pytest.approx(chunk_s + decode_s + hw.request_overhead_s, rel=1e-9)
    plain, _, _ = _burst(8000, 50, limits, 1)
    assert plain.steps == 4 + 49 and plain.ttft_s.p50 > 3 * result.ttft_s.p50


def test_a_shared_prefix_held_once_lets_the_simulator_run_more_sequences_at_once() -> None:
    from app.sizing.simulate import Limits

    # 60,000 tokens of KV; requests of 2,048 + 512 tokens, 2,000 of the prompt shared: without
    # sharing 23 whole sequences fit (60,000 // 2,560), sharing (60,000 - 2,000) // 560 = 103.
    limits = Limits(8192, 1024, 60_000)
    plain, _, _ = _burst(2048, 512, limits, 200)
    shared, _, _ = _burst(2048, 512, limits, 200, shared_prefix_tokens=2000)
    # More run at once (admitted while their private prompt fits; preempted as answers grow):
    # far fewer, fuller steps.
    assert shared.steps < plain.steps / 3
    assert shared.makespan_s < plain.makespan_s / 2
    assert shared.output_tokens == plain.output_tokens == 200 * 512


# --- the analytic queueing model against the simulator ---------------------------------------


@pytest.mark.parametrize(
    "prefix",
    [{"prefix_cache_hit_rate": 0.75}, {"shared_prefix_tokens": 3000}],
    ids=["hit rate 0.75", "3,000 shared"],
)
def test_the_queueing_model_follows_the_simulator_with_a_prefix_cache(prefix: dict[str, float]) -> None:
    from app.sizing import timing
    from app.sizing.queueing import ReplicaModel
    from app.sizing.simulate import Limits, Traffic, simulate
    from tests.sizing.test_burst import H100_ENGINE

    # 4,000-token prompts (spread 0.5), 200-token answers; 60,000 tokens of KV, so the shared
    # prefix held once doubles the seats.
    work = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 4000, 200)
    steps = timing.StepModel.build(work, H100_ENGINE)
    limits = Limits(2048, 256, 60_000)
    plain = ReplicaModel.build(steps, Traffic(1.0, 4000, 200, 0.5, 0.0), limits)
    cached = ReplicaModel.build(steps, Traffic(1.0, 4000, 200, 0.5, 0.0, **prefix), limits)
    assert cached.saturation_rate_per_s > 1.2 * plain.saturation_rate_per_s
    rate = 0.5 * cached.saturation_rate_per_s
    analytic = cached.latency(rate)
    simulated = simulate(steps, Traffic(rate, 4000, 200, 0.5, 0.0, **prefix), limits, seed=1, requests=4000)
    assert analytic.ttft_s.p50 == pytest.approx(simulated.ttft_s.p50, rel=0.35)
    assert analytic.tpot_s.mean == pytest.approx(simulated.tpot_s.mean, rel=0.25)

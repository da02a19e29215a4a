"""The discrete-event simulator (precise mode, MODEL.md §7) against closed forms: M/D/1 at
one token per request, Little's law on its own output, lone requests stepping through the
step-time model, monotonicity in rate and burstiness, determinism, and the decode-stretch
walk against stepping every decode step through the scheduler."""

import random
from dataclasses import replace

import pytest

from app.sizing import timing
from app.sizing.simulate import (
    MAX_REQUESTS,
    Limits,
    Traffic,
    batch_means_ci,
    pair_sampler,
    quantile,
    saturation_rate,
    simulate,
)

from .specs import DEEPSEEK_V3, LLAMA_31_8B, LLAMA_31_70B, QWEN3_30B_A3B

H100 = timing.Hardware(3.35e12, 989e12, link_gb_per_s=450, link_latency_us=10)
H100_ENGINE = timing.Hardware(3.35e12, 989e12, step_overhead_s=0.003, moe_memory_efficiency=0.5)
# Every step term an engine profile can set: per sequence, per collective, per expert GEMM.
H100_TERMS = replace(
    H100, step_overhead_s=0.002, sequence_overhead_s=8e-6, collective_latency_s=9e-6, expert_overhead_s=1.5e-6
)
# 8B on an H100: (80 GB x 0.9 - 16.06 GB) / 131,072 B per token = 426,800 tokens of KV.
ROOMY = Limits(max_batched_tokens=2048, max_num_seqs=256, kv_capacity_tokens=426_800)


def steps_for(prompt: int, output: int, model=LLAMA_31_8B, hw=H100, tp=1) -> timing.StepModel:
    return timing.StepModel.build(timing.Workload(model, "bf16", "bf16", tp, prompt, output), hw)


# A model whose half of the layers attend to a 512-token window only.
WINDOWED = replace(LLAMA_31_8B, name="windowed 8B", sliding_window=512, sliding_window_layers=16)


@pytest.mark.parametrize(
    "model, tp, hw",
    [
        (LLAMA_31_8B, 1, H100),
        (QWEN3_30B_A3B, 1, H100_ENGINE),
        (DEEPSEEK_V3, 8, H100),
        (LLAMA_31_70B, 4, H100),
        (WINDOWED, 1, H100_ENGINE),
        (QWEN3_30B_A3B, 2, H100_TERMS),
        (DEEPSEEK_V3, 8, H100_TERMS),
        (LLAMA_31_70B, 4, H100_TERMS),
    ],
    ids=["dense", "moe+engine", "mla-moe-tp8", "tp4", "windowed", "moe+terms", "mla-moe-tp8+terms", "tp4+terms"],
)
def test_the_step_model_is_forward_step_in_a_few_float_operations(model, tp, hw):
    # forward_step is the step continuous_batching and decode_step are built on; the
    # simulator's StepModel must time the same steps: decode-only, and with a chunk of
    # `chunk` tokens after `before` tokens of its prompt (its attention: that of the prompt
    # to its end less that to the chunk's start, prefill_flops' causal half-matrix).
    work = timing.Workload(model, "bf16", "bf16", tp, 2048, 512)
    steps = timing.StepModel.build(work, hw)
    for decodes, context in ((1, 300.0), (7, 2100.0), (64, 2304.0), (256, 9000.0)):
        decode = timing.forward_step(work, hw, decodes, context).time_s
        assert steps.time_s(decodes, decodes * context) == pytest.approx(decode, rel=1e-12)
        for chunk, before in ((1, 0), (700, 0), (1500, 2000)):
            params = work.prefill_params
            flops = timing.prefill_flops(model, 1, before + chunk, params) - timing.prefill_flops(
                model, 1, before, params
            )
            mixed = timing.forward_step(work, hw, decodes, context, chunk, flops).time_s
            assert steps.time_s(decodes, decodes * context, chunk, before) == pytest.approx(mixed, rel=1e-12)
            assert timing.step_time_s(work, hw, decodes, chunk, decodes * context, before) == pytest.approx(
                mixed, rel=1e-12
            )
    # A prefill-only step of a whole prompt is the lab's prefill of one prompt.
    assert steps.time_s(0, 0.0, 2048, 0.0) == pytest.approx(timing.prefill(work, hw, 1).time_s, rel=1e-12)


def test_one_token_requests_one_at_a_time_queue_as_m_d_1():
    # Prompt 1, output 1: each request is one prefill step that yields its only token;
    # max_num_seqs 1 serves them one at a time, so the replica is an M/D/1 queue whose
    # service S is the lab's prefill of one 1-token prompt (timing.prefill, another path).
    work = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 1, 1)
    service_s = timing.prefill(work, H100, 1).time_s
    rho = 0.5
    traffic = Traffic(rho / service_s, 1, 1)
    limits = Limits(2048, 1, 426_800)
    result = simulate(timing.StepModel.build(work, H100), traffic, limits, requests=50_000, seed=3)
    # Pollaczek-Khinchine with deterministic service: W = rho S / (2 (1 - rho)) = S / 2.
    expected_wait = rho * service_s / (2 * (1 - rho))
    assert result.queue_wait_s.mean == pytest.approx(expected_wait, rel=0.04)
    assert result.ttft_s.mean == pytest.approx(expected_wait + service_s, rel=0.02)
    assert result.e2e_s.mean == pytest.approx(result.ttft_s.mean, rel=1e-12)
    # The batch-means interval is narrow at 45,000 measured requests and covers the formula.
    assert 0 < result.queue_wait_ci.mean < 0.05 * expected_wait
    assert abs(result.queue_wait_s.mean - expected_wait) < 2.5 * result.queue_wait_ci.mean + 0.01 * expected_wait
    # Saturated, the server does nothing but serve: λ_sat = 1 / S.
    assert saturation_rate(timing.StepModel.build(work, H100), traffic, limits) == pytest.approx(1 / service_s)
    # Half of the time the server is busy.
    assert result.busy_fraction == pytest.approx(rho, rel=0.03)


def test_littles_law_holds_on_the_simulators_own_output():
    steps = steps_for(1000, 200)
    lam_sat = saturation_rate(steps, Traffic(1.0, 1000, 200), ROOMY)
    result = simulate(
        steps, Traffic(0.5 * lam_sat, 1000, 200, 0.5, 0.5), ROOMY, requests=20_000, saturation_rate_per_s=lam_sat
    )
    # L (time-average count in the system over the window) = λ W (measured arrival rate x
    # mean time in system of the measured requests).
    assert result.in_flight_mean == pytest.approx(result.measured_arrival_rate_per_s * result.e2e_s.mean, rel=0.03)
    # And for the decoding part: running decodes = λ x mean decode time (O - 1) x TPOT.
    assert result.output_tokens_per_s == pytest.approx(result.measured_arrival_rate_per_s * 200, rel=0.03)


def test_a_lone_request_decodes_at_the_decode_step_of_batch_one():
    # At a rate far below one request per E2E, requests rarely overlap: the median TPOT is a
    # lone decode step over contexts P .. P + O - 2, linear in the context, so the step at
    # the mean context P + O/2 - 1 (timing.decode_step, the lab's path).
    prompt, output = 512, 128
    work = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, prompt, output)
    lone_tpot = timing.decode_step(work, H100, 1, prompt + output / 2 - 1).time_s
    lone_prefill = timing.prefill(work, H100, 1).time_s
    e2e = lone_prefill + (output - 1) * lone_tpot
    result = simulate(steps_for(prompt, output), Traffic(0.01 / e2e, prompt, output), ROOMY, requests=2000)
    assert result.tpot_s.p50 == pytest.approx(lone_tpot, rel=1e-6)
    assert result.ttft_s.p50 == pytest.approx(lone_prefill, rel=1e-6)
    assert result.itl_s.p50 == pytest.approx(lone_tpot, rel=0.01)  # histogram bins are 0.2% wide
    assert result.e2e_s.p50 == pytest.approx(e2e, rel=1e-6)
    assert result.utilization < 0.02 and result.stable


def _at(utilization: float, burstiness: float = 1.0, requests: int = 10_000, seed: int = 5):
    steps = steps_for(2000, 300)
    base = Traffic(1.0, 2000, 300, 0.5, 0.5)
    lam_sat = saturation_rate(steps, base, ROOMY)
    traffic = replace(base, rate_per_s=utilization * lam_sat, burstiness=burstiness)
    return simulate(steps, traffic, ROOMY, requests=requests, seed=seed, saturation_rate_per_s=lam_sat)


def test_latency_rises_with_the_rate():
    low, mid, high = (_at(u) for u in (0.2, 0.45, 0.7))
    for metric in ("ttft_s", "tpot_s", "e2e_s", "queue_wait_s"):
        means = [getattr(r, metric).mean for r in (low, mid, high)]
        assert means == sorted(means) and means[0] < means[2], metric
    p99s = [r.ttft_s.p99 for r in (low, mid, high)]
    assert p99s == sorted(p99s)
    assert low.in_flight_mean < mid.in_flight_mean < high.in_flight_mean
    assert low.utilization == pytest.approx(0.2) and high.utilization == pytest.approx(0.7)


def test_bursty_arrivals_wait_longer_than_poisson_and_smooth_ones_shorter():
    # Gamma inter-arrival times of shape k: squared CV 1/k (4 at k = 0.25, 0.25 at k = 4).
    bursty, poisson, smooth = (_at(0.5, k, requests=20_000) for k in (0.25, 1.0, 4.0))
    assert bursty.ttft_s.p99 > poisson.ttft_s.p99 > smooth.ttft_s.p99
    assert bursty.ttft_s.mean > poisson.ttft_s.mean > smooth.ttft_s.mean
    assert bursty.tpot_s.p99 > poisson.tpot_s.p99


def test_a_seed_gives_the_same_answer_and_another_seed_another():
    steps = steps_for(1000, 200)
    traffic = Traffic(10.0, 1000, 200, 0.3, 0.3, 0.5)
    first = simulate(steps, traffic, ROOMY, requests=3000, seed=42, saturation_rate_per_s=20.0)
    again = simulate(steps, traffic, ROOMY, requests=3000, seed=42, saturation_rate_per_s=20.0)
    other = simulate(steps, traffic, ROOMY, requests=3000, seed=43, saturation_rate_per_s=20.0)
    assert first == again
    assert first.ttft_s != other.ttft_s


CASES = {
    # name: (steps, traffic, limits)
    "dense, roomy": (steps_for(700, 150), Traffic(12.0, 700, 150, 0.5, 0.8), ROOMY),
    "moe, engine overheads": (
        steps_for(300, 200, QWEN3_30B_A3B, H100_ENGINE),
        Traffic(20.0, 300, 200, 1.0, 0.5, 0.5),
        Limits(1024, 64, 111_300),
    ),
    # 12,000 tokens of KV for prompts of ~1,000: preemptions and a blocked queue.
    "kv-bound": (steps_for(1000, 300), Traffic(4.0, 1000, 300, 0.3, 0.5), Limits(2048, 256, 12_000)),
    "max_num_seqs 4": (steps_for(200, 400), Traffic(3.0, 200, 400, 0.0, 0.5, 2.0), Limits(2048, 4, 426_800)),
    "tensor parallel": (
        steps_for(1500, 100, tp=4),
        Traffic(8.0, 1500, 100, 0.2, 0.2),
        Limits(512, 128, 400_000),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_walking_decode_stretches_equals_stepping_each_decode_step(name):
    steps, traffic, limits = CASES[name]
    walked = simulate(steps, traffic, limits, requests=400, seed=9, saturation_rate_per_s=100.0)
    stepped = simulate(steps, traffic, limits, requests=400, seed=9, saturation_rate_per_s=100.0, walk_stretches=False)
    assert walked.steps == stepped.steps
    assert walked.preemptions == stepped.preemptions
    assert walked.events < stepped.events
    for metric in ("queue_wait_s", "ttft_s", "tpot_s", "e2e_s"):
        for field in ("mean", "p50", "p90", "p99"):
            assert getattr(getattr(walked, metric), field) == pytest.approx(
                getattr(getattr(stepped, metric), field), rel=1e-9
            ), (metric, field)
    # ITL is measured over the window's steps; a walked stretch that straddles the window's
    # edge counts whole, so the two differ by the few steps at the edges.
    assert walked.itl_s.mean == pytest.approx(stepped.itl_s.mean, rel=1e-3)
    assert walked.itl_s.p99 == pytest.approx(stepped.itl_s.p99, rel=0.005)  # bins are 0.2% wide
    assert walked.in_flight_mean == pytest.approx(stepped.in_flight_mean, rel=1e-9)


def test_a_tight_kv_cache_preempts_yet_every_measured_request_finishes():
    steps, traffic, limits = CASES["kv-bound"]
    result = simulate(steps, traffic, limits, requests=2000, seed=1, saturation_rate_per_s=10.0)
    assert result.preemptions > 0
    # The first 10% are warm-up: 2,000 - 200 measured, every one with finite figures.
    assert result.measured_requests == 1800
    assert result.e2e_s.p99 < float("inf") and result.ttft_s.p99 < float("inf")


def test_above_saturation_the_replica_is_not_stable():
    steps = steps_for(1000, 200)
    traffic = Traffic(1.0, 1000, 200)
    lam_sat = saturation_rate(steps, traffic, ROOMY)
    over = simulate(
        steps, replace(traffic, rate_per_s=1.3 * lam_sat), ROOMY, requests=3000, saturation_rate_per_s=lam_sat
    )
    assert not over.stable and over.utilization == pytest.approx(1.3)


def test_inputs_out_of_range_are_refused():
    steps = steps_for(100, 10)
    with pytest.raises(ValueError):
        simulate(steps, Traffic(1.0, 100, 10), ROOMY, requests=MAX_REQUESTS + 1)
    with pytest.raises(ValueError):
        simulate(steps, Traffic(0.0, 100, 10), ROOMY, requests=100, saturation_rate_per_s=1.0)
    with pytest.raises(ValueError):
        simulate(steps, Traffic(1.0, 100, 10, burstiness=0.0), ROOMY, requests=100, saturation_rate_per_s=1.0)
    with pytest.raises(ValueError):
        simulate(steps, Traffic(1.0, 100, 10, prompt_tokens_cv=-1), ROOMY, requests=100, saturation_rate_per_s=1.0)


def test_quantiles_interpolate_and_batch_means_shrink_with_the_sample():
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.99) == pytest.approx(3.97)
    # A constant sample has no spread between batches.
    assert batch_means_ci([5.0] * 400).p99 == 0.0


def test_a_pair_sampler_draws_prompt_and_output_together_from_the_samples() -> None:
    samples = [(100, 7), (2000, 300), (0, 0)]
    prompt, output = pair_sampler(samples, random.Random(3))
    seen = set()
    for _ in range(300):
        p = prompt()
        o = output()
        # Each output belongs to the prompt drawn just before it; a zero length counts as one token.
        assert (p, o) in {(100, 7), (2000, 300), (1, 1)}
        assert output() == o  # asked again, the same pair's
        seen.add(p)
    assert seen == {100, 2000, 1}  # with replacement, every sample drawn

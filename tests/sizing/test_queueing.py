"""The analytic mode (MODEL.md §7): its pieces against closed forms, its limits against the
step-time model, and the whole against the simulator on a grid of models, GPUs, lengths and
burstiness at utilizations λ / λ_sat from 0.1 to 0.7 (bench/latency.py prints the same)."""

import math
import random
import time

import pytest

from app.sizing import queueing, simulate, timing
from app.sizing.queueing import ReplicaModel, _gamma_quantile, erlang_c, gamma_cdf, total_length_quantile
from app.sizing.simulate import Limits, Traffic, saturation_rate
from app.sizing.vocabulary import Binding, LengthDistribution
from bench import latency as bench

from .specs import LLAMA_31_8B

H100 = timing.Hardware(3.35e12, 989e12)
# (80 GB x 0.9 - 16.06 GB) / 131,072 B per token.
ROOMY = Limits(2048, 256, 426_800)


def model_for(prompt, output, limits=ROOMY, hw=H100, **traffic):
    steps = timing.StepModel.build(timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, prompt, output), hw)
    return ReplicaModel.build(steps, Traffic(1.0, prompt, output, **traffic), limits)


def test_gamma_cdf_matches_the_erlang_closed_forms():
    for x in (0.1, 1.0, 3.0, 12.0):
        assert gamma_cdf(1.0, x) == pytest.approx(1 - math.exp(-x), rel=1e-10)
        assert gamma_cdf(2.0, x) == pytest.approx(1 - math.exp(-x) * (1 + x), rel=1e-9)
        assert gamma_cdf(3.0, x) == pytest.approx(1 - math.exp(-x) * (1 + x + x * x / 2), rel=1e-9)


def test_a_gamma_of_huge_shape_is_its_normal_limit_and_a_tiny_cv_a_fixed_length():
    # A CV of 1e-9 is a shape of 1e18: x + 1 - shape rounds to 0 in the continued fraction
    # (a fuzzed /v1/batch once answered 500). The mean of a gamma is shape x scale, its median
    # is near it, and its sd sqrt(shape): P at the mean is about 1/2, one sd out about 0.84.
    assert gamma_cdf(1e18, 1e18) == pytest.approx(0.5, abs=1e-6)
    assert gamma_cdf(1e6, 1e6 + 1e3) == pytest.approx(0.8413, abs=1e-3)
    # Either side of the switch the two methods agree.
    edge = queueing.WILSON_HILFERTY_SHAPE
    for z in (-3.0, -1.0, 0.0, 1.0, 2.5):
        x = edge + z * math.sqrt(edge)
        assert gamma_cdf(edge * (1 + 1e-12), x) == pytest.approx(gamma_cdf(edge, x), abs=1e-6)
    assert queueing.length_nodes(100, 1e-9, LengthDistribution.GAMMA) == (100.0,)  # below FIXED_LENGTH_CV: fixed


@pytest.mark.parametrize("cv", [5e-324, 1e-170, 1e-7])
@pytest.mark.parametrize("distribution", [LengthDistribution.GAMMA, LengthDistribution.LOGNORMAL])
def test_a_cv_whose_square_underflows_is_a_fixed_length(cv: float, distribution: str):
    # A fuzzed /v1/fleet with output_tokens_cv 5e-324 answered 500: cv² is 0, 1 / cv² divides by
    # zero. Below FIXED_LENGTH_CV a length moves by less than a token: it is the fixed one.
    assert cv < simulate.FIXED_LENGTH_CV
    assert queueing.length_nodes(300, cv, distribution) == (300.0,)
    assert total_length_quantile(1000, cv, 300, cv, distribution, 0.999) == 1300
    draw = simulate.length_sampler(300, cv, distribution, random.Random(0))
    assert {draw() for _ in range(10)} == {300}
    model = model_for(1000, 300, prompt_tokens_cv=cv, output_tokens_cv=cv, length_distribution=distribution)
    assert model.output_nodes == (300.0,) and model.prompt_nodes == (1000.0,)


def test_erlang_c_of_two_servers_at_load_one_is_a_third():
    # M/M/2, a = 1: C = (a^2/2! x 2/(2-1)) / (1 + a + a^2/2! x 2/(2-1)) = 1 / 3.
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)
    # One server: C = a (M/M/1's P(wait) = rho).
    assert erlang_c(1, 0.4) == pytest.approx(0.4)


def test_gi_m_1_waits_with_probability_rho_under_poisson_and_solves_its_equation_otherwise():
    assert queueing._gi_m_1_sigma(0.6, 1.0) == 0.6
    for shape in (0.25, 0.5, 2.0, 4.0):
        for rho in (0.1, 0.5, 0.9):
            sigma = queueing._gi_m_1_sigma(rho, shape)
            assert 0 < sigma < 1
            assert sigma == pytest.approx((1 + (1 - sigma) / (shape * rho)) ** -shape, abs=1e-10)
            # Burstier arrivals (shape < 1) find the server busy more often than Poisson.
            assert (sigma > rho) == (shape < 1)


def test_at_vanishing_load_a_request_sees_the_lone_prefill_and_the_lone_decode_step():
    prompt, output = 1000, 200
    work = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, prompt, output)
    model = model_for(prompt, output)
    core = model.mean_core(1e-6 * model.saturation_rate_per_s)
    # One prompt alone: the lab's prefill of one prompt; then decode steps of batch one at
    # the mean context P + O/2 (the lab's decode step).
    assert core.ttft_s == pytest.approx(timing.prefill(work, H100, 1).time_s, rel=1e-4)
    assert core.tpot_s == pytest.approx(timing.decode_step(work, H100, 1, prompt + output / 2).time_s, rel=1e-4)
    assert core.stable and core.running == pytest.approx(0.0, abs=1e-3)


def test_a_prefill_only_queue_waits_as_pollaczek_khinchine_plus_the_step_in_flight():
    # Output 1: no decodes. Prompts of 4,096 tokens take two full 2,048-token steps each, so
    # the prefill stream is an M/D/1 server of S = 2 t(0 decodes, 2,048 tokens); the model's
    # queue wait is the residual of the mixed step in flight when the stream is busy (ρ t/2)
    # plus P-K's ρ S / (2 (1 - ρ)).
    model = model_for(4096, 1)
    work = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 4096, 1)
    half = timing.prefill_flops(LLAMA_31_8B, 1, 4096) / 2
    step_s = timing.forward_step(work, H100, 0, 0.0, 2048, half).time_s
    service_s = 2 * step_s
    rho = 0.5
    core = model.mean_core(rho / service_s)
    assert core.prefill_s == pytest.approx(service_s, rel=1e-9)
    expected = rho * step_s / 2 + rho * service_s / (2 * (1 - rho))
    assert core.queue_wait_s == pytest.approx(expected, rel=1e-6)


def test_latency_rises_with_rate_and_burstiness_and_stops_at_saturation():
    poisson = model_for(2000, 300, prompt_tokens_cv=0.5, output_tokens_cv=0.5)
    bursty = model_for(2000, 300, prompt_tokens_cv=0.5, output_tokens_cv=0.5, burstiness=0.25)
    lam_sat = poisson.saturation_rate_per_s
    p99s = [poisson.latency(u * lam_sat).ttft_s.p99 for u in (0.2, 0.4, 0.6, 0.8)]
    assert p99s == sorted(p99s)
    tpots = [poisson.latency(u * lam_sat).tpot_s.p50 for u in (0.2, 0.4, 0.6, 0.8)]
    assert tpots == sorted(tpots)
    assert bursty.latency(0.5 * lam_sat).ttft_s.p99 > poisson.latency(0.5 * lam_sat).ttft_s.p99
    over = poisson.latency(1.1 * lam_sat)
    assert not over.stable and math.isnan(over.ttft_s.p99)
    assert over.utilization == pytest.approx(1.1)


def test_means_without_percentiles_and_the_percentiles_in_order():
    model = model_for(1000, 200, prompt_tokens_cv=0.5, output_tokens_cv=0.5)
    rate = 0.5 * model.saturation_rate_per_s
    quick = model.latency(rate, percentiles=False)
    assert math.isnan(quick.ttft_s.p50) and quick.ttft_s.mean > 0
    full = model.latency(rate)
    for p in (full.queue_wait_s, full.ttft_s, full.tpot_s, full.itl_s, full.e2e_s):
        assert p.p50 <= p.p90 <= p.p95 <= p.p99
    # Little's law by construction; output tokens are the arrivals' tokens.
    assert full.in_flight_mean == pytest.approx(rate * full.e2e_s.mean)
    assert full.output_tokens_per_s == pytest.approx(rate * 200)


def test_the_saturation_estimate_is_near_the_simulators():
    for prompt, output, limits in ((1000, 200, ROOMY), (300, 600, Limits(2048, 16, 426_800))):
        model = model_for(prompt, output, limits)
        simulated = saturation_rate(model.steps, model.traffic, limits, requests=4000, seed=1)
        assert model.saturation_rate_per_s == pytest.approx(simulated, rel=0.05)


def test_max_request_rate_meets_the_slos_and_says_what_binds():
    model = model_for(1000, 200)
    loose = model.max_request_rate(ttft_slo_s=10.0, tpot_slo_s=1.0, percentile=95)
    assert loose.meets_slo and loose.bound_by == Binding.MAX_NUM_SEQS
    assert loose.rate_per_s == pytest.approx(model.saturation_rate_per_s, rel=2e-3)
    tight = model.max_request_rate(ttft_slo_s=0.2, tpot_slo_s=0.012, percentile=95)
    assert tight.bound_by in (Binding.TTFT_SLO, Binding.TPOT_SLO)
    assert tight.estimate is not None and tight.estimate.tpot_s.p95 <= 0.012 and tight.estimate.ttft_s.p95 <= 0.2
    assert model.latency(tight.rate_per_s * 1.01).tpot_s.p95 > 0.012 or tight.bound_by == Binding.TTFT_SLO
    impossible = model.max_request_rate(tpot_slo_s=0.001)
    assert not impossible.meets_slo and impossible.rate_per_s == 0.0
    with pytest.raises(ValueError):
        model.max_request_rate(ttft_slo_s=1.0, percentile=97)


def test_ranking_on_means_allows_at_least_the_rate_the_95th_percentile_does():
    # TTFT and TPOT are skewed right: their 95th percentiles exceed their means, so holding
    # the means to the SLOs (the fast ranking mode) allows at least as high a rate.
    model = model_for(2000, 400, prompt_tokens_cv=0.5, output_tokens_cv=0.5, burstiness=0.5)
    means = model.max_request_rate(ttft_slo_s=0.4, tpot_slo_s=0.03, percentile=None)
    p95 = model.max_request_rate(ttft_slo_s=0.4, tpot_slo_s=0.03, percentile=95)
    assert means.meets_slo and p95.meets_slo
    assert means.rate_per_s >= p95.rate_per_s
    assert means.estimate is not None and means.estimate.ttft_s.mean <= 0.4 and means.estimate.tpot_s.mean <= 0.03
    assert math.isnan(means.estimate.ttft_s.p95)


def test_the_kv_rule_keeps_mean_plus_three_sd_within_the_cache():
    # 8B on an L4: (24 GB x 0.9 - 16.06 GB) / 131,072 B = 42,260 tokens.
    model = model_for(1500, 300, Limits(2048, 256, 42_260), hw=timing.Hardware(300e9, 121e12))
    best = model.max_request_rate(ttft_slo_s=100.0, tpot_slo_s=10.0)
    assert best.bound_by == Binding.KV_CAPACITY
    assert best.estimate is not None
    assert best.estimate.kv_tokens_mean + 3 * best.estimate.kv_tokens_sd <= 42_260


def test_the_mean_core_takes_microseconds():
    model = model_for(1000, 200)
    rate = 0.5 * model.saturation_rate_per_s
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        model.mean_core(rate)
    per_call_s = (time.perf_counter() - start) / n
    assert per_call_s < 200e-6  # measured about 25 us here; generous for a loaded machine


# The grid: every case of bench.GRID and bench.HELD_OUT at each utilization, against
# simulator references of 40,000 requests (two processes). Target: p50 within 25% and p99
# within 35% on at least 95% of the points, for TTFT and TPOT.
@pytest.mark.simulation
def test_the_analytic_mode_agrees_with_the_simulator_on_the_grid():
    start = time.perf_counter()
    points = bench.reference_points(range(len(bench.CASES)), bench.UTILIZATIONS, bench.REFERENCE_REQUESTS, jobs=2)
    agreements = [bench.compare(p) for p in points]
    rates = bench.agreement_rate(agreements)
    print(f"\n{len(points)} points in {time.perf_counter() - start:.1f} s")
    print(bench.agreement_table(agreements))
    print("agreement:", {k: f"{v:.1%}" for k, v in rates.items()})
    assert len(points) == 44
    for key, rate in rates.items():
        assert rate >= 0.95, key


def test_the_p99_9_of_a_request_length_is_the_tail_of_prompt_plus_output() -> None:
    # Fixed lengths: their sum.
    assert total_length_quantile(2000, 0.0, 400, 0.0, "gamma", 0.999) == 2400
    # One exponential length (CV 1) and one fixed: the exponential's quantile, mean x ln(1000), plus it.
    assert total_length_quantile(2000, 1.0, 400, 0.0, "gamma", 0.999) == math.ceil(2000 * math.log(1000) + 400)
    assert total_length_quantile(2000, 0.0, 400, 1.0, "gamma", 0.999) == math.ceil(400 * math.log(1000) + 2000)
    # Two exponentials of the same mean sum to a gamma of shape 2: its p99.9, within 0.5%.
    exact = _gamma_quantile(2.0, 1000.0, 0.999)
    assert total_length_quantile(1000, 1.0, 1000, 1.0, "gamma", 0.999) == pytest.approx(exact, rel=0.005)
    # Never shorter than the mean request.
    assert total_length_quantile(2000, 0.1, 400, 0.1, "gamma", 0.999) > 2400

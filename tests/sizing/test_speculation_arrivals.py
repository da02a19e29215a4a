"""Speculative decoding under random arrivals: the step model of one token a step
(`StepModel.speculating`) that the queueing model and the simulator run, held to the
verification step of app/sizing/speculation.py and to each other."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.sizing import speculation, timing
from app.sizing.queueing import ReplicaModel
from app.sizing.simulate import Limits, Traffic, simulate

from .specs import LLAMA_31_8B, LLAMA_31_70B, QWEN3_30B_A3B

# H100 SXM: 3.35 TB/s, 989 dense bf16 TFLOP/s, NVLink 450 GB/s a direction, with the
# engine-free efficiencies and a step overhead, so the per-step terms are counted too.
H100 = timing.Hardware(3.35e12, 989e12, link_gb_per_s=450, link_latency_us=3, step_overhead_s=2e-4)
# (80 GB x 0.9 - 16.06 GB) / 131,072 B per token, as tests/sizing/test_queueing.py.
ROOMY = Limits(2048, 256, 426_800)
EAGLE = speculation.speculation("eagle", 3, 0.7)
E_EAGLE = (1 - 0.7**4) / (1 - 0.7)  # 2.533 tokens a verification step


def work(model=LLAMA_31_8B, prompt=1000, output=200, tp=1) -> timing.Workload:
    return timing.Workload(model, "bf16", "bf16", tp, prompt, output)


def speculative_steps(spec, w, hw=H100) -> timing.StepModel:
    return speculation.step_model(spec, w, hw, timing.StepModel.build(w, hw))


@pytest.mark.parametrize(
    ("spec", "model", "tp"),
    [
        (EAGLE, LLAMA_31_8B, 1),
        (speculation.speculation("mtp"), QWEN3_30B_A3B, 1),
        (speculation.speculation("ngram", 5, 0.4), LLAMA_31_8B, 1),
        (replace(speculation.speculation("draft_model", 4, 0.7, "llama-3.1-8b"), draft=LLAMA_31_8B), LLAMA_31_70B, 4),
    ],
)
@pytest.mark.parametrize("batch", [1, 16, 200])
def test_e_steps_of_one_token_last_one_draft_and_verification(spec, model, tp, batch) -> None:
    w = work(model, tp=tp)
    context = 1100.0
    steps = speculative_steps(spec, w)
    step = speculation.speculative_step(spec, w, H100, batch, context)
    e = speculation.expected_tokens_per_step(spec.acceptance_rate, spec.num_speculative_tokens)
    assert steps.tokens_per_step == pytest.approx(e)
    assert steps.queries_per_decode == spec.num_speculative_tokens + 1
    assert e * steps.time_s(batch, batch * context) == pytest.approx(step.verify_s + step.draft_s, rel=1e-9)
    # So a decoding sequence's time per token is the speculative TPOT of the steady state.
    assert steps.time_s(batch, batch * context) == pytest.approx(step.time_per_token_s, rel=1e-9)


def test_a_step_carries_an_e_th_of_the_verification_s_chunk_and_costs_an_e_th_of_it() -> None:
    w = work()
    steps = speculative_steps(EAGLE, w)
    # 2,048 - 8 decodes x 4 queries = 2,016 prompt tokens a verification, 795.9 a step of one.
    assert steps.prefill_room(2048, 8) == pytest.approx((2048 - 8 * 4) / E_EAGLE)
    assert steps.max_decodes(2048) == 512 and steps.max_decodes(3) == 1
    chunk = steps.prefill_room(2048, 8)
    # The verification's chunk: a prompt's first chunk * E tokens, its linear layers and attention.
    total = timing.prefill_flops(LLAMA_31_8B, 1, chunk * E_EAGLE)
    attention = total - 2 * LLAMA_31_8B.active_params * chunk * E_EAGLE
    verify = timing.forward_step(w, H100, 8, 1100.0, chunk * E_EAGLE, total, queries_per_decode=4).time_s
    plain = timing.decode_step(w, H100, 8, 1100.0).time_s
    draft = 3 * speculation.head_fraction(LLAMA_31_8B) * plain
    attended = 8 * LLAMA_31_8B.layers * 1100.0
    written = LLAMA_31_8B.layers * chunk
    mixed = steps.time_parts_s(8, attended, chunk, attention / E_EAGLE, written)
    assert mixed * E_EAGLE == pytest.approx(verify + draft, rel=1e-9)


def test_without_speculation_the_step_model_is_unchanged() -> None:
    steps = timing.StepModel.build(work(), H100)
    assert not steps.speculative
    assert steps.prefill_room(2048, 8) == 2040
    assert steps.max_decodes(2048) == 2048


def test_at_a_trickle_the_queueing_tpot_is_the_batch_1_speculative_tpot() -> None:
    w = work()
    plain = ReplicaModel.build(timing.StepModel.build(w, H100), Traffic(1.0, 1000, 200), ROOMY)
    spec = ReplicaModel.build(speculative_steps(EAGLE, w), Traffic(1.0, 1000, 200), ROOMY)
    lone = speculation.speculative_step(EAGLE, w, H100, 1, 1000 + 200 / 2)
    core = spec.mean_core(1e-6 * spec.saturation_rate_per_s)
    assert core.tpot_s == pytest.approx(lone.time_per_token_s, rel=1e-3)
    # 1.95x at batch one (tests/sizing/test_speculation.py's figure, 1 layer of 32 a head).
    base = plain.mean_core(1e-6 * plain.saturation_rate_per_s)
    assert base.tpot_s / core.tpot_s == pytest.approx(E_EAGLE / (1 + 3 / 32), rel=1e-3)
    # The prompt is computed as before, in whole verification steps: TTFT barely moves.
    assert core.ttft_s == pytest.approx(base.ttft_s, rel=0.02)
    # Seats: 2,048 tokens a step hold 512 sequences verifying 4 tokens; max_num_seqs 256 binds.
    assert spec.seats == 256


@pytest.mark.simulation
def test_the_simulator_and_the_queueing_model_agree_under_speculation() -> None:
    w = work()
    steps = speculative_steps(EAGLE, w)
    traffic = Traffic(1.0, 1000, 200, 0.5, 0.5)
    model = ReplicaModel.build(steps, traffic, ROOMY)
    for utilization in (0.02, 0.5):
        rate = utilization * model.saturation_rate_per_s
        analytic = model.latency(rate)
        run = simulate(steps, replace(traffic, rate_per_s=rate), ROOMY, seed=3, requests=3000)
        assert run.stable and analytic.stable
        assert analytic.tpot_s.mean == pytest.approx(run.tpot_s.mean, rel=0.1)
        assert analytic.ttft_s.mean == pytest.approx(run.ttft_s.mean, rel=0.25)
    # At a trickle the simulated TPOT is the speculative step's: verification plus draft over E.
    lone = speculation.speculative_step(EAGLE, w, H100, 1, 1000 + 200 / 2)
    trickle = simulate(steps, replace(traffic, rate_per_s=0.01 * model.saturation_rate_per_s), ROOMY, requests=500)
    assert trickle.tpot_s.p50 == pytest.approx(lone.time_per_token_s, rel=0.05)


def test_where_speculation_loses_the_replica_saturates_sooner() -> None:
    # Short contexts at a full batch turn the 4-query verification compute-bound: the
    # replica's capacity under speculation falls below its plain one (speedup < 1 at 256).
    w = work(prompt=256, output=256)
    traffic = Traffic(1.0, 256, 256)
    plain = ReplicaModel.build(timing.StepModel.build(w, H100), traffic, ROOMY)
    spec = ReplicaModel.build(speculative_steps(EAGLE, w), traffic, ROOMY)
    assert speculation.speculative_step(EAGLE, w, H100, 256, 384).speedup < 1
    assert spec.saturation_rate_per_s < plain.saturation_rate_per_s
    # While at a trickle it is faster.
    trickle = 1e-3 * spec.saturation_rate_per_s
    assert spec.mean_core(trickle).tpot_s < plain.mean_core(trickle).tpot_s


@settings(max_examples=60, deadline=None)
@given(
    method=st.sampled_from([speculation.EAGLE, speculation.EAGLE3, speculation.MTP, speculation.NGRAM]),
    k=st.integers(1, 8),
    acceptance=st.floats(0.0, 0.95),
    batch=st.integers(1, 256),
    context=st.floats(16, 16_000),
    model=st.sampled_from([LLAMA_31_8B, QWEN3_30B_A3B]),
)
def test_any_speculation_s_steps_of_one_token_sum_to_its_verification(method, k, acceptance, batch, context, model):
    spec = speculation.speculation(method, k, acceptance)
    w = work(model)
    steps = speculative_steps(spec, w)
    step = speculation.speculative_step(spec, w, H100, batch, context)
    e = steps.tokens_per_step
    assert e * steps.time_s(batch, batch * context) == pytest.approx(step.verify_s + step.draft_s, rel=1e-9)
    # The step's prompt room and its decodes' k + 1 queries fill the verification's budget.
    assert steps.prefill_room(2048, batch) * e + batch * (k + 1) == pytest.approx(2048)

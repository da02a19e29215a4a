"""Speculative decoding (app/sizing/speculation.py) with the arithmetic written out: tokens a
verification step finishes, what verifying k + 1 tokens and drafting cost, and the speedup
falling as the batch turns the k + 1 times larger step compute-bound."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.sizing import speculation, timing
from app.sizing.errors import SizingError
from app.sizing.plan import PlanInputs, plan_fit, plan_throughput
from app.sizing.speculation import Speculation, expected_tokens_per_step, head_fraction

from .specs import H100_SXM, LLAMA_31_8B, LLAMA_31_70B

PARAMS = 8_030_261_248
# Llama 3.1 8B's vocabulary and untied lm_head (config.json): 128,256 x 4,096 each.
VOCAB = 128_256
LLAMA_WITH_VOCAB = replace(LLAMA_31_8B, vocab_size=VOCAB, tie_word_embeddings=False)
WEIGHTS_S = PARAMS * 2 / (3.35e12 * 0.7)  # bf16 weights over H100 HBM at memory efficiency 0.7


def test_expected_tokens_per_step_is_the_geometric_series() -> None:
    assert expected_tokens_per_step(0.8, 3) == pytest.approx((1 - 0.8**4) / 0.2) == pytest.approx(2.952)
    assert expected_tokens_per_step(0.8, 3) == pytest.approx(1 + 0.8 + 0.8**2 + 0.8**3)
    assert expected_tokens_per_step(0.85, 1) == pytest.approx(1.85)  # DeepSeek-V3's MTP: one extra token
    assert expected_tokens_per_step(0.0, 5) == 1.0  # nothing accepted: the target's own token


def test_an_eagle_head_is_one_layer_and_the_lm_head_of_the_target() -> None:
    lm_head = VOCAB * 4096  # 525,336,576
    body = PARAMS - 2 * lm_head  # the embedding table is looked up, not multiplied
    assert head_fraction(LLAMA_WITH_VOCAB) == pytest.approx((body / 32 + lm_head) / (body + lm_head))
    assert head_fraction(LLAMA_WITH_VOCAB) == pytest.approx(0.0991, abs=1e-4)
    assert head_fraction(LLAMA_31_8B) == pytest.approx(1 / 32)  # no vocabulary known: one layer's share


def test_eagle_3_tokens_at_0_7_cuts_batch_1_tpot_by_about_2_5x_less_the_drafts() -> None:
    spec = speculation.speculation("eagle", 3, 0.7)
    plan = plan_throughput(
        LLAMA_WITH_VOCAB, H100_SXM, PlanInputs(prompt_tokens=2048, output_tokens=512, speculative=spec)
    )
    step = plan.point.speculative
    assert step is not None
    e = (1 - 0.7**4) / (1 - 0.7)  # 2.533
    assert step.tokens_per_step == pytest.approx(e)
    # Batch 1 is memory-bound even verifying 4 tokens: the verify step costs the plain one.
    assert step.verify_s == pytest.approx(step.plain_step_s, rel=1e-12)
    assert step.plain_step_s > WEIGHTS_S
    # Three head passes, each 0.0991 of the plain step.
    assert step.draft_s == pytest.approx(3 * head_fraction(LLAMA_WITH_VOCAB) * step.plain_step_s)
    assert step.speedup == pytest.approx(e / (1 + 3 * 0.09906), rel=1e-3)  # 1.95x
    steady = plan.point.steady
    assert steady is not None
    assert steady.decode_step_s == pytest.approx(step.verify_s + step.draft_s)


def test_speculation_gains_far_less_at_batch_256_of_short_contexts() -> None:
    spec = speculation.speculation("eagle", 3, 0.7)
    inputs = PlanInputs(prompt_tokens=256, output_tokens=256, speculative=spec, sweep=(1, 256))
    one, many = plan_throughput(LLAMA_31_8B, H100_SXM, inputs).sweep
    assert one.speculative is not None and many.speculative is not None
    # 256 x 4 tokens x 2 x 8.03e9 FLOPs at 494.5 TFLOP/s: 33 ms, against about 13 ms of reads.
    assert many.speculative.verify_s > 4 * PARAMS * 2 * 256 / (989e12 * 0.5)
    assert many.speculative.speedup < 1 < 1.5 < one.speculative.speedup
    plan = plan_throughput(LLAMA_31_8B, H100_SXM, replace(inputs, concurrency=256, sweep=()))
    assert any("speculative decoding loses at concurrency 256" in w for w in plan.warnings)


def test_a_draft_model_costs_k_of_its_own_decode_steps() -> None:
    spec = replace(speculation.speculation("draft_model", 4, 0.7, "llama-3.1-8b"), draft=LLAMA_31_8B)
    inputs = PlanInputs(prompt_tokens=2048, output_tokens=512, tensor_parallel=4, speculative=spec)
    plan = plan_throughput(LLAMA_31_70B, H100_SXM, inputs)
    step = plan.point.speculative
    assert step is not None

    draft_work = speculation.draft_workload(plan.work, LLAMA_31_8B)
    one_draft = timing.decode_step(draft_work, plan.hardware, 1, plan.context_tokens).time_s
    assert step.draft_s == pytest.approx(4 * one_draft)


def test_ngram_drafts_for_free() -> None:
    spec = speculation.speculation("ngram")
    assert (spec.num_speculative_tokens, spec.acceptance_rate) == (3, 0.5)
    plan = plan_throughput(LLAMA_31_8B, H100_SXM, PlanInputs(speculative=spec))
    assert plan.point.speculative is not None and plan.point.speculative.draft_s == 0.0


def test_speculation_is_off_unless_asked() -> None:
    plan = plan_throughput(LLAMA_31_8B, H100_SXM, PlanInputs(concurrency=8))
    assert plan.point.speculative is None


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("eagle", 3, 1.0), "speculative.acceptance_rate"),
        (("eagle", 0, 0.5), "speculative.num_speculative_tokens"),
        (("medusa",), "speculative.method"),
        (("draft_model", 3, 0.5), "speculative.draft_model"),
    ],
)
def test_what_no_engine_runs_is_refused_naming_the_field(args: tuple[object, ...], field: str) -> None:
    with pytest.raises(SizingError) as raised:
        speculation.speculation(*args)  # type: ignore[arg-type]
    assert raised.value.field == field


def test_a_draft_model_as_large_as_the_target_is_refused() -> None:
    spec = Speculation("draft_model", 3, 0.7, "llama-3.1-70b", LLAMA_31_70B)
    with pytest.raises(SizingError) as raised:
        plan_throughput(LLAMA_31_8B, H100_SXM, PlanInputs(speculative=spec))
    assert raised.value.field == "speculative.draft_model"


@settings(max_examples=40, deadline=None)
@given(
    method=st.sampled_from(["eagle", "eagle3", "mtp", "ngram"]),
    k=st.integers(1, 8),
    a=st.floats(0.0, 0.95),
    small=st.integers(1, 512),
    extra=st.integers(1, 512),
    prompt=st.integers(16, 4096),
)
def test_speedup_never_rises_with_the_batch(method: str, k: int, a: float, small: int, extra: int, prompt: int) -> None:
    """A dense model's plain step is max(reads, b x C), its verify step max(reads, (k + 1) b x C)
    with the same reads: their ratio only grows with the batch b."""
    spec = speculation.speculation(method, k, a)
    inputs = PlanInputs(prompt_tokens=prompt, output_tokens=128, speculative=spec, sweep=(small, small + extra))
    low, high = plan_throughput(LLAMA_31_8B, H100_SXM, inputs).sweep
    assert low.speculative is not None and high.speculative is not None
    assert high.speculative.speedup <= low.speculative.speedup * (1 + 1e-9)


def test_the_drafter_s_weights_and_kv_are_held_beside_the_model_s() -> None:
    """Llama 3.1 8B on one H100 (ideal), 2,048 + 512 tokens: 166 sequences fit (the seed's);
    an EAGLE head adds one decoder layer of weights and one layer's KV per token."""
    base = PlanInputs(prompt_tokens=2048, output_tokens=512)
    plain = plan_fit(LLAMA_WITH_VOCAB, H100_SXM, base).result
    eagle = plan_fit(LLAMA_WITH_VOCAB, H100_SXM, replace(base, speculative=speculation.speculation("eagle"))).result
    kv_per_token = 2 * 32 * 8 * 128 * 2  # 131,072 B over 32 layers
    layer = (PARAMS - 2 * VOCAB * 4096) / 32  # 218,112,128 params, shared embeddings and head left out
    assert eagle.weights_bytes == pytest.approx(plain.weights_bytes + layer * 2)
    assert eagle.kv_bytes_per_token == pytest.approx(kv_per_token + kv_per_token / 32)
    budget = 0.9 * 80e9 - PARAMS * 2 - layer * 2
    assert plain.max_concurrency == 166
    assert eagle.max_concurrency == int(budget // (2560 * kv_per_token * 33 / 32)) == 160
    # A draft model brings all of its weights and layers.
    drafted = replace(speculation.speculation("draft_model", draft_model="llama-3.1-8b"), draft=LLAMA_31_8B)
    fit_70b = plan_fit(LLAMA_31_70B, H100_SXM, replace(base, tensor_parallel=4, speculative=drafted)).result
    alone = plan_fit(LLAMA_31_70B, H100_SXM, replace(base, tensor_parallel=4)).result
    assert fit_70b.weights_bytes == pytest.approx(alone.weights_bytes + PARAMS * 2)
    # 8B's 8 KV heads over 4 GPUs: 2 a GPU, so its whole KV per token (32 layers) is added.
    assert fit_70b.kv_bytes_per_token == pytest.approx(alone.kv_bytes_per_token + kv_per_token)
    ngram = plan_fit(LLAMA_WITH_VOCAB, H100_SXM, replace(base, speculative=speculation.speculation("ngram"))).result
    assert (ngram.weights_bytes, ngram.max_concurrency) == (plain.weights_bytes, plain.max_concurrency)

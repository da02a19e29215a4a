"""The lab's continuous-batching steady state (app/sizing/timing.py) under speculative
decoding, where mutants of `make mutation` survived: each decode verifies k + 1 tokens of the
step budget, every step pays the drafting time, and a step finishes `tokens_per_step` tokens a
sequence. The composition is written out here from forward_step's own steps."""

from __future__ import annotations

import math

import pytest

from app.sizing import timing

from .specs import LLAMA_31_8B

# A card whose arithmetic binds at this batch (50 TFLOP/s beside 3.35 TB/s): verifying 4
# tokens a sequence then costs more than decoding one, so the k + 1 queries show.
HW = timing.Hardware(3.35e12, 50e12)
WORK = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 2048, 512)
BATCH, QUERIES, BUDGET = 10, 4, 1000  # k = 3 drafted tokens: 4 verified a sequence
DRAFT_S, TOKENS_PER_STEP = 0.002, 2.5


def test_speculative_steady_state_is_its_steps_written_out() -> None:
    state = timing.continuous_batching(WORK, HW, BATCH, BUDGET, QUERIES, TOKENS_PER_STEP, DRAFT_S)
    assert state is not None
    # 10 decodes x 4 tokens leave 960 of the 1,000-token budget to the prompt: 3 chunks.
    room = BUDGET - BATCH * QUERIES
    assert room == 960 and state.chunks_per_prompt == math.ceil(2048 / 960) == 3
    assert state.chunk_tokens == pytest.approx(2048 / 3)
    context = 2048 + 512 / 2
    decode = timing.forward_step(WORK, HW, BATCH, context, queries_per_decode=QUERIES).time_s + DRAFT_S
    mixed = timing.forward_step(WORK, HW, BATCH, context, 2048 / 3, WORK.prompt_prefill_flops() / 3, QUERIES).time_s
    mixed += DRAFT_S
    assert state.decode_step_s == pytest.approx(decode)
    assert state.mixed_step_s == pytest.approx(mixed)
    # Verifying 4 tokens a sequence costs more than decoding one on this card.
    plain = timing.forward_step(WORK, HW, BATCH, context)
    assert plain.compute_s > plain.memory_s / 4 and decode - DRAFT_S > plain.time_s
    extra_per_prompt = 3 * (mixed - decode)
    finished = BATCH * TOKENS_PER_STEP  # tokens a step completes
    step = decode + finished / 512 * extra_per_prompt
    assert state.tokens_per_s == pytest.approx(finished / step)
    assert state.requests_per_s == pytest.approx(finished / step / 512)
    others = BATCH - 1 if HW.tpot_excludes_own_prefill else BATCH
    tpot = (decode + others * TOKENS_PER_STEP / 512 * extra_per_prompt) / TOKENS_PER_STEP
    assert state.time_per_token_s == pytest.approx(tpot)


def test_a_budget_the_verified_tokens_fill_admits_no_prompt() -> None:
    # 10 sequences x 4 verified tokens = 40: a 40-token budget leaves no room for a prompt.
    assert timing.continuous_batching(WORK, HW, BATCH, BATCH * QUERIES, QUERIES, TOKENS_PER_STEP, DRAFT_S) is None
    assert timing.continuous_batching(WORK, HW, BATCH, BATCH * QUERIES + 1, QUERIES, TOKENS_PER_STEP) is not None


# An engine's clock: a request's own prefill is behind it once it decodes, an arrival waits out
# the step in flight and the other prompts' prefills, and 15 ms of serving overhead.
ENGINE_HW = timing.Hardware(3.35e12, 989e12, tpot_excludes_own_prefill=True, request_overhead_s=0.015)


def _mdl_wait_s(arrivals_per_s: float, service_s: float, others: int) -> float:
    """M/D/1's mean wait, rho S / (2 (1 - rho)), at most `others` services (closed loop)."""
    rho = min(0.95, arrivals_per_s * service_s)
    return min(rho * service_s / (2 * (1 - rho)), others * service_s)


def test_under_an_engine_ttft_waits_half_a_step_and_the_other_prompts_prefills() -> None:
    state = timing.continuous_batching(WORK, ENGINE_HW, BATCH, 2048)
    assert state is not None and state.concurrency == BATCH
    prefill = state.chunks_per_prompt * state.mixed_step_s
    # The other nine prompts arrive at their share of the request rate.
    arrivals = state.tokens_per_s / 512 * (BATCH - 1) / BATCH
    wait = state.decode_step_s / 2 + _mdl_wait_s(arrivals, prefill, BATCH - 1)
    assert state.ttft_s == pytest.approx(prefill + 0.015 + wait)
    # One sequence alone waits for nothing but its own prefill and the overhead.
    alone = timing.continuous_batching(WORK, ENGINE_HW, 1, 2048)
    assert alone is not None
    assert alone.ttft_s == pytest.approx(alone.chunks_per_prompt * alone.mixed_step_s + 0.015)
    # Its TPOT leaves its own prefill out: the other B - 1 prompts' chunks only.
    extra = state.chunks_per_prompt * (state.mixed_step_s - state.decode_step_s)
    assert state.time_per_token_s == pytest.approx(state.decode_step_s + (BATCH - 1) / 512 * extra)


def test_two_sequences_already_wait_for_each_other() -> None:
    state = timing.continuous_batching(WORK, ENGINE_HW, 2, 2048)
    assert state is not None
    prefill = state.chunks_per_prompt * state.mixed_step_s
    wait = state.decode_step_s / 2 + _mdl_wait_s(state.tokens_per_s / 512 / 2, prefill, 1)
    assert state.ttft_s == pytest.approx(prefill + 0.015 + wait)

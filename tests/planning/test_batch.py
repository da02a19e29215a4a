"""/v1/batch's service without HTTP: an offline batch on one replica, against /v1/throughput's
answers for the same replica (the lab's prefill of a batch in one pass and its decode step:
the step-time model by the public path), and as properties over lengths, batch sizes and
seats; what the job costs; and what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.api import lookup
from app.api.schemas import PLANNING_BY_PATH
from app.api.wire import dump
from app.catalog.snapshots import CatalogSnapshot
from app.planning import replica
from app.planning.answers import ThroughputAnswer
from app.planning.batch import BATCH_MAX_WORK, batch
from app.planning.context import Context
from app.planning.errors import InvalidRequest, UnknownResource
from app.sizing.errors import SizingError

# Llama 3.1 8B on one H100 under vLLM: 448,272 tokens of KV, max_num_seqs 1,024, a budget
# of 8,192 tokens a step, $3.00 a GPU-hour in the catalog.
REPLICA = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def context(app: Flask) -> Context:
    with app.test_request_context():
        snapshot: CatalogSnapshot = lookup.context().catalog
    return Context(snapshot)


def run_batch(context: Context, **fields: Any) -> dict[str, Any]:
    """The batch's answer as /v1/batch writes it (its typed answer through its schema)."""
    return dump(batch(PLANNING_BY_PATH["/v1/batch"].schema.load({**REPLICA, **fields}), context))


def throughput(context: Context, **fields: Any) -> ThroughputAnswer:
    # One GPU, as the batch runs (left to choose, /v1/throughput takes the smallest tensor-
    # parallel group that holds `concurrency` whole sequences).
    payload = {**REPLICA, "tensor_parallel": 1, **fields}
    return replica.throughput(PLANNING_BY_PATH["/v1/throughput"].schema.load(payload), context)


def test_a_batch_seated_and_prefilled_at_once_takes_one_prefill_and_its_decode_steps(context: Context) -> None:
    # 16 prompts of 500 tokens: 8,000 tokens, one step of the 8,192-token budget, and 16 of
    # the 1,024 seats. That step is /v1/throughput's prefill of 16 prompts in one pass (its
    # ttft_ms at concurrency 16); then 299 decode steps of batch 16 at contexts 500 .. 798,
    # linear in the context (memory-bound at this batch), so 299 steps at the mean context
    # 649: /v1/throughput's time_per_token_ms at concurrency 16 for 298-token answers (it
    # reads each sequence at prompt + output / 2 = 649). The engine's TTFT overhead (the API
    # server before the first step) is added once, from t = 0.
    n, prompt, output = 16, 500, 300
    answer = run_batch(context, requests=n, prompt_tokens=prompt, output_tokens=output)
    lab = throughput(context, concurrency=n, prompt_tokens=prompt, output_tokens=output - 2)
    assert answer["tensor_parallel"] == lab.memory.tensor_parallel == 1 and lab.decode_bound == "memory"
    engine = context.engine("vllm")
    assert engine is not None
    overhead_s = engine.ttft_overhead_ms / 1e3
    # The simulator charges a step's prefill chunks one sequence's per-sequence cost; the lab's
    # prefill of 16 prompts charges 16 (an approximation of the simulator's, 15 x the cost here).
    expected_s = (
        lab.ttft_s - (n - 1) * engine.sequence_overhead_us / 1e6 + (output - 1) * lab.time_per_token_s + overhead_s
    )
    assert answer["makespan_s"] == pytest.approx(expected_s, rel=1e-9)
    lab_ttft_ms = lab.ttft_s * 1e3 - (n - 1) * engine.sequence_overhead_us / 1e3
    assert answer["ttft_ms"]["p99"] == pytest.approx(lab_ttft_ms + overhead_s * 1e3, rel=1e-9)
    assert answer["e2e_ms"]["p50"] == pytest.approx(expected_s * 1e3, rel=1e-9)
    assert answer["output_tokens_per_s"] == pytest.approx(n * output / expected_s, rel=1e-9)
    assert answer["total_tokens_per_s"] == pytest.approx(n * (prompt + output) / expected_s, rel=1e-9)
    assert answer["requests_per_s"] == pytest.approx(n / expected_s, rel=1e-9)
    assert (answer["preemptions"], answer["cut_requests"], answer["warnings"]) == (0, 0, [])


def test_the_job_cost_is_the_replicas_gpu_hours_over_the_makespan(context: Context) -> None:
    # Llama 3.1 70B at TP4 on H100s at $3.00 each: 4 GPUs x makespan hours x $3.00.
    answer = run_batch(context, model="llama-3.1-70b", tensor_parallel=4, requests=500)
    assert (answer["gpus"], answer["price_per_gpu_hour_usd"]) == (4, 3.0)
    assert answer["job_cost_usd"] == pytest.approx(4 * 3.0 * answer["makespan_s"] / 3600, rel=1e-12)
    per_million = answer["job_cost_usd"] / (answer["output_tokens_total"] / 1e6)
    assert answer["cost_per_million_output_tokens_usd"] == pytest.approx(per_million, rel=1e-12)
    given = run_batch(context, model="llama-3.1-70b", tensor_parallel=4, requests=500, price_per_gpu_hour_usd=1.5)
    assert given["job_cost_usd"] == pytest.approx(answer["job_cost_usd"] / 2, rel=1e-12)


def test_without_a_price_the_cost_is_null_and_the_answer_says_why(context: Context) -> None:
    card = {"name": "unpriced", "memory_gb": 80, "memory_bandwidth_tb_per_s": 3.35, "peak_tflops": {"bf16": 989}}
    answer = run_batch(context, gpu=card, requests=100)
    assert answer["price_per_gpu_hour_usd"] is None
    assert answer["job_cost_usd"] is None and answer["cost_per_million_output_tokens_usd"] is None
    assert any("no hourly price" in warning for warning in answer["warnings"])


@PROPERTY
@given(
    prompt=st.integers(1, 1200),
    output=st.integers(3, 500),
    requests=st.integers(1, 300),
    seats=st.integers(1, 256),
)
def test_decode_tokens_never_come_faster_than_throughputs_decode_at_the_batch(
    context: Context, prompt: int, output: int, requests: int, seats: int
) -> None:
    # At fixed lengths each request's first token comes from its prefill; every other comes
    # from a decode step of at most c = min(requests, max_num_seqs) sequences (the KV cache,
    # 448,272 tokens, holds 256 whole sequences of up to 1,700 tokens: nothing is
    # preempted), none faster than the decodes alone, whose time is linear in their
    # contexts P .. P + O - 2: so no faster than /v1/throughput's decode-only tokens_per_s at
    # concurrency c, read at the mean context P + (O - 2) / 2 (its answer for O - 2 tokens).
    c = min(requests, seats)
    answer = run_batch(context, requests=requests, prompt_tokens=prompt, output_tokens=output, max_num_seqs=seats)
    assert answer["preemptions"] == 0
    decode_tokens_per_s = (answer["output_tokens_total"] - requests) / answer["makespan_s"]
    lab = throughput(context, concurrency=c, prompt_tokens=prompt, output_tokens=output - 2, max_num_seqs=seats)
    assert decode_tokens_per_s <= lab.tokens_per_s * (1 + 1e-9)


@PROPERTY
@given(
    prompt=st.integers(1, 3000),
    output=st.integers(1, 600),
    requests=st.integers(1, 400),
    more=st.integers(1, 400),
    seed=st.integers(0, 2**31 - 1),
)
def test_more_requests_never_finish_sooner(
    context: Context, prompt: int, output: int, requests: int, more: int, seed: int
) -> None:
    fields = {"prompt_tokens": prompt, "output_tokens": output, "seed": seed}
    fewer = run_batch(context, requests=requests, **fields)
    more_requests = run_batch(context, requests=requests + more, **fields)
    assert more_requests["makespan_s"] >= fewer["makespan_s"] * (1 - 1e-12)
    assert more_requests["e2e_ms"]["p99"] >= fewer["e2e_ms"]["p99"] * (1 - 1e-12)


def test_spread_answers_lower_throughput_by_the_drain_of_the_longest(context: Context) -> None:
    # 256 requests, one wave (256 seats): at fixed lengths all 256 decode to the end as one
    # batch; exponential answers (cv 1) of the same mean leave the longest (about ln 256 = 5.5
    # x the mean) to finish at a small batch, each step costing nearly a full one's time.
    fields = {"requests": 256, "max_num_seqs": 256, "prompt_tokens": 30, "output_tokens": 400}
    fixed = run_batch(context, **fields)
    spread = run_batch(context, **fields, output_tokens_cv=1)
    assert spread["output_tokens_per_s"] < 0.5 * fixed["output_tokens_per_s"]
    assert spread["e2e_ms"]["p50"] < fixed["e2e_ms"]["p50"] < spread["e2e_ms"]["p99"]


def test_a_kv_cache_outgrown_preempts_and_the_answer_says_so(context: Context) -> None:
    # 1,024 seats and 3,000-token sequences: the KV cache holds some 150 whole ones; the engine
    # admits while prompts fit (448 of 1,000 tokens) and preempts as answers grow.
    answer = run_batch(context, requests=600, prompt_tokens=1000, output_tokens=2000)
    kv_tokens = throughput(context, concurrency=1, prompt_tokens=1000, output_tokens=2000).memory.kv_capacity_tokens
    assert answer["max_concurrency"] == kv_tokens // 3000 and answer["max_running_requests"] == 1024
    assert answer["preemptions"] > 0
    assert any(w.startswith(f"{answer['preemptions']:,} preemptions") for w in answer["warnings"])


def test_lengths_drawn_past_the_kv_cache_are_cut_and_the_answer_says_so(context: Context) -> None:
    # Answers of mean 50,000 at cv 4 (gamma of shape 1/16, scale 800,000): some 3% are drawn
    # past the 448,172 tokens a 100-token prompt leaves (one seat: one at a time, none preempted).
    answer = run_batch(
        context, requests=300, prompt_tokens=100, output_tokens=50_000, output_tokens_cv=4, max_num_seqs=1
    )
    assert answer["cut_requests"] > 0
    assert answer["output_tokens_total"] < 300 * 448_272
    assert any(f"{answer['cut_requests']:,} of the 300 requests" in w for w in answer["warnings"])


def test_a_sequence_that_does_not_fit_the_kv_cache_is_refused_naming_prompt_tokens(context: Context) -> None:
    # 500,000 tokens against 448,272 on one H100 (without tensor_parallel the smallest
    # group that holds the sequence is chosen).
    with pytest.raises(SizingError) as refused:
        run_batch(context, prompt_tokens=400_000, output_tokens=100_000, tensor_parallel=1)
    assert refused.value.field == "prompt_tokens"


def test_an_unknown_model_is_an_unknown_resource(context: Context) -> None:
    with pytest.raises(UnknownResource) as refused:
        run_batch(context, model="no-such-model")
    assert list(refused.value.errors or {}) == ["model"]


def test_a_batch_over_the_work_limit_is_refused_naming_what_makes_it_large(context: Context) -> None:
    # 50,000 prompts of 200,000 tokens: 10^10 prompt tokens in steps of at most 8,192, over a
    # million steps whatever the schedule: refused before the run.
    with pytest.raises(InvalidRequest) as refused:
        run_batch(context, requests=50_000, prompt_tokens=200_000, output_tokens=10)
    errors = refused.value.errors or {}
    assert set(errors) == {"requests", "prompt_tokens", "output_tokens"}
    assert f"{BATCH_MAX_WORK:,} units of work" in refused.value.detail

"""`make accuracy`: every training row becomes a planning request, the replay over the API
agrees with the in-process fit, and the README quotes what the replay prints today."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from bench import readme_tables
from bench.accuracy import Result, evaluate, held_out_summaries, read_held_out, replay, summarise, trusted
from bench.accuracy_rows import (
    KV_AT_DEFAULTS,
    OPENLOOP_ITL,
    OPENLOOP_METRICS,
    OPENLOOP_TPOT,
    OPENLOOP_TTFT,
    SHAREGPT_BURST_CV,
    SHAREGPT_MEAN_OUTPUT_TOKENS,
    SHAREGPT_MEAN_PROMPT_TOKENS,
    TPOT,
    TTFT,
    UNIFORM_CV,
    WEIGHTS,
    Case,
    Skip,
    achieved_rate,
    gpu_of,
    kv_precision_of,
    load_cases,
    load_openloop_cases,
    load_speculative_cases,
    model_of,
    overloaded,
    precision_of,
    speculation_of,
)
from bench.fit_engines import in_process, load_catalog

README = Path(__file__).resolve().parents[2] / "README.md"


def client_asker(client: FlaskClient):
    def ask(endpoint: str, params: dict[str, Any]) -> dict[str, Any]:
        response = client.post(endpoint, json=params)
        body = response.get_json()
        if response.status_code != 200:
            raise LookupError(f"{response.status_code}: {body.get('detail')}")
        return body

    return ask


# Rows left out, and why: a GPU or model the catalog lacks, or a serving feature the step model
# leaves out (their rows would fit a wrong constant).
SKIPPED = {
    "M23": "not in the catalog and the row gives no memory",
    "NM06": "is not in the catalog",
    "NM09": "is not in the catalog",
    **{row: "data-parallel attention is not modelled" for row in ("N004", "N007", "N048", "N049", "N051")},
    # TensorRT-LLM's perf-overview runs its MoE models (Qwen3-235B-A22B) with enable_attention_dp.
    **{row: "data-parallel attention is not modelled" for row in ("S56", "S57")},
    **{row: "speculative decoding" for row in ("N047", "N050")},
    # Sixteen copies of one prompt at temperature 0 on an MoE: every sequence reads the same experts.
    **{row: "route every sequence to the same experts" for row in ("N055", "N056", "N057")},
    # SGLang's DeepSeek-V3 open-loop runs with DP attention, in their closed-loop mapping.
    **{f"NO0{i}": "data-parallel attention is not modelled" for i in range(1, 9)},
}
# Rows whose GPU's datasheet figures the catalog does not have yet (no peak, or no entry): they
# answer with the missing figure named, not a number.
UNPLANNABLE_GPUS = ("rtx-4090",)


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    found, skipped = load_cases()
    reasons = {s.row_id: s.reason for s in skipped}
    assert set(reasons) == set(SKIPPED)
    for row, reason in SKIPPED.items():
        assert reason in reasons[row], (row, reasons[row])
    return found


def test_rows_served_with_speculation_are_replayed_apart_with_their_method(client: FlaskClient):
    found = {c.row_id: c for c in load_speculative_cases()}
    # TensorRT-LLM's DeepSeek-R1 min-latency runs: MTP with num_nextn_predict_layers 3.
    assert set(found) == {"N047", "N050"}
    ask = client_asker(client)
    for result in replay(list(found.values()), ask):
        case = result.case
        assert case.params["speculative"] == {"method": "mtp", "num_speculative_tokens": 3}
        assert result.predicted is not None, result.error
        # The prediction is the speculative steady state at the row's concurrency of one...
        asked = {**case.params, "concurrency": 1}
        with_it = ask("/v1/throughput", asked)["continuous_batching"]["tokens_per_s"]
        plain = {k: v for k, v in asked.items() if k != "speculative"}
        without = ask("/v1/throughput", plain)["continuous_batching"]["tokens_per_s"]
        assert result.predicted == pytest.approx(with_it)
        # ...which the three drafted tokens at MTP's 0.85 make about twice the plain one.
        assert with_it > 1.5 * without


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("none", None),
        ("", None),
        ("MTP (num_nextn_predict_layers 3)", {"method": "mtp", "num_speculative_tokens": 3}),
        ("EAGLE-3, 4 draft tokens", {"method": "eagle3", "num_speculative_tokens": 4}),
        ("EAGLE", {"method": "eagle"}),
        ("n-gram prompt lookup", {"method": "ngram"}),
    ],
)
def test_a_row_s_speculation_is_read_as_the_request_s(text: str, spec: dict[str, Any] | None):
    assert speculation_of({"spec_decoding": text}) == spec


def test_a_speculation_method_the_service_does_not_model_is_skipped_saying_so():
    with pytest.raises(Skip, match="Medusa"):
        speculation_of({"spec_decoding": "Medusa heads"})


def test_a_burst_is_an_offline_batch_with_the_runs_own_lengths(cases: list[Case]):
    n001 = next(c for c in cases if c.row_id == "N001")
    # vllm bench serve's block: 1000 successful requests, 219,171 input and 200,752 output tokens.
    assert n001.endpoint == "/v1/batch" and n001.params["requests"] == 1000
    assert (n001.params["prompt_tokens"], n001.params["output_tokens"]) == (219, 201)
    assert n001.params["prompt_tokens_cv"] == n001.params["output_tokens_cv"] == SHAREGPT_BURST_CV
    assert n001.measured == 2621.05
    # The fit asks the burst's steady state at the engine's largest batch instead, scaled.
    assert n001.surrogate is not None and n001.surrogate.endpoint == "/v1/fit"
    # Total tokens/s only (input and output): the output's share of the ShareGPT means.
    n074 = next(c for c in cases if c.row_id == "N074")
    assert n074.measured == pytest.approx(13305.38 * 203 / (230 + 203))


def test_free_text_names_map_onto_the_catalog():
    assert model_of("meta-llama/Llama-3.3-70B-Instruct (NIM container llama-3.3-70b-instruct)") == "llama-3.3-70b"
    assert model_of("Llama-3 70B (CI 'llama70B')") == "llama-3.1-70b"
    assert model_of("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8") == "llama-3.1-405b-fp8"
    assert model_of("amd/Llama-3.1-405B-Instruct-FP8-KV") == "llama-3.1-405b"
    assert model_of("nvidia/DeepSeek-R1-0528-FP4-V2 (config dsr1-fp4-b200-sglang)") == "deepseek-v3"
    assert gpu_of("NVIDIA H100 (80GB)", None) == "h100-sxm"
    assert gpu_of("A100-SXM-40GB", None) == "a100-sxm-40gb"
    assert gpu_of("AMD Instinct MI300X 192GB", None) == "mi300x"
    assert gpu_of("NVIDIA RTX 3090 24GB", 23.58)["memory_visible_gib"] == 23.58
    assert precision_of("AWQ int4 weights") == "int4"
    assert precision_of("FP4 (NVFP4)") == "nvfp4"
    assert precision_of("not stated (model default, bf16)") is None
    assert kv_precision_of("amd/Llama-3.1-70B-Instruct-FP8-KV", "FP8", "") == "fp8"
    assert kv_precision_of("meta-llama/Llama-3.1-8B-Instruct", "bf16", "") is None
    nim = "NVIDIA NIM (inference backend not named on page)"
    assert kv_precision_of("meta-llama/Llama-3.3-70B-Instruct", "fp8", "", nim) == "fp8"
    assert kv_precision_of("meta-llama/Llama-3.3-70B-Instruct", "bf16", "", nim) is None
    # "nim" inside another word is not NIM.
    assert kv_precision_of("meta-llama/Llama-3.3-70B-Instruct", "fp8", "", "animated-engine") is None


def test_an_overloaded_open_loop_run_keeps_its_tpot_and_not_its_ttft(cases: list[Case]):
    # NO19's notes: 2,400 prompts offered at 8 req/s (300 s of arrivals) took 669.50 s in all:
    # 2400 / 669.4968 = 3.585 req/s served, under three quarters (6) of the offered rate.
    row = {"achieved_req_s": "", "prompts": "2400", "notes": "jsonl: duration 669.4968274980783 s, total_input"}
    assert achieved_rate(row) == pytest.approx(2400 / 669.4968274980783)
    assert overloaded(achieved_rate(row), 8.0)
    # NO12: 2,400 at 8 req/s in 346.78 s is 6.92 req/s, the drain of a stable queue.
    assert not overloaded(2400 / 346.7753648299258, 8.0)
    # A printed achieved rate wins over the duration (NO23: 2.10 of 4.0 req/s).
    assert achieved_rate({"achieved_req_s": "2.10", "prompts": "300", "notes": "duration 143.03 s"}) == 2.10
    by_row = {(c.row_id, c.metric) for c in cases}
    for row_id in ("NO13", "NO19", "NO23", "O11"):
        assert (row_id, TTFT) not in by_row
    assert ("NO19", TPOT) in by_row and ("NO12", TTFT) in by_row
    # NO19 decodes at 189.7 ms a token over 508 outputs: 3.585 req/s x 96.4 s = 346 running.
    no19 = next(c for c in cases if (c.row_id, c.metric) == ("NO19", TPOT))
    assert no19.params["concurrency"] == round(2400 / 669.4968274980783 * 508 * 189.74614795297384 / 1e3)


def test_a_ttft_served_from_the_prefix_cache_is_not_a_prefill_row(cases: list[Case]):
    # N070/N071's notes: "TTFT reflects a cached prompt, not a 10k prefill"; TPOT and tokens/s stay.
    metrics = {c.metric for c in cases if c.row_id in ("N070", "N071")}
    assert TTFT not in metrics and TPOT in metrics


def test_every_metric_of_the_issue_has_rows(cases: list[Case]):
    metrics = {c.metric for c in cases}
    assert {WEIGHTS, KV_AT_DEFAULTS, TPOT, "ttft_ms", "output_tokens_per_s"} <= metrics
    assert {c.engine for c in cases} == {"vllm", "sglang", "trtllm"}


def test_the_http_replay_equals_the_in_process_one_the_fit_uses(client: FlaskClient, cases: list[Case]):
    over_http = replay(cases, client_asker(client))
    direct = [evaluate(c, in_process(load_catalog())) for c in cases]
    failed = [r for r in over_http if r.error]
    assert all(r.case.params["gpu"] in UNPLANNABLE_GPUS for r in failed), [(r.case.row_id, r.error) for r in failed]
    assert all(("peak" in r.error or "unknown GPU" in r.error) for r in failed if r.error)
    for a, b in zip(over_http, direct, strict=True):
        if a.predicted is None:
            assert b.predicted is None, a.case.row_id
            continue
        assert a.predicted == pytest.approx(b.predicted, rel=1e-9), (a.case.row_id, a.case.metric)


def _readme_table(heading: str) -> dict[str, tuple[float, float]]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(heading) :]
    rows = {}
    for line in block.splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if re.fullmatch(r"-?\d+(\.\d+)?", cells[2]):
            rows[cells[0]] = (float(cells[2]), float(cells[3]))
    return rows


@pytest.mark.parametrize(
    ("heading", "select"),
    [("Training rows, all:", lambda r: r), ("Training rows of high or medium trust:", trusted)],
)
def test_the_readme_quotes_the_replay_as_it_is(client: FlaskClient, cases: list[Case], heading: str, select: Any):
    results: list[Result] = select(replay(cases, client_asker(client)))
    quoted = _readme_table(heading)
    for summary in summarise(results):
        assert summary.metric in quoted, summary.metric
        median, p90 = quoted[summary.metric]
        assert summary.median_abs_percent == pytest.approx(median, abs=0.051), summary.metric
        assert summary.p90_abs_percent == pytest.approx(p90, abs=0.051), summary.metric


@pytest.fixture(scope="module")
def openloop_cases() -> list[Case]:
    found, skipped = load_openloop_cases()
    # SGLang's DeepSeek-V3 runs with DP attention (NO01-NO08): not modelled.
    assert {s.row_id for s in skipped} == {f"NO0{i}" for i in range(1, 9)}
    assert all("data-parallel attention" in s.reason for s in skipped)
    return found


def test_open_loop_rows_are_latency_questions_at_their_measured_rate(openloop_cases: list[Case]):
    by_row = {(c.row_id, c.metric): c for c in openloop_cases}
    added = {f"NO{i:02d}" for i in (*range(9, 22), 23)}
    assert {c.row_id for c in openloop_cases} == {"O09", "O10", "O11", "O14", "O15", *added}
    assert {c.endpoint for c in openloop_cases} == {"/v1/latency"}
    o11 = by_row[("O11", OPENLOOP_TTFT)]
    # The rate the run asked for (16), not the 6.33 it achieved; Poisson; published ShareGPT means.
    assert o11.params["request_rate"] == 16
    assert o11.params["arrival"] == "poisson" and o11.params["engine"] == "vllm"
    assert (o11.params["prompt_tokens"], o11.params["output_tokens"]) == (
        SHAREGPT_MEAN_PROMPT_TOKENS,
        SHAREGPT_MEAN_OUTPUT_TOKENS,
    )
    assert o11.measured == 58.10  # the median, not the mean (59.58)
    assert by_row[("O09", OPENLOOP_TPOT)].measured == 24.54
    assert by_row[("O14", OPENLOOP_ITL)].measured == 8.30276
    # Each answers one rate's percentiles.
    answer = {"rates": [{"ttft_ms": {"p50": 12.5, "mean": 13.0}}]}
    assert o11.extract(answer) == 12.5
    assert o11.then is None
    # SGLang's random dataset at range ratio 0: uniform lengths, their means from the run's totals
    # (300 prompts, 152,612 input and 160,347 output tokens).
    no09 = by_row[("NO09", OPENLOOP_TTFT)]
    assert (no09.params["prompt_tokens"], no09.params["output_tokens"]) == (509, 534)
    assert no09.params["prompt_tokens_cv"] == pytest.approx(UNIFORM_CV) == pytest.approx(3**-0.5)
    # A ShareGPT run with its totals: 1,200 prompts, 269,081 input and 226,901 output tokens.
    no14 = by_row[("NO14", OPENLOOP_TTFT)]
    assert (no14.params["prompt_tokens"], no14.params["output_tokens"]) == (224, 189)


def test_open_loop_rows_that_cannot_be_mapped_are_skipped_with_the_reason(tmp_path: Path):
    source = Path(__file__).resolve().parents[2] / "bench" / "measurements" / "openloop.csv"
    with source.open(encoding="utf-8", newline="") as handle:
        columns = csv.DictReader(handle).fieldnames or []
    base = {"trust": "high", "engine": "vLLM", "tensor_parallel": "1", "precision": "bf16"}
    base |= {"dataset": "ShareGPT", "request_rate": "1", "ttft_p50_ms": "30"}
    rows = [
        {**base, "row_id": "X1", "model": "some/Unknown-Model-3B", "gpu": "H100-SXM-80GB"},
        {**base, "row_id": "X2", "model": "meta-llama/Llama-3.1-8B", "gpu": "Z9000"},
        {**base, "row_id": "X3", "model": "meta-llama/Llama-3.1-8B", "gpu": "H100", "dataset": "random 1024/128"},
    ]
    with (tmp_path / "openloop.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    cases, skipped = load_openloop_cases(tmp_path)
    assert cases == []
    reasons = {s.row_id: s.reason for s in skipped}
    assert reasons["X1"].startswith("model ") and "not in the catalog" in reasons["X1"]
    assert reasons["X2"].startswith("GPU ") and "not in the catalog" in reasons["X2"]
    assert "no published length statistics" in reasons["X3"]


@pytest.mark.parametrize(
    ("heading", "select"),
    [("Open-loop rows, all:", lambda r: r), ("Open-loop rows of high or medium trust:", trusted)],
)
def test_the_readme_quotes_the_open_loop_replay_as_it_is(
    client: FlaskClient, openloop_cases: list[Case], heading: str, select: Any
):
    replayed = replay(openloop_cases, client_asker(client))
    # A rate past the replica's capacity has no steady-state percentile (None), never an error.
    assert all(r.error is None for r in replayed), [(r.case.row_id, r.error) for r in replayed if r.error]
    results: list[Result] = select(replayed)
    quoted = _readme_table(heading)
    summaries = summarise(results, OPENLOOP_METRICS)
    assert {s.metric for s in summaries} == set(quoted)
    for summary in summaries:
        median, p90 = quoted[summary.metric]
        assert summary.median_abs_percent == pytest.approx(median, abs=0.051), summary.metric
        assert summary.p90_abs_percent == pytest.approx(p90, abs=0.051), summary.metric


def test_the_readme_headline_is_the_committed_leave_one_source_out_result():
    held_out = read_held_out()
    assert held_out, "bench/cross_validation.csv is written by make fit-engines"
    # Every fitted row is there, each predicted once (a publication's rows never split).
    found, _ = load_cases()
    assert {(c.row_id, c.metric) for c in found} == {(r.row_id, r.metric) for r in held_out}
    quoted = _readme_table("Leave-one-source-out, all rows:")
    for summary in held_out_summaries(held_out):
        median, p90 = quoted[summary.metric]
        assert summary.median_abs_percent == pytest.approx(median, abs=0.051), summary.metric
        assert summary.p90_abs_percent == pytest.approx(p90, abs=0.051), summary.metric


def test_the_readme_tables_are_rewritten_under_their_headings_and_nothing_else():
    text = "\n".join(
        [
            "Intro.",
            "Training rows, all:",
            "",
            "| old | table |",
            "| --- | --- |",
            "| x | 1 |",
            "",
            "Prose after, with a | pipe inside.",
            "Open-loop rows, all:",
            "| old |",
            "Tail.",
        ]
    )
    new = {"Training rows, all:": ["| new |", "| --- |"], "Open-loop rows, all:": ["| also new |"]}
    assert readme_tables.rewrite(text, new).split("\n") == [
        "Intro.",
        "Training rows, all:",
        "",
        "| new |",
        "| --- |",
        "",
        "Prose after, with a | pipe inside.",
        "Open-loop rows, all:",
        "| also new |",
        "Tail.",
    ]
    with pytest.raises(KeyError, match="no line"):
        readme_tables.rewrite(text, {"Missing heading:": ["| t |"]})
    with pytest.raises(KeyError, match="no table under"):
        readme_tables.rewrite("Training rows, all:\nno table here", {"Training rows, all:": ["| t |"]})
    # The committed README is what the code computes today: rewriting it changes nothing.
    current = README.read_text(encoding="utf-8")
    assert readme_tables.rewrite(current, readme_tables.tables()) == current

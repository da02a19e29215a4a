"""Speculative decoding through the HTTP client: /v1/throughput takes `speculative` (GET:
dotted) and answers what a verification step finishes, costs and gains; /v1/latency, /v1/batch,
/v1/cost and /v1/fleet plan with it (the fleet may choose, `speculative.auto`); bad values are
422s naming the field, and speculation is off unless asked."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "ideal", "prompt_tokens": 2048, "output_tokens": 512}


def test_eagle_by_get_and_by_post_answer_the_same_speculative_block(client: FlaskClient) -> None:
    dotted = {**L8_H100, "speculative.method": "eagle", "speculative.num_speculative_tokens": 3}
    got = client.get("/v1/throughput", query_string={**dotted, "speculative.acceptance_rate": 0.7})
    posted = client.post(
        "/v1/throughput",
        json={**L8_H100, "speculative": {"method": "eagle", "num_speculative_tokens": 3, "acceptance_rate": 0.7}},
    )
    assert got.status_code == posted.status_code == 200, got.get_json()
    spec = got.get_json()["speculative"]
    assert spec == posted.get_json()["speculative"]
    assert spec["tokens_per_step"] == pytest.approx((1 - 0.7**4) / (1 - 0.7))  # 2.533
    assert spec["time_per_token_ms"] == pytest.approx(
        (spec["verify_ms"] + spec["draft_ms"]) / spec["tokens_per_step"], rel=1e-12
    )
    assert spec["speedup"] == pytest.approx(spec["plain_step_ms"] / spec["time_per_token_ms"], rel=1e-12)
    assert 1.5 < spec["speedup"] < spec["tokens_per_step"]


def test_the_steady_state_runs_the_speculative_step(client: FlaskClient) -> None:
    plain = client.get("/v1/throughput", query_string={**L8_H100, "concurrency": 4}).get_json()
    eagle = client.get(
        "/v1/throughput", query_string={**L8_H100, "concurrency": 4, "speculative.method": "eagle"}
    ).get_json()
    assert plain["speculative"] is None
    spec = eagle["speculative"]
    # The method's defaults, filled in and said.
    assert (spec["num_speculative_tokens"], spec["acceptance_rate"], spec["draft_model"]) == (3, 0.7, None)
    steady, before = eagle["continuous_batching"], plain["continuous_batching"]
    assert steady["decode_step_ms"] == pytest.approx(spec["verify_ms"] + spec["draft_ms"], rel=1e-12)
    assert steady["tokens_per_s"] > 1.5 * before["tokens_per_s"]
    assert steady["time_per_token_ms"] < before["time_per_token_ms"] / 1.5
    # The lab's batch figures stay the seeds' arithmetic.
    assert eagle["time_per_token_ms"] == plain["time_per_token_ms"]


def test_a_draft_model_costs_its_own_decode_steps(client: FlaskClient) -> None:
    body = {
        **L8_H100,
        "model": "llama-3.1-70b",
        "tensor_parallel": 4,
        "speculative": {"method": "draft_model", "draft_model": "llama-3.1-8b", "num_speculative_tokens": 4},
    }
    response = client.post("/v1/throughput", json=body)
    assert response.status_code == 200, response.get_json()
    spec = response.get_json()["speculative"]
    assert spec["draft_model"] == "llama-3.1-8b"
    # Four decode steps of an 8B model against a 70B step on the same GPUs: well over a quarter
    # of the plain step (8 / 70 x 4 = 0.46 of its weight bytes) and under the whole of it.
    assert 0.3 * spec["plain_step_ms"] < spec["draft_ms"] < spec["plain_step_ms"]


def test_speculation_that_loses_at_a_large_batch_says_so(client: FlaskClient) -> None:
    # Short contexts: 256 sequences verifying 4 tokens each turn the step compute-bound.
    query = {**L8_H100, "prompt_tokens": 256, "output_tokens": 256, "concurrency": 256, "speculative.method": "ngram"}
    query["speculative.acceptance_rate"] = 0.3
    body = client.get("/v1/throughput", query_string=query).get_json()
    assert body["speculative"]["speedup"] < 1
    assert any("speculative decoding loses at concurrency 256" in w for w in body["warnings"])


def test_the_sweep_gives_the_speedup_at_each_concurrency(client: FlaskClient) -> None:
    query = {**L8_H100, "prompt_tokens": 256, "output_tokens": 256, "speculative.method": "eagle"}
    rows = client.get("/v1/throughput", query_string={**query, "sweep": "1,64,256"}).get_json()["sweep"]
    speedups = [row["speculative_speedup"] for row in rows]
    # Memory-bound at 1; verifying 4 x 64 tokens nears the ridge, 4 x 256 is well past it.
    assert speedups[0] > speedups[1] > 1.5 > speedups[2]


@pytest.mark.parametrize(
    ("speculative", "field"),
    [
        ({"method": "eagle", "acceptance_rate": 1.0}, "speculative.acceptance_rate"),
        ({"method": "eagle", "acceptance_rate": -0.1}, "speculative.acceptance_rate"),
        ({"method": "eagle", "num_speculative_tokens": 0}, "speculative.num_speculative_tokens"),
        ({"method": "medusa"}, "speculative.method"),
        ({"method": "draft_model"}, "speculative.draft_model"),
        ({"method": "eagle", "draft_model": "llama-3.1-8b"}, "speculative.draft_model"),
        ({"method": "draft_model", "draft_model": "llama-3.1-70b"}, "speculative.draft_model"),
    ],
)
def test_bad_speculation_is_422_naming_the_field(client: FlaskClient, speculative: dict[str, Any], field: str) -> None:
    response = client.post("/v1/throughput", json={**L8_H100, "speculative": speculative})
    assert response.status_code == 422, response.get_json()
    assert field in response.get_json()["errors"]


def test_an_unknown_draft_model_is_404_naming_it(client: FlaskClient) -> None:
    body = {**L8_H100, "speculative": {"method": "draft_model", "draft_model": "no-such-model"}}
    response = client.post("/v1/throughput", json=body)
    assert response.status_code == 404
    assert "speculative.draft_model" in response.get_json()["errors"]


EAGLE = {"speculative.method": "eagle", "speculative.num_speculative_tokens": 3, "speculative.acceptance_rate": 0.7}
E_EAGLE = (1 - 0.7**4) / (1 - 0.7)  # 2.533 tokens a verification step


def test_under_arrivals_at_a_trickle_tpot_is_the_batch_1_speculative_step(client: FlaskClient) -> None:
    lone = client.get("/v1/throughput", query_string={**L8_H100, **EAGLE}).get_json()["speculative"]
    plain = client.get("/v1/latency", query_string={**L8_H100, "request_rate": 0.05}).get_json()
    eagle = client.get("/v1/latency", query_string={**L8_H100, "request_rate": 0.05, **EAGLE})
    assert eagle.status_code == 200, eagle.get_json()
    body = eagle.get_json()
    assert plain["speculative"] is None
    assert body["speculative"] == {
        "method": "eagle",
        "num_speculative_tokens": 3,
        "acceptance_rate": 0.7,
        "draft_model": None,
        "tokens_per_step": pytest.approx(E_EAGLE),
        "auto": False,
        "used": True,
    }
    # A lone request decodes at batch one: (verify + 3 head passes) / E, about half the plain step.
    tpot = body["rates"][0]["tpot_ms"]["mean"]
    assert tpot == pytest.approx(lone["time_per_token_ms"], rel=0.01)
    assert plain["rates"][0]["tpot_ms"]["mean"] / tpot == pytest.approx(lone["speedup"], rel=0.01)
    # The simulator runs the same steps.
    simulated = client.get(
        "/v1/latency", query_string={**L8_H100, "request_rate": 0.05, "mode": "simulate", "requests": 1000, **EAGLE}
    ).get_json()
    assert simulated["speculative"]["used"]
    assert simulated["rates"][0]["tpot_ms"]["p50"] == pytest.approx(tpot, rel=0.03)


def test_a_batch_verifying_k_plus_1_tokens_a_sequence_runs_at_most_the_budget_over_k_plus_1(client) -> None:
    body = client.get("/v1/batch", query_string={**L8_H100, "requests": 200, **EAGLE}).get_json()
    plain = client.get("/v1/batch", query_string={**L8_H100, "requests": 200}).get_json()
    assert body["speculative"]["used"] and plain["speculative"] is None
    # 2,048 tokens a step over 4 queries a sequence: 512 seats; the KV cache (less the heads') holds fewer.
    assert body["max_running_requests"] == min(512, body["max_concurrency"]) < plain["max_running_requests"]
    assert body["output_tokens_per_s"] > plain["output_tokens_per_s"]


def test_cost_prices_the_speculative_time_per_token(client: FlaskClient) -> None:
    plain = client.get("/v1/cost", query_string=L8_H100).get_json()
    eagle = client.get("/v1/cost", query_string={**L8_H100, **EAGLE}).get_json()
    step = client.get("/v1/throughput", query_string={**L8_H100, **EAGLE}).get_json()
    # One request of 512 tokens: the prefill, then 512 tokens at the speculative time per token.
    seconds = step["ttft_ms"] / 1e3 + 512 * step["speculative"]["time_per_token_ms"] / 1e3
    assert eagle["tokens_per_s"] == pytest.approx(512 / seconds, rel=1e-9)
    assert eagle["cost_per_million_output_tokens_usd"] < plain["cost_per_million_output_tokens_usd"]


FLEET = {**L8_H100, "requests_per_day": 100_000, "tpot_slo_ms": 5}


def test_a_tight_tpot_slo_that_speculation_meets_on_fewer_gpus(client: FlaskClient) -> None:
    plain = client.get("/v1/fleet", query_string=FLEET).get_json()
    eagle = client.get("/v1/fleet", query_string={**FLEET, **EAGLE}).get_json()
    auto = client.get("/v1/fleet", query_string={**FLEET, **EAGLE, "speculative.auto": "true"}).get_json()
    assert plain["speculative"] is None and eagle["speculative"]["used"]
    # Batch one decodes in about 7 ms without speculation (16 GB over 3.35 TB/s x 0.7): 5 ms needs
    # TP 2 (or speculation's 3.6 ms on one GPU).
    assert plain["replica"]["tensor_parallel"] == 2 and eagle["replica"]["tensor_parallel"] == 1
    assert eagle["replica"]["time_per_token_ms"] <= 5
    assert eagle["gpus_total"] < plain["gpus_total"]
    # auto ranks both and keeps the cheaper: speculation here.
    assert auto["speculative"]["auto"] and auto["speculative"]["used"]
    assert auto["gpus_total"] == eagle["gpus_total"]
    rows = auto["alternatives"]
    assert {row["speculative"] for row in rows} == {True, False}
    assert rows[0]["speculative"] and rows[0]["rank"] == 1
    config = '{"method": "eagle", "model": "<the EAGLE head\'s checkpoint>", "num_speculative_tokens": 3}'
    assert f"--speculative-config '{config}'" in auto["vllm_command"]
    assert "--speculative-config" not in plain["vllm_command"]


def test_at_a_large_batch_of_short_requests_auto_leaves_speculation_off(client: FlaskClient) -> None:
    short = {**L8_H100, "prompt_tokens": 256, "output_tokens": 256, "requests_per_day": 50_000_000}
    plain = client.get("/v1/fleet", query_string=short).get_json()
    eagle = client.get("/v1/fleet", query_string={**short, **EAGLE}).get_json()
    auto = client.get("/v1/fleet", query_string={**short, **EAGLE, "speculative.auto": "true"}).get_json()
    # Verifying 4 tokens for each of hundreds of sequences is compute-bound: speculation costs GPUs.
    assert eagle["gpus_total"] > plain["gpus_total"]
    assert auto["speculative"] == {**eagle["speculative"], "auto": True, "used": False}
    assert auto["gpus_total"] == plain["gpus_total"]
    assert "--speculative-config" not in auto["vllm_command"]


def test_auto_is_the_fleet_s_choice_only(client: FlaskClient) -> None:
    response = client.get("/v1/throughput", query_string={**L8_H100, **EAGLE, "speculative.auto": "true"})
    assert response.status_code == 422
    assert "speculative.auto" in response.get_json()["errors"]


def test_fit_holds_the_drafter_s_weights_and_kv(client: FlaskClient) -> None:
    plain = client.get("/v1/fit", query_string=L8_H100).get_json()
    eagle = client.get("/v1/fit", query_string={**L8_H100, "speculative.method": "eagle"})
    assert eagle.status_code == 200, eagle.get_json()
    body = eagle.get_json()
    assert plain["draft_weights_bytes"] is None and plain["draft_kv_bytes_per_token"] is None
    assert body["weights_bytes"] == pytest.approx(plain["weights_bytes"] + body["draft_weights_bytes"], abs=1)
    # One of Llama 3.1 8B's 32 layers: 131,072 / 32 bytes of KV a token.
    assert body["draft_kv_bytes_per_token"] == 131_072 // 32
    assert body["kv_bytes_per_token"] == plain["kv_bytes_per_token"] + 4096
    assert body["max_concurrency"] < plain["max_concurrency"]


def test_a_draft_model_s_serve_line_names_its_repository(client: FlaskClient) -> None:
    query = {
        "model": "llama-3.1-70b",
        "gpu": "h100-sxm",
        "engine": "ideal",
        "requests_per_day": 10_000,
        "speculative.method": "draft_model",
        "speculative.draft_model": "llama-3.1-8b",
    }
    body = client.get("/v1/fleet", query_string=query).get_json()
    config = '{"model": "meta-llama/Llama-3.1-8B-Instruct", "num_speculative_tokens": 3}'
    assert f"--speculative-config '{config}'" in body["vllm_command"]
    assert body["speculative"]["method"] == "draft_model" and body["speculative"]["used"]

"""Speculative decoding through the HTTP client: /v1/throughput takes `speculative` (GET:
dotted) and answers what a verification step finishes, costs and gains; bad values are 422s
naming the field, and speculation is off unless asked."""

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


@pytest.mark.parametrize("path", ["/v1/latency", "/v1/fleet", "/v1/cost", "/v1/batch"])
def test_endpoints_that_do_not_model_it_refuse_it(client: FlaskClient, path: str) -> None:
    response = client.get(path, query_string={**L8_H100, "speculative.method": "eagle"})
    assert response.status_code == 422


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

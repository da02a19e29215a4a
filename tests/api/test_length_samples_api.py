"""length_samples: a request log's (prompt, output) pairs drawn by the simulator instead of gamma
lengths, on /v1/latency and /v1/fleet with mode=simulate."""

from __future__ import annotations

import random

from flask.testing import FlaskClient

from app.sizing.simulate import Limits, Traffic, pair_sampler

L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "ideal"}
# Bimodal: short chats and long documents, which no one gamma of their mean and cv draws.
PAIRS = [[200, 100]] * 9 + [[6000, 400]]


def test_the_sampler_draws_whole_pairs_of_the_samples() -> None:
    prompt, output = pair_sampler([(200, 100), (6000, 400)], random.Random(3))
    drawn = {(prompt(), output()) for _ in range(200)}
    assert drawn == {(200, 100), (6000, 400)}
    assert Traffic(1.0, 780, 130).length_samples == ()
    assert Limits(2048, 256, 100).kv_capacity_tokens == 100


def test_latency_simulates_the_empirical_lengths_and_plans_their_means(client: FlaskClient) -> None:
    body = {**L8_H100, "request_rate": 2, "mode": "simulate", "requests": 2000, "length_samples": PAIRS}
    response = client.post("/v1/latency", json=body)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    answer = response.get_json()
    # The means and population cvs of the pairs: (9 x 200 + 6,000) / 10 = 780, (9 x 100 + 400) / 10 = 130.
    assert (answer["prompt_tokens"], answer["output_tokens"]) == (780, 130)
    assert answer["prompt_tokens_cv"] == 1740 / 780 and answer["output_tokens_cv"] == 90 / 130
    gamma = client.post(
        "/v1/latency",
        json={**{k: v for k, v in body.items() if k != "length_samples"}, "prompt_tokens": 780, "output_tokens": 130,
              "prompt_tokens_cv": 1740 / 780, "output_tokens_cv": 90 / 130},
    ).get_json()  # fmt: skip
    # The same means and cvs, other draws: the simulations differ.
    assert answer["rates"][0]["ttft_ms"]["p99"] != gamma["rates"][0]["ttft_ms"]["p99"]


def test_length_samples_are_refused_where_nothing_draws_them(client: FlaskClient) -> None:
    body = {**L8_H100, "request_rate": 2, "length_samples": PAIRS}
    analytic = client.post("/v1/latency", json=body)
    assert analytic.status_code == 422 and "mode=simulate" in analytic.get_json()["errors"]["length_samples"][0]
    both = client.post("/v1/latency", json={**body, "mode": "simulate", "prompt_tokens": 500})
    assert both.status_code == 422 and "prompt_tokens" in both.get_json()["errors"]
    bad = client.post("/v1/latency", json={**body, "mode": "simulate", "length_samples": [[10, 0]]})
    assert bad.status_code == 422 and any(key.startswith("length_samples") for key in bad.get_json()["errors"])
    get = client.get("/v1/latency", query_string={**L8_H100, "request_rate": 2, "length_samples": "1,2"})
    assert get.status_code == 422 and "length_samples" in get.get_json()["errors"]


def test_a_fleet_simulates_its_replica_on_the_log_s_pairs(client: FlaskClient) -> None:
    body = {**L8_H100, "requests_per_day": 1e6, "mode": "simulate", "requests": 2000, "length_samples": PAIRS}
    response = client.post("/v1/fleet", json=body)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    assert response.get_json()["gpus_total"] >= 1


def test_a_trace_s_samples_feed_a_simulated_latency(client: FlaskClient) -> None:
    log = "timestamp,prompt_tokens,output_tokens\n" + "\n".join(
        f"{i * 7},{p},{o}" for i, (p, o) in enumerate(PAIRS * 30)
    )
    trace = client.post("/v1/traces", data=log, content_type="text/csv").get_json()
    assert len(trace["length_samples"]) == 300
    assert {tuple(pair) for pair in trace["length_samples"]} == {(200, 100), (6000, 400)}
    body = {
        **L8_H100,
        "request_rate": 1,
        "mode": "simulate",
        "requests": 1000,
        "length_samples": trace["length_samples"],
    }
    assert client.post("/v1/latency", json=body).status_code == 200

"""/v1/batch through HTTP: an offline batch on one replica, by POST and by GET, as JSON and as
CSV, and every refusal a problem+json naming the field."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from flask.testing import FlaskClient

from app.planning.batch import BATCH_MAX_WORK

from .helpers import get_ok, post_ok

# An offline job of 2,000 prompts of 1,000 tokens, answers of 300 spread exponentially.
JOB = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "prompt_tokens": 1000,
    "output_tokens": 300,
    "output_tokens_cv": 1,
    "requests": 2000,
}
SPREADS = ("ttft_ms", "e2e_ms")
STATS = ("mean", "p50", "p90", "p95", "p99")


def problem(client: FlaskClient, status: int, **fields: Any) -> dict[str, Any]:
    response = client.post("/v1/batch", json=fields)
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    return body


def test_get_answers_as_post_and_the_figures_hang_together(client: FlaskClient) -> None:
    posted = post_ok(client, "/v1/batch", JOB)
    got = get_ok(client, "/v1/batch", **JOB)
    assert got == posted
    makespan = posted["makespan_s"]
    assert posted["output_tokens_per_s"] == pytest.approx(posted["output_tokens_total"] / makespan)
    assert posted["total_tokens_per_s"] == pytest.approx(
        (posted["prompt_tokens_total"] + posted["output_tokens_total"]) / makespan
    )
    assert posted["requests_per_s"] == pytest.approx(2000 / makespan)
    # Every request finishes by the makespan, and none answers before its first token.
    assert posted["e2e_ms"]["p99"] <= makespan * 1e3 * (1 + 1e-12)
    for stat in STATS:
        assert posted["ttft_ms"][stat] < posted["e2e_ms"][stat]
    assert posted["prompt_tokens_total"] == 2000 * 1000  # prompts at cv 0: all 1,000 tokens
    assert posted["job_cost_usd"] == pytest.approx(3.0 * makespan / 3600)
    assert posted["engine"] == "vllm" and posted["basis"] == "datasheet"


def test_a_seed_gives_the_same_batch_and_another_seed_another(client: FlaskClient) -> None:
    first = post_ok(client, "/v1/batch", {**JOB, "seed": 7})
    again = post_ok(client, "/v1/batch", {**JOB, "seed": 7})  # POST: never remembered
    other = post_ok(client, "/v1/batch", {**JOB, "seed": 8})
    assert first == again
    assert first["makespan_s"] != other["makespan_s"]


def test_csv_is_one_row_of_the_scalars_with_the_spreads_flattened(client: FlaskClient) -> None:
    body = get_ok(client, "/v1/batch", **JOB)
    response = client.get("/v1/batch", query_string={**JOB, "format": "csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert len(rows) == 1
    row = rows[0]
    assert float(row["makespan_s"]) == pytest.approx(body["makespan_s"])
    assert float(row["job_cost_usd"]) == pytest.approx(body["job_cost_usd"])
    for spread in SPREADS:
        for stat in STATS:
            assert float(row[f"{spread}_{stat}"]) == pytest.approx(body[spread][stat])
    accept = client.get("/v1/batch", query_string=JOB, headers={"Accept": "text/csv"})
    assert accept.get_data(as_text=True) == response.get_data(as_text=True)


@pytest.mark.parametrize("name", ["concurrency", "sweep", "kv_read_context", "request_rate"])
def test_what_a_batch_does_not_take_is_refused_naming_it(client: FlaskClient, name: str) -> None:
    # Every request is queued at once: no concurrency, sweep or rate; each decode reads its own context.
    response = client.get("/v1/batch", query_string={**JOB, name: "1"})
    assert response.status_code == 422
    assert list(response.get_json()["errors"]) == [name]
    assert list(problem(client, 422, **JOB, **{name: 1})["errors"]) == [name]


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"requests": 0}, "requests"),
        ({"requests": 50_001}, "requests"),
        ({"requests": 10.5}, "requests"),
        ({"output_tokens_cv": 4.5}, "output_tokens_cv"),
        ({"prompt_tokens_cv": -1}, "prompt_tokens_cv"),
        ({"seed": -1}, "seed"),
        # 500,000 tokens a sequence against 448,272 of KV on one H100.
        ({"prompt_tokens": 400_000, "output_tokens": 100_000, "tensor_parallel": 1}, "prompt_tokens"),
        ({"engine": "tgi"}, "engine"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client: FlaskClient, fields: dict[str, Any], named: str) -> None:
    body = problem(client, 422, **{**JOB, **fields})
    assert named in body["errors"], body


def test_an_unknown_model_or_gpu_is_a_404_naming_it(client: FlaskClient) -> None:
    assert list(problem(client, 404, **{**JOB, "model": "no-such-model"})["errors"]) == ["model"]
    assert list(problem(client, 404, **{**JOB, "gpu": "no-such-gpu"})["errors"]) == ["gpu"]


def test_a_batch_over_the_work_limit_is_a_422_naming_what_makes_it_large(client: FlaskClient) -> None:
    # 50,000 prompts of 200,000 tokens: 10^10 prompt tokens in steps of at most 8,192 tokens,
    # over a million steps whatever the schedule, so refused before the run.
    body = problem(client, 422, **{**JOB, "requests": 50_000, "prompt_tokens": 200_000, "output_tokens": 10})
    assert set(body["errors"]) == {"requests", "prompt_tokens", "output_tokens"}
    assert f"{BATCH_MAX_WORK:,} units of work" in body["detail"]

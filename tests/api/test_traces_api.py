"""POST /v1/traces through the HTTP client: a log in, its workload and a /v1/fleet body out."""

from __future__ import annotations

import io
import json

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from app.api import traces as traces_view
from app.sizing.trace_log import profile_log
from tests.sizing.test_trace_log import PEAK, csv_lines, synthetic_rows


@pytest.fixture(scope="module")
def day_log() -> list[str]:
    return csv_lines(synthetic_rows(1, 20_000, shape=1.0, seed=21))


def post(client: FlaskClient, body: str | bytes, content_type: str = "text/csv", query: str = "") -> TestResponse:
    return client.post(f"/v1/traces{query}", data=body, content_type=content_type)


def test_a_csv_log_is_profiled_and_its_fleet_request_plans_it(client: FlaskClient, day_log: list[str]) -> None:
    response = post(client, "\r\n".join(day_log) + "\r\n", query="?model=llama-3.1-8b&gpu=h100-sxm")
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    body = response.get_json()
    expected = profile_log(day_log)
    assert body["requests"] == expected.requests
    assert body["requests_per_day"] == pytest.approx(20_000, rel=0.02)
    assert body["requests_per_second"] == pytest.approx(body["requests_per_day"] / 86_400)
    assert body["peak_to_average"] == pytest.approx(PEAK, rel=0.1)
    assert body["burstiness"] == pytest.approx(1.0, abs=0.15)
    assert body["prompt_tokens"]["mean"] == pytest.approx(1500, rel=0.03)
    assert body["prefix_cache_hit_rate"] == pytest.approx(0.25, abs=0.001)
    assert len(body["periods"]) == 24
    assert sum(bucket["share"] for bucket in body["length_buckets"]) == pytest.approx(1, abs=1e-9)
    fleet_body = body["fleet_request"]
    assert fleet_body["model"] == "llama-3.1-8b"
    assert fleet_body["gpu"] == "h100-sxm"
    assert fleet_body["arrival"] == "gamma"
    assert fleet_body["prompt_tokens"] == round(expected.prompt_tokens.mean)
    assert fleet_body["prefix_cache_hit_rate"] == pytest.approx(0.25, abs=0.001)
    planned = client.post("/v1/fleet", json={**fleet_body, "tpot_slo_ms": 50, "ttft_slo_ms": 2000})
    assert planned.status_code == 200, planned.get_data(as_text=True)[:500]
    assert planned.get_json()["gpus_total"] >= 2


def test_json_lines_are_read_by_content_type_or_by_their_first_character(client: FlaskClient) -> None:
    rows = synthetic_rows(1, 2_000, shape=1.0, seed=2)
    text = "\n".join(
        json.dumps(
            {"timestamp": t, "prompt_tokens": p, "output_tokens": o, "model": "meta-llama/Llama-3.1-8B-Instruct"}
        )
        for t, p, o, _ in rows
    )
    for content_type in ("application/x-ndjson", "text/plain", "application/octet-stream"):
        response = post(client, text, content_type)
        assert response.status_code == 200, response.get_data(as_text=True)[:300]
        body = response.get_json()
        assert body["requests"] == len(rows)
        assert body["prefix_cache_hit_rate"] is None
        assert body["models"] == {"meta-llama/Llama-3.1-8B-Instruct": len(rows)}
        assert body["fleet_request"]["model"] == "meta-llama/Llama-3.1-8B-Instruct"


def test_without_a_model_there_is_no_fleet_request(client: FlaskClient) -> None:
    body = post(client, "timestamp,prompt_tokens,output_tokens\n1,2,3\n2,2,3\n").get_json()
    assert body["fleet_request"] is None
    assert any("?model=" in warning for warning in body["warnings"])


def test_a_bad_row_answers_422_naming_its_line_and_column(client: FlaskClient) -> None:
    response = post(client, "timestamp,prompt_tokens,output_tokens\n1,2,3\n2,lots,3\n")
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["detail"].startswith("line 3, column prompt_tokens:")
    assert list(problem["errors"]) == ["log.3.prompt_tokens"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("timestamp,prompt_tokens,output_tokens\n5,1,1\n", "1 request"),
        ("timestamp,prompt_tokens,output_tokens\n5,1,1\n5,1,1\n", "time span"),
        ("", "empty"),
    ],
)
def test_a_log_without_two_requests_or_a_span_is_422(client: FlaskClient, body: str, message: str) -> None:
    response = post(client, body)
    assert response.status_code == 422
    assert message in response.get_json()["errors"]["log"][0]


def test_bytes_that_are_not_utf8_are_named_by_line(client: FlaskClient) -> None:
    response = post(client, b"timestamp,prompt_tokens,output_tokens\n1,2,3\n2,\xff,3\n")
    assert response.status_code == 422
    assert list(response.get_json()["errors"]) == ["log.3"]


def test_a_log_past_the_limit_is_413(client: FlaskClient, monkeypatch: pytest.MonkeyPatch, day_log: list[str]) -> None:
    monkeypatch.setattr(traces_view, "MAX_TRACE_BYTES", 10_000)
    response = post(client, "\n".join(day_log))
    assert response.status_code == 413
    assert "MiB" in response.get_json()["detail"]
    # Sent without a Content-Length (chunked), it is stopped as it streams past the limit.
    assert chunked_post(client, "\n".join(day_log).encode()).status_code == 413


def test_a_log_over_the_json_body_cap_streams_in_chunked(client: FlaskClient, app: Flask) -> None:
    rows = synthetic_rows(2, 30_000, shape=1.0, seed=4)
    body = "\n".join(csv_lines(rows)).encode()
    assert len(body) > app.config["MAX_CONTENT_LENGTH"]
    response = chunked_post(client, body)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    assert response.get_json()["requests"] == len(rows)


def chunked_post(client: FlaskClient, body: bytes) -> TestResponse:
    return client.post(
        "/v1/traces",
        input_stream=io.BytesIO(body),
        headers={"Transfer-Encoding": "chunked", "Content-Type": "text/csv"},
        environ_overrides={"wsgi.input_terminated": True},
    )


def test_other_media_types_and_unknown_parameters_are_refused(client: FlaskClient) -> None:
    assert post(client, "<log/>", "application/xml").status_code == 415
    response = post(client, "timestamp,prompt_tokens,output_tokens\n1,2,3\n2,2,3\n", query="?modle=x")
    assert response.status_code == 422
    assert "modle" in response.get_json()["errors"]
    assert post(client, "x", query="?log_format=xml").status_code == 422


def test_csv_answers_one_row_per_hour(client: FlaskClient, day_log: list[str]) -> None:
    response = post(client, "\n".join(day_log), query="?format=csv")
    assert response.status_code == 200
    lines = response.get_data(as_text=True).strip().split("\r\n")
    assert lines[0] == "period,requests,covered_s,requests_per_day"
    assert len(lines) == 25
    assert lines[16].startswith("2026-12-01T15:00Z,")


def test_a_lone_surrogate_in_a_json_lines_model_is_422_naming_its_line_and_column(client: FlaskClient) -> None:
    # JSON's "\ud800" escape without its pair: text UTF-8 cannot encode, on the third line.
    lines = [json.dumps({"timestamp": t, "prompt_tokens": 100, "output_tokens": 50, "model": "m"}) for t in range(10)]
    lines[2] = lines[2].replace('"m"', '"m\\ud800"')
    response = post(client, "\n".join(lines), "application/x-ndjson")
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert list(response.get_json()["errors"]) == ["log.3.model"]

"""The request edge answers problem+json for what a hostile client sends:
nesting limits, control characters, URL and header limits, integral integers, chunked bodies
over the cap, unknown and repeated query parameters, nosniff and CORS, CSV formula cells."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from app.api.edge import MAX_HEADER_FIELD_BYTES, MAX_HEADER_FIELDS, MAX_HEADERS_BYTES, MAX_URL_BYTES
from app.api.render import csv_text
from app.api.requests import MAX_DOTTED_DEPTH, MAX_JSON_DEPTH
from app.config import Config, ConfigError
from tests.support import seeded_app

L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"
ORIGIN = "https://dash.example.com"


def problem(response: TestResponse, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    assert response.mimetype == "application/problem+json"
    assert response.headers.get("X-Request-ID")
    body: dict[str, Any] = response.get_json()
    assert body["status"] == status
    return body


# --- 1. depth limits ----------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1_000, 100_000])
def test_json_nested_too_deep_is_400_naming_the_limit(client: FlaskClient, depth: int) -> None:
    body = '{"model": ' + "[" * depth + "]" * depth + ', "gpu": "h100-sxm"}'
    found = problem(client.post("/v1/fit", data=body, content_type="application/json"), 400)
    assert str(MAX_JSON_DEPTH) in found["detail"] and "deep" in found["detail"]


def test_deep_objects_are_refused_too(client: FlaskClient) -> None:
    body = '{"model": ' + '{"a": ' * 1_000 + "1" + "}" * 1_000 + "}"
    problem(client.post("/v1/fit", data=body, content_type="application/json"), 400)


def test_json_within_the_limit_is_answered_as_usual(client: FlaskClient) -> None:
    body = {**L8_H100, "model": {"params_total": [[[[1]]]]}}
    problem(client.post("/v1/fit", json=body), 422)  # the field is wrong, the depth is not


@pytest.mark.parametrize("levels", [MAX_DOTTED_DEPTH + 1, 1_000])
def test_dotted_query_names_nested_too_deep_are_422(client: FlaskClient, levels: int) -> None:
    key = "gpu." + ".".join("a" * 1 for _ in range(levels))
    found = problem(client.get(f"/v1/fit?model=llama-3.1-8b&{key}=1"), 422)
    assert str(MAX_DOTTED_DEPTH) in found["detail"]


# --- 2. control characters ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/models/llama%00", "/v1/gpus/h100%01sxm", "/v1/engines/vllm%7F"])
def test_a_control_character_in_a_path_is_404(client: FlaskClient, path: str) -> None:
    problem(client.get(path), 404)


@pytest.mark.parametrize("query", ["model=llama%00", "gpu=h100-sxm%0A", "prompt_tokens=1%002"])
def test_a_control_character_in_a_query_value_is_422_naming_it(client: FlaskClient, query: str) -> None:
    name = query.split("=")[0]
    params = {"model": "model=llama-3.1-8b", "gpu": "gpu=h100-sxm"}
    params[name] = query
    found = problem(
        client.get("/v1/fit?" + "&".join(params.values()) + ("&" + query if name not in params else "")), 422
    )
    assert name in found["errors"]


def test_a_control_character_in_a_catalog_filter_is_422(client: FlaskClient) -> None:
    problem(client.get("/v1/models?family=llama%00"), 422)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "llama\u0000", "gpu": "h100-sxm"}, "model"),
        ({"model": "llama-3.1-8b", "gpu": {"name": "card\u0000", "memory_gb": 80}}, "gpu.name"),
        ({"model": "llama-3.1-8b", "gpu": "h100-sxm", "sweep\u0000": [1]}, "_schema"),
    ],
)
def test_a_nul_in_a_json_string_is_422_naming_it(client: FlaskClient, body: dict[str, Any], field: str) -> None:
    found = problem(client.post("/v1/fit", json=body), 422)
    assert list(found["errors"]) == [field]


def test_other_control_characters_in_json_text_are_left_to_the_fields(client: FlaskClient) -> None:
    """Newlines and tabs are text (a start-up log holds them); only NUL no column can store."""
    found = problem(client.post("/v1/fit", json={"model": "llama\n", "gpu": "h100-sxm"}), 404)
    assert "model" in found["errors"]


# --- 3. URL and header limits (the gunicorn half is tests/ops/test_edge_gunicorn.py) -------------


def test_a_url_over_the_limit_is_414(client: FlaskClient) -> None:
    found = problem(client.get(FIT + "&_pad=" + "x" * MAX_URL_BYTES), 414)
    assert str(MAX_URL_BYTES) in found["detail"]


def test_a_long_url_under_the_limit_is_answered(client: FlaskClient) -> None:
    assert client.get(FIT + "&_pad=" + "x" * 8_000).status_code == 200


def test_a_header_over_the_limit_is_431(client: FlaskClient) -> None:
    found = problem(client.get(FIT, headers={"X-Padding": "x" * MAX_HEADER_FIELD_BYTES}), 431)
    assert "X-Padding" in found["detail"]


def test_too_many_header_fields_are_431(client: FlaskClient) -> None:
    headers = {f"X-Pad-{i}": "x" for i in range(MAX_HEADER_FIELDS + 1)}
    problem(client.get(FIT, headers=headers), 431)


def test_too_many_header_bytes_in_all_are_431(client: FlaskClient) -> None:
    size = MAX_HEADER_FIELD_BYTES - 100
    headers = {f"X-Pad-{i}": "x" * size for i in range(MAX_HEADERS_BYTES // size + 1)}
    problem(client.get(FIT, headers=headers), 431)


# --- 4. integral integers in JSON ---------------------------------------------------------------


def test_a_fractional_integer_in_json_is_422(client: FlaskClient) -> None:
    found = problem(client.post("/v1/fit", json={**L8_H100, "prompt_tokens": 2048.9}), 422)
    assert "prompt_tokens" in found["errors"]


def test_a_fractional_sweep_entry_is_422(client: FlaskClient) -> None:
    problem(client.post("/v1/throughput", json={**L8_H100, "sweep": [1, 8.5]}), 422)


def test_a_fractional_inline_model_field_is_422(client: FlaskClient) -> None:
    model = {"params_total": 8e9, "layers": 32.5, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8}
    found = problem(client.post("/v1/fit", json={"model": model, "gpu": "h100-sxm"}), 422)
    assert "model.layers" in found["errors"]


def test_an_integral_float_counts_as_the_integer(client: FlaskClient) -> None:
    """2048.0 is the number 2048 (JSON has one number type; many encoders write 2048.0)."""
    as_float = client.post("/v1/fit", json={**L8_H100, "prompt_tokens": 2048.0})
    as_int = client.post("/v1/fit", json={**L8_H100, "prompt_tokens": 2048})
    assert as_float.status_code == 200
    assert as_float.get_json() == as_int.get_json()


# --- 5. chunked bodies over the cap -------------------------------------------------------------


def chunked_post(client: FlaskClient, body: bytes) -> TestResponse:
    return client.post(
        "/v1/fit",
        input_stream=io.BytesIO(body),
        headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json"},
        environ_overrides={"wsgi.input_terminated": True},
    )


def test_a_chunked_body_over_the_cap_is_413(client: FlaskClient, app: Flask) -> None:
    body = json.dumps({**L8_H100, "name": "x" * app.config["MAX_CONTENT_LENGTH"]}).encode()
    found = problem(chunked_post(client, body), 413)
    assert found["type"] == "/problems/body-too-large"


def test_a_chunked_body_under_the_cap_is_read(client: FlaskClient) -> None:
    assert chunked_post(client, json.dumps(L8_H100).encode()).status_code == 200


# --- 6. unknown and repeated query parameters ---------------------------------------------------


def test_an_unknown_query_parameter_is_422_naming_it(client: FlaskClient) -> None:
    found = problem(client.get(FIT + "&promt_tokens=100000"), 422)
    assert list(found["errors"]) == ["promt_tokens"]
    assert "promt_tokens" in found["detail"]


def test_unknown_parameters_are_all_named(client: FlaskClient) -> None:
    found = problem(client.get("/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&foo=1&bar=2"), 422)
    assert sorted(found["errors"]) == ["bar", "foo"]


@pytest.mark.parametrize("extra", ["_=1700000000", "_nocache=3", "format=json", "_ts=x&_=y"])
def test_underscore_names_and_format_are_allowed(client: FlaskClient, extra: str) -> None:
    assert client.get(f"{FIT}&{extra}").status_code == 200


def test_an_unknown_dotted_field_is_named_by_the_schema(client: FlaskClient) -> None:
    found = problem(client.get("/v1/fit?model=llama-3.1-8b&gpu.memory_gb=80&gpu.memroy=1"), 422)
    assert "gpu.memroy" in found["errors"]


def test_unknown_parameters_on_every_planning_get(client: FlaskClient) -> None:
    for url in (
        "/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm",
        "/v1/cost?price_per_gpu_hour_usd=2&tokens_per_s=100",
        "/v1/roofline?m=1&k=1&n=1&gpu=h100-sxm",
        "/v1/fleet?model=llama-3.1-8b&requests_per_day=1000",
    ):
        assert client.get(url).status_code == 200, url
        problem(client.get(url + "&typo=1"), 422)


def test_a_repeated_scalar_parameter_is_422(client: FlaskClient) -> None:
    found = problem(client.get(FIT + "&prompt_tokens=100&prompt_tokens=200"), 422)
    assert list(found["errors"]) == ["prompt_tokens"]


def test_a_repeated_dotted_scalar_is_422(client: FlaskClient) -> None:
    problem(client.get("/v1/fit?model=llama-3.1-8b&gpu.memory_gb=80&gpu.memory_gb=40"), 422)


def test_list_parameters_may_repeat(client: FlaskClient) -> None:
    joined = client.get("/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&sweep=1,8")
    repeated = client.get("/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&sweep=1&sweep=8")
    assert repeated.status_code == 200
    assert repeated.get_json()["sweep"] == joined.get_json()["sweep"]


def test_repeated_cache_busters_are_fine(client: FlaskClient) -> None:
    assert client.get(FIT + "&_=1&_=2").status_code == 200


# --- 7. nosniff and CORS ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", [FIT, "/v1/models", "/v1/models/no-such-model", "/healthz", "/metrics", "/v1/nowhere", "/docs"]
)
def test_every_answer_says_nosniff(client: FlaskClient, path: str) -> None:
    assert client.get(path).headers["X-Content-Type-Options"] == "nosniff"


def test_without_cors_origins_there_are_no_cors_headers(client: FlaskClient) -> None:
    response = client.get(FIT, headers={"Origin": ORIGIN})
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = client.options("/v1/fit", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"})
    assert "Access-Control-Allow-Origin" not in preflight.headers


@pytest.fixture(scope="module")
def cors_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    with seeded_app(tmp_path_factory, "cors", cors_origins=(ORIGIN, "http://localhost:3000")) as flask_app:
        yield flask_app.test_client()


def test_a_preflight_from_a_configured_origin_is_204(cors_client: FlaskClient) -> None:
    response = cors_client.options(
        "/v1/models/llama-3.1-8b",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "PATCH",
            "Access-Control-Request-Headers": "authorization, if-match, content-type",
        },
    )
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    methods = {m.strip() for m in response.headers["Access-Control-Allow-Methods"].split(",")}
    assert {"GET", "PATCH", "PUT", "DELETE"} <= methods
    allowed = {h.strip().lower() for h in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "if-match", "content-type", "x-request-id"} <= allowed
    assert "Origin" in response.headers["Vary"]
    assert response.headers.get("X-Request-ID")


def test_an_answer_to_a_configured_origin_exposes_etag_and_request_id(cors_client: FlaskClient) -> None:
    response = cors_client.get("/v1/models/llama-3.1-8b", headers={"Origin": "http://localhost:3000"})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "http://localhost:3000"
    exposed = {h.strip() for h in response.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"ETag", "X-Request-ID"} <= exposed
    error = cors_client.get("/v1/models/nope", headers={"Origin": ORIGIN})
    assert error.headers["Access-Control-Allow-Origin"] == ORIGIN  # a browser may read the problem


def test_another_origin_gets_no_cors_headers(cors_client: FlaskClient) -> None:
    preflight = cors_client.options(
        "/v1/fit", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert "Access-Control-Allow-Origin" not in preflight.headers
    response = cors_client.get(FIT, headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in response.headers
    assert "Origin" in response.headers["Vary"]


def test_a_preflight_to_no_route_is_404(cors_client: FlaskClient) -> None:
    response = cors_client.options("/v1/nowhere", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "GET"})
    problem(response, 404)


def test_cors_origins_is_read_and_checked() -> None:
    env = {"DATABASE_URL": "sqlite://", "CORS_ORIGINS": f" {ORIGIN}, http://127.0.0.1:8080 ,"}
    assert Config.from_env(env).cors_origins == (ORIGIN, "http://127.0.0.1:8080")
    assert Config.from_env({"DATABASE_URL": "sqlite://"}).cors_origins == ()
    for bad in ("*", "dash.example.com", "https://dash.example.com/", "https://a.example/path"):
        with pytest.raises(ConfigError, match="CORS_ORIGINS"):
            Config.from_env({"DATABASE_URL": "sqlite://", "CORS_ORIGINS": bad})


# --- 8. CSV formula cells -----------------------------------------------------------------------


def test_text_cells_a_spreadsheet_would_run_are_escaped() -> None:
    rows = [{"a": "=1+1", "b": "+x", "c": "-x", "d": "@SUM(A1)", "e": "\tx", "f": "\rx", "g": "plain"}]
    read = next(csv.DictReader(io.StringIO(csv_text(rows))))
    assert read == {"a": "'=1+1", "b": "'+x", "c": "'-x", "d": "'@SUM(A1)", "e": "'\tx", "f": "'\rx", "g": "plain"}


def test_negative_numbers_stay_numbers() -> None:
    read = next(csv.DictReader(io.StringIO(csv_text([{"a": -1.5, "b": -3, "c": ["-x", 2]}]))))
    assert read == {"a": "-1.5", "b": "-3", "c": "'-x | 2"}


def test_a_formula_in_a_catalog_name_is_escaped_in_csv(client: FlaskClient) -> None:
    gpu = {"name": "=HYPERLINK(1)", "memory_gb": 80, "memory_bandwidth_tb_per_s": 3}
    response = client.post("/v1/fit?format=csv", json={"model": "llama-3.1-8b", "gpu": gpu})
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert "=HYPERLINK" in text and ",=HYPERLINK" not in text and "'=HYPERLINK" in text


@pytest.mark.parametrize(
    ("target", "location"),
    [
        ("/v1//models", "/v1/models"),
        ("/v1/models//llama-3.1-8b", "/v1/models/llama-3.1-8b"),
        ("/v1//fit?model=llama-3.1-8b&gpu=h100-sxm", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"),
    ],
)
def test_a_doubled_slash_redirects_on_this_server_whatever_the_host_header_says(
    client: FlaskClient, target: str, location: str
) -> None:
    response = client.get(target, headers={"Host": "evil.example.com"})
    body = problem(response, 308)
    assert response.headers["Location"] == location  # relative: no scheme, no host
    assert location in body["detail"]


def test_a_redirected_post_keeps_its_method_and_its_body_is_problem_json(client: FlaskClient) -> None:
    response = client.post("/v1//fit", json=L8_H100, headers={"Host": "evil.example.com"})
    problem(response, 308)  # 308: the client repeats the POST, body and all
    assert response.headers["Location"] == "/v1/fit"


# A lone UTF-16 surrogate: JSON's "\ud800" escape without its pair. Python's JSON parser lets it
# through as text that UTF-8 (the database driver, the CSV writer) cannot encode.
LONE = '"\\ud800"'


@pytest.mark.parametrize(
    ("path", "raw_body", "field"),
    [
        ("/v1/fit", '{"model": ' + LONE + ', "gpu": "h100-sxm"}', "model"),
        (
            "/v1/fit?format=csv",
            '{"model": "llama-3.1-8b", "gpu": {"name": "card\\udfff", "memory_gb": 80, '
            '"memory_bandwidth_tb_per_s": 3.35, "peak_tflops": {"bf16": 989}}}',
            "gpu.name",
        ),
        (
            "/v1/fleet?format=csv",
            '{"model": "llama-3.1-8b", "gpu": "h100-sxm", "requests_per_day": 1e6, '
            '"forecast": [{"period": ' + LONE + ', "requests_per_day": 1e6}]}',
            "forecast.0.period",
        ),
        ("/v1/fit", '{"model": "llama-3.1-8b", "gpu": "h100-sxm", ' + LONE + ": 1}", "_schema"),
    ],
)
def test_a_lone_surrogate_in_json_text_is_422_naming_its_field(
    client: FlaskClient, path: str, raw_body: str, field: str
) -> None:
    found = problem(client.post(path, data=raw_body, content_type="application/json"), 422)
    assert list(found["errors"]) == [field]
    assert "lone UTF-16 surrogate" in found["errors"][field][0]


def test_a_surrogate_pair_is_text_like_any_other(client: FlaskClient) -> None:
    # "\ud83d\ude00" is one code point (U+1F600): the parser joins the pair, UTF-8 encodes it.
    raw_body = (
        '{"model": "llama-3.1-8b", "gpu": {"name": "card \\ud83d\\ude00", "memory_gb": 80, '
        '"memory_bandwidth_tb_per_s": 3.35, "peak_tflops": {"bf16": 989}}}'
    )
    response = client.post("/v1/fit?format=csv", data=raw_body, content_type="application/json")
    assert response.status_code == 200 and "card \U0001f600" in response.get_data(as_text=True)

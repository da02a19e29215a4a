"""Errors are RFC 9457 problem+json (API.md "Conventions", OPERATIONS.md "Contract and
errors"): 400 unparsable body, 404 unknown slug or route, 405, 413, 415, 422 invalid values
with the field named, and never a 500 for anything a client sends."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import TestResponse

from app.api.schemas import ThroughputSchema

PROBLEM_JSON = "application/problem+json"
PROBLEM_KEYS = {"type", "title", "status", "detail", "instance"}
L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}


def assert_problem(response: TestResponse, status: int, path: str | None = None) -> dict[str, Any]:
    """`response` is a problem+json document of `status`, with the RFC 9457 members, and
    (when it blames fields) an `errors` object of lists of strings."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM_JSON, response.headers.get("Content-Type")
    body = json.loads(response.get_data(as_text=True))
    assert isinstance(body, dict)
    assert body.keys() >= PROBLEM_KEYS, body
    assert body["status"] == status
    assert isinstance(body["type"], str) and body["type"]
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    if path is not None:
        assert body["instance"] == path
    if "errors" in body:
        errors = body["errors"]
        assert isinstance(errors, dict) and errors
        for field, messages in errors.items():
            assert isinstance(field, str) and field
            assert isinstance(messages, list) and messages, (field, messages)
            assert all(isinstance(m, str) and m for m in messages), (field, messages)
    return body


def field_errors(body: dict[str, Any], field: str) -> str:
    """The messages blaming `field`, joined, asserting there are some."""
    assert field in body.get("errors", {}), body
    return " ".join(body["errors"][field])


# --- Unparsable or unacceptable requests ----------------------------------------------------


def test_a_malformed_json_body_is_a_400_problem(client: FlaskClient) -> None:
    response = client.post("/v1/fit", data='{"model": "llama-3.1-8b",', content_type="application/json")
    assert_problem(response, 400, "/v1/fit")


def test_a_json_array_body_is_a_400_problem(client: FlaskClient) -> None:
    response = client.post("/v1/fit", json=[L8_H100])
    assert_problem(response, 400, "/v1/fit")


def test_a_text_plain_body_is_a_415_problem(client: FlaskClient) -> None:
    response = client.post("/v1/fit", data=json.dumps(L8_H100), content_type="text/plain")
    assert_problem(response, 415, "/v1/fit")


def test_a_form_encoded_body_is_a_415_problem(client: FlaskClient) -> None:
    response = client.post("/v1/throughput", data=L8_H100)
    assert response.request.content_type.startswith("application/x-www-form-urlencoded")
    assert_problem(response, 415, "/v1/throughput")


def test_a_body_over_the_one_mib_cap_is_a_413_problem(app, client: FlaskClient) -> None:
    cap = app.config["MAX_CONTENT_LENGTH"]
    assert cap == 1024 * 1024
    padding = "x" * (cap + 1)
    body = json.dumps({**L8_H100, "padding": padding})
    assert len(body.encode()) > cap
    response = client.post("/v1/fit", data=body, content_type="application/json")
    assert_problem(response, 413, "/v1/fit")


def test_an_unknown_route_is_a_404_problem(client: FlaskClient) -> None:
    assert_problem(client.get("/v1/no-such-thing"), 404, "/v1/no-such-thing")


def test_put_on_fit_is_a_405_problem_with_an_allow_header(client: FlaskClient) -> None:
    response = client.put("/v1/fit", json=L8_H100)
    assert_problem(response, 405, "/v1/fit")
    allowed = {m.strip() for m in response.headers["Allow"].split(",")}
    assert {"GET", "POST"} <= allowed
    assert "PUT" not in allowed


# --- Unknown catalog entries ----------------------------------------------------------------


def test_an_unknown_model_slug_is_a_404_naming_the_slug(client: FlaskClient) -> None:
    body = assert_problem(client.get("/v1/fit", query_string={"model": "llama-9-9000b", "gpu": "h100-sxm"}), 404)
    assert "llama-9-9000b" in body["detail"]
    assert "llama-9-9000b" in field_errors(body, "model")


def test_an_unknown_model_slug_in_a_post_body_is_a_404_too(client: FlaskClient) -> None:
    body = assert_problem(client.post("/v1/throughput", json={"model": "no-such-model", "gpu": "h100-sxm"}), 404)
    assert "no-such-model" in body["detail"]
    assert "no-such-model" in field_errors(body, "model")


def test_an_unknown_gpu_slug_is_a_404_naming_the_slug(client: FlaskClient) -> None:
    body = assert_problem(client.get("/v1/fit", query_string={"model": "llama-3.1-8b", "gpu": "h900-sxm"}), 404)
    assert "h900-sxm" in body["detail"]
    assert "h900-sxm" in field_errors(body, "gpu")


# --- Invalid values: 422 with the field named -------------------------------------------------


def test_negative_prompt_tokens_is_a_422_naming_the_field_and_its_range(client: FlaskClient) -> None:
    body = assert_problem(client.get("/v1/fit", query_string={**L8_H100, "prompt_tokens": -5}), 422)
    message = field_errors(body, "prompt_tokens")
    assert "prompt_tokens" in body["detail"]
    # The allowed range, 1 to 10,000,000, is spelled out.
    assert "1" in message and "10000000" in message


def test_gpu_memory_utilization_above_one_is_a_422(client: FlaskClient) -> None:
    body = assert_problem(client.get("/v1/fit", query_string={**L8_H100, "gpu_memory_utilization": 1.5}), 422)
    assert "1" in field_errors(body, "gpu_memory_utilization")


def test_an_unknown_precision_is_a_422_naming_weight_precision(client: FlaskClient) -> None:
    body = assert_problem(client.post("/v1/fit", json={**L8_H100, "weight_precision": "fp7"}), 422)
    message = field_errors(body, "weight_precision")
    assert "bf16" in message and "fp8" in message  # what would be accepted


def test_tensor_parallel_3_for_llama_3_1_8b_is_a_422_listing_the_valid_sizes(client: FlaskClient) -> None:
    body = assert_problem(client.get("/v1/fit", query_string={**L8_H100, "tensor_parallel": 3}), 422)
    assert "[1, 2, 4, 8]" in field_errors(body, "tensor_parallel")


def test_a_sweep_longer_than_256_is_a_422(client: FlaskClient) -> None:
    response = client.post("/v1/throughput", json={**L8_H100, "sweep": list(range(1, 258))})
    body = assert_problem(response, 422)
    assert "256" in field_errors(body, "sweep")


def test_a_sweep_of_exactly_256_is_accepted(client: FlaskClient) -> None:
    response = client.post("/v1/throughput", json={**L8_H100, "sweep": list(range(1, 257))})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert len(response.get_json()["sweep"]) == 256


def test_an_unknown_mig_profile_is_a_422_naming_mig_profile(client: FlaskClient) -> None:
    query = {"model": "llama-3.2-1b", "gpu": "h100-sxm", "mig_profile": "9g.99gb"}
    response = client.get("/v1/fit", query_string=query)
    body = assert_problem(response, 422)
    assert "9g.99gb" in field_errors(body, "mig_profile")


def test_an_inline_model_whose_kv_heads_do_not_divide_the_heads_is_a_422_on_model_kv_heads(
    client: FlaskClient,
) -> None:
    model = {"params_total": 1_000_000_000, "layers": 16, "hidden_size": 2048, "attention_heads": 32, "kv_heads": 5}
    body = assert_problem(client.post("/v1/fit", json={"model": model, "gpu": "h100-sxm"}), 422)
    assert "32" in field_errors(body, "model.kv_heads")
    assert "kv_heads" not in body["errors"]  # dotted, not flattened away


def test_an_unknown_field_in_a_post_body_is_a_422(client: FlaskClient) -> None:
    body = assert_problem(client.post("/v1/fit", json={**L8_H100, "prompt_tokenz": 100}), 422)
    assert field_errors(body, "prompt_tokenz")


def test_an_underscore_query_parameter_is_ignored_so_cache_busters_work(client: FlaskClient) -> None:
    plain = client.get("/v1/fit", query_string=L8_H100)
    busted = client.get("/v1/fit", query_string={**L8_H100, "_": "123"})
    assert busted.status_code == 200, busted.get_data(as_text=True)
    assert busted.get_json() == plain.get_json()


def test_format_xml_is_a_422_naming_format(client: FlaskClient) -> None:
    body = assert_problem(client.get("/v1/fit", query_string={**L8_H100, "format": "xml"}), 422)
    assert "csv" in field_errors(body, "format")


def test_a_catalog_gpu_without_memory_is_a_422_on_gpu_memory_gb_not_a_500(client: FlaskClient) -> None:
    # The seed leaves a10g's memory_gb null on purpose (no NVIDIA datasheet).
    assert client.get("/v1/gpus/a10g").get_json()["memory_gb"] is None
    for path in ("/v1/fit", "/v1/throughput"):
        body = assert_problem(client.get(path, query_string={"model": "llama-3.1-8b", "gpu": "a10g"}), 422)
        assert field_errors(body, "gpu.memory_gb")


def test_mi355x_without_an_interconnect_bandwidth_cannot_time_tp_2_but_can_fit_it(client: FlaskClient) -> None:
    # The MI300X's Infinity Fabric figure is in the catalog now; the MI355X's is still unsourced.
    assert client.get("/v1/gpus/mi355x").get_json()["interconnect"]["bandwidth_gb_per_s"] is None
    query = {"model": "llama-3.1-8b", "gpu": "mi355x", "tensor_parallel": 2}
    body = assert_problem(client.get("/v1/throughput", query_string=query), 422)
    assert field_errors(body, "gpu.interconnect.bandwidth_gb_per_s")
    fitted = client.get("/v1/fit", query_string=query)
    assert fitted.status_code == 200, fitted.get_data(as_text=True)
    assert fitted.get_json()["tensor_parallel"] == 2


def test_cost_with_neither_a_price_nor_a_gpu_is_a_422(client: FlaskClient) -> None:
    body = assert_problem(client.get("/v1/cost", query_string={"tokens_per_s": 1000}), 422)
    assert field_errors(body, "price_per_gpu_hour_usd")


def test_errors_stay_problem_json_when_csv_is_asked_for(client: FlaskClient) -> None:
    query = {"model": "no-such-model", "gpu": "h100-sxm", "format": "csv"}
    assert_problem(client.get("/v1/fit", query_string=query), 404)
    assert_problem(
        client.get(
            "/v1/fit", query_string={"model": "no-such-model", "gpu": "h100-sxm"}, headers={"Accept": "text/csv"}
        ),
        404,
    )


def test_an_inline_gpu_with_no_recognised_native_precision_never_makes_auto_a_500(client: FlaskClient) -> None:
    # tf32 is dropped as a training-only format, leaving the auto policy nothing to choose from.
    gpu = {
        "memory_gb": 80,
        "memory_bandwidth_tb_per_s": 3.35,
        "peak_tflops": {"bf16": 989.5},
        "native_precisions": ["tf32"],
    }
    response = client.post("/v1/fit", json={"model": "llama-3.1-8b", "gpu": gpu, "weight_precision": "auto"})
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        assert_problem(response, response.status_code)


def test_extreme_in_range_efficiencies_still_answer_with_strict_json(client: FlaskClient) -> None:
    # 5e-324 is a valid positive float within (0, 1]; the answer must stay RFC 8259 JSON
    # (no bare Infinity or NaN tokens), whether it is a 200 or a 422.
    query = {**L8_H100, "memory_efficiency": "5e-324"}
    response = client.get("/v1/throughput", query_string=query)
    assert response.status_code < 500

    def reject(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    json.loads(response.get_data(as_text=True), parse_constant=reject)


# --- Never a 500: random query strings --------------------------------------------------------

FIELD_NAMES = sorted(ThroughputSchema().fields)  # /v1/throughput's fields include all of /v1/fit's
INLINE_NAMES = ["gpu.memory_gb", "gpu.memory_bandwidth_tb_per_s", "gpu.peak_tflops.bf16", "model.layers"]
MODELS = ["llama-3.1-8b", "llama-3.2-1b", "llama-3.1-70b", "deepseek-v3", "gpt-oss-20b", "qwen3-30b-a3b"]
GPUS = ["h100-sxm", "h200-sxm", "a100-sxm-80gb", "b200", "l4", "a10g", "mi300x"]
WORDS = [
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e309",
    "-1e309",
    "",
    " ",
    "auto",
    "native",
    "bf16",
    "fp8",
    "int4",
    "nvfp4",
    "1g.10gb",
    "7g.80gb",
    "true",
    "false",
    "full",
    "average",
    "0",
    "-0",
    "1,2,3",
    "0x10",
    "１２",
    "²",
    "٣",
    "null",
    "[]",
    "{}",
    "\u00e9\u4e2d\U0001f680",
    "9" * 400,
]

JUNK = st.one_of(
    st.sampled_from(WORDS),
    st.integers().map(str),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(str),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20),
)
# Plausible values, so that many requests get past validation into the sizing code.
COUNTS = st.integers(min_value=1, max_value=1_000_000).map(str)
FRACTIONS = st.floats(min_value=0.01, max_value=1.0).map(str)
PRECISIONS = st.sampled_from(["bf16", "fp16", "fp8", "int8", "int4", "nvfp4", "mxfp4", "fp4", "auto", "native"])
PLAUSIBLE: dict[str, st.SearchStrategy[str]] = {
    "model": st.sampled_from(MODELS),
    "gpu": st.sampled_from(GPUS),
    "mig_profile": st.sampled_from(["1g.10gb", "3g.40gb", "7g.80gb", "1g.23gb"]),
    "tensor_parallel": st.sampled_from(["1", "2", "4", "8"]),
    "weight_precision": PRECISIONS,
    "kv_precision": PRECISIONS,
    "compute_precision": PRECISIONS,
    "gpu_memory_utilization": FRACTIONS,
    "memory_efficiency": FRACTIONS,
    "compute_efficiency": FRACTIONS,
    "include_communication": st.sampled_from(["true", "false", "1", "0"]),
    "kv_read_context": st.sampled_from(["average", "full"]),
    "reserved_gb": st.floats(min_value=0, max_value=200).map(str),
    "price_per_gpu_hour_usd": st.floats(min_value=0, max_value=100).map(str),
    "sweep": st.lists(st.integers(min_value=1, max_value=100_000), max_size=8).map(lambda xs: ",".join(map(str, xs))),
    "gpu.memory_gb": st.floats(min_value=1, max_value=1000).map(str),
    "gpu.memory_bandwidth_tb_per_s": st.floats(min_value=0.1, max_value=20).map(str),
    "gpu.peak_tflops.bf16": st.floats(min_value=1, max_value=5000).map(str),
    "model.layers": COUNTS,
}


@st.composite
def queries(draw: st.DrawFn) -> dict[str, str]:
    """A random subset of the fields, each with a plausible value or, one time in three, junk;
    the model and GPU come as catalog slugs, as a dotted inline GPU, or only as drawn."""
    names = draw(st.lists(st.sampled_from(FIELD_NAMES + INLINE_NAMES), unique=True, max_size=8))
    query = {}
    for name in names:
        plausible = PLAUSIBLE.get(name, COUNTS)
        query[name] = draw(st.one_of(plausible, plausible, JUNK))
    how = draw(st.sampled_from(["slugs", "inline gpu", "as drawn"]))
    if how == "slugs":
        base = {"model": draw(PLAUSIBLE["model"]), "gpu": draw(PLAUSIBLE["gpu"])}
        return {**base, **{k: v for k, v in query.items() if not k.startswith(("gpu.", "model."))}}
    if how == "inline gpu":
        base = {"model": draw(PLAUSIBLE["model"])}
        base.update({name: draw(PLAUSIBLE[name]) for name in INLINE_NAMES if name.startswith("gpu.")})
        return {**base, **{k: v for k, v in query.items() if k not in ("gpu", "model.layers")}}
    return query


@pytest.mark.parametrize("path", ["/v1/fit", "/v1/throughput"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=queries())
def test_random_query_strings_never_answer_5xx_and_every_4xx_is_problem_json(
    client: FlaskClient, path: str, query: dict[str, str]
) -> None:
    response = client.get(path, query_string=urlencode(query))
    assert response.status_code < 500, (query, response.get_data(as_text=True))
    if 400 <= response.status_code < 500:
        assert_problem(response, response.status_code, path)
    else:
        assert response.status_code == 200

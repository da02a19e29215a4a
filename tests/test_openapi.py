"""openapi.yaml against the running app: the file `make spec` writes (app/openapi), a valid
OpenAPI 3.1 document that lists exactly the app's routes, the planning schemas' fields (with
their ranges and defaults, as app/openapi/converter.py states them) as GET query parameters and
POST body properties, and every key and status code a real answer carries.

Decision on inline specs in query strings: the dotted GET parameters (`model.layers=32`,
`gpu.memory_gb=80`, `gpu.peak_tflops.bf16=989`, `gpu.interconnect.latency_us=10`, …) ARE
listed, one parameter each, derived here from InlineModelSchema and InlineGpuSchema. Lists of
objects cannot be spelled as query parameters: `gpu.mig_profiles` and fleet's `forecast` are
absent from the GET forms and stay in the POST bodies.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from marshmallow import RAISE, Schema, fields
from openapi_spec_validator import validate as validate_spec

from app import create_app
from app.api.schemas import PLANNING_ENDPOINTS
from app.openapi import generator
from app.openapi.converter import field_schema as convert
from app.openapi.converter import query_fields as planning_query_fields
from app.sizing.plan import LEAVES_OUT

SPEC_PATH = generator.SPEC_PATH

# Each planning path and the very schema instance its view parses with (fleet's excludes
# sweep, concurrency and kv_read_context), and the component documenting its POST body.
PLANNING: dict[str, Schema] = {endpoint.path: endpoint.schema for endpoint in PLANNING_ENDPOINTS}
REQUEST_COMPONENTS = {
    "/v1/fit": "FitRequest",
    "/v1/throughput": "ThroughputRequest",
    "/v1/cost": "CostRequest",
    "/v1/roofline": "RooflineRequest",
    "/v1/fleet": "FleetRequest",
    "/v1/latency": "LatencyRequest",
    "/v1/batch": "BatchRequest",
    "/v1/autoscaling/simulate": "AutoscalingRequest",
}
# marshmallow schema -> the component that documents it (the generator's own table).
COMPONENTS: dict[type[Schema], str] = generator.REQUEST_COMPONENTS
# Query parameters that are the app's, not a schema field's (app/api/requests.py RESERVED).
RESERVED_QUERY = {"format"}
IGNORED_METHODS = {"HEAD", "OPTIONS"}
# Static files, not API routes: the app's own and Swagger UI's bundled assets behind /docs.
STATIC_ENDPOINTS = {"static", "docs.static"}
# Documentation-only keywords, left out when comparing a schema with what the code implies.
ANNOTATIONS = {"description", "title", "example", "examples", "deprecated"}


# --- the spec -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    with SPEC_PATH.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def resolve(spec: dict[str, Any], node: Any) -> Any:
    """Follow local `$ref`s (JSON pointers into the spec) until a node without one."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            key = part.replace("~1", "/").replace("~0", "~")
            target = target[int(key)] if isinstance(target, list) else target[key]
        node = target
    return node


def shared(spec: dict[str, Any], node: Any) -> Any:
    """A property as written where it first occurs: the generator writes a property identical
    to an earlier one as a `$ref` to it (`#/components/schemas/FitRequest/properties/...`)."""
    while isinstance(node, dict) and "/properties/" in node.get("$ref", ""):
        node = resolve(spec, node)
    return node


def operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in {"get", "put", "post", "delete", "patch", "head", "options", "trace"}:
                yield path, method.upper(), operation


def query_parameters(spec: dict[str, Any], operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    params = (resolve(spec, p) for p in operation.get("parameters", []))
    return {p["name"]: p for p in params if p["in"] == "query"}


def strip_annotations(node: Any) -> Any:
    """A schema without its prose, for comparing constraints only."""
    if isinstance(node, dict):
        return {k: strip_annotations(v) for k, v in node.items() if k not in ANNOTATIONS}
    if isinstance(node, list):
        return [strip_annotations(v) for v in node]
    return node


# --- what the marshmallow schemas imply (app/openapi/converter.py) ------------------------


def field_schema(field: fields.Field[Any], *, query: bool = False) -> dict[str, Any]:
    """The JSON Schema (minus prose) the app's converter derives from a marshmallow field."""
    return convert(field, generator.naming, query=query)


def query_fields(schema: Schema) -> Iterator[tuple[str, fields.Field[Any]]]:
    """GET parameter names of a planning schema and their fields (dotted for inline ones)."""
    for name, field, _ in planning_query_fields(schema):
        yield name, field


def expected_object(schema: Schema) -> dict[str, Any]:
    """An object schema's keys, required list and additionalProperties (false: unknown
    fields are refused, as every schema here does on POST)."""
    required = sorted(name for name, field in schema.fields.items() if field.required)
    closed = schema.unknown == RAISE
    return {"properties": set(schema.fields), "required": required, "additionalProperties": False if closed else None}


# --- the app: `app` and `client` come from tests/conftest.py (migrated, seeded SQLite) --


def openapi_path(rule: str) -> str:
    """Flask's `/v1/models/<slug>` (or `<string:slug>`) as OpenAPI's `/v1/models/{slug}`."""
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


# --- (a) the document is valid OpenAPI 3.1 ------------------------------------------------


def test_committed_spec_is_what_the_generator_writes() -> None:
    """openapi.yaml is generated: a schema, an answer or a description changed in the code
    without regenerating it fails here (and so `make test`)."""
    written = generator.render()
    committed = SPEC_PATH.read_text(encoding="utf-8")
    assert committed == written, "openapi.yaml is stale: run make spec (python -m app.openapi) and commit it"


def test_spec_is_valid_openapi_3_1(spec: dict[str, Any]) -> None:
    assert spec["openapi"].startswith("3.1")
    validate_spec(spec)


def test_info_states_the_estimates_limits(spec: dict[str, Any]) -> None:
    info = spec["info"]
    assert info["title"] == "Fleet Sizer"
    assert info["version"] == "0.1.0"
    assert "optimistic lower bound" in info["description"]
    left_out = LEAVES_OUT.split(":")[0].split(", ")
    missing_items = [item for item in left_out if item not in info["description"]]
    assert not missing_items, f"info.description does not say the model leaves out {missing_items}"


# --- (b) exactly the app's routes ---------------------------------------------------------


def test_paths_and_methods_equal_the_url_map(spec: dict[str, Any], app: Flask) -> None:
    routes = {
        (openapi_path(rule.rule), method)
        for rule in app.url_map.iter_rules()
        if rule.endpoint not in STATIC_ENDPOINTS
        for method in (rule.methods or set()) - IGNORED_METHODS
    }
    documented = {(path, method) for path, method, _ in operations(spec)}
    assert documented - routes == set(), "documented but not served"
    assert routes - documented == set(), "served but not documented"


# --- (c) planning parameters and bodies equal the marshmallow schemas ---------------------


@pytest.mark.parametrize("path", sorted(PLANNING))
def test_get_query_parameters_equal_the_schema_fields(spec: dict[str, Any], path: str) -> None:
    schema = PLANNING[path]
    params = query_parameters(spec, spec["paths"][path]["get"])
    expected = dict(query_fields(schema))
    assert set(params) == set(expected) | RESERVED_QUERY
    for name, field in expected.items():
        assert params[name].get("required", False) is False, f"{name}: a GET form never requires it"
        implied = field_schema(field, query=True)
        if "." in name:  # an inline field declares no default: it would conflict with a slug
            assert "default" not in params[name]["schema"], name
            implied.pop("default", None)
        assert strip_annotations(params[name]["schema"]) == implied, name
        if isinstance(field, fields.List):
            # Comma-separated (`sweep=1,8,64`); requests.py takes repeated names as well.
            assert (params[name]["style"], params[name]["explode"]) == ("form", False), name


@pytest.mark.parametrize("path", sorted(PLANNING))
def test_post_body_equals_the_schema_fields(spec: dict[str, Any], path: str) -> None:
    schema = PLANNING[path]
    operation = spec["paths"][path]["post"]
    assert set(query_parameters(spec, operation)) == RESERVED_QUERY
    body = resolve(spec, operation["requestBody"])
    assert body["required"] is True
    assert set(body["content"]) == {"application/json"}
    component = resolve(spec, body["content"]["application/json"]["schema"])
    assert component is spec["components"]["schemas"][REQUEST_COMPONENTS[path]]
    assert {
        "properties": set(component["properties"]),
        "required": sorted(component.get("required", [])),
        "additionalProperties": component.get("additionalProperties"),
    } == expected_object(schema)
    for name, field in schema.fields.items():
        assert strip_annotations(shared(spec, component["properties"][name])) == field_schema(field), name


@pytest.mark.parametrize("marshmallow_schema", list(COMPONENTS), ids=lambda s: COMPONENTS[s])
def test_inline_components_equal_their_schemas(spec: dict[str, Any], marshmallow_schema: type[Schema]) -> None:
    schema = marshmallow_schema()
    component = spec["components"]["schemas"][COMPONENTS[marshmallow_schema]]
    assert {
        "properties": set(component["properties"]),
        "required": sorted(component.get("required", [])),
        "additionalProperties": component.get("additionalProperties"),
    } == expected_object(schema)
    for name, field in schema.fields.items():
        assert strip_annotations(shared(spec, component["properties"][name])) == field_schema(field), name


def test_every_field_has_a_description(spec: dict[str, Any]) -> None:
    """Units live in the descriptions, so none may be missing."""
    bare = []
    for name, component in spec["components"]["schemas"].items():
        # An allOf's own part may leave a property to the base it extends (Model: ModelDocument).
        parts = [component, *component.get("allOf", [])]
        described = {
            key
            for base in parts
            if "$ref" in base
            for key, prop in resolve(spec, base).get("properties", {}).items()
            if "description" in shared(spec, prop)
        }
        for part in parts:
            for key, prop in part.get("properties", {}).items():
                if "description" not in prop and "$ref" not in prop and key not in described:
                    bare.append(f"{name}.{key}")
    for name, param in spec["components"]["parameters"].items():
        if not param.get("description"):
            bare.append(f"parameter {name}")
    assert not bare


# --- (d) real answers: every key documented, every status documented ----------------------


def undocumented(spec: dict[str, Any], value: Any, schema: Any, where: str = "$") -> list[str]:
    """Paths of keys in `value` that `schema` does not name: properties (merged over allOf
    and the object branches of oneOf/anyOf), or a schema-valued additionalProperties."""
    schema = resolve(spec, schema)
    if isinstance(value, dict):
        properties: dict[str, Any] = {}
        extra: Any = None
        for part in _object_parts(spec, schema):
            properties.update(part.get("properties", {}))
            if isinstance(part.get("additionalProperties"), dict):
                extra = part["additionalProperties"]
        found = []
        for key, item in value.items():
            sub = properties.get(key, extra)
            if sub is None:
                found.append(f"{where}.{key}")
            else:
                found.extend(undocumented(spec, item, sub, f"{where}.{key}"))
        return found
    if isinstance(value, list):
        items = next((p["items"] for p in _object_parts(spec, schema) if "items" in p), None)
        if items is None:
            return [f"{where}[]"] if value else []
        return [path for i, item in enumerate(value) for path in undocumented(spec, item, items, f"{where}[{i}]")]
    return []


def _object_parts(spec: dict[str, Any], schema: Any) -> Iterator[dict[str, Any]]:
    schema = resolve(spec, schema)
    yield schema
    for word in ("allOf", "oneOf", "anyOf"):
        for branch in schema.get(word, []):
            yield from _object_parts(spec, branch)


def response_schema(spec: dict[str, Any], name: str) -> Draft202012Validator:
    """A validator for components/schemas/<name> with the spec's components in reach."""
    return Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": spec["components"]})


def matching_operation(spec: dict[str, Any], app: Flask, method: str, url: str) -> dict[str, Any]:
    adapter = app.url_map.bind("localhost")
    rule, _ = adapter.match(url.split("?")[0], method=method, return_rule=True)
    return spec["paths"][openapi_path(rule.rule)][method.lower()]


INLINE_GPU = {
    "name": "next-gen card",
    "memory_gb": 192,
    "memory_bandwidth_tb_per_s": 8,
    "peak_tflops": {"bf16": 2250, "fp8": 4500},
    "native_precisions": ["bf16", "fp8"],
    "interconnect": {"kind": "nvlink5", "bandwidth_gb_per_s": 900, "latency_us": 5},
    "mig_profiles": [{"name": "1g.23gb", "compute_slices": 1, "memory_slices": 1, "memory_gb": 23, "max_instances": 7}],
}

# (method, url, JSON body or raw (content type, bytes), status, response component)
CASES: list[tuple[str, str, Any, int, str]] = [
    ("GET", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&concurrency=8", None, 200, "FitResponse"),
    ("GET", "/v1/fit?model=llama-3.1-8b&gpu.memory_gb=24&gpu.native_precisions=bf16,fp8", None, 200, "FitResponse"),
    (
        "POST",
        "/v1/fit",
        {"model": "llama-3.1-70b", "gpu": "a100-sxm-80gb", "mig_profile": "7g.80gb"},
        200,
        "FitResponse",
    ),
    ("GET", "/v1/throughput?model=llama-3.1-70b&gpu=h100-sxm&sweep=1,8,64,4096", None, 200, "ThroughputResponse"),
    (
        "POST",
        "/v1/throughput",
        {"model": "deepseek-v3", "gpu": INLINE_GPU, "weight_precision": "fp8", "sweep": [1, 32]},
        200,
        "ThroughputResponse",
    ),
    # The smallest in-range bandwidth and peak: huge but finite times, documented as numbers.
    (
        "GET",
        "/v1/throughput?model=llama-3.1-8b&gpu.memory_gb=80&gpu.memory_bandwidth_tb_per_s=1e-6"
        "&gpu.peak_tflops.bf16=1e-6&sweep=1",
        None,
        200,
        "ThroughputResponse",
    ),
    ("GET", "/v1/cost?model=llama-3.1-8b&gpu=h100-sxm", None, 200, "CostResponse"),
    ("POST", "/v1/cost", {"price_per_gpu_hour_usd": 2.5, "tokens_per_s": 1200, "gpus": 2}, 200, "CostResponse"),
    ("GET", "/v1/roofline?m=16&k=8192&n=8192&gpu=h100-sxm&weight_precision=fp8", None, 200, "RooflineResponse"),
    (
        "POST",
        "/v1/roofline",
        {"m": 1, "k": 4096, "n": 4096, "peak_tflops": 300, "memory_bandwidth_tb_per_s": 2},
        200,
        "RooflineResponse",
    ),
    (
        "GET",
        "/v1/fleet?model=llama-3.1-8b&gpu=h100-sxm&requests_per_day=1000000&tpot_slo_ms=50",
        None,
        200,
        "FleetResponse",
    ),
    ("GET", "/v1/fleet?model=llama-3.1-8b&requests_per_second=10&limit=3&zones=3", None, 200, "FleetResponse"),
    (
        "GET",
        "/v1/fleet?model=llama-3.1-405b&requests_per_day=1000&tpot_slo_ms=0.001&limit=5",
        None,
        200,
        "FleetResponse",
    ),
    (
        "POST",
        "/v1/fleet",
        {
            "model": "llama-3.2-1b",
            "gpu": "a100-sxm-80gb",
            "mig_profile": "1g.10gb",
            "forecast": [
                {"period": "2026-01", "requests_per_day": 1e5},
                {"period": "2026-02", "requests_per_day": 3e5, "peak_to_average": 3},
            ],
        },
        200,
        "FleetResponse",
    ),
    (
        "POST",
        "/v1/fleet",
        {
            "model": "llama-3.1-8b",
            "gpu": "h100-sxm",
            "forecast": [
                {"period": "2027-01", "requests_per_day": 1e6},
                {"period": "2027-02", "requests_per_day": 2e6, "peak_to_average": 2},
            ],
            "pricing": "optimize",
            "commitments": "none",
            "prices": {"idle_power_w": 70, "spot_interruptions_per_hour": 0.05},
            "ownership": {"amortization_months": 36, "electricity_usd_per_kwh": 0.1, "hosting_usd_per_kw_month": 150},
            "grid_g_co2_per_kwh": 400,
            "api_price_per_million_input_tokens_usd": 0.2,
            "api_price_per_million_output_tokens_usd": 0.6,
        },
        200,
        "FleetResponse",
    ),
    (
        "GET",
        "/v1/fleet?model=llama-3.1-8b&gpu=a100-sxm-80gb&requests_per_day=1e6&pricing=optimize&topology=aggregated",
        None,
        200,
        "FleetResponse",
    ),
    ("GET", "/v1/batch?model=llama-3.1-8b&gpu=h100-sxm&requests=200&output_tokens_cv=1", None, 200, "BatchResponse"),
    (
        "POST",
        "/v1/batch",
        {"model": "qwen3-30b-a3b", "gpu": INLINE_GPU, "engine": "ideal", "requests": 50, "prompt_tokens": 300},
        200,
        "BatchResponse",
    ),
    ("GET", "/v1/batch?model=llama-3.1-8b&gpu=h100-sxm&requests=50001", None, 422, "Problem"),
    (
        "POST",
        "/v1/traces?model=llama-3.1-8b",
        (
            "text/csv",
            b"timestamp,prompt_tokens,output_tokens,cached_tokens\n2026-12-01T09:00:00Z,1200,310,800\n"
            b"2026-12-01T09:20:00Z,900,120,0\n2026-12-01T10:40:00Z,300,20,\n",
        ),
        200,
        "TraceProfile",
    ),
    ("POST", "/v1/traces", ("application/x-ndjson", b'{"timestamp": 1, "prompt_tokens": 2}'), 422, "Problem"),
    ("POST", "/v1/traces", ("application/xml", b"<log/>"), 415, "Problem"),
    (
        "POST",
        "/v1/autoscaling/simulate",
        {
            "model": "llama-3.1-8b",
            "gpu": "h100-sxm",
            "output_tokens": 4000,
            "tpot_slo_ms": 15,
            "forecast": [{"requests": 900}, {"requests": 1800}],
            "policy": {"min_replicas": 1},
            "recommend": True,
        },
        200,
        "AutoscalingResponse",
    ),
    (
        "POST",
        "/v1/autoscaling/simulate",
        {"model": "llama-3.1-8b", "gpu": "h100-sxm", "forecast": [{"requests": 10}], "policy": {"trigger": "x"}},
        422,
        "Problem",
    ),
    ("GET", "/v1/models", None, 200, "ModelList"),
    ("GET", "/v1/models/qwen3-30b-a3b", None, 200, "Model"),
    ("GET", "/v1/gpus", None, 200, "GpuList"),
    ("GET", "/v1/gpus/h100-sxm", None, 200, "Gpu"),
    ("GET", "/v1/engines", None, 200, "EngineList"),
    ("GET", "/v1/engines?limit=1&offset=1", None, 200, "EngineList"),
    ("GET", "/v1/engines/vllm", None, 200, "Engine"),
    ("GET", "/v1/engines/no-such-engine", None, 404, "Problem"),
    ("GET", "/v1/engines?limit=0", None, 422, "Problem"),
    ("GET", "/healthz", None, 200, "Health"),
    ("GET", "/livez", None, 200, "Health"),
    ("GET", "/readyz", None, 200, "Ready"),
    ("GET", "/v1/gpus/no-such-gpu", None, 404, "Problem"),
    ("GET", "/v1/fit?model=no-such-model&gpu=h100-sxm", None, 404, "Problem"),
    ("GET", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=-1", None, 422, "Problem"),
    ("GET", "/v1/models?format=xml", None, 422, "Problem"),
    ("GET", "/v1/roofline?m=1&k=1&n=1", None, 422, "Problem"),
    ("GET", "/v1/fleet?model=llama-3.1-8b&gpu=h100-sxm", None, 422, "Problem"),
    ("POST", "/v1/throughput", {"model": "llama-3.1-8b", "gpu": "h100-sxm", "tensor_parallel": 3}, 422, "Problem"),
    ("POST", "/v1/fit", {"model": {"params_total": 1}, "gpu": "h100-sxm"}, 422, "Problem"),
    ("POST", "/v1/cost", ("application/json", b"{not json"), 400, "Problem"),
    ("POST", "/v1/fit", ("text/plain", b"model=llama-3.1-8b"), 415, "Problem"),
    ("POST", "/v1/fit", ("application/json", b'{"model": "' + b"x" * (2 << 20) + b'"}'), 413, "Problem"),
    # The edge (app/api/edge.py, app/api/requests.py): limits, characters, unknown parameters.
    ("GET", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&_pad=" + "x" * 17_000, None, 414, "Problem"),
    ("GET", "/v1/models?_pad=" + "x" * 17_000, None, 414, "Problem"),
    ("POST", "/v1/fit", ("application/json", b'{"model": ' + b"[" * 1000 + b"]" * 1000 + b"}"), 400, "Problem"),
    ("GET", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&promt_tokens=1", None, 422, "Problem"),
    ("GET", "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&concurrency=1&concurrency=2", None, 422, "Problem"),
    ("GET", "/v1/models?cachebuster=1", None, 422, "Problem"),
    ("GET", "/v1/models/llama%00", None, 404, "Problem"),
    ("POST", "/v1/fit", {"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt_tokens": 2048.9}, 422, "Problem"),
]


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "component"), CASES, ids=[f"{c[0]} {c[1][:60]} {c[3]}" for c in CASES]
)
def test_real_answers_are_documented(
    spec: dict[str, Any],
    app: Flask,
    client: FlaskClient,
    method: str,
    url: str,
    body: Any,
    status: int,
    component: str,
) -> None:
    if isinstance(body, tuple):
        response = client.open(url, method=method, content_type=body[0], data=body[1])
    else:
        response = client.open(url, method=method, json=body)
    assert response.status_code == status, response.get_data(as_text=True)[:500]

    responses = matching_operation(spec, app, method, url)["responses"]
    assert str(status) in responses, f"{method} {url}: status {status} is not documented"
    documented = resolve(spec, responses[str(status)])
    assert response.mimetype in documented["content"], f"{response.mimetype} not documented for {status}"
    documented_schema = resolve(spec, documented["content"][response.mimetype]["schema"])
    assert documented_schema is spec["components"]["schemas"][component]

    data = response.get_json()
    assert undocumented(spec, data, documented_schema) == []
    errors = sorted(response_schema(spec, component).iter_errors(data), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


@pytest.mark.parametrize("url", ["/v1/fit?model=llama-3.1-8b&gpu=h100-sxm", "/v1/gpus", "/healthz"])
def test_header_limit_answers_are_documented(spec: dict[str, Any], app: Flask, client: FlaskClient, url: str) -> None:
    response = client.get(url, headers={"X-Padding": "x" * 9_000})
    assert response.status_code == 431
    documented = resolve(spec, matching_operation(spec, app, "GET", url)["responses"]["431"])
    assert response.mimetype in documented["content"]
    assert not list(response_schema(spec, "Problem").iter_errors(response.get_json()))


def request_examples(spec: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    for path, _, operation in operations(spec):
        # Planning requests carry examples; catalog writes document their bodies by schema.
        if "requestBody" in operation and path in PLANNING:
            for name, example in resolve(spec, operation["requestBody"])["content"]["application/json"][
                "examples"
            ].items():
                yield path, name, example["value"]


def test_request_examples_are_valid_and_answered(spec: dict[str, Any], client: FlaskClient) -> None:
    """The examples Swagger UI offers match their schemas, and the app answers them with 200."""
    examples = list(request_examples(spec))
    assert {path for path, _, _ in examples} == set(PLANNING)
    for path, name, value in examples:
        schema = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert not list(Draft202012Validator({**schema, "components": spec["components"]}).iter_errors(value)), name
        response = client.post(path, json=value)
        assert response.status_code == 200, f"{path} example {name}: {response.get_data(as_text=True)[:300]}"


def test_readyz_503_is_documented(spec: dict[str, Any], tmp_path: Path) -> None:
    """An unmigrated database: /readyz refuses with problem+json and its `checks`."""
    bare = create_app({"database_url": f"sqlite:///{tmp_path / 'empty.sqlite3'}"})
    response = bare.test_client().get("/readyz")
    assert response.status_code == 503
    documented = resolve(spec, spec["paths"]["/readyz"]["get"]["responses"]["503"])
    assert response.mimetype in documented["content"]
    schema = documented["content"][response.mimetype]["schema"]
    assert undocumented(spec, response.get_json(), schema) == []
    assert not list(response_schema(spec, "Problem").iter_errors(response.get_json()))
    bare.extensions["fleet_sizer"]["engine"].dispose()


@pytest.mark.parametrize(
    ("url", "headers", "mimetype"),
    [
        ("/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&format=csv", {}, "text/csv"),
        ("/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&sweep=1,8", {"Accept": "text/csv"}, "text/csv"),
        ("/v1/cost?tokens_per_s=100&price_per_gpu_hour_usd=2&format=csv", {}, "text/csv"),
        ("/v1/roofline?m=1&k=64&n=64&gpu=l4&format=csv", {}, "text/csv"),
        ("/v1/fleet?model=llama-3.1-8b&requests_per_day=1e5&limit=2&format=csv", {}, "text/csv"),
        ("/v1/fleet?model=llama-3.1-8b&gpu=l4&requests_per_day=1e5&format=keda", {}, "application/yaml"),
        (
            "/v1/fleet?model=llama-3.1-8b&gpu=l4&requests_per_day=1e5&format=xlsx",
            {},
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
        ("/v1/models?format=csv", {}, "text/csv"),
        ("/v1/gpus/l4", {"Accept": "text/csv"}, "text/csv"),
        ("/v1/engines?format=csv", {}, "text/csv"),
        ("/v1/engines/vllm", {"Accept": "text/csv"}, "text/csv"),
    ],
)
def test_non_json_answers_are_documented(
    spec: dict[str, Any], app: Flask, client: FlaskClient, url: str, headers: dict[str, str], mimetype: str
) -> None:
    response = client.get(url, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    assert response.mimetype == mimetype
    operation = matching_operation(spec, app, "GET", url)
    assert mimetype in resolve(spec, operation["responses"]["200"])["content"]
    if "format=" in url:
        asked = url.split("format=")[1].split("&")[0]
        assert asked in resolve(spec, query_parameters(spec, operation)["format"])["schema"]["enum"]


def test_front_page_redirect_is_documented(spec: dict[str, Any], client: FlaskClient) -> None:
    response = client.get("/")
    documented = spec["paths"]["/"]["get"]["responses"]
    assert str(response.status_code) in documented
    assert "Location" in documented[str(response.status_code)]["headers"]


def test_every_planning_and_catalog_answer_offers_json_and_csv(spec: dict[str, Any]) -> None:
    for path, method, operation in operations(spec):
        # Reads and planning answers; catalog writes answer 201/204 or a JSON entry.
        if path.startswith("/v1/") and (method == "GET" or path in PLANNING):
            ok = resolve(spec, operation["responses"]["200"])
            assert {"application/json", "text/csv"} <= set(ok["content"]), f"{method} {path}"
            assert "format" in query_parameters(spec, operation), f"{method} {path}"


def test_errors_are_problem_json(spec: dict[str, Any]) -> None:
    # Every operation also answers 414 (URL) and 431 (headers) from the edge (app/api/edge.py).
    edge = {"414", "431"}
    expected_statuses = {
        ("/v1/fit", "GET"): {"404", "422"} | edge,
        ("/v1/fit", "POST"): {"400", "404", "413", "415", "422"} | edge,
        ("/v1/models", "GET"): {"422"} | edge,
        ("/v1/models/{slug}", "GET"): {"404", "422"} | edge,
        ("/v1/engines", "GET"): {"422"} | edge,
        ("/v1/engines/{name}", "GET"): {"404", "422"} | edge,
        # Writes answer 503 with Retry-After while the database is unreachable.
        ("/v1/engines/{name}", "DELETE"): {"401", "403", "404", "412", "428", "503"} | edge,
        ("/readyz", "GET"): {"503"} | edge,
        ("/healthz", "GET"): edge,
    }
    for path, method, operation in operations(spec):
        responses = operation["responses"]
        assert "default" in responses, f"{method} {path}: no default (500) response"
        errors = {code for code in responses if code != "default" and int(code) >= 400}
        if (path, method) in expected_statuses:
            assert errors == expected_statuses[(path, method)], f"{method} {path}"
        for code in [*errors, "default"]:
            resolved = resolve(spec, responses[code])
            if code == "503" and method != "GET":
                assert "Retry-After" in resolved["headers"], f"{method} {path} 503 without Retry-After"
            content = resolved["content"]
            assert set(content) == {"application/problem+json"}, f"{method} {path} {code}"
            assert content["application/problem+json"]["schema"] == {"$ref": "#/components/schemas/Problem"}

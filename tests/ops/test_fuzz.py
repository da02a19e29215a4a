"""schemathesis over the whole openapi.yaml, in-process against the WSGI app.

Every documented operation is generated from the spec (its examples, boundary values, then
random valid and invalid data) and each answer must be: not a 5xx, a documented status code,
a documented content type, a body that validates against the documented schema, and the
documented response headers. No operation is excluded.

The spec is read from the file (`from_path`), not from `/openapi.yaml`: schemathesis leaves
the operation it loaded the schema from out of the run, and that route is part of the
contract too (tests/ops/test_docs.py checks it serves this very file).

Bounded: the coverage phase's positive cases (~5,000 requests) and MAX_EXAMPLES random cases
per operation, about 45 s on 2 cores; no deadline (a slow example is not a failure here:
bounded computation per request is tested where it is built).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.catalog.seed import load_seed_files
from tests.support import seeded_app

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
MAX_EXAMPLES = 25
# Catalog writes are sent with a valid token, on this module's own database, so the fuzzer
# reaches past 401 and the session's shared catalog (tests/conftest.py) stays untouched.
TOKEN = "fuzz-token-0123456789abcdef"

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


@schemathesis.serializer("application/x-ndjson")
def _json_lines(_: Any, value: Any) -> bytes:
    """/v1/traces' JSON lines body: a generated string as it is, anything else one JSON line."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else json.dumps(value).encode()


schema = schemathesis.openapi.from_path(SPEC_PATH)
# The coverage phase's boundary values (every minimum, maximum and enum member of every
# parameter and property, ~5,000 requests), then MAX_EXAMPLES random valid and invalid cases
# per operation. The coverage phase's negative half (~8,500 more requests, each parameter
# made invalid in turn) would double the run; random negative cases stand in for it.
schema.config.phases.coverage.generation.update(modes=["positive"])


# --- steering ----------------------------------------------------------------------------------
# Left alone, the generator almost never names a catalog entry (every planning answer would be
# a 404 or, on GET where no parameter is required, a 422 for the missing model) and never
# sends a write the current ETag. So, often: real slugs for `model`, `gpu`, `mig_profile` and
# path `{slug}`s, and the row's current ETag in `If-Match`, so that answers come from the
# sizing core and the write paths too. The generated values stay in the mix.

SEED = load_seed_files()
SLUGS: dict[str, list[str]] = {
    "model": sorted(entry["slug"] for entry in SEED["models"]),
    "gpu": sorted(entry["slug"] for entry in SEED["gpus"]),
    "mig_profile": sorted({profile["name"] for entry in SEED["gpus"] for profile in entry.get("mig_profiles") or []}),
}
# Engine names, for the `{name}` of /v1/engines/{name} (a path parameter, not a slug).
ENGINE_NAMES = sorted(entry["name"] for entry in SEED["engines"])
FUZZ_APP: list[Flask] = []  # the app under test, for the ETag look-ups; set by its fixture


def _either(value: Any, real: list[str]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(value), st.sampled_from(real))


# How often each generated value is kept, set to a real slug, or dropped: a model and a GPU
# are needed together, and a MIG profile only fits a few GPUs, so mostly none.
CHOICES = {"model": ("keep", "real", "real", "real"), "gpu": ("keep", "real", "real", "real")}
CHOICES["mig_profile"] = ("keep", "real", "drop", "drop")


def _steer(values: Any, names: set[str]) -> st.SearchStrategy[Any]:
    """Each of `names` kept as generated, set to a real slug, or dropped; a slug replaces the
    dotted inline fields of the same object (`model.layers`, …), which would contradict it."""
    names &= set(SLUGS)
    if not isinstance(values, dict) or not names:
        return st.just(values)

    def apply(picked: dict[str, tuple[str, str]]) -> dict[str, Any]:
        steered = dict(values)
        for name, (choice, slug) in picked.items():
            if choice == "keep":
                continue
            steered = {key: value for key, value in steered.items() if key != name and not key.startswith(f"{name}.")}
            if choice == "real":
                steered[name] = slug
        return steered

    choices = {name: st.tuples(st.sampled_from(CHOICES[name]), st.sampled_from(SLUGS[name])) for name in sorted(names)}
    return st.fixed_dictionaries(choices).map(apply)


@schema.hook
def flatmap_query(context: Any, query: dict[str, Any] | None) -> st.SearchStrategy[Any]:
    return _steer(query, {p.name for p in context.operation.query})


@schema.hook
def flatmap_body(context: Any, body: Any) -> st.SearchStrategy[Any]:
    return _steer(body, set(body) if isinstance(body, dict) else set())


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any]) -> st.SearchStrategy[Any]:
    path = context.operation.path
    if path.startswith("/v1/engines/"):
        key, real = "name", ENGINE_NAMES
    else:
        key, real = "slug", SLUGS["model" if path.startswith("/v1/models/") else "gpu"]
    if not isinstance(path_parameters, dict) or not isinstance(path_parameters.get(key), str):
        return st.just(path_parameters)
    return _either(path_parameters[key], real).map(lambda value: {**path_parameters, key: value})


def _with_current_etag(case: schemathesis.Case) -> schemathesis.Case:
    with FUZZ_APP[0].test_client().get(case.formatted_path) as response:
        if "ETag" in response.headers:
            case.headers = {**(case.headers or {}), "If-Match": response.headers["ETag"]}
    return case


@schema.hook
def flatmap_case(context: Any, case: schemathesis.Case) -> st.SearchStrategy[Any]:
    if case.method.upper() not in {"PUT", "PATCH", "DELETE"} or not FUZZ_APP:
        return st.just(case)
    return st.booleans().map(lambda fresh: _with_current_etag(case) if fresh else case)


# The coverage phase sends each boundary value with the other fields absent or minimal: on
# the planning operations that is a 422 (no model, GET) or a 404 (a made-up slug, POST)
# before any sizing runs. Its cases get a real model and GPU (llama-3.1-8b on an H100, the
# seed lab's pair, with no made-up MIG profile), so the boundary values of the other fields
# go through the sizing core.
ANCHOR = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}


def anchor_on_the_catalog(case: schemathesis.Case) -> None:
    query_names = {p.name for p in case.operation.query}
    if case.method.upper() == "GET" and {"model", "gpu"} & query_names and isinstance(case.query, dict):
        query = dict(case.query)
        for name in sorted(set(ANCHOR) & query_names):
            if name not in query and not any(key.startswith(f"{name}.") for key in query):
                query[name] = ANCHOR[name]
        case.query = query
    elif isinstance(case.body, dict) and isinstance(case.body.get("model"), str):
        body = {**case.body, **{name: slug for name, slug in ANCHOR.items() if name in case.body}}
        if body.get("mig_profile") not in SLUGS["mig_profile"]:
            body.pop("mig_profile", None)  # a made-up profile would refuse every other value
        case.body = body


# --- an error's `instance` is a URI reference (RFC 9457 3.1.5), even for odd slugs --------


@pytest.mark.parametrize("path", ["/v1/models/%C3%B8", "/v1/gpus/a%20b", "/v1/models/%5Bx"])
def test_problem_instance_is_a_uri_reference(client: FlaskClient, path: str) -> None:
    with client.get(path) as response:
        assert response.status_code == 404
        instance = response.get_json()["instance"]
    uri_reference = jsonschema_rs.validator_for({"type": "string", "format": "uri-reference"}, validate_formats=True)
    assert uri_reference.is_valid(instance), instance
    assert instance == path


# --- the app under test -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """tests/conftest.py's `app`, on a database of its own and with a write token."""
    with seeded_app(tmp_path_factory, "fuzz", api_tokens=(TOKEN,)) as flask_app:
        FUZZ_APP.append(flask_app)
        yield flask_app
        FUZZ_APP.clear()


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    # The planning bodies are large objects: generating them is slow by design, not a bug.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
def test_every_answer_is_documented(case: schemathesis.Case, fuzz_app: Flask) -> None:
    if case.meta is not None and case.meta.phase.name.value == "coverage":
        anchor_on_the_catalog(case)
    # buffered: the test client reads and closes file responses (the lab page), so no ResourceWarning.
    case.call_and_validate(app=fuzz_app, headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS, buffered=True)

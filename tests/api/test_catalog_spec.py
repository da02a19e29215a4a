"""The catalog's write and import answers agree with openapi.yaml: statuses documented,
bodies valid against their documented schemas, request bodies accepted by both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

from app import create_app

from .test_catalog_writes import AUTH, TOKEN, gpu_body, model_body

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
QWEN25_7B = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "qwen2.5-7b-instruct.config.json"


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    return document


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    url = f"sqlite:///{tmp_path_factory.mktemp('spec') / 'catalog.sqlite3'}"
    flask_app = create_app({"database_url": url, "api_tokens": (TOKEN,)})
    runner = flask_app.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        assert runner.invoke(args=command).exit_code == 0
    yield flask_app
    flask_app.extensions["fleet_sizer"]["engine"].dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def errors_against(spec: dict[str, Any], component: str, value: Any) -> list[str]:
    validator = Draft202012Validator({"$ref": f"#/components/schemas/{component}", "components": spec["components"]})
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]


def resolve(spec: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def documented(spec: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    responses = spec["paths"][path][method.lower()]["responses"]
    assert str(status) in responses, f"{method} {path}: {status} not documented"
    answer: dict[str, Any] = resolve(spec, responses[str(status)])
    return answer


@pytest.mark.parametrize(
    ("component", "body"),
    [
        ("ModelCreate", model_body("spec-model")),
        ("ModelCreate", model_body("spec-moe", experts=8, experts_per_token=2, expert_params=10**9, shared_experts=0)),
        ("ModelReplace", {k: v for k, v in model_body("x").items() if k != "slug"}),
        ("ModelPatch", {"name": "renamed", "license": None}),
        ("GpuCreate", gpu_body("spec-gpu")),
        ("GpuPatch", {"peak_tflops": {"fp4": 3000}, "mig_profiles": []}),
        ("ImportRequest", {"config": {"model_type": "llama"}, "slug": "x", "dry_run": True}),
    ],
)
def test_bodies_the_app_accepts_match_the_documented_request_schemas(
    spec: dict[str, Any], component: str, body: dict[str, Any]
) -> None:
    assert errors_against(spec, component, body) == []


@pytest.mark.parametrize(
    ("component", "body"),
    [
        ("ModelCreate", {**model_body("x"), "version": 1}),
        ("ModelReplace", model_body("x")),
        ("ModelPatch", {"bogus": 1}),
        ("GpuCreate", {**gpu_body("x"), "mig_profiles": [{"name": "1g.10gb", "compute_slices": 8}]}),
        ("ImportRequest", {"slug": "x"}),
    ],
)
def test_bodies_the_app_refuses_are_refused_by_the_documented_schemas(
    spec: dict[str, Any], component: str, body: dict[str, Any]
) -> None:
    assert errors_against(spec, component, body) != []


def test_write_answers_are_documented_and_valid(spec: dict[str, Any], client: FlaskClient) -> None:
    created = client.post("/v1/models", json=model_body("spec-created"), headers=AUTH)
    answer = documented(spec, "/v1/models", "POST", created.status_code)
    assert {"Location", "ETag"} <= set(answer["headers"])
    assert errors_against(spec, "Model", created.get_json()) == []

    patched = client.patch("/v1/models/spec-created", json={"name": "n"}, headers={**AUTH, "If-Match": '"1"'})
    assert "ETag" in documented(spec, "/v1/models/{slug}", "PATCH", patched.status_code)["headers"]
    assert errors_against(spec, "Model", patched.get_json()) == []

    gpu = client.post("/v1/gpus", json=gpu_body("spec-created-gpu"), headers=AUTH)
    documented(spec, "/v1/gpus", "POST", gpu.status_code)
    assert errors_against(spec, "Gpu", gpu.get_json()) == []

    listing = client.get("/v1/gpus", query_string={"has_mig": "true", "limit": 3})
    assert errors_against(spec, "GpuList", listing.get_json()) == []
    assert errors_against(spec, "ModelList", client.get("/v1/models", query_string={"moe": "false"}).get_json()) == []

    deleted = client.delete("/v1/gpus/spec-created-gpu", headers={**AUTH, "If-Match": '"1"'})
    documented(spec, "/v1/gpus/{slug}", "DELETE", deleted.status_code)


@pytest.mark.parametrize("dry_run", [True, False])
def test_import_answers_are_documented_and_valid(spec: dict[str, Any], client: FlaskClient, dry_run: bool) -> None:
    config = json.loads(QWEN25_7B.read_text())
    response = client.post(
        "/v1/models/import",
        json={"config": config, "slug": f"spec-import-{dry_run}".lower(), "dry_run": dry_run},
        headers=AUTH,
    )
    documented(spec, "/v1/models/import", "POST", response.status_code)
    assert errors_against(spec, "ImportResult", response.get_json()) == []


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("POST", "/v1/models", {}, 401),
        ("PUT", "/v1/models/llama-3.1-8b", AUTH, 428),
        ("PATCH", "/v1/gpus/h100-sxm", {**AUTH, "If-Match": '"99"'}, 412),
        ("DELETE", "/v1/models/no-such-model", {**AUTH, "If-Match": '"1"'}, 404),
        ("POST", "/v1/gpus", AUTH, 422),
        ("GET", "/v1/models?attention=sparse", {}, 422),
    ],
)
def test_write_errors_are_documented(
    spec: dict[str, Any], client: FlaskClient, method: str, path: str, headers: dict[str, str], status: int
) -> None:
    response = client.open(path, method=method, json={}, headers=headers)
    assert response.status_code == status
    template = path.split("?")[0].replace("llama-3.1-8b", "{slug}").replace("h100-sxm", "{slug}")
    template = template.replace("no-such-model", "{slug}")
    answer = documented(spec, template, method, status)
    assert set(answer["content"]) == {"application/problem+json"}
    if status == 401:
        assert "WWW-Authenticate" in answer["headers"]


def test_every_write_is_marked_as_needing_the_bearer_token(spec: dict[str, Any]) -> None:
    assert spec["components"]["securitySchemes"]["bearerAuth"] == {
        **spec["components"]["securitySchemes"]["bearerAuth"],
        "type": "http",
        "scheme": "bearer",
    }
    for path in ("/v1/models", "/v1/models/import", "/v1/models/{slug}", "/v1/gpus", "/v1/gpus/{slug}"):
        for method, operation in spec["paths"][path].items():
            if method in ("post", "put", "patch", "delete"):
                assert operation["security"] == [{"bearerAuth": []}], f"{method} {path}"
                assert "401" in operation["responses"], f"{method} {path}"

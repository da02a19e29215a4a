"""Engine profiles over HTTP: list (JSON and CSV), read with an ETag, write with a bearer
token and If-Match, exactly as models and GPUs; and what planning resolves an `engine` to.

These tests write, so they run on their own seeded SQLite file, not the shared read-only app.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import delete

from app import create_app
from app.api.catalog_schemas import EngineWriteSchema
from app.api.lookup import context
from app.catalog.convert import ENGINE_PUBLIC_FIELDS
from app.catalog.models import Engine
from app.catalog.seed import load_seed_files
from app.config import Config, ConfigError
from app.planning.errors import InvalidRequest
from tests.support import seeded_app

TOKEN = "engine-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SEED_ENGINES = load_seed_files()["engines"]
SEED_NAMES = sorted(entry["name"] for entry in SEED_ENGINES)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with seeded_app(tmp_path_factory, "engines", api_tokens=(TOKEN,)) as flask_app:
        yield flask_app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def engine_body(name: str, **changes: Any) -> dict[str, Any]:
    body = {
        "name": name,
        "display_name": f"Test engine {name}",
        "engine_version": "2.0.1",
        "kv_rule": "util_of_visible",
        "gpu_memory_utilization": 0.9,
        "max_batched_tokens": 2048,
        "max_num_seqs": 256,
        "block_size": 16,
        "non_torch_gib": 0.5,
        "step_overhead_ms": 1.2,
        "layer_overhead_us": 15,
        "efficiencies": [{"architecture": "hopper", "memory": 0.8, "compute": 0.55}],
        "source": "test fixture",
    }
    return {**body, **changes}


def create(client: FlaskClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/engines", json=body, headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def etag_of(client: FlaskClient, name: str) -> str:
    response = client.get(f"/v1/engines/{name}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.headers["ETag"]


def problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    return body


# --------------------------------------------------------------------------- reads


def test_the_list_holds_every_seeded_engine_by_name(client: FlaskClient) -> None:
    response = client.get("/v1/engines")
    assert response.status_code == 200
    body = response.get_json()
    assert body["total"] >= len(SEED_NAMES) and (body["limit"], body["offset"]) == (100, 0)
    names = [item["name"] for item in body["items"]]
    assert names == sorted(names) and set(SEED_NAMES) <= set(names)
    for item in body["items"]:
        assert tuple(item) == ENGINE_PUBLIC_FIELDS
        assert item["source"]


def test_the_list_pages(client: FlaskClient) -> None:
    body = client.get("/v1/engines?limit=1&offset=1").get_json()
    assert len(body["items"]) == 1 and body["limit"] == 1 and body["offset"] == 1
    assert problem(client.get("/v1/engines?limit=0"), 422)["errors"].keys() == {"limit"}


def test_the_list_as_csv_is_one_flat_row_per_engine(client: FlaskClient) -> None:
    response = client.get("/v1/engines?format=csv")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert len(rows) == client.get("/v1/engines").get_json()["total"]
    header = list(rows[0])
    for column in (
        "name",
        "engine_version",
        "kv_rule",
        "gpu_memory_utilization",
        "efficiencies_architecture",
        "efficiencies_memory",
        "uncertainty_time_per_token",
        "uncertainty_unseen_widening",
        "fitted_on",
        "version",
    ):
        assert column in header, column
    assert not any(column in header for column in ("efficiencies", "uncertainty"))
    # No Python reprs of nested objects in any cell.
    assert not any("{" in cell or "[" in cell for row in rows for cell in row.values())
    vllm = next(row for row in rows if row["name"] == "vllm")
    low, high = (float(v) for v in vllm["uncertainty_time_per_token"].split(" | "))
    assert 0 < low <= high
    # Same columns with Accept: text/csv, and for the one-engine answer.
    assert client.get("/v1/engines", headers={"Accept": "text/csv"}).get_data(as_text=True) == response.get_data(
        as_text=True
    )
    one = client.get("/v1/engines/vllm?format=csv").get_data(as_text=True).splitlines()
    assert one[0].split(",") == header and len(one) == 2


def test_one_engine_answers_with_its_etag(client: FlaskClient) -> None:
    response = client.get("/v1/engines/vllm")
    assert response.status_code == 200
    body = response.get_json()
    assert response.headers["ETag"] == f'"{body["version"]}"'
    seed = next(entry for entry in SEED_ENGINES if entry["name"] == "vllm")
    assert body["engine_version"] == seed["version"]
    assert body["kv_rule"] == seed["kv_rule"]
    assert body["efficiencies"] and all(
        set(e) == {"architecture", "memory", "compute", "moe_memory"} for e in body["efficiencies"]
    )
    assert set(body["uncertainty"]) == {
        "time_per_token",
        "ttft",
        "tokens_per_s",
        "kv_capacity_tokens",
        "rows",
        "unseen_widening",
    }


def test_an_unknown_engine_is_404_naming_it(client: FlaskClient) -> None:
    body = problem(client.get("/v1/engines/no-such-engine"), 404)
    assert "no-such-engine" in body["detail"]
    assert body["errors"] == {"name": ["unknown engine 'no-such-engine'"]}
    assert problem(client.get("/v1/engines/ideal"), 404)["errors"] == {"name": ["unknown engine 'ideal'"]}


def test_reads_need_no_token(client: FlaskClient) -> None:
    assert client.get("/v1/engines").status_code == 200
    assert client.get("/v1/engines/vllm").status_code == 200


# --------------------------------------------------------------------------- tokens


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/engines"),
        ("PUT", "/v1/engines/vllm"),
        ("PATCH", "/v1/engines/vllm"),
        ("DELETE", "/v1/engines/vllm"),
    ],
)
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token-0123456789abcdef"}, {"Authorization": f"Basic {TOKEN}"}],
    ids=["none", "wrong", "basic"],
)
def test_writes_without_a_valid_token_get_401(
    client: FlaskClient, method: str, path: str, headers: dict[str, str]
) -> None:
    response = client.open(path, method=method, json=engine_body("nope"), headers={**headers, "If-Match": '"1"'})
    problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")
    assert client.get("/v1/engines/nope").status_code == 404


def test_without_configured_tokens_engine_writes_are_forbidden(tmp_path: Path) -> None:
    app = create_app({"database_url": f"sqlite:///{tmp_path / 'ro.sqlite3'}"})
    assert app.test_cli_runner().invoke(args=["migrate"]).exit_code == 0
    problem(app.test_client().post("/v1/engines", json=engine_body("x"), headers=AUTH), 403)
    app.extensions["fleet_sizer"]["engine"].dispose()


# --------------------------------------------------------------------------- create


def test_post_creates_an_engine_with_201_location_and_etag(client: FlaskClient) -> None:
    response = client.post("/v1/engines", json=engine_body("created-engine"), headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.headers["Location"].endswith("/v1/engines/created-engine")
    assert response.headers["ETag"] == '"1"'
    body = response.get_json()
    assert body["engine_version"] == "2.0.1" and body["version"] == 1
    # Omitted constants are 0, omitted large-GPU defaults null, the uncertainty the stated one.
    assert body["cuda_graph_gib"] == 0.0 and body["cuda_graph_in_budget"] is False
    assert body["large_gpu_gib"] is None and body["fitted_on"] == {} and body["notes"] is None
    assert body["efficiencies"] == [{"architecture": "hopper", "memory": 0.8, "compute": 0.55, "moe_memory": 1.0}]
    assert body["uncertainty"]["ttft"] == [0.6, 1.7] and body["uncertainty"]["unseen_widening"] == 1.5
    assert client.get("/v1/engines/created-engine").get_json() == body


def test_a_write_without_a_source_is_422_naming_source(client: FlaskClient) -> None:
    body = {k: v for k, v in engine_body("sourceless").items() if k != "source"}
    errors = problem(client.post("/v1/engines", json=body, headers=AUTH), 422)["errors"]
    assert "source" in errors
    assert problem(client.post("/v1/engines", json={**body, "source": ""}, headers=AUTH), 422)["errors"].keys() == {
        "source"
    }
    assert client.get("/v1/engines/sourceless").status_code == 404


def test_a_duplicate_name_is_409(client: FlaskClient) -> None:
    create(client, engine_body("twice"))
    body = problem(client.post("/v1/engines", json=engine_body("twice"), headers=AUTH), 409)
    assert body["errors"] == {"name": ["already exists"]}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"bogus": 1}, "bogus"),
        ({"version": 3}, "version"),
        ({"name": "ideal"}, "name"),
        ({"name": "vLLM"}, "name"),
        ({"name": "x" * 33}, "name"),
        ({"display_name": ""}, "display_name"),
        ({"engine_version": None}, "engine_version"),
        ({"kv_rule": "greedy"}, "kv_rule"),
        ({"gpu_memory_utilization": 0}, "gpu_memory_utilization"),
        ({"gpu_memory_utilization": 1.01}, "gpu_memory_utilization"),
        ({"max_batched_tokens": 0}, "max_batched_tokens"),
        ({"max_batched_tokens": 2048.5}, "max_batched_tokens"),
        ({"max_num_seqs": 10**7}, "max_num_seqs"),
        ({"block_size": 0}, "block_size"),
        ({"large_gpu_gib": 0}, "large_gpu_gib"),
        ({"max_num_seqs_large_gpu": 1024}, "max_num_seqs_large_gpu"),
        ({"max_batched_tokens_large_gpu": 8192}, "max_batched_tokens_large_gpu"),
        ({"non_torch_gib": -0.1}, "non_torch_gib"),
        ({"cuda_graph_gib": 1e4}, "cuda_graph_gib"),
        ({"step_overhead_ms": -1}, "step_overhead_ms"),
        ({"layer_overhead_us": 1e7}, "layer_overhead_us"),
        ({"logits_bytes_per_vocab_entry": 100}, "logits_bytes_per_vocab_entry"),
        ({"cuda_graph_in_budget": "maybe"}, "cuda_graph_in_budget"),
        ({"efficiencies": [{"architecture": "hopper", "memory": 1.2, "compute": 0.5}]}, "efficiencies.0.memory"),
        ({"efficiencies": [{"architecture": "hopper", "memory": 0.8}]}, "efficiencies.0.compute"),
        ({"efficiencies": [{"architecture": "Hopper!", "memory": 0.8, "compute": 0.5}]}, "efficiencies.0.architecture"),
        (
            {"efficiencies": [{"architecture": "*", "memory": 0.8, "compute": 0.5, "moe_memory": 0}]},
            "efficiencies.0.moe_memory",
        ),
        ({"efficiencies": [{"architecture": "*", "memory": 0.8, "compute": 0.5, "x": 1}]}, "efficiencies.0.x"),
        ({"efficiencies": [{"architecture": "*", "memory": 0.8, "compute": 0.5}] * 2}, "efficiencies"),
        ({"efficiencies": None}, "efficiencies"),
        ({"uncertainty": {"ttft": [1.7, 0.6]}}, "uncertainty.ttft"),
        ({"uncertainty": {"ttft": [0.6]}}, "uncertainty.ttft"),
        ({"uncertainty": {"ttft": [0, 1]}}, "uncertainty.ttft.0"),
        ({"uncertainty": {"unseen_widening": 0.5}}, "uncertainty.unseen_widening"),
        ({"uncertainty": {"rows": {"ttft": -1}}}, "uncertainty.rows"),
        ({"uncertainty": {"latency": [0.5, 2]}}, "uncertainty.latency"),
        ({"fitted_on": {"step_overhead_ms": 3}}, "fitted_on"),
        ({"fitted_on": {"": "row 1"}}, "fitted_on"),
        ({"source": None}, "source"),
    ],
)
def test_an_invalid_engine_is_422_naming_the_field(client: FlaskClient, changes: dict[str, Any], field: str) -> None:
    response = client.post("/v1/engines", json={**engine_body("invalid-engine"), **changes}, headers=AUTH)
    errors = problem(response, 422)["errors"]
    assert any(key == field or key.startswith(f"{field}.") for key in errors), errors
    assert client.get("/v1/engines/invalid-engine").status_code == 404


def test_every_seeded_engine_is_a_valid_write(client: FlaskClient) -> None:
    """What the seed stores, the API would have accepted (same ranges on both paths)."""
    for entry in SEED_ENGINES:
        document = {("engine_version" if key == "version" else key): value for key, value in entry.items()}
        EngineWriteSchema().load(document)
        stored = client.get(f"/v1/engines/{entry['name']}").get_json()
        EngineWriteSchema().load({k: v for k, v in stored.items() if k != "version"})


# --------------------------------------------------------------------------- update


def test_patch_without_if_match_is_428_and_with_a_stale_one_412(client: FlaskClient) -> None:
    create(client, engine_body("guarded"))
    assert problem(client.patch("/v1/engines/guarded", json={"step_overhead_ms": 5}, headers=AUTH), 428)["errors"] == {
        "If-Match": ["required"]
    }
    assert problem(
        client.patch("/v1/engines/guarded", json={"step_overhead_ms": 5}, headers={**AUTH, "If-Match": "*"}), 428
    )["errors"] == {"If-Match": ["*"]}
    assert problem(
        client.patch("/v1/engines/guarded", json={"step_overhead_ms": 5}, headers={**AUTH, "If-Match": '"7"'}), 412
    )["errors"] == {"If-Match": ["stale"]}
    assert client.get("/v1/engines/guarded").get_json()["step_overhead_ms"] == 1.2


def test_patch_changes_a_constant_visible_on_get_and_to_planning(app: Flask, client: FlaskClient) -> None:
    with app.test_request_context():
        before = context().engine("vllm")
        assert before is not None
    etag = etag_of(client, "vllm")
    response = client.patch(
        "/v1/engines/vllm",
        json={"step_overhead_ms": before.step_overhead_ms + 2.5, "uncertainty": {"ttft": [0.5, 2.0]}},
        headers={**AUTH, "If-Match": etag},
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["ETag"] != etag
    body = client.get("/v1/engines/vllm").get_json()
    assert body["step_overhead_ms"] == before.step_overhead_ms + 2.5
    # The uncertainty merges key by key: the other ranges stay.
    assert body["uncertainty"]["ttft"] == [0.5, 2.0]
    assert body["uncertainty"]["time_per_token"] == list(before.uncertainty.time_per_token)
    assert response.headers["ETag"] == f'"{body["version"]}"'
    # The writing worker dropped its copy: planning sees the change at once.
    with app.test_request_context():
        after = context().engine("vllm")
        assert after is not None
        assert after.step_overhead_ms == before.step_overhead_ms + 2.5
        assert after.uncertainty.ttft == (0.5, 2.0)


def test_a_patch_that_changes_nothing_keeps_the_etag(client: FlaskClient) -> None:
    created = create(client, engine_body("unchanged"))
    response = client.patch(
        "/v1/engines/unchanged", json={"block_size": created["block_size"]}, headers={**AUTH, "If-Match": '"1"'}
    )
    assert response.status_code == 200 and response.headers["ETag"] == '"1"'


def test_patch_is_checked_as_a_whole_engine(client: FlaskClient) -> None:
    create(client, engine_body("whole", large_gpu_gib=70, max_num_seqs_large_gpu=1024))
    response = client.patch("/v1/engines/whole", json={"large_gpu_gib": None}, headers={**AUTH, "If-Match": '"1"'})
    assert "max_num_seqs_large_gpu" in problem(response, 422)["errors"]
    response = client.patch("/v1/engines/whole", json={"name": "renamed"}, headers={**AUTH, "If-Match": '"1"'})
    assert "name" in problem(response, 422)["errors"]


def test_put_replaces_the_engine_and_omitted_constants_take_their_defaults(client: FlaskClient) -> None:
    create(client, engine_body("replaced", cuda_graph_gib=0.4, notes="old"))
    body = {k: v for k, v in engine_body("x", kv_rule="static_fraction").items() if k != "name"}
    response = client.put("/v1/engines/replaced", json=body, headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 200, response.get_data(as_text=True)
    stored = response.get_json()
    assert (stored["name"], stored["kv_rule"], stored["version"]) == ("replaced", "static_fraction", 2)
    assert stored["cuda_graph_gib"] == 0.0 and stored["notes"] is None
    assert problem(
        client.put("/v1/engines/replaced", json={**body, "name": "y"}, headers={**AUTH, "If-Match": '"2"'}), 422
    )


def test_writes_to_an_unknown_engine_are_404(client: FlaskClient) -> None:
    headers = {**AUTH, "If-Match": '"1"'}
    for method in ("PUT", "PATCH", "DELETE"):
        response = client.open("/v1/engines/ghost", method=method, json=engine_body("ghost"), headers=headers)
        assert problem(response, 404)["errors"] == {"name": ["unknown engine 'ghost'"]}


# --------------------------------------------------------------------------- delete and planning


def test_delete_needs_the_current_etag_then_planning_refuses_the_name(app: Flask, client: FlaskClient) -> None:
    create(client, engine_body("doomed"))
    with app.test_request_context():
        assert context().engine("doomed") is not None
        assert "doomed" in list(context().catalog.engines)
    problem(client.delete("/v1/engines/doomed", headers=AUTH), 428)
    problem(client.delete("/v1/engines/doomed", headers={**AUTH, "If-Match": '"2"'}), 412)
    assert client.delete("/v1/engines/doomed", headers={**AUTH, "If-Match": '"1"'}).status_code == 204
    problem(client.get("/v1/engines/doomed"), 404)
    with app.test_request_context():
        with pytest.raises(InvalidRequest) as caught:
            context().engine("doomed")
        assert "doomed" not in list(context().catalog.engines)
    assert list(caught.value.errors or {}) == ["engine"]


def test_ideal_is_no_profile_and_an_unknown_name_lists_the_known_ones(app: Flask) -> None:
    with app.test_request_context():
        assert context().engine("ideal") is None
        profile = context().engine("vllm")
        assert profile is not None and profile.name == "vllm" and profile.source
        with pytest.raises(InvalidRequest) as caught:
            context().engine("tgi")
        known = list(context().catalog.engines)
    message = (caught.value.errors or {})["engine"][0]
    assert message.startswith("unknown engine 'tgi': known are ideal, ")
    assert all(name in message for name in known)
    assert known == sorted(known) and "ideal" not in known


# --------------------------------------------------------------------------- seeding an older catalog


def test_seed_adds_the_engines_to_a_catalog_seeded_before_them(tmp_path: Path) -> None:
    """A catalog seeded at migration 0002 has models and GPUs but no engine after 0003."""
    app = create_app({"database_url": f"sqlite:///{tmp_path / 'old.sqlite3'}"})
    runner = app.test_cli_runner()
    assert runner.invoke(args=["migrate"]).exit_code == 0
    assert runner.invoke(args=["seed"]).exit_code == 0
    sessions = app.extensions["fleet_sizer"]["sessionmaker"]
    with sessions() as db, db.begin():
        db.execute(delete(Engine))
    result = runner.invoke(args=["seed"])
    assert result.exit_code == 0 and f"seeded {len(SEED_NAMES)} engines" in result.output
    assert app.test_client().get("/v1/engines").get_json()["total"] == len(SEED_NAMES)
    assert "catalog already seeded" in runner.invoke(args=["seed"]).output
    app.extensions["fleet_sizer"]["engine"].dispose()


# --------------------------------------------------------------------------- the default engine


def test_the_default_engine_cannot_be_deleted(client: FlaskClient) -> None:
    headers = {**AUTH, "If-Match": etag_of(client, "vllm")}
    found = problem(client.delete("/v1/engines/vllm", headers=headers), 409)
    assert "DEFAULT_ENGINE" in found["detail"] and list(found["errors"]) == ["name"]
    # Still there, and a request naming no engine plans under it.
    assert (
        client.get("/v1/fit", query_string={"model": "llama-3.1-8b", "gpu": "h100-sxm"}).get_json()["engine"] == "vllm"
    )


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """A service whose DEFAULT_ENGINE is sglang."""
    with seeded_app(tmp_path_factory, "renamed", api_tokens=(TOKEN,), default_engine="sglang") as flask_app:
        yield flask_app


def test_a_renamed_default_plans_requests_that_name_none_and_protects_that_engine(renamed: Flask) -> None:
    client = renamed.test_client()
    replica = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
    assert (
        client.get("/v1/fit", query_string=replica).get_json()
        == client.get("/v1/fit", query_string={**replica, "engine": "sglang"}).get_json()
    )
    problem(client.delete("/v1/engines/sglang", headers={**AUTH, "If-Match": etag_of(client, "sglang")}), 409)
    # vllm is an engine like any other here: it may go, and requests naming none are unaffected.
    assert client.delete("/v1/engines/vllm", headers={**AUTH, "If-Match": etag_of(client, "vllm")}).status_code == 204
    assert client.get("/v1/fit", query_string=replica).get_json()["engine"] == "sglang"


def test_a_default_engine_missing_from_the_catalog_says_it_is_the_services_setting(app: Flask) -> None:
    with app.test_request_context():
        planning = context()
        planning.default_engine = "gone"
        with pytest.raises(InvalidRequest) as caught:
            planning.engine(None)
    assert "DEFAULT_ENGINE" in caught.value.detail


@pytest.mark.parametrize("value", ["v llm", "x" * 65])
def test_a_default_engine_setting_that_is_no_name_stops_the_start(value: str) -> None:
    with pytest.raises(ConfigError, match="DEFAULT_ENGINE"):
        Config.from_env({"DEFAULT_ENGINE": value})

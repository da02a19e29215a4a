"""Catalog writes over HTTP: bearer tokens, ETag / If-Match, validation, conflicts.

These tests write, so they run on their own seeded SQLite file, not the shared read-only app.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from flask import Flask, g
from flask.testing import FlaskClient
from sqlalchemy import func, select, text

from app import create_app
from app.catalog import writes
from app.catalog.models import MigProfile
from app.config import Config, ConfigError
from app.sizing.specs import shape_params
from tests.support import seeded_app

TOKEN = "test-token-0123456789abcdef"
OTHER_TOKEN = "second-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with seeded_app(tmp_path_factory, "writes", api_tokens=(OTHER_TOKEN, TOKEN)) as flask_app:
        yield flask_app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def model_body(slug: str, **changes: Any) -> dict[str, Any]:
    body = {
        "slug": slug,
        "name": f"Test {slug}",
        "family": "llama",
        "params_total": 8_030_261_248,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "vocab_size": 128256,
        "intermediate_size": 14336,
        "native_precision": "bf16",
        "max_context": 131072,
        "source": "test fixture: the Llama 3.1 8B shape",
    }
    return {**body, **changes}


PROFILES = [
    {"name": "1g.12gb", "compute_slices": 1, "memory_slices": 1, "memory_gb": 12, "max_instances": 7},
    {"name": "7g.96gb", "compute_slices": 7, "memory_slices": 8, "memory_gb": 96, "max_instances": 1},
]


def gpu_body(slug: str, **changes: Any) -> dict[str, Any]:
    body = {
        "slug": slug,
        "name": f"Test GPU {slug}",
        "vendor": "nvidia",
        "memory_gb": 96,
        "memory_bandwidth_tb_per_s": 4,
        "peak_tflops": {"bf16": 900, "fp8": 1800},
        "native_precisions": ["bf16", "fp8"],
        "interconnect": {"kind": "nvlink4", "bandwidth_gb_per_s": 450, "latency_us": 5},
        "gpus_per_node": 8,
        "hourly_price_usd": 3.5,
        "price_date": "2026-01",
        "source": "test fixture",
        "confidence": "derived",
        "mig_profiles": PROFILES,
    }
    return {**body, **changes}


def create(client: FlaskClient, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/v1/{kind}", json=body, headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def etag_of(client: FlaskClient, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200
    return response.headers["ETag"]


# --------------------------------------------------------------------------- tokens

WRITES = [
    ("POST", "/v1/models"),
    ("PUT", "/v1/models/llama-3.1-8b"),
    ("PATCH", "/v1/models/llama-3.1-8b"),
    ("DELETE", "/v1/models/llama-3.1-8b"),
    ("POST", "/v1/models/import"),
    ("POST", "/v1/gpus"),
    ("PUT", "/v1/gpus/h100-sxm"),
    ("PATCH", "/v1/gpus/h100-sxm"),
    ("DELETE", "/v1/gpus/h100-sxm"),
]


@pytest.mark.parametrize(("method", "path"), WRITES)
@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({}, None),
        ({"Authorization": "Bearer wrong-token-0123456789abcdef"}, "invalid_token"),
        ({"Authorization": f"Basic {TOKEN}"}, None),
        ({"Authorization": "Bearer "}, None),
        ({"Authorization": f"Bearer {TOKEN}x"}, "invalid_token"),
    ],
    ids=["none", "wrong", "basic", "empty", "longer"],
)
def test_writes_without_a_valid_token_get_401_and_a_bearer_challenge(
    client: FlaskClient, method: str, path: str, headers: dict[str, str], error: str | None
) -> None:
    response = client.open(path, method=method, json={}, headers={**headers, "If-Match": '"1"'})
    assert response.status_code == 401
    assert response.mimetype == "application/problem+json"
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert ('error="invalid_token"' in challenge) == (error is not None)
    assert TOKEN not in response.get_data(as_text=True)


def test_every_configured_token_is_accepted(client: FlaskClient) -> None:
    response = client.post(
        "/v1/models", json=model_body("second-token-model"), headers={"Authorization": f"Bearer {OTHER_TOKEN}"}
    )
    assert response.status_code == 201


def test_the_scheme_name_is_case_insensitive(client: FlaskClient) -> None:
    response = client.post(
        "/v1/models", json=model_body("lowercase-bearer"), headers={"Authorization": f"bearer {TOKEN}"}
    )
    assert response.status_code == 201


def test_without_configured_tokens_writes_are_forbidden(tmp_path_factory: pytest.TempPathFactory) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('readonly') / 'catalog.sqlite3'}"
    readonly = create_app({"database_url": url, "api_tokens": ()})
    try:
        response = readonly.test_client().post("/v1/models", json={}, headers=AUTH)
        assert response.status_code == 403
        assert "API_TOKENS" in response.get_json()["detail"]
    finally:
        readonly.extensions["fleet_sizer"]["engine"].dispose()


def test_reads_need_no_token(client: FlaskClient) -> None:
    assert client.get("/v1/models/llama-3.1-8b").status_code == 200


@pytest.mark.parametrize(
    "raw",
    ["short", "has space in it 0123456789", "comma,in,it,0123456789abcdef", "é" * 20],
)
def test_a_token_that_cannot_be_a_bearer_token_stops_start_up(raw: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Config.from_env({"API_TOKENS": raw})
    assert raw not in str(raised.value)


def test_api_tokens_are_split_on_commas_and_trimmed() -> None:
    config = Config.from_env({"API_TOKENS": f" {TOKEN} ,, {OTHER_TOKEN} "})
    assert config.api_tokens == (TOKEN, OTHER_TOKEN)
    assert TOKEN not in repr(config)
    assert Config.from_env({}).api_tokens == ()


# --------------------------------------------------------------------------- create


def test_post_creates_a_model_with_201_location_and_etag(client: FlaskClient) -> None:
    response = client.post("/v1/models", json=model_body("created-model"), headers=AUTH)
    assert response.status_code == 201
    assert response.headers["Location"].endswith("/v1/models/created-model")
    assert response.headers["ETag"] == '"1"'
    body = response.get_json()
    assert body["version"] == 1 and body["attention"] == "gqa" and body["params_active"] == body["params_total"]
    fetched = client.get("/v1/models/created-model")
    assert fetched.get_json() == body
    assert fetched.headers["ETag"] == '"1"'


def test_a_created_model_can_be_planned_on(client: FlaskClient) -> None:
    create(client, "models", model_body("plannable-model"))
    response = client.get("/v1/fit", query_string={"model": "plannable-model", "gpu": "h100-sxm"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["kv_bytes_per_token"] == 131_072


def test_a_duplicate_slug_is_409(client: FlaskClient) -> None:
    create(client, "models", model_body("duplicate-model"))
    response = client.post("/v1/models", json=model_body("duplicate-model", name="again"), headers=AUTH)
    assert response.status_code == 409
    assert response.get_json()["errors"] == {"slug": ["already exists"]}
    assert client.get("/v1/models/duplicate-model").get_json()["name"] == "Test duplicate-model"


def test_a_moe_model_gets_its_active_parameters_derived(client: FlaskClient) -> None:
    # Llama 3.1 8B's attention with 8 experts of width 1,024 in each of its 32 layers: the
    # routed experts are 32 x 8 x 3 x 4,096 x 1,024 parameters, and params_total is what the shape counts.
    shape = model_body("small-moe", experts=8, experts_per_token=2, shared_experts=0, moe_intermediate_size=1024)
    shape["intermediate_size"] = None
    experts = 32 * 8 * 3 * 4096 * 1024
    total = shape_params(shape)
    assert total is not None
    body = {**shape, "params_total": total, "expert_params": experts}
    assert create(client, "models", body)["params_active"] == total - experts + experts * 2 // 8


def test_a_window_without_a_layer_count_windows_every_layer(client: FlaskClient) -> None:
    assert create(client, "models", model_body("windowed", sliding_window=4096))["sliding_window_layers"] == 32


def test_a_precision_alias_is_stored_by_its_catalog_name(client: FlaskClient) -> None:
    assert (
        create(client, "models", model_body("alias-precision", native_precision="bfloat16"))["native_precision"]
        == "bf16"
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"bogus": 1}, "bogus"),
        ({"version": 3}, "version"),
        ({"id": 3}, "id"),
        ({"slug": "Upper-Case"}, "slug"),
        ({"slug": "-leading"}, "slug"),
        ({"slug": "import"}, "slug"),
        ({"slug": "x" * 101}, "slug"),
        ({"name": ""}, "name"),
        ({"source": None}, "source"),
        ({"layers": 0}, "layers"),
        ({"layers": 1.5}, "layers"),
        ({"params_total": -5}, "params_total"),
        ({"params_total": 10**15}, "params_total"),
        ({"hidden_size": "wide"}, "hidden_size"),
        ({"kv_heads": 5}, "kv_heads"),
        ({"attention": "mha"}, "attention"),
        ({"attention": "gqa", "kv_heads": 32}, "attention"),
        ({"attention": "mla"}, "kv_lora_rank"),
        ({"kv_lora_rank": 512}, "kv_lora_rank"),
        ({"experts": 8}, "experts"),
        ({"experts": 8, "experts_per_token": 9, "expert_params": 10**9}, "experts_per_token"),
        ({"shared_experts": 1}, "shared_experts"),
        ({"moe_intermediate_size": 1024}, "moe_intermediate_size"),
        ({"params_active": 9_000_000_000}, "params_active"),
        ({"sliding_window_layers": 40, "sliding_window": 4096}, "sliding_window_layers"),
        ({"sliding_window_layers": 4}, "sliding_window"),
        ({"sliding_window": 4096, "sliding_window_layers": 0}, "sliding_window_layers"),
        ({"native_precision": "fp7"}, "native_precision"),
        ({"family": "Llama 3"}, "family"),
        ({"hf_repo": "x" * 201}, "hf_repo"),
        ({"tie_word_embeddings": None}, "tie_word_embeddings"),
        ({"quantized_components": ["attention", "router"]}, "quantized_components.1"),
        ({"quantized_components": ["experts", "experts"]}, "quantized_components"),
        ({"quantized_components": "experts"}, "quantized_components"),
    ],
)
def test_an_invalid_model_is_422_naming_the_field(client: FlaskClient, changes: dict[str, Any], field: str) -> None:
    response = client.post("/v1/models", json={**model_body("invalid-model"), **changes}, headers=AUTH)
    assert response.status_code == 422, response.get_data(as_text=True)
    assert field in response.get_json()["errors"]
    assert client.get("/v1/models/invalid-model").status_code == 404


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [(b"{not json", "application/json", 400), (b"[1, 2]", "application/json", 400), (b"slug=x", "text/plain", 415)],
)
def test_a_body_that_is_not_a_json_object_is_refused(
    client: FlaskClient, body: bytes, content_type: str, status: int
) -> None:
    response = client.post("/v1/models", data=body, content_type=content_type, headers=AUTH)
    assert response.status_code == status


# --------------------------------------------------------------------------- update


def test_put_without_if_match_is_428_and_changes_nothing(client: FlaskClient) -> None:
    create(client, "models", model_body("needs-if-match"))
    response = client.put("/v1/models/needs-if-match", json=model_body("x", name="changed") | {}, headers=AUTH)
    assert response.status_code == 428
    assert response.get_json()["errors"] == {"If-Match": ["required"]}
    assert client.get("/v1/models/needs-if-match").get_json()["name"] == "Test needs-if-match"


def _replace_body(**changes: Any) -> dict[str, Any]:
    return {k: v for k, v in model_body("unused", **changes).items() if k != "slug"}


def test_put_with_the_current_etag_replaces_the_model_and_bumps_the_etag(client: FlaskClient) -> None:
    create(client, "models", model_body("replaced", license="Custom", notes="old note"))
    response = client.put(
        "/v1/models/replaced", json=_replace_body(name="Replaced"), headers={**AUTH, "If-Match": '"1"'}
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["ETag"] == '"2"'
    body = response.get_json()
    # A replacement: what the body leaves out is unknown now.
    assert (body["name"], body["license"], body["notes"], body["version"]) == ("Replaced", None, None, 2)
    assert client.get("/v1/models/replaced").headers["ETag"] == '"2"'


@pytest.mark.parametrize("if_match", ['"7"', 'W/"1"', '"2", "3"', "*"])
def test_a_stale_or_weak_if_match_changes_nothing(client: FlaskClient, if_match: str) -> None:
    slug = f"stale-{abs(hash(if_match))}"
    created = create(client, "models", model_body(slug))
    response = client.put(f"/v1/models/{slug}", json=_replace_body(name="lost"), headers={**AUTH, "If-Match": if_match})
    assert response.status_code == (428 if if_match == "*" else 412)
    assert response.mimetype == "application/problem+json"
    after = client.get(f"/v1/models/{slug}")
    assert after.get_json() == created
    assert after.headers["ETag"] == '"1"'


def test_one_of_several_etags_matching_is_enough(client: FlaskClient) -> None:
    create(client, "models", model_body("several-etags"))
    response = client.patch("/v1/models/several-etags", json={"name": "ok"}, headers={**AUTH, "If-Match": '"9", "1"'})
    assert response.status_code == 200


def test_the_slug_of_a_stored_model_cannot_be_changed(client: FlaskClient) -> None:
    create(client, "models", model_body("fixed-slug"))
    for method, body in (("PUT", model_body("renamed")), ("PATCH", {"slug": "renamed"})):
        response = client.open("/v1/models/fixed-slug", method=method, json=body, headers={**AUTH, "If-Match": '"1"'})
        assert response.status_code == 422
        assert "slug" in response.get_json()["errors"]
    assert client.get("/v1/models/renamed").status_code == 404


def test_patch_merges_into_the_stored_model(client: FlaskClient) -> None:
    create(client, "models", model_body("patched", license="Custom"))
    response = client.patch(
        "/v1/models/patched",
        json={"name": "Patched", "notes": "a note", "license": None},
        headers={**AUTH, "If-Match": '"1"'},
        content_type="application/merge-patch+json",
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    assert (body["name"], body["notes"], body["license"], body["layers"]) == ("Patched", "a note", None, 32)
    assert response.headers["ETag"] == '"2"'


def test_patch_is_checked_as_a_whole_model(client: FlaskClient) -> None:
    create(client, "models", model_body("patched-badly"))
    response = client.patch("/v1/models/patched-badly", json={"kv_heads": 7}, headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 422
    assert "kv_heads" in response.get_json()["errors"]
    response = client.patch("/v1/models/patched-badly", json={"layers": None}, headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 422
    assert client.get("/v1/models/patched-badly").headers["ETag"] == '"1"'


def test_a_patch_that_changes_nothing_keeps_the_etag(client: FlaskClient) -> None:
    create(client, "models", model_body("unchanged"))
    response = client.patch("/v1/models/unchanged", json={"layers": 32}, headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 200
    assert response.headers["ETag"] == '"1"'


def test_writes_to_an_unknown_model_are_404(client: FlaskClient) -> None:
    for method in ("PUT", "PATCH", "DELETE"):
        response = client.open("/v1/models/no-such-model", method=method, json={}, headers={**AUTH, "If-Match": '"1"'})
        assert response.status_code == 404


def test_a_writer_that_loses_the_race_gets_412_and_writes_nothing(client: FlaskClient) -> None:
    """Another writer commits between this request's read and its UPDATE: the version check
    in the UPDATE matches no row (StaleDataError), and nothing of this request is stored."""
    create(client, "models", model_body("raced"))
    real = writes.update_model

    def racing(row: Any, values: dict[str, Any]) -> None:
        # The rival's UPDATE, inside this request's transaction: the row's version moves on.
        g.db_session.connection().execute(text("UPDATE models SET version = version + 1 WHERE slug = 'raced'"))
        real(row, values)

    with mock.patch.object(writes, "update_model", racing):
        response = client.patch("/v1/models/raced", json={"name": "loser"}, headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 412
    assert response.get_json()["errors"] == {"If-Match": ["stale"]}
    after = client.get("/v1/models/raced")
    assert (after.get_json()["name"], after.headers["ETag"]) == ("Test raced", '"1"')


def test_concurrent_writers_with_the_same_etag_one_wins_one_gets_412(app: Flask) -> None:
    create(app.test_client(), "models", model_body("contended"))
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def write(name: str) -> None:
        client = app.test_client()
        barrier.wait()
        response = client.patch("/v1/models/contended", json={"name": name}, headers={**AUTH, "If-Match": '"1"'})
        statuses.append(response.status_code)

    threads = [threading.Thread(target=write, args=(f"writer {i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200, 412]
    assert app.test_client().get("/v1/models/contended").headers["ETag"] == '"2"'


# --------------------------------------------------------------------------- delete


def test_delete_needs_the_current_etag_then_the_model_is_gone(client: FlaskClient) -> None:
    create(client, "models", model_body("deleted"))
    assert client.delete("/v1/models/deleted", headers=AUTH).status_code == 428
    assert client.delete("/v1/models/deleted", headers={**AUTH, "If-Match": '"5"'}).status_code == 412
    assert client.get("/v1/models/deleted").status_code == 200
    response = client.delete("/v1/models/deleted", headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 204
    assert response.get_data() == b""
    assert client.get("/v1/models/deleted").status_code == 404


# --------------------------------------------------------------------------- GPUs


def test_post_creates_a_gpu_with_its_mig_profiles(client: FlaskClient) -> None:
    response = client.post("/v1/gpus", json=gpu_body("test-gpu"), headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.headers["Location"].endswith("/v1/gpus/test-gpu")
    body = response.get_json()
    assert [p["name"] for p in body["mig_profiles"]] == ["1g.12gb", "7g.96gb"]
    assert body["peak_tflops"] == {"bf16": 900.0, "fp16": None, "fp8": 1800.0, "int8": None, "fp4": None}
    assert body["interconnect"] == {"kind": "nvlink4", "bandwidth_gb_per_s": 450.0, "latency_us": 5.0}
    assert client.get("/v1/gpus/test-gpu").get_json() == body


def test_a_created_gpu_and_its_mig_slice_can_be_planned_on(client: FlaskClient) -> None:
    create(client, "gpus", gpu_body("plannable-gpu"))
    response = client.get(
        "/v1/fit", query_string={"model": "llama-3.2-1b", "gpu": "plannable-gpu", "mig_profile": "1g.12gb"}
    )
    assert response.status_code == 200, response.get_data(as_text=True)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"vendor": "intel"}, "vendor"),
        ({"gpus_per_node": None}, "gpus_per_node"),
        ({"memory_gb": 0}, "memory_gb"),
        ({"memory_gb": None}, "memory_gb"),
        ({"memory_gb": 40}, "mig_profiles.1.memory_gb"),
        ({"peak_tflops": {"bf16": -1}}, "peak_tflops.bf16"),
        ({"peak_tflops": {"tf32": 1}}, "peak_tflops.tf32"),
        ({"native_precisions": ["bf16", "fp7"]}, "native_precisions.1"),
        ({"native_precisions": ["bf16", "bf16"]}, "native_precisions"),
        ({"interconnect": {"kind": "x" * 33}}, "interconnect.kind"),
        ({"price_date": "2026-13"}, "price_date"),
        ({"price_date": None}, "price_date"),
        ({"confidence": "rumour"}, "confidence"),
        ({"host_cpu_cores": 1.5}, "host_cpu_cores"),
        ({"mig_profiles": [{**PROFILES[0], "compute_slices": 8}]}, "mig_profiles.0.compute_slices"),
        ({"mig_profiles": [{**PROFILES[0], "memory_slices": 9}]}, "mig_profiles.0.memory_slices"),
        ({"mig_profiles": [{**PROFILES[0], "max_instances": 0}]}, "mig_profiles.0.max_instances"),
        ({"mig_profiles": [{**PROFILES[0], "name": "big slice"}]}, "mig_profiles.0.name"),
        ({"mig_profiles": [{**PROFILES[0], "extra": 1}]}, "mig_profiles.0.extra"),
        ({"mig_profiles": [PROFILES[0], PROFILES[0]]}, "mig_profiles"),
        ({"mig_profiles": [PROFILES[0]] * 65}, "mig_profiles"),
        ({"version": 1}, "version"),
        ({"memory_visible_gib": 0}, "memory_visible_gib"),
        ({"memory_visible_gib": -1}, "memory_visible_gib"),
        ({"memory_visible_gib": 120}, "memory_visible_gib"),
        ({"memory_visible_gib": "lots"}, "memory_visible_gib"),
        ({"architecture": "turing"}, "architecture"),
        ({"architecture": "Hopper"}, "architecture"),
    ],
)
def test_an_invalid_gpu_is_422_naming_the_field(client: FlaskClient, changes: dict[str, Any], field: str) -> None:
    response = client.post("/v1/gpus", json={**gpu_body("invalid-gpu"), **changes}, headers=AUTH)
    assert response.status_code == 422, response.get_data(as_text=True)
    assert field in response.get_json()["errors"]


def test_an_unknown_architecture_is_refused_with_the_list_the_service_knows(client: FlaskClient) -> None:
    response = client.post("/v1/gpus", json=gpu_body("turing-gpu", architecture="turing"), headers=AUTH)
    assert response.status_code == 422
    (message,) = response.get_json()["errors"]["architecture"]
    assert "'turing'" in message
    for known in ("ampere", "ampere-gddr", "ada", "hopper", "blackwell", "blackwell-gddr", "cdna3", "cdna4"):
        assert known in message


def test_a_written_gpu_without_architecture_has_it_told_from_its_name_when_planned(client: FlaskClient) -> None:
    body = gpu_body("consumer-4090", name="NVIDIA GeForce RTX 4090", memory_gb=24, mig_profiles=[])
    created = create(client, "gpus", body)
    assert created["architecture"] is None  # stored as written
    fit = client.get("/v1/fit?model=llama-3.1-8b&gpu=consumer-4090&engine=vllm").get_json()
    assert "architecture ada told from the name 'NVIDIA GeForce RTX 4090'" in fit["warnings"]
    # A GeForce card's GDDR has no ECC carve-out: 0.985 of its 24 GB, not an L4's 0.92.
    assert fit["memory_visible_gib"] == pytest.approx(24 * 0.985)
    named = create(client, "gpus", gpu_body("named-arch", architecture="blackwell-gddr", mig_profiles=[]))
    assert named["architecture"] == "blackwell-gddr"


def test_a_gpu_carries_its_visible_memory_and_a_patch_can_clear_it(client: FlaskClient) -> None:
    created = create(client, "gpus", gpu_body("visible-gpu", memory_visible_gib=94.5))
    assert created["memory_visible_gib"] == 94.5
    assert create(client, "gpus", gpu_body("unmeasured-gpu"))["memory_visible_gib"] is None
    response = client.patch(
        "/v1/gpus/visible-gpu", json={"memory_visible_gib": None}, headers={**AUTH, "If-Match": '"1"'}
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["memory_visible_gib"] is None
    # Known without a datasheet figure (a cloud-only variant): accepted.
    body = gpu_body("visible-only", memory_gb=None, memory_visible_gib=22.06, mig_profiles=[])
    assert create(client, "gpus", body)["memory_visible_gib"] == 22.06
    assert (
        client.get("/v1/gpus/visible-only?format=csv")
        .get_data(as_text=True)
        .splitlines()[0]
        .count("memory_visible_gib")
        == 1
    )


def test_a_model_carries_its_quantized_components(client: FlaskClient) -> None:
    created = create(client, "models", model_body("quantized-model", quantized_components=["attention", "dense_mlp"]))
    assert created["quantized_components"] == ["attention", "dense_mlp"]
    assert create(client, "models", model_body("conventional-model"))["quantized_components"] is None
    response = client.patch(
        "/v1/models/quantized-model", json={"quantized_components": None}, headers={**AUTH, "If-Match": '"1"'}
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["quantized_components"] is None


def test_put_replaces_the_mig_profiles_as_a_list(app: Flask, client: FlaskClient) -> None:
    create(client, "gpus", gpu_body("replaced-gpu"))
    body = {k: v for k, v in gpu_body("x").items() if k != "slug"}
    body["mig_profiles"] = [
        {"name": "1g.12gb", "compute_slices": 1, "memory_slices": 1, "memory_gb": 12, "max_instances": 4},
        {"name": "3g.48gb", "compute_slices": 3, "memory_slices": 4, "memory_gb": 48, "max_instances": 2},
    ]
    response = client.put("/v1/gpus/replaced-gpu", json=body, headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["ETag"] == '"2"'
    profiles = {p["name"]: p for p in response.get_json()["mig_profiles"]}
    assert set(profiles) == {"1g.12gb", "3g.48gb"}
    assert profiles["1g.12gb"]["max_instances"] == 4
    with app.extensions["fleet_sizer"]["sessionmaker"]() as db:
        stored = db.scalar(select(func.count()).select_from(MigProfile).where(MigProfile.gpu.has(slug="replaced-gpu")))
    assert stored == 2


def test_changing_only_the_mig_profiles_bumps_the_gpu_etag(client: FlaskClient) -> None:
    create(client, "gpus", gpu_body("profiles-only"))
    response = client.patch(
        "/v1/gpus/profiles-only", json={"mig_profiles": [PROFILES[1]]}, headers={**AUTH, "If-Match": '"1"'}
    )
    assert response.status_code == 200
    assert response.headers["ETag"] == '"2"'
    assert [p["name"] for p in response.get_json()["mig_profiles"]] == ["7g.96gb"]


def test_patch_merges_nested_gpu_objects(client: FlaskClient) -> None:
    create(client, "gpus", gpu_body("nested-patch"))
    response = client.patch(
        "/v1/gpus/nested-patch",
        json={"peak_tflops": {"fp4": 3600}, "interconnect": {"latency_us": 3}},
        headers={**AUTH, "If-Match": '"1"'},
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    assert body["peak_tflops"]["bf16"] == 900 and body["peak_tflops"]["fp4"] == 3600
    assert body["interconnect"] == {"kind": "nvlink4", "bandwidth_gb_per_s": 450.0, "latency_us": 3.0}
    assert len(body["mig_profiles"]) == 2


def test_shrinking_a_card_below_its_mig_slices_is_refused(client: FlaskClient) -> None:
    etag = etag_of(client, "/v1/gpus/h100-sxm")
    response = client.patch("/v1/gpus/h100-sxm", json={"memory_gb": 40}, headers={**AUTH, "If-Match": etag})
    assert response.status_code == 422
    assert any(key.endswith(".memory_gb") for key in response.get_json()["errors"])
    assert client.get("/v1/gpus/h100-sxm").headers["ETag"] == etag


def test_a_gpu_writer_that_loses_the_race_gets_412(client: FlaskClient) -> None:
    create(client, "gpus", gpu_body("raced-gpu"))
    real = writes.update_gpu

    def racing(row: Any, values: dict[str, Any]) -> None:
        g.db_session.connection().execute(text("UPDATE gpus SET version = version + 1 WHERE slug = 'raced-gpu'"))
        real(row, values)

    with mock.patch.object(writes, "update_gpu", racing):
        response = client.patch("/v1/gpus/raced-gpu", json={"name": "loser"}, headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 412
    assert client.get("/v1/gpus/raced-gpu").get_json()["name"] == "Test GPU raced-gpu"


def test_deleting_a_gpu_deletes_its_mig_profiles(app: Flask, client: FlaskClient) -> None:
    create(client, "gpus", gpu_body("deleted-gpu"))
    response = client.delete("/v1/gpus/deleted-gpu", headers={**AUTH, "If-Match": '"1"'})
    assert response.status_code == 204
    assert client.get("/v1/gpus/deleted-gpu").status_code == 404
    with app.extensions["fleet_sizer"]["sessionmaker"]() as db:
        orphans = db.scalar(select(func.count()).select_from(MigProfile).where(~MigProfile.gpu.has()))
    assert orphans == 0


def test_a_duplicate_gpu_slug_is_409(client: FlaskClient) -> None:
    response = client.post("/v1/gpus", json=gpu_body("h100-sxm"), headers=AUTH)
    assert response.status_code == 409


def test_each_kind_has_its_six_named_routes(app: Flask) -> None:
    """The views are registered from one table (app/api/catalog.py); their endpoint names
    and methods are what url_for and clients rely on."""
    routes = {
        (rule.endpoint, rule.rule, method)
        for rule in app.url_map.iter_rules()
        if rule.endpoint.startswith("catalog.")
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}
    }
    for kind, noun, key in (("models", "model", "slug"), ("gpus", "gpu", "slug"), ("engines", "engine", "name")):
        assert {
            (f"catalog.list_{kind}", f"/v1/{kind}", "GET"),
            (f"catalog.create_{noun}", f"/v1/{kind}", "POST"),
            (f"catalog.get_{noun}", f"/v1/{kind}/<{key}>", "GET"),
            (f"catalog.replace_{noun}", f"/v1/{kind}/<{key}>", "PUT"),
            (f"catalog.patch_{noun}", f"/v1/{kind}/<{key}>", "PATCH"),
            (f"catalog.delete_{noun}", f"/v1/{kind}/<{key}>", "DELETE"),
        } <= routes
    assert ("catalog.import_model", "/v1/models/import", "POST") in routes
    assert app.view_functions["catalog.get_gpu"].__doc__ == "One GPU by slug, with its MIG profiles and its ETag."

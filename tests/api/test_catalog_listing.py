"""GET /v1/models and /v1/gpus: filters, pagination, CSV, and the catalog's size."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from flask.testing import FlaskClient

from .helpers import get_ok

MIG_CAPABLE = {
    "h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "h200-nvl", "a100-sxm-40gb", "a100-sxm-80gb",
    "a100-pcie-80gb", "a30", "b200", "gb200", "b300", "rtx-pro-6000",
}  # fmt: skip


def test_the_catalog_lists_at_least_20_models_and_15_gpus(client: FlaskClient) -> None:
    models = get_ok(client, "/v1/models")
    gpus = get_ok(client, "/v1/gpus")
    assert models["total"] >= 20 and len(models["items"]) == models["total"]
    assert gpus["total"] >= 15 and len(gpus["items"]) == gpus["total"]
    assert (models["limit"], models["offset"]) == (100, 0)


def test_every_mig_capable_gpu_shows_its_profiles(client: FlaskClient) -> None:
    gpus = {g["slug"]: g for g in get_ok(client, "/v1/gpus")["items"]}
    for slug in MIG_CAPABLE:
        assert gpus[slug]["mig_profiles"], slug
    assert {g["slug"] for g in get_ok(client, "/v1/gpus", has_mig="true")["items"]} == MIG_CAPABLE


def test_the_two_added_models_are_listed(client: FlaskClient) -> None:
    qwen = get_ok(client, "/v1/models/qwen2.5-7b")
    assert (qwen["params_total"], qwen["kv_heads"], qwen["family"]) == (7_615_616_512, 4, "qwen2")
    llama = get_ok(client, "/v1/models/llama-3.3-70b")
    assert llama["params_total"] == get_ok(client, "/v1/models/llama-3.1-70b")["params_total"]


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"family": "qwen3_moe"}, lambda m: m["family"] == "qwen3_moe"),
        ({"attention": "mla"}, lambda m: m["attention"] == "mla"),
        ({"attention": "mha"}, lambda m: m["kv_heads"] == m["attention_heads"]),
        ({"moe": "true"}, lambda m: m["experts"] is not None),
        ({"moe": "false"}, lambda m: m["experts"] is None),
        ({"min_params": 100_000_000_000}, lambda m: m["params_total"] >= 100e9),
        ({"max_params": 8_000_000_000}, lambda m: m["params_total"] <= 8e9),
        ({"min_params": 7e9, "max_params": 9e9, "moe": "false"}, lambda m: 7e9 <= m["params_total"] <= 9e9),
    ],
)
def test_model_filters_keep_only_matching_models(client: FlaskClient, params: dict[str, Any], check: Any) -> None:
    page = get_ok(client, "/v1/models", **{k: int(v) if isinstance(v, float) else v for k, v in params.items()})
    assert page["items"], params
    assert all(check(m) for m in page["items"])
    assert page["total"] == len(page["items"])


def test_moe_and_dense_partition_the_catalog(client: FlaskClient) -> None:
    everything = get_ok(client, "/v1/models")["total"]
    moe = get_ok(client, "/v1/models", moe="true")["total"]
    dense = get_ok(client, "/v1/models", moe="false")["total"]
    assert moe + dense == everything
    assert moe >= 6


def test_an_unknown_family_matches_nothing(client: FlaskClient) -> None:
    assert get_ok(client, "/v1/models", family="gpt2") == {"items": [], "total": 0, "limit": 100, "offset": 0}


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"vendor": "amd"}, lambda g: g["vendor"] == "amd"),
        ({"min_memory_gb": 141}, lambda g: g["memory_gb"] >= 141),
        ({"has_mig": "false"}, lambda g: not g["mig_profiles"]),
        ({"vendor": "nvidia", "has_mig": "true", "min_memory_gb": 90}, lambda g: g["memory_gb"] >= 90),
    ],
)
def test_gpu_filters_keep_only_matching_gpus(client: FlaskClient, params: dict[str, Any], check: Any) -> None:
    page = get_ok(client, "/v1/gpus", **params)
    assert page["items"]
    assert all(check(g) for g in page["items"])
    assert page["total"] == len(page["items"])


def test_pages_walk_the_whole_list_in_slug_order(client: FlaskClient) -> None:
    everything = [m["slug"] for m in get_ok(client, "/v1/models")["items"]]
    assert everything == sorted(everything)
    walked: list[str] = []
    for offset in range(0, len(everything), 7):
        page = get_ok(client, "/v1/models", limit=7, offset=offset)
        assert (page["total"], page["limit"], page["offset"]) == (len(everything), 7, offset)
        walked.extend(m["slug"] for m in page["items"])
    assert walked == everything
    beyond = get_ok(client, "/v1/models", offset=len(everything))
    assert (beyond["items"], beyond["total"]) == ([], len(everything))


def test_total_counts_matches_not_the_page(client: FlaskClient) -> None:
    page = get_ok(client, "/v1/gpus", vendor="nvidia", limit=2)
    assert len(page["items"]) == 2 and page["total"] > 2


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/v1/models", {"attention": "sparse"}, "attention"),
        ("/v1/models", {"moe": "maybe"}, "moe"),
        ("/v1/models", {"min_params": "lots"}, "min_params"),
        ("/v1/models", {"min_params": -1}, "min_params"),
        ("/v1/models", {"min_params": 10, "max_params": 5}, "max_params"),
        ("/v1/models", {"family": "Not A Family!"}, "family"),
        ("/v1/models", {"limit": 501}, "limit"),
        ("/v1/models", {"limit": 0}, "limit"),
        ("/v1/models", {"offset": -1}, "offset"),
        ("/v1/gpus", {"vendor": "intel"}, "vendor"),
        ("/v1/gpus", {"min_memory_gb": "big"}, "min_memory_gb"),
        ("/v1/gpus", {"has_mig": "yes please"}, "has_mig"),
        ("/v1/gpus", {"limit": 1000}, "limit"),
    ],
)
def test_an_unknown_filter_value_is_422_naming_it(
    client: FlaskClient, path: str, params: dict[str, Any], field: str
) -> None:
    response = client.get(path, query_string=params)
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert field in response.get_json()["errors"]


def test_cache_busters_and_blank_values_are_ignored(client: FlaskClient) -> None:
    page = get_ok(client, "/v1/models", _cachebuster="123", _="1700000000", family="", attention="")
    assert page["total"] == get_ok(client, "/v1/models")["total"]


@pytest.mark.parametrize("path", ["/v1/models", "/v1/gpus", "/v1/engines", "/v1/calibrations"])
def test_an_unknown_or_repeated_list_parameter_is_422_naming_it(client: FlaskClient, path: str) -> None:
    unknown = client.get(path, query_string={"cachebuster": "123"})
    assert unknown.status_code == 422
    assert list(unknown.get_json()["errors"]) == ["cachebuster"]
    repeated = client.get(f"{path}?limit=1&limit=2")
    assert repeated.status_code == 422
    assert list(repeated.get_json()["errors"]) == ["limit"]


def test_csv_lists_one_row_per_item_of_the_page(client: FlaskClient) -> None:
    response = client.get("/v1/gpus", query_string={"format": "csv", "vendor": "nvidia", "limit": 5, "offset": 2})
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    json_page = get_ok(client, "/v1/gpus", vendor="nvidia", limit=5, offset=2)
    assert [r["slug"] for r in rows] == [g["slug"] for g in json_page["items"]]
    assert {"peak_tflops_bf16", "interconnect_kind", "mig_profiles"} <= set(rows[0])


def test_model_csv_follows_the_filters(client: FlaskClient) -> None:
    response = client.get("/v1/models", headers={"Accept": "text/csv"}, query_string={"moe": "true"})
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert {r["slug"] for r in rows} == {m["slug"] for m in get_ok(client, "/v1/models", moe="true")["items"]}
    assert all(r["experts"] for r in rows)


def test_one_model_and_one_gpu_carry_a_strong_etag(client: FlaskClient) -> None:
    for path in ("/v1/models/llama-3.1-8b", "/v1/gpus/h100-sxm"):
        response = client.get(path)
        assert response.headers["ETag"] == f'"{response.get_json()["version"]}"'

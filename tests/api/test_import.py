"""POST /v1/models/import and `flask import-model`: a Hugging Face config.json (and
optionally safetensors headers) in, a catalog model out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.catalog.safetensors_headers import (
    TINY_GPT_OSS,
    TINY_LLAMA,
    dense_header,
    gpt_oss_header,
    requantized,
    write_safetensors,
)
from tests.support import seeded_app

TOKEN = "import-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REPO_ROOT = Path(__file__).resolve().parents[2]
QWEN25_7B = REPO_ROOT / "tests" / "fixtures" / "qwen2.5-7b-instruct.config.json"
CONFIGS_DIR = Path("/work/shared/catalog-facts/sources/configs")
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with seeded_app(tmp_path_factory, "import", api_tokens=(TOKEN,)) as flask_app:
        yield flask_app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def qwen_config() -> dict[str, Any]:
    config: dict[str, Any] = json.loads(QWEN25_7B.read_text())
    return config


def post_import(client: FlaskClient, body: dict[str, Any]) -> Any:
    return client.post("/v1/models/import", json=body, headers=AUTH)


# --------------------------------------------------------------------------- done-when


def test_qwen2_5_7b_imports_with_7_62b_parameters_and_57344_kv_bytes_per_token(client: FlaskClient) -> None:
    response = post_import(client, {"config": qwen_config(), "slug": "qwen2.5-7b-imported"})
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.headers["Location"].endswith("/v1/models/qwen2.5-7b-imported")
    assert response.headers["ETag"] == '"1"'
    body = response.get_json()
    assert body["stored"] is True
    assert body["model"]["params_total"] == pytest.approx(7.62e9, rel=0.005)
    assert body["derivation"]["kv_bytes_per_token"] == 57_344
    stored = client.get("/v1/models/qwen2.5-7b-imported").get_json()
    assert stored == body["model"]
    assert (stored["hf_repo"], stored["family"], stored["native_precision"]) == (
        "Qwen/Qwen2.5-7B-Instruct",
        "qwen2",
        "bf16",
    )
    fit = client.get("/v1/fit", query_string={"model": "qwen2.5-7b-imported", "gpu": "l4", "kv_precision": "bf16"})
    assert fit.status_code == 200, fit.get_data(as_text=True)
    assert fit.get_json()["kv_bytes_per_token"] == 57_344


@pytest.mark.skipif(not CONFIGS_DIR.is_dir(), reason=f"{CONFIGS_DIR} is absent: no shared config copies to import")
def test_every_sourced_config_imports_over_http(client: FlaskClient) -> None:
    import yaml

    facts = yaml.safe_load((CONFIGS_DIR.parents[1] / "models.yaml").read_text())["models"]
    computed = {m["params_computed"] for m in facts}
    for path in sorted(CONFIGS_DIR.glob("*.json")):
        config = json.loads(path.read_text())
        if "model_type" not in config and "architectures" not in config:
            config["model_type"] = "llama"  # the transcribed Llama 3.2 copies name no family
        response = post_import(client, {"config": config, "slug": "x", "dry_run": True})
        assert response.status_code == 200, f"{path.name}: {response.get_data(as_text=True)}"
        assert response.get_json()["model"]["params_total"] in computed, path.name


def test_a_dry_run_stores_nothing(client: FlaskClient) -> None:
    response = post_import(client, {"config": qwen_config(), "slug": "dry-run-only", "dry_run": True})
    assert response.status_code == 200
    body = response.get_json()
    assert (body["stored"], body["model"]["slug"], body["model"]["version"]) == (False, "dry-run-only", None)
    assert "ETag" not in response.headers
    assert client.get("/v1/models/dry-run-only").status_code == 404


def test_the_slug_and_name_default_to_the_repository(client: FlaskClient) -> None:
    body = post_import(client, {"config": qwen_config(), "dry_run": True}).get_json()
    assert (body["model"]["slug"], body["model"]["name"]) == ("qwen2.5-7b-instruct", "Qwen2.5-7B-Instruct")


def test_without_a_repository_a_stored_import_needs_a_slug(client: FlaskClient) -> None:
    config = {k: v for k, v in qwen_config().items() if k != "_name_or_path"}
    response = post_import(client, {"config": config})
    assert response.status_code == 422
    assert response.get_json()["errors"] == {"slug": ["required"]}
    dry = post_import(client, {"config": config, "dry_run": True})
    assert dry.status_code == 200 and dry.get_json()["model"]["slug"] is None


def test_importing_a_taken_slug_is_409(client: FlaskClient) -> None:
    response = post_import(client, {"config": qwen_config(), "slug": "qwen2.5-7b"})
    assert response.status_code == 409
    assert client.get("/v1/models/qwen2.5-7b").get_json()["name"] == "Qwen2.5 7B Instruct"


# --------------------------------------------------------------------------- bad configs


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({k: v for k, v in TINY_LLAMA.items() if k != "num_hidden_layers"}, "config.num_hidden_layers"),
        ({**TINY_LLAMA, "hidden_size": "64"}, "config.hidden_size"),
        ({**TINY_LLAMA, "model_type": "t5"}, "config.model_type"),
        ({"model_type": "gemma3", "text_config": {"num_hidden_layers": 2}}, "config.text_config.hidden_size"),
        ({"model_type": "gemma3"}, "config.text_config"),
        ({**TINY_LLAMA, "model_type": "deepseek_v3"}, "config.kv_lora_rank"),
        ({**TINY_LLAMA, "model_type": "qwen3_moe"}, "config.num_experts"),
    ],
)
def test_a_config_missing_a_needed_field_is_422_naming_it(
    client: FlaskClient, config: dict[str, Any], field: str
) -> None:
    response = post_import(client, {"config": config, "slug": "bad-config"})
    assert response.status_code == 422, response.get_data(as_text=True)
    assert field in response.get_json()["errors"]
    assert client.get("/v1/models/bad-config").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"config": [1, 2]}, "config"),
        ({}, "config"),
        ({"config": TINY_LLAMA, "layers": 3}, "layers"),
        ({"config": TINY_LLAMA, "slug": "Bad Slug"}, "slug"),
        ({"config": TINY_LLAMA, "dry_run": "perhaps"}, "dry_run"),
        ({"config": TINY_LLAMA, "safetensors_header": [1]}, "safetensors_header"),
    ],
)
def test_a_malformed_request_is_422_naming_the_field(client: FlaskClient, body: dict[str, Any], field: str) -> None:
    response = post_import(client, body)
    assert response.status_code == 422
    assert field in response.get_json()["errors"]


# --------------------------------------------------------------------------- safetensors


def test_a_header_gives_the_exact_count_that_is_stored(client: FlaskClient) -> None:
    response = post_import(
        client, {"config": TINY_LLAMA, "slug": "tiny-with-header", "safetensors_header": dense_header(TINY_LLAMA)}
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    header = body["derivation"]["safetensors"]
    assert header["params_total"] == body["derivation"]["params_total_from_config"] == body["model"]["params_total"]
    assert header["bytes_by_dtype"] == {"BF16": 2 * header["params_total"]}
    assert "exact, from the safetensors header" in body["model"]["source"]


def test_when_header_and_config_disagree_the_header_wins_and_says_so(client: FlaskClient) -> None:
    header = dense_header({**TINY_LLAMA, "intermediate_size": 256})
    body = post_import(client, {"config": TINY_LLAMA, "dry_run": True, "safetensors_header": header}).get_json()
    assert body["model"]["params_total"] == body["derivation"]["safetensors"]["params_total"]
    assert body["model"]["params_total"] != body["derivation"]["params_total_from_config"]
    assert any("header holds" in note for note in body["derivation"]["assumptions"])


def test_mxfp4_blocks_and_scales_are_reported_as_stored(client: FlaskClient) -> None:
    body = post_import(
        client,
        {"config": TINY_GPT_OSS, "slug": "x", "dry_run": True, "safetensors_header": gpt_oss_header(TINY_GPT_OSS)},
    ).get_json()
    header = body["derivation"]["safetensors"]
    assert header["params_total"] == body["derivation"]["params_total_from_config"]
    assert header["mxfp4_packed_bytes"] > 0 and header["quantization_scale_bytes"] > 0
    assert header["bytes_by_dtype"]["U8"] == header["mxfp4_packed_bytes"] + header["quantization_scale_bytes"]
    assert body["model"]["native_precision"] == "mxfp4"


def test_an_index_with_one_header_per_shard_is_summed(client: FlaskClient) -> None:
    header = dense_header(TINY_LLAMA)
    names = [k for k in header if k != "__metadata__"]
    shards = {"a.safetensors": names[:4], "b.safetensors": names[4:]}
    index = {
        "weight_map": {name: shard for shard, tensors in shards.items() for name in tensors},
        "headers": {shard: {name: header[name] for name in tensors} for shard, tensors in shards.items()},
    }
    body = post_import(client, {"config": TINY_LLAMA, "slug": "x", "dry_run": True, "safetensors_header": index})
    summary = body.get_json()["derivation"]["safetensors"]
    assert (summary["shards"], summary["params_total"]) == (
        2,
        body.get_json()["derivation"]["params_total_from_config"],
    )


@pytest.mark.parametrize(
    ("tamper", "field"),
    [
        (lambda h: h.update({"bad": {"dtype": "F32", "shape": [4], "data_offsets": [0, 3]}}), "safetensors_header.bad"),
        (lambda h: h.update({"bad": "tensor"}), "safetensors_header.bad"),
        (lambda h: h.clear(), "safetensors_header"),
    ],
)
def test_a_malformed_header_is_422_naming_it(client: FlaskClient, tamper: Any, field: str) -> None:
    header = dense_header(TINY_LLAMA)
    tamper(header)
    response = post_import(client, {"config": TINY_LLAMA, "slug": "x", "safetensors_header": header})
    assert response.status_code == 422
    (name,) = response.get_json()["errors"]
    assert name.startswith(field)


def test_a_header_over_16_mib_is_413_naming_it(client: FlaskClient) -> None:
    header = dense_header(TINY_LLAMA)
    header["__metadata__"] = {"padding": "x" * (16 * MIB + 100)}
    response = post_import(client, {"config": TINY_LLAMA, "slug": "x", "safetensors_header": header})
    assert response.status_code == 413
    assert "safetensors_header" in response.get_json()["errors"]


def test_a_body_over_the_import_cap_is_413(client: FlaskClient) -> None:
    response = post_import(client, {"config": TINY_LLAMA, "padding": "x" * (18 * MIB)})
    assert response.status_code == 413
    assert response.mimetype == "application/problem+json"


def test_an_import_may_exceed_the_service_wide_body_cap(client: FlaskClient) -> None:
    header = dense_header(TINY_LLAMA)
    header["__metadata__"] = {"padding": "x" * (2 * MIB)}
    response = post_import(client, {"config": TINY_LLAMA, "slug": "x", "dry_run": True, "safetensors_header": header})
    assert response.status_code == 200
    # Elsewhere the 1 MiB cap still holds.
    assert client.post("/v1/models", json={"padding": "x" * (2 * MIB)}, headers=AUTH).status_code == 413


# --------------------------------------------------------------------------- CLI


def test_the_cli_dry_run_prints_the_derived_model(app: Flask) -> None:
    result = app.test_cli_runner().invoke(args=["import-model", str(QWEN25_7B), "--dry-run"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["stored"] is False
    assert printed["model"]["params_total"] == 7_615_616_512
    assert printed["derivation"]["kv_bytes_per_token"] == 57_344


def test_the_cli_stores_a_model_with_the_header_of_a_safetensors_file(app: Flask, tmp_path: Path) -> None:
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(TINY_LLAMA))
    weights = tmp_path / "model.safetensors"
    write_safetensors(weights, dense_header(TINY_LLAMA))
    result = app.test_cli_runner().invoke(
        args=[
            "import-model",
            str(config_path),
            "--safetensors-header",
            str(weights),
            "--slug",
            "cli-tiny",
            "--name",
            "Tiny",
        ]
    )
    assert result.exit_code == 0, result.output
    stored = app.test_client().get("/v1/models/cli-tiny").get_json()
    assert (stored["name"], stored["params_total"]) == ("Tiny", json.loads(result.stdout)["model"]["params_total"])
    assert "exact, from the safetensors header" in stored["source"]
    again = app.test_cli_runner().invoke(args=["import-model", str(config_path), "--slug", "cli-tiny"])
    assert again.exit_code != 0 and "already exists" in again.output


def test_the_cli_names_the_field_a_config_lacks(app: Flask, tmp_path: Path) -> None:
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps({k: v for k, v in TINY_LLAMA.items() if k != "vocab_size"}))
    result = app.test_cli_runner().invoke(args=["import-model", str(config_path), "--slug", "cli-bad"])
    assert result.exit_code != 0
    assert "config.vocab_size" in result.output


def test_the_cli_refuses_a_file_that_is_not_json(app: Flask, tmp_path: Path) -> None:
    config_path = tmp_path / "config.json"
    config_path.write_text("{not json")
    result = app.test_cli_runner().invoke(args=["import-model", str(config_path), "--dry-run"])
    assert result.exit_code != 0 and "config" in result.output


# --------------------------------------------------------------------------- quantized components


def fp8_ignoring(ignore: list[str]) -> dict[str, Any]:
    """An llm-compressor FP8 (W8A8) quantization_config with this ignore list."""
    weights = {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True}
    return {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}},
        "ignore": ignore,
    }


def test_an_ignore_list_is_stored_as_quantized_components_and_read_back(client: FlaskClient) -> None:
    config = {**TINY_LLAMA, "quantization_config": fp8_ignoring(["lm_head", "re:.*self_attn.*"])}
    response = post_import(client, {"config": config, "slug": "tiny-fp8-attention-bf16"})
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    assert (body["model"]["native_precision"], body["model"]["quantized_components"]) == ("fp8", ["dense_mlp"])
    source = "quantized_components dense_mlp: from config.json quantization_config.ignore"
    assert any(note.startswith(source) for note in body["derivation"]["assumptions"])
    stored = client.get("/v1/models/tiny-fp8-attention-bf16").get_json()
    assert stored["quantized_components"] == ["dense_mlp"]
    assert source in stored["notes"]
    # Planning under an engine weighs the attention in bf16, the MLP in fp8.
    fit = client.get(
        "/v1/fit",
        query_string={
            "model": "tiny-fp8-attention-bf16",
            "gpu": "h100-sxm",
            "engine": "vllm",
            "weight_precision": "fp8",
        },
    )
    assert fit.status_code == 200, fit.get_data(as_text=True)
    components = fit.get_json()["weights_by_component_bytes"]
    h, heads, kv, layers, width = 64, 8, 2, 2, 176
    attention = layers * h * (2 * heads * (h // heads) + 2 * kv * (h // heads))
    assert components["attention"] == 2 * attention
    assert components["dense_mlp"] < 1.01 * layers * 3 * h * width


def test_an_ignore_list_that_matches_the_convention_is_stored_null_and_says_so(client: FlaskClient) -> None:
    config = {**TINY_LLAMA, "quantization_config": fp8_ignoring(["lm_head"])}
    body = post_import(client, {"config": config, "slug": "x", "dry_run": True}).get_json()
    assert body["model"]["quantized_components"] is None
    assert any("null (the fp8 convention" in note for note in body["derivation"]["assumptions"])


def test_the_header_dtypes_beat_the_ignore_list(client: FlaskClient) -> None:
    config = {**TINY_LLAMA, "quantization_config": fp8_ignoring(["lm_head"])}
    header = requantized(dense_header(TINY_LLAMA), "F8_E4M3", lambda name: ".mlp." in name)
    body = post_import(client, {"config": config, "slug": "x", "dry_run": True, "safetensors_header": header})
    assert body.status_code == 200, body.get_data(as_text=True)
    answer = body.get_json()
    assert answer["model"]["quantized_components"] == ["dense_mlp"]
    assert any("from the safetensors header's dtypes" in note for note in answer["derivation"]["assumptions"])
    assert any("the header's dtypes are used" in note for note in answer["derivation"]["assumptions"])


def test_a_malformed_ignore_list_is_422_naming_it(client: FlaskClient) -> None:
    config = {**TINY_LLAMA, "quantization_config": fp8_ignoring("lm_head")}  # type: ignore[arg-type]
    response = post_import(client, {"config": config, "slug": "x"})
    assert response.status_code == 422
    assert "config.quantization_config.ignore" in response.get_json()["errors"]


def test_a_header_far_short_of_the_config_is_taken_for_one_shard_and_the_config_kept(client: FlaskClient) -> None:
    # Half the tensors: what one shard of a two-shard checkpoint holds.
    header = dense_header(TINY_LLAMA)
    names = [k for k in header if k != "__metadata__"]
    one_shard = {name: header[name] for name in names[: len(names) // 2]}
    body = post_import(client, {"config": TINY_LLAMA, "dry_run": True, "slug": "x", "safetensors_header": one_shard})
    derivation = body.get_json()["derivation"]
    from_config, from_header = derivation["params_total_from_config"], derivation["safetensors"]["params_total"]
    assert from_header < 0.95 * from_config
    assert body.get_json()["model"]["params_total"] == from_config
    assert "computed from the config fields" in body.get_json()["model"]["source"]
    [warning] = derivation["warnings"]
    assert f"the header holds {from_header:,} parameters, the config implies {from_config:,}" in warning
    assert "one shard of several" in warning


def test_a_header_far_above_the_config_is_stored_with_a_warning(client: FlaskClient) -> None:
    header = dense_header({**TINY_LLAMA, "intermediate_size": 256})
    derivation = post_import(client, {"config": TINY_LLAMA, "dry_run": True, "safetensors_header": header}).get_json()[
        "derivation"
    ]
    assert derivation["safetensors"]["params_total"] > 1.05 * derivation["params_total_from_config"]
    [warning] = derivation["warnings"]
    assert "the config does not describe" in warning


def test_an_agreeing_header_warns_of_nothing(client: FlaskClient) -> None:
    header = dense_header(TINY_LLAMA)
    body = post_import(client, {"config": TINY_LLAMA, "dry_run": True, "slug": "x", "safetensors_header": header})
    assert body.get_json()["derivation"]["warnings"] == []

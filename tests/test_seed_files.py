"""Consistency checks for the seed catalog files in catalog_seed/ (format: catalog_seed/SCHEMA.md).

Reads the YAML directly with pyyaml + stdlib only, so it runs without the app or a database.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

SEED_DIR = Path(__file__).resolve().parent.parent / "catalog_seed"

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")

MODEL_FIELDS = {
    "slug",
    "name",
    "family",
    "hf_repo",
    "params_total",
    "params_active",
    "layers",
    "hidden_size",
    "attention_heads",
    "kv_heads",
    "head_dim",
    "attention",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_window",
    "sliding_window_layers",
    "experts",
    "experts_per_token",
    "shared_experts",
    "expert_params",
    "vocab_size",
    "intermediate_size",
    "moe_intermediate_size",
    "tie_word_embeddings",
    "native_precision",
    "max_context",
    "license",
    "source",
    "notes",
}
GPU_FIELDS = {
    "slug",
    "name",
    "vendor",
    "architecture",
    "form_factor",
    "memory_gb",
    "memory_bandwidth_tb_per_s",
    "peak_tflops",
    "native_precisions",
    "interconnect",
    "gpus_per_node",
    "host_cpu_cores",
    "hourly_price_usd",
    "price_date",
    "source",
    "confidence",
    "notes",
    "mig_profiles",
}
PRECISION_FIELDS = {"name", "bits", "bytes_per_param", "kind", "block_scaled", "source"}
MIG_FIELDS = {"name", "compute_slices", "memory_slices", "memory_gb", "max_instances"}
PEAK_KEYS = {"bf16", "fp16", "fp8", "int8", "fp4"}
PRECISION_VOCAB = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "fp4", "nvfp4", "mxfp4", "int4"}
CONFIDENCE = {"primary", "vendor-transcribed", "secondary", "derived", None}

# KV-cache bytes per token at bf16, as stated in /work/shared/catalog-facts/NOTES.md ("KV bytes per token")
# and the `kv_bytes_per_token_bf16` cross-checks of catalog-facts/models.yaml (tools/compute.py asserts the
# first three; DeepSeek-V3 is the MLA figure 61 x (512 + 64) x 2).
KV_BYTES_PER_TOKEN_FROM_FACTS = {
    "llama-3.1-8b": 131_072,
    "llama-2-7b": 524_288,
    "llama-3.1-70b": 327_680,  # facts: "Llama 3 70B 327,680" - same geometry as Llama 3.1 70B
    "deepseek-v3": 70_272,
}
# The other models' kv_bytes_per_token_bf16 from catalog-facts/models.yaml (derived there from the configs;
# sliding-window models: the naive all-layers figure).
KV_BYTES_PER_TOKEN_OTHERS = {
    "llama-2-70b": 327_680,
    "llama-3.1-405b": 516_096,
    "llama-3.2-1b": 32_768,
    "llama-3.2-3b": 114_688,
    "mistral-7b": 131_072,
    "mixtral-8x7b": 131_072,
    "qwen3-8b": 147_456,
    "qwen3-32b": 262_144,
    "qwen3-30b-a3b": 98_304,
    "qwen3-235b-a22b": 192_512,
    "gpt-oss-20b": 49_152,
    "gpt-oss-120b": 73_728,
    "gemma-3-27b": 507_904,
    "phi-4": 204_800,
}

# GPUs whose facts carry a MIG profile table (catalog-facts/gpus.yaml `mig.profiles`).
MIG_GPUS = {
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h200-sxm",
    "h200-nvl",
    "a100-sxm-40gb",
    "a100-sxm-80gb",
    "a100-pcie-80gb",
    "a30",
    "b200",
    "gb200",
    "b300",
    "rtx-pro-6000",
}


def _load(name: str, key: str) -> list[dict]:
    with open(SEED_DIR / name, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    assert isinstance(data, dict) and isinstance(data.get(key), list), f"{name}: top-level `{key}:` list"
    return data[key]


@pytest.fixture(scope="module")
def models() -> list[dict]:
    return _load("models.yaml", "models")


@pytest.fixture(scope="module")
def gpus() -> list[dict]:
    return _load("gpus.yaml", "gpus")


@pytest.fixture(scope="module")
def precisions() -> list[dict]:
    return _load("precisions.yaml", "precisions")


def _by_slug(entries: list[dict]) -> dict[str, dict]:
    return {e["slug"]: e for e in entries}


def kv_bytes_per_token(m: dict, dtype_bytes: int = 2) -> int:
    if m["attention"] == "mla":
        return m["layers"] * (m["kv_lora_rank"] + m["qk_rope_head_dim"]) * dtype_bytes
    return 2 * m["layers"] * m["kv_heads"] * m["head_dim"] * dtype_bytes


# --------------------------------------------------------------------------- shared


@pytest.mark.parametrize("fname,key,minimum", [("models.yaml", "models", 18), ("gpus.yaml", "gpus", 20)])
def test_counts(fname: str, key: str, minimum: int) -> None:
    assert len(_load(fname, key)) >= minimum


@pytest.mark.parametrize("fname,key", [("models.yaml", "models"), ("gpus.yaml", "gpus")])
def test_slugs_unique_and_well_formed(fname: str, key: str) -> None:
    slugs = [e.get("slug") for e in _load(fname, key)]
    assert len(slugs) == len(set(slugs)), "duplicate slugs"
    for s in slugs:
        assert isinstance(s, str) and SLUG_RE.match(s), f"bad slug {s!r}"


@pytest.mark.parametrize(
    "fname,key,fields",
    [
        ("models.yaml", "models", MODEL_FIELDS),
        ("gpus.yaml", "gpus", GPU_FIELDS),
        ("precisions.yaml", "precisions", PRECISION_FIELDS),
    ],
)
def test_required_fields_and_source(fname: str, key: str, fields: set[str]) -> None:
    for e in _load(fname, key):
        label = e.get("slug") or e.get("name")
        missing = fields - e.keys()
        assert not missing, f"{fname} {label}: missing {sorted(missing)}"
        assert isinstance(e["source"], str) and e["source"].strip(), f"{fname} {label}: empty source"


# --------------------------------------------------------------------------- models


def test_expected_model_slugs(models: list[dict]) -> None:
    expected = set(KV_BYTES_PER_TOKEN_FROM_FACTS) | set(KV_BYTES_PER_TOKEN_OTHERS)
    assert len(expected) == 18
    assert expected <= set(_by_slug(models))


@pytest.mark.parametrize("slug,expected", sorted(KV_BYTES_PER_TOKEN_FROM_FACTS.items()))
def test_kv_bytes_per_token_matches_facts(models: list[dict], slug: str, expected: int) -> None:
    assert kv_bytes_per_token(_by_slug(models)[slug]) == expected


@pytest.mark.parametrize("slug,expected", sorted(KV_BYTES_PER_TOKEN_OTHERS.items()))
def test_kv_bytes_per_token_other_models(models: list[dict], slug: str, expected: int) -> None:
    assert kv_bytes_per_token(_by_slug(models)[slug]) == expected


def test_model_field_types(models: list[dict]) -> None:
    ints = (
        "params_total",
        "params_active",
        "layers",
        "hidden_size",
        "attention_heads",
        "kv_heads",
        "head_dim",
        "vocab_size",
        "max_context",
        "sliding_window_layers",
    )
    for m in models:
        for f in ints:
            assert isinstance(m[f], int) and not isinstance(m[f], bool) and m[f] >= 0, (m["slug"], f)
        assert isinstance(m["tie_word_embeddings"], bool), m["slug"]
        assert m["attention"] in {"mha", "gqa", "mla"}, m["slug"]
        assert 0 < m["params_active"] <= m["params_total"], m["slug"]


def test_attention_kind_and_heads(models: list[dict]) -> None:
    for m in models:
        if m["attention"] == "mla":
            assert m["kv_lora_rank"] and m["qk_rope_head_dim"], m["slug"]
            continue
        assert m["kv_lora_rank"] is None and m["qk_rope_head_dim"] is None, m["slug"]
        assert m["attention_heads"] % m["kv_heads"] == 0, m["slug"]
        expected = "mha" if m["kv_heads"] == m["attention_heads"] else "gqa"
        assert m["attention"] == expected, m["slug"]


def test_sliding_window(models: list[dict]) -> None:
    by = _by_slug(models)
    for m in models:
        assert 0 <= m["sliding_window_layers"] <= m["layers"], m["slug"]
        if m["sliding_window"] is None:
            assert m["sliding_window_layers"] == 0, m["slug"]
        else:
            assert m["sliding_window"] > 0 and m["sliding_window_layers"] > 0, m["slug"]
    # facts: gpt-oss windows every other layer at 128; Gemma 3 27B 5 local (1024) per global; Mistral all at 4096
    assert (by["gpt-oss-120b"]["sliding_window"], by["gpt-oss-120b"]["sliding_window_layers"]) == (128, 18)
    assert (by["gpt-oss-20b"]["sliding_window"], by["gpt-oss-20b"]["sliding_window_layers"]) == (128, 12)
    assert (by["gemma-3-27b"]["sliding_window"], by["gemma-3-27b"]["sliding_window_layers"]) == (1024, 52)
    assert (by["mistral-7b"]["sliding_window"], by["mistral-7b"]["sliding_window_layers"]) == (4096, 32)


def test_moe_active_params(models: list[dict]) -> None:
    moe = [m for m in models if m["experts"] is not None]
    assert {m["slug"] for m in moe} >= {
        "mixtral-8x7b",
        "qwen3-30b-a3b",
        "qwen3-235b-a22b",
        "deepseek-v3",
        "gpt-oss-20b",
        "gpt-oss-120b",
    }
    for m in moe:
        e, k = m["experts"], m["experts_per_token"]
        assert isinstance(e, int) and isinstance(k, int) and 0 < k <= e, m["slug"]
        assert isinstance(m["expert_params"], int) and 0 < m["expert_params"] < m["params_total"], m["slug"]
        active = Fraction(m["params_total"]) - Fraction(m["expert_params"]) * (1 - Fraction(k, e))
        assert active == m["params_active"], m["slug"]


def test_moe_active_params_stated_figures(models: list[dict]) -> None:
    by = _by_slug(models)
    # catalog-facts/models.yaml active_params_computed (our convention, embedding + lm_head included)
    assert by["deepseek-v3"]["params_active"] == 37_552_297_472
    assert by["qwen3-30b-a3b"]["params_active"] == 3_353_032_704


def test_dense_models_have_no_expert_fields(models: list[dict]) -> None:
    for m in models:
        if m["experts"] is None:
            assert m["experts_per_token"] is None and m["expert_params"] is None, m["slug"]
            assert m["params_active"] == m["params_total"], m["slug"]


def test_model_precisions_are_catalogued(models: list[dict], precisions: list[dict]) -> None:
    names = {p["name"] for p in precisions}
    for m in models:
        assert m["native_precision"] is None or m["native_precision"] in names, m["slug"]


# --------------------------------------------------------------------------- GPUs


def test_expected_gpu_slugs(gpus: list[dict]) -> None:
    expected = {
        "h100-sxm",
        "h100-pcie",
        "h100-nvl",
        "h200-sxm",
        "h200-nvl",
        "a100-sxm-40gb",
        "a100-sxm-80gb",
        "a100-pcie-80gb",
        "a30",
        "l4",
        "l40s",
        "a10",
        "a10g",
        "b200",
        "gb200",
        "b300",
        "rtx-pro-6000",
        "mi300x",
        "mi325x",
        "mi355x",
    }
    assert expected <= set(_by_slug(gpus))


def test_gpu_fields(gpus: list[dict]) -> None:
    for g in gpus:
        s = g["slug"]
        assert g["vendor"] in {"nvidia", "amd"}, s
        assert g["confidence"] in CONFIDENCE, s
        assert isinstance(g["peak_tflops"], dict) and set(g["peak_tflops"]) <= PEAK_KEYS, s
        for v in g["peak_tflops"].values():
            assert v is None or v > 0, s
        if g["native_precisions"] is not None:
            assert set(g["native_precisions"]) <= PRECISION_VOCAB, s
        ic = g["interconnect"]
        assert set(ic) == {"kind", "bandwidth_gb_per_s", "latency_us"}, s
        assert isinstance(g["gpus_per_node"], int) and g["gpus_per_node"] >= 1, s
        if g["memory_gb"] is not None:
            assert g["memory_gb"] > 0, s
        if g["hourly_price_usd"] is not None:
            assert g["hourly_price_usd"] > 0 and re.match(r"^\d{4}-\d{2}$", g["price_date"]), s


def test_nvlink_bandwidth_is_per_direction(gpus: list[dict]) -> None:
    by = _by_slug(gpus)
    assert by["h100-sxm"]["interconnect"]["bandwidth_gb_per_s"] == 450  # NVIDIA prints 900 GB/s bidirectional
    assert by["b200"]["interconnect"]["bandwidth_gb_per_s"] == 900  # 1.8 TB/s bidirectional
    assert by["h100-sxm"]["host_cpu_cores"] == 14  # seed 002


def test_mig_profiles(gpus: list[dict]) -> None:
    for g in gpus:
        assert isinstance(g["mig_profiles"], list), g["slug"]
        names = [p["name"] for p in g["mig_profiles"]]
        assert len(names) == len(set(names)), g["slug"]
        for p in g["mig_profiles"]:
            assert set(p) == MIG_FIELDS, (g["slug"], p)
            assert 1 <= p["compute_slices"] <= 7, (g["slug"], p["name"])
            assert 1 <= p["memory_slices"] <= 8, (g["slug"], p["name"])
            assert p["max_instances"] >= 1, (g["slug"], p["name"])
            assert g["memory_gb"] is not None and p["memory_gb"] <= g["memory_gb"], (g["slug"], p["name"])


def test_mig_capable_gpus_have_profiles(gpus: list[dict]) -> None:
    by = _by_slug(gpus)
    for slug in MIG_GPUS:
        assert by[slug]["mig_profiles"], slug
    h100 = {p["name"]: p for p in by["h100-sxm"]["mig_profiles"]}
    assert h100["1g.10gb"]["max_instances"] == 7
    a100 = {p["name"]: p for p in by["a100-sxm-80gb"]["mig_profiles"]}
    assert "7g.80gb" in a100 and a100["7g.80gb"]["memory_slices"] == 8


# --------------------------------------------------------------------------- precisions


def test_precisions(precisions: list[dict]) -> None:
    by = {p["name"]: p for p in precisions}
    assert len(by) == len(precisions)
    expected_bytes = {
        "fp32": 4,
        "fp16": 2,
        "bf16": 2,
        "fp8": 1,
        "int8": 1,
        "int4": 0.5,
        "fp4": 0.5,
        "nvfp4": 0.5,
        "mxfp4": 0.5,
    }
    for name, b in expected_bytes.items():
        assert by[name]["bytes_per_param"] == b, name
    for p in precisions:
        assert p["kind"] in {"float", "int"}, p["name"]
        assert isinstance(p["block_scaled"], bool), p["name"]
        assert p["bytes_per_param"] == p["bits"] / 8, p["name"]
    assert by["nvfp4"]["block_scaled"] and by["mxfp4"]["block_scaled"]


def test_visible_memory_when_given_is_a_little_under_the_datasheet(gpus: list[dict]) -> None:
    for g in gpus:
        visible = g.get("memory_visible_gib")
        if visible is None:
            continue
        assert isinstance(visible, int | float) and visible > 0, g["slug"]
        # The datasheet's "GB" is binary in practice: visible GiB a little under it, never far above.
        if g["memory_gb"] is not None:
            assert visible <= g["memory_gb"] * 1.1, g["slug"]


# --------------------------------------------------------------------------- quantized components

QUANTIZABLE_COMPONENTS = {"attention", "dense_mlp", "experts", "embeddings", "lm_head"}


def test_quantized_components_when_given_are_known_and_unique(models: list[dict]) -> None:
    for m in models:
        components = m.get("quantized_components")
        if components is None:
            continue
        assert isinstance(components, list) and set(components) <= QUANTIZABLE_COMPONENTS, m["slug"]
        assert len(components) == len(set(components)), m["slug"]
        if m["experts"] is None:
            assert "experts" not in components, m["slug"]


# --------------------------------------------------------------------------- engines

# app.sizing.engine.EngineProfile's fields, which engines.yaml spells exactly.
ENGINE_REQUIRED = {
    "name",
    "display_name",
    "version",
    "kv_rule",
    "gpu_memory_utilization",
    "max_batched_tokens",
    "max_num_seqs",
    "block_size",
    "source",
}
ENGINE_OPTIONAL = {
    "large_gpu_gib",
    "max_batched_tokens_large_gpu",
    "max_num_seqs_large_gpu",
    "activation_bytes_per_token_hidden",
    "activation_bytes_per_token_expert_hidden",
    "logits_bytes_per_vocab_entry",
    "non_torch_gib",
    "non_torch_gib_per_extra_rank",
    "cuda_graph_gib",
    "cuda_graph_in_budget",
    "engine_buffers_gib",
    "step_overhead_ms",
    "layer_overhead_us",
    "sequence_overhead_us",
    "collective_latency_us",
    "expert_overhead_us",
    "mla_layer_overhead_us",
    "ttft_overhead_ms",
    "efficiencies",
    "uncertainty",
    "fitted_on",
    "notes",
}
KV_RULES = {"util_of_visible", "static_fraction", "fraction_of_free"}
UNCERTAINTY_RANGES = ("time_per_token", "ttft", "tokens_per_s", "kv_capacity_tokens")


@pytest.fixture(scope="module")
def engines() -> list[dict]:
    return _load("engines.yaml", "engines")


def test_engines_have_their_fields_and_a_source(engines: list[dict]) -> None:
    assert engines, "engines.yaml lists no engine"
    names = [e.get("name") for e in engines]
    assert len(names) == len(set(names)), "duplicate engine names"
    assert "vllm" in names, "the default engine (vllm) must be seeded"
    for e in engines:
        label = e.get("name")
        assert isinstance(label, str) and SLUG_RE.match(label) and label != "ideal", f"bad engine name {label!r}"
        assert e.keys() >= ENGINE_REQUIRED, f"{label}: missing {sorted(ENGINE_REQUIRED - e.keys())}"
        assert e.keys() <= ENGINE_REQUIRED | ENGINE_OPTIONAL, (
            f"{label}: unknown {sorted(e.keys() - ENGINE_REQUIRED - ENGINE_OPTIONAL)}"
        )
        assert isinstance(e["source"], str) and e["source"].strip(), f"{label}: empty source"
        assert isinstance(e["version"], str), f"{label}: quote the version (YAML reads 0.10 as 0.1)"


def test_engine_settings_are_in_range(engines: list[dict]) -> None:
    for e in engines:
        label = e["name"]
        assert e["kv_rule"] in KV_RULES, label
        assert 0 < e["gpu_memory_utilization"] <= 1, label
        for field in ("max_batched_tokens", "max_num_seqs", "block_size"):
            assert isinstance(e[field], int) and not isinstance(e[field], bool) and e[field] > 0, (label, field)
        for field in ("max_batched_tokens_large_gpu", "max_num_seqs_large_gpu"):
            if e.get(field) is not None:
                assert e.get("large_gpu_gib") is not None and e[field] > 0, (label, field)
        for field in ENGINE_OPTIONAL - {"efficiencies", "uncertainty", "fitted_on", "notes", "cuda_graph_in_budget"}:
            value = e.get(field)
            assert value is None or (isinstance(value, int | float) and value >= 0), (label, field)


def test_engine_efficiencies_name_catalogued_architectures(engines: list[dict], gpus: list[dict]) -> None:
    architectures = {g["architecture"] for g in gpus if g.get("architecture")} | {"*"}
    for e in engines:
        rows = e.get("efficiencies") or []
        names = [row["architecture"] for row in rows]
        assert len(names) == len(set(names)), e["name"]
        assert set(names) <= architectures, (e["name"], sorted(set(names) - architectures))
        for row in rows:
            assert row.keys() <= {"architecture", "memory", "compute", "moe_memory"}, (e["name"], row)
            for share in ("memory", "compute", "moe_memory"):
                if share in row or share != "moe_memory":
                    assert 0 < row[share] <= 1, (e["name"], row["architecture"], share)


def test_engine_uncertainty_ranges_are_ordered(engines: list[dict]) -> None:
    for e in engines:
        uncertainty = e.get("uncertainty") or {}
        assert uncertainty.keys() <= {*UNCERTAINTY_RANGES, "rows", "unseen_widening"}, e["name"]
        for metric in UNCERTAINTY_RANGES:
            if metric in uncertainty:
                low, high = uncertainty[metric]
                assert 0 < low <= high, (e["name"], metric)
        for metric, rows in (uncertainty.get("rows") or {}).items():
            assert isinstance(rows, int) and rows >= 0, (e["name"], metric)
        assert uncertainty.get("unseen_widening", 1.5) >= 1, e["name"]
        for constant, rows in (e.get("fitted_on") or {}).items():
            assert isinstance(constant, str) and isinstance(rows, str), (e["name"], constant)

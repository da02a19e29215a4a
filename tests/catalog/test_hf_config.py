"""app.catalog.hf_config on its own: configs to catalog fields and parameter counts, and the
quantized components a quantization_config or a safetensors header says (with
checkpoint_components, which names the module each tensor belongs to). No database, no
Flask; the header counts themselves are test_safetensors_header.py's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.catalog import hf_config
from app.catalog.checkpoint_components import module_scope, tensor_component
from app.catalog.hf_config import HFConfigError, derive, settle_quantized_components
from app.catalog.safetensors_header import read_header_components, summarise_header
from app.sizing.memory import COMPONENTS

from .safetensors_headers import (
    TINY_GPT_OSS,
    TINY_LLAMA,
    dense_header,
    gpt_oss_header,
    requantized,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
FACTS_DIR = Path("/work/shared/catalog-facts")
CONFIGS_DIR = FACTS_DIR / "sources" / "configs"
QWEN25_7B = REPO_ROOT / "tests" / "fixtures" / "qwen2.5-7b-instruct.config.json"
SEED_MODELS = REPO_ROOT / "catalog_seed" / "models.yaml"


def _config_files() -> list[Path]:
    return sorted(CONFIGS_DIR.glob("*.json")) if CONFIGS_DIR.is_dir() else []


def _facts_entry(config_file: Path, facts: list[dict[str, Any]]) -> dict[str, Any]:
    """The facts entry a sources/configs copy belongs to: by repo id, else by the file the
    entry's `source.config` names (aiconfigurator files carry the Meta- prefix)."""
    key = config_file.stem.split("__", 1)[1]
    matches = [
        m
        for m in facts
        if m["hf_repo"].lower() == key.replace("--", "/").lower() or key in str(m["source"].get("config", ""))
    ]
    assert len(matches) == 1, f"{config_file.name}: {len(matches)} facts entries match"
    return matches[0]


def _with_family(config: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    # The transcribed Llama 3.2 copies hold neither model_type nor architectures; the facts
    # entry names the family, exactly what a user would add to such a config.
    if "model_type" not in config and "architectures" not in config:
        return {**config, "model_type": entry["family"]}
    return config


@pytest.fixture(scope="module")
def facts() -> list[dict[str, Any]]:
    if not FACTS_DIR.is_dir():
        pytest.skip(f"{FACTS_DIR} is absent: the shared catalog facts are not on this machine")
    models: list[dict[str, Any]] = yaml.safe_load((FACTS_DIR / "models.yaml").read_text())["models"]
    return models


@pytest.fixture(scope="module")
def seed_by_repo() -> dict[str, dict[str, Any]]:
    return {m["hf_repo"]: m for m in yaml.safe_load(SEED_MODELS.read_text())["models"]}


# --------------------------------------------------------------------------- done-when


@pytest.mark.skipif(not FACTS_DIR.is_dir(), reason=f"{FACTS_DIR} is absent: no shared config copies to import")
@pytest.mark.parametrize("config_file", _config_files(), ids=lambda p: p.stem)
def test_each_sourced_config_reproduces_the_facts_parameter_count(
    config_file: Path, facts: list[dict[str, Any]]
) -> None:
    entry = _facts_entry(config_file, facts)
    derived = derive(_with_family(json.loads(config_file.read_text()), entry))
    assert derived.params_total == pytest.approx(entry["params_computed"], rel=0.005)
    assert derived.kv_bytes_per_token == entry["kv_bytes_per_token_bf16"]


def test_the_facts_configs_are_all_here() -> None:
    if not FACTS_DIR.is_dir():
        pytest.skip(f"{FACTS_DIR} is absent")
    assert len(_config_files()) == 18


@pytest.mark.skipif(not FACTS_DIR.is_dir(), reason=f"{FACTS_DIR} is absent: no shared config copies to import")
@pytest.mark.parametrize("config_file", _config_files(), ids=lambda p: p.stem)
def test_an_imported_config_matches_its_seed_entry_field_by_field(
    config_file: Path, facts: list[dict[str, Any]], seed_by_repo: dict[str, dict[str, Any]]
) -> None:
    entry = _facts_entry(config_file, facts)
    seed = seed_by_repo[entry["hf_repo"]]
    derived = derive(_with_family(json.loads(config_file.read_text()), entry)).catalog_fields()
    # The config copies carry no _name_or_path; Llama 3.2 3B's copy has no max_position_embeddings
    # (the seed takes 128k from the model card).
    ignored = {"hf_repo"} | ({"max_context"} if derived["max_context"] is None else set())
    # An optional seed field left out is null (seed.py), as quantized_components is for every entry.
    differences = {k: (v, seed.get(k)) for k, v in derived.items() if k not in ignored and seed.get(k) != v}
    assert differences == {}


def test_qwen2_5_7b_instruct_has_7_62b_parameters_and_57344_kv_bytes_per_token() -> None:
    derived = derive(json.loads(QWEN25_7B.read_text()))
    assert derived.params_total == pytest.approx(7.62e9, rel=0.005)
    assert derived.params_total == 7_615_616_512
    assert derived.kv_bytes_per_token == 57_344
    # Model card: 6.53B without the embedding and the (untied) LM head.
    assert derived.params_total - derived.params.embedding - derived.params.lm_head == pytest.approx(6.53e9, rel=0.005)
    assert (derived.family, derived.attention, derived.head_dim, derived.sliding_window) == ("qwen2", "gqa", 128, None)


def test_qwen2_counts_the_q_k_v_biases() -> None:
    config = json.loads(QWEN25_7B.read_text())
    as_qwen2 = derive(config).params_total
    as_llama = derive({**config, "model_type": "llama"}).params_total
    assert as_qwen2 - as_llama == 28 * (3584 + 512 + 512)


# --------------------------------------------------------------------------- families

LLAMA_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


def test_llama_3_1_8b_has_8_030_261_248_parameters() -> None:
    assert derive(LLAMA_8B).params_total == 8_030_261_248


def test_tied_embeddings_have_no_separate_lm_head() -> None:
    untied = derive(LLAMA_8B)
    tied = derive({**LLAMA_8B, "tie_word_embeddings": True})
    assert tied.params.lm_head == 0
    assert untied.params_total - tied.params_total == 128256 * 4096


def test_architectures_name_the_family_when_model_type_is_missing() -> None:
    config = {k: v for k, v in LLAMA_8B.items() if k != "model_type"} | {"architectures": ["LlamaForCausalLM"]}
    assert derive(config).family == "llama"


def test_num_key_value_heads_defaults_to_multi_head_attention() -> None:
    config = {k: v for k, v in LLAMA_8B.items() if k != "num_key_value_heads"}
    derived = derive(config)
    assert (derived.kv_heads, derived.attention) == (32, "mha")


def test_attention_and_mlp_biases_are_counted_when_a_llama_config_asks_for_them() -> None:
    plain = derive(LLAMA_8B).params_total
    biased = derive({**LLAMA_8B, "attention_bias": True, "mlp_bias": True}).params_total
    per_layer = (4096 + 1024 + 1024 + 4096) + (14336 + 14336 + 4096)
    assert biased - plain == 32 * per_layer


def test_qwen3_counts_its_query_and_key_norms() -> None:
    qwen3 = {**LLAMA_8B, "model_type": "qwen3", "head_dim": 128}
    assert derive(qwen3).params_total - derive({**qwen3, "model_type": "mistral"}).params_total == 32 * 2 * 128


def test_qwen1_5_moe_a2_7b_counts_its_shared_expert_and_gate() -> None:
    # Qwen/Qwen1.5-MoE-A2.7B config (several agreeing public copies); model card: 14.3B total, 2.7B activated.
    config = {
        "model_type": "qwen2_moe",
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "vocab_size": 151936,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "tie_word_embeddings": False,
    }
    derived = derive(config)
    assert derived.params_total == pytest.approx(14.3e9, rel=0.005)
    assert derived.params_active() == pytest.approx(2.7e9, rel=0.01)
    assert derived.params.shared_experts == 24 * 3 * 2048 * 5632
    assert derived.params.router == 24 * (60 * 2048 + 2048)  # router + the shared expert's one-logit gate
    assert (derived.experts, derived.shared_experts, derived.intermediate_size) == (60, 1, None)


def test_qwen_moe_dense_layers_follow_mlp_only_layers_and_the_sparse_step() -> None:
    base = {
        "model_type": "qwen3_moe",
        "hidden_size": 64,
        "intermediate_size": 256,
        "moe_intermediate_size": 32,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "vocab_size": 100,
    }
    derived = derive({**base, "mlp_only_layers": [0], "decoder_sparse_step": 2})
    # Sparse layers: (i + 1) % 2 == 0 and not in mlp_only_layers -> 1 and 3; dense: 0 and 2.
    assert derived.params.routed_experts == 2 * 8 * 3 * 64 * 32
    assert derived.params.dense_mlp == 2 * 3 * 64 * 256
    assert derived.intermediate_size == 256


def test_deepseek_v3_caches_a_latent_and_a_rope_key_per_layer() -> None:
    if not FACTS_DIR.is_dir():
        pytest.skip(f"{FACTS_DIR} is absent")
    derived = derive(json.loads((CONFIGS_DIR / "aiconfigurator__deepseek-ai--DeepSeek-V3.json").read_text()))
    assert derived.attention == "mla"
    assert derived.kv_bytes_per_token == 61 * (512 + 64) * 2
    assert derived.native_precision == "fp8"
    assert derived.params.shared_experts == 58 * 3 * 7168 * 2048
    assert any("multi-token-prediction" in note for note in derived.assumptions)


def test_gpt_oss_without_layer_types_windows_the_even_layers() -> None:
    config = {k: v for k, v in TINY_GPT_OSS.items() if k != "layer_types"} | {"num_hidden_layers": 3}
    derived = derive(config)
    assert (derived.sliding_window, derived.sliding_window_layers) == (128, 2)
    assert derived.native_precision == "mxfp4"


def test_gemma3_reads_text_config_and_names_its_fields() -> None:
    config = {"model_type": "gemma3", "text_config": {"hidden_size": 64}}
    with pytest.raises(HFConfigError) as raised:
        derive(config)
    assert raised.value.field == "text_config.num_hidden_layers"


def test_gemma3_takes_transformers_defaults_for_what_its_config_leaves_out() -> None:
    text = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 12,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "sliding_window": 1024,
    }
    derived = derive({"model_type": "gemma3", "torch_dtype": "bfloat16", "text_config": text})
    assert (derived.vocab_size, derived.max_context, derived.tie_word_embeddings) == (262_208, 131_072, True)
    assert derived.sliding_window_layers == 10  # 5 local : 1 global over 12 layers
    assert derived.native_precision == "bf16"
    assert derived.params.lm_head == 0
    assert any("defaults" in note for note in derived.assumptions)


def test_a_window_as_long_as_the_context_windows_nothing() -> None:
    config = {**LLAMA_8B, "model_type": "phi3", "sliding_window": 262144}
    assert (derive(config).sliding_window, derive(config).sliding_window_layers) == (None, 0)


def test_qwen_sliding_window_applies_only_with_use_sliding_window() -> None:
    config = json.loads(QWEN25_7B.read_text()) | {"sliding_window": 4096}
    assert derive(config).sliding_window_layers == 0
    windowed = derive(config | {"use_sliding_window": True, "max_window_layers": 20})
    assert (windowed.sliding_window, windowed.sliding_window_layers) == (4096, 8)


@pytest.mark.parametrize(
    ("quantization", "torch_dtype", "expected"),
    [
        (None, "float16", "fp16"),
        (None, "bfloat16", "bf16"),
        ({"quant_method": "fp8"}, "bfloat16", "fp8"),
        ({"quant_method": "awq", "bits": 4}, "float16", "int4"),
        ({"quant_method": "bitsandbytes"}, "bfloat16", None),
    ],
)
def test_native_precision_comes_from_quantization_then_torch_dtype(
    quantization: dict[str, Any] | None, torch_dtype: str, expected: str | None
) -> None:
    config = {**LLAMA_8B, "torch_dtype": torch_dtype}
    if quantization:
        config["quantization_config"] = quantization
    assert derive(config).native_precision == expected


# --------------------------------------------------------------------------- bad configs


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"hidden_size": None}, "hidden_size"),
        ({"num_hidden_layers": 1.5}, "num_hidden_layers"),
        ({"num_attention_heads": True}, "num_attention_heads"),
        ({"num_key_value_heads": 5}, "num_key_value_heads"),
        ({"vocab_size": -1}, "vocab_size"),
        ({"intermediate_size": "14336"}, "intermediate_size"),
        ({"model_type": "bert"}, "model_type"),
        ({"model_type": None}, "model_type"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings"),
        ({"num_hidden_layers": 10**9}, "num_hidden_layers"),
        ({"layer_types": ["sliding_attention"]}, "layer_types"),
    ],
)
def test_a_missing_or_senseless_field_is_named(change: dict[str, Any], field: str) -> None:
    config = {k: v for k, v in {**LLAMA_8B, **change}.items() if v is not None}
    with pytest.raises(HFConfigError) as raised:
        derive(config)
    assert raised.value.field == field


def test_a_moe_config_without_its_expert_fields_names_them() -> None:
    with pytest.raises(HFConfigError) as raised:
        derive({**LLAMA_8B, "model_type": "mixtral"})
    assert raised.value.field == "num_local_experts"


def test_a_config_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(HFConfigError):
        derive([1, 2, 3])  # type: ignore[arg-type]


def test_a_float_written_integer_is_read_as_one() -> None:
    assert derive({**LLAMA_8B, "hidden_size": 4096.0}).hidden_size == 4096


# --------------------------------------------------------------------------- quantized components

LINEAR = frozenset({"attention", "dense_mlp", "experts"})
EVERY_LAYER = frozenset(range(126))


# compressed-tensors / llm-compressor FP8 (W8A8, per-channel weights), as RedHatAI's FP8 Llama
# checkpoints write it; the ignore list varies.
def compressed_tensors_fp8(ignore: list[str]) -> dict[str, Any]:
    weights = {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}
    group = {"targets": ["Linear"], "weights": weights, "input_activations": {**weights, "dynamic": True}}
    return {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "config_groups": {"group_0": group},
        "ignore": ignore,
        "quantization_status": "compressed",
    }


# gpt-oss-20b / -120b config.json (the facts' verbatim copies carry exactly this list).
GPT_OSS_NOT_CONVERTED = ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]

# Meta's Llama 3.1 405B FP8: fbgemm row-wise FP8 with first and last layers, every self_attn
# and lm_head left in bf16. The list is built as transformers' quantisation script for
# meta-llama/Llama-3.1-405B-FP8 builds it (src/transformers/models/llama/quantize_fp8_llama.py
# in a huggingface/transformers tree: "model.layers.0", "model.layers.125", "lm_head", then
# "model.layers.{i}.self_attn" for 1..124); the published config.json's own list was not at hand.
LLAMA_405B = {
    **LLAMA_8B,
    "hidden_size": 16384,
    "intermediate_size": 53248,
    "num_hidden_layers": 126,
    "num_attention_heads": 128,
    "num_key_value_heads": 8,
}
META_405B_FP8 = {
    "quant_method": "fbgemm_fp8",
    "activation_scale_ub": 1200.0,
    "modules_to_not_convert": ["model.layers.0", "model.layers.125", "lm_head"]
    + [f"model.layers.{i}.self_attn" for i in range(1, 125)],
}


@pytest.mark.parametrize(
    ("name", "components", "layers"),
    [
        # compressed-tensors ignore entries
        ("lm_head", {"lm_head"}, None),
        ("re:.*self_attn.*", {"attention"}, None),
        ("re:.*mlp.gate$", set(), None),  # Qwen3-MoE / DeepSeek routers
        ("model.layers.0.self_attn.q_proj", {"attention"}, {0}),
        ("model.layers.7.self_attn.kv_a_proj_with_mqa", {"attention"}, {7}),
        ("re:model\\.layers\\.(0|125)\\.mlp.*", {"dense_mlp", "experts"}, {0, 125}),
        ("re:.*layers\\.\\d+\\.self_attn\\..*", {"attention"}, EVERY_LAYER),
        ("re:.*down_proj", {"dense_mlp", "experts"}, None),  # a bare projection hits the experts' too
        # transformers modules_to_not_convert (gpt-oss, fbgemm_fp8)
        ("model.layers.*.self_attn", {"attention"}, EVERY_LAYER),
        ("model.layers.*.mlp.router", set(), EVERY_LAYER),
        ("model.embed_tokens", {"embeddings"}, None),
        ("model.layers.0", LINEAR, {0}),
        ("model.layers.3.mlp", {"dense_mlp", "experts"}, {3}),
        # vLLM ignored_layers name fused modules
        ("model.layers.2.self_attn.qkv_proj", {"attention"}, {2}),
        ("model.layers.2.mlp.gate_up_proj", {"dense_mlp"}, {2}),
        ("model.layers.3.mlp.shared_experts.down_proj", {"dense_mlp"}, {3}),
        ("model.layers.3.mlp.experts.12.gate_proj", {"experts"}, {3}),
        ("model.layers.1.block_sparse_moe.experts.0.w1", {"experts"}, {1}),
        ("model.layers.1.block_sparse_moe.gate", set(), {1}),
        ("model.layers.1.input_layernorm", set(), {1}),
        ("language_model.model.layers.4.self_attn.o_proj", {"attention"}, {4}),
        ("vision_tower", set(), None),
        ("*", set(COMPONENTS), None),
        ("re:.*", set(COMPONENTS), None),
        ("Linear", None, None),
    ],
)
def test_module_names_and_patterns_map_to_components(
    name: str, components: set[str] | None, layers: set[int] | None
) -> None:
    scope = module_scope(name, 126)
    assert scope.components == (None if components is None else frozenset(components))
    assert scope.layers == (None if layers is None else frozenset(layers))


@pytest.mark.parametrize(
    ("tensor", "component"),
    [
        ("model.layers.0.mlp.experts.gate_up_proj_blocks", "experts"),
        ("model.layers.0.mlp.experts.down_proj_bias", "experts"),
        ("model.layers.0.mlp.router.weight", None),
        ("model.layers.0.self_attn.sinks", "attention"),
        ("model.layers.0.self_attn.q_norm.weight", None),
        ("model.layers.0.self_attn.q_a_proj.weight", "attention"),
        ("model.layers.0.mlp.down_proj.weight_scale_inv", "dense_mlp"),
        ("model.layers.0.mlp.gate.e_score_correction_bias", None),
        ("model.embed_tokens.weight", "embeddings"),
        ("lm_head.weight", "lm_head"),
        ("model.norm.weight", None),
    ],
)
def test_tensor_names_map_to_components(tensor: str, component: str | None) -> None:
    assert tensor_component(tensor) == component


def test_gpt_oss_modules_to_not_convert_leave_the_experts_which_is_the_mxfp4_convention() -> None:
    derived = derive(
        {
            **TINY_GPT_OSS,
            "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": GPT_OSS_NOT_CONVERTED},
        }
    )
    assert derived.quantization is not None
    assert derived.quantization.quantized == ("experts",)
    assert derived.quantization.kept == ("attention", "embeddings", "lm_head")
    value, notes = settle_quantized_components(derived, None)
    assert value is None  # the same as the convention: stored null
    assert derived.catalog_fields()["quantized_components"] is None
    assert notes == [
        "quantized_components null (the mxfp4 convention, experts): config.json "
        "quantization_config.modules_to_not_convert agrees; attention, embeddings, lm_head kept in 16 bits"
    ]


def test_meta_405b_fp8_keeps_attention_and_the_first_and_last_mlp_in_bf16() -> None:
    derived = derive({**LLAMA_405B, "quantization_config": META_405B_FP8})
    assert derived.native_precision == "fp8"
    value, notes = settle_quantized_components(derived, None)
    assert value == ["dense_mlp"]
    assert derived.catalog_fields()["quantized_components"] == ["dense_mlp"]
    assert notes[0].startswith(
        "quantized_components dense_mlp: from config.json quantization_config.modules_to_not_convert"
    )
    assert "dense_mlp counted as quantized, but the ignore list keeps layers 0, 125 in 16 bits" in notes


@pytest.mark.parametrize(
    ("ignore", "expected"),
    [
        (["lm_head"], None),  # every linear layer: the fp8 convention
        (["lm_head", "re:.*self_attn.*"], ["dense_mlp"]),
        (
            [f"model.layers.{i}.self_attn.{p}" for i in range(2) for p in ("q_proj", "k_proj", "v_proj", "o_proj")],
            ["dense_mlp"],
        ),
        (["re:.*mlp.*", "re:.*self_attn.*"], []),
        (["*"], []),
    ],
)
def test_a_compressed_tensors_ignore_list_sets_what_an_fp8_llama_quantizes(
    ignore: list[str], expected: list[str] | None
) -> None:
    derived = derive({**TINY_LLAMA, "quantization_config": compressed_tensors_fp8(ignore)})
    assert derived.native_precision == "fp8"
    assert settle_quantized_components(derived, None)[0] == expected


def test_some_layers_of_a_component_ignored_keep_it_quantized_and_say_which() -> None:
    config = {**TINY_LLAMA, "num_hidden_layers": 4}
    ignore = [f"model.layers.{i}.self_attn.q_proj" for i in (0, 1, 3)]
    value, notes = settle_quantized_components(
        derive({**config, "quantization_config": compressed_tensors_fp8(ignore)}), None
    )
    assert value is None
    assert "attention counted as quantized, but the ignore list keeps layers 0-1, 3 in 16 bits" in notes


def test_a_moe_component_counts_only_the_layers_it_sits_on() -> None:
    # Qwen3-MoE with a dense MLP on layer 0 only: ignoring that one MLP keeps dense_mlp wholly in bf16.
    config = {
        "model_type": "qwen3_moe",
        "hidden_size": 64,
        "intermediate_size": 256,
        "moe_intermediate_size": 32,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "vocab_size": 100,
        "mlp_only_layers": [0],
    }
    derived = derive(
        {**config, "quantization_config": compressed_tensors_fp8(["lm_head", "re:.*mlp.gate$", "model.layers.0.mlp"])}
    )
    assert derived.layout.layers["dense_mlp"] == {0}
    assert derived.layout.layers["experts"] == {1, 2, 3}
    assert settle_quantized_components(derived, None)[0] == ["attention", "experts"]


@pytest.mark.parametrize(
    ("quantization", "native"),
    [
        ({"quant_method": "modelopt", "quant_algo": "NVFP4", "exclude_modules": ["lm_head"]}, "nvfp4"),
        ({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8", "exclude_modules": ["lm_head"]}}, "fp8"),
        ({"quant_method": "fp8", "weight_block_size": [128, 128], "ignored_layers": ["lm_head"]}, "fp8"),
    ],
)
def test_modelopt_and_vllm_exclude_lists_are_read(quantization: dict[str, Any], native: str) -> None:
    derived = derive({**TINY_LLAMA, "quantization_config": quantization})
    assert derived.native_precision == native
    assert derived.quantization is not None and derived.quantization.kept == ("lm_head",)
    value, notes = settle_quantized_components(derived, None)
    assert value is None and "agrees" in notes[0]


def test_a_config_without_an_ignore_list_says_nothing() -> None:
    derived = derive({**TINY_LLAMA, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})
    assert derived.quantization is None
    assert settle_quantized_components(derived, None) == (None, [])


def test_an_ignore_list_of_an_unknown_format_is_noted_and_not_stored() -> None:
    derived = derive(
        {**TINY_LLAMA, "quantization_config": {"quant_method": "bitsandbytes", "llm_int8_skip_modules": ["lm_head"]}}
    )
    value, notes = settle_quantized_components(derived, None)
    assert value is None
    assert any("weight format is unknown" in note for note in notes)


def test_unrecognised_entries_are_noted() -> None:
    derived = derive({**TINY_LLAMA, "quantization_config": compressed_tensors_fp8(["lm_head", "Linear"])})
    assert any("'Linear' names no component" in note for note in settle_quantized_components(derived, None)[1])


@pytest.mark.parametrize("ignore", ["lm_head", ["lm_head", 3], ["x" * 1001]])
def test_a_malformed_ignore_list_is_named(ignore: Any) -> None:
    with pytest.raises(HFConfigError) as raised:
        derive({**TINY_LLAMA, "quantization_config": compressed_tensors_fp8(ignore)})
    assert raised.value.field == "quantization_config.ignore"


def test_too_many_layer_patterns_are_refused() -> None:
    ignore = [f"re:model\\.layers\\.{i}[0-9]\\.mlp" for i in range(hf_config.MAX_LAYER_PATTERNS + 1)]
    with pytest.raises(HFConfigError, match="distinct layer patterns"):
        derive({**TINY_LLAMA, "quantization_config": compressed_tensors_fp8(ignore)})


def test_a_gpt_oss_header_stores_only_the_experts_quantized() -> None:
    derived = derive(TINY_GPT_OSS)
    summary = summarise_header(gpt_oss_header(TINY_GPT_OSS))
    reading = read_header_components(summary, derived.layout)
    assert reading is not None
    assert (reading.quantized, reading.kept) == (("experts",), ("attention", "embeddings", "lm_head"))
    value, notes = settle_quantized_components(derived, summary)
    assert value is None and notes[0].startswith("quantized_components null (the mxfp4 convention, experts)")


def test_a_bf16_header_of_a_bf16_model_says_nothing() -> None:
    assert settle_quantized_components(derive(TINY_LLAMA), summarise_header(dense_header(TINY_LLAMA))) == (None, [])


def test_the_header_beats_the_config_and_says_when_they_disagree() -> None:
    # The config ignores only lm_head (every linear layer FP8), the header keeps attention in BF16.
    derived = derive({**TINY_LLAMA, "quantization_config": compressed_tensors_fp8(["lm_head"])})
    header = requantized(dense_header(TINY_LLAMA), "F8_E4M3", lambda name: ".mlp." in name)
    value, notes = settle_quantized_components(derived, summarise_header(header))
    assert value == ["dense_mlp"]
    assert notes[0].startswith("quantized_components dense_mlp: from the safetensors header's dtypes")
    assert any("header quantizes dense_mlp" in note and "implies attention, dense_mlp" in note for note in notes)


def test_a_header_with_some_layers_in_bf16_notes_them() -> None:
    derived = derive({**TINY_LLAMA, "quantization_config": {"quant_method": "fp8"}})
    header = requantized(
        dense_header(TINY_LLAMA),
        "F8_E4M3",
        lambda name: "layers.0." not in name and "lm_head" not in name and "embed" not in name,
    )
    value, notes = settle_quantized_components(derived, summarise_header(header))
    assert value is None  # attention and dense_mlp quantized: the fp8 convention
    assert "attention counted as quantized, but the safetensors header keeps layer 0 in 16 bits" in notes


def test_a_header_quantizing_the_lm_head_reports_it() -> None:
    derived = derive({**TINY_LLAMA, "quantization_config": {"quant_method": "fp8"}})
    header = requantized(dense_header(TINY_LLAMA), "F8_E4M3", lambda name: "embed" not in name)
    assert settle_quantized_components(derived, summarise_header(header))[0] == ["attention", "dense_mlp", "lm_head"]

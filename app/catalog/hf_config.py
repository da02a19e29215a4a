"""A model's architecture and parameter count from its Hugging Face `config.json`, as the
catalog's model columns, with the assumptions the derivation made.

Standard library and the sizing core only: the import service (app/planning/catalog_import.py)
calls in here and maps HFConfigError to its own answer. Counts follow the modelling code of
each family in transformers (every weight, bias and norm a checkpoint stores), with the
catalog's conventions (catalog_seed/SCHEMA.md): `expert_params` is the routed experts only,
`params_active` includes the embedding and the LM head, and a multimodal checkpoint counts
its text decoder. `quantized_components` comes from the safetensors header's dtypes
(safetensors_header), else the quantization_config's ignore lists, and is stored only where
it differs from the format's convention (settle_quantized_components).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from app.catalog.checkpoint_components import (
    LINEAR_COMPONENTS,
    ComponentLayout,
    ComponentReading,
    module_scope,
)
from app.catalog.safetensors_header import HeaderSummary, read_header_components
from app.sizing.memory import COMPONENTS, EMBEDDINGS, LM_HEAD, kv_bytes_per_token
from app.sizing.precision import UnknownPrecision, is_quantized, normalise, quantized_by_default
from app.sizing.specs import (
    MLA,
    ModelSpec,
    default_attention,
    default_head_dim,
    default_params_active,
    default_sliding_window_layers,
)

SUPPORTED_FAMILIES = (
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
    "deepseek_v3", "gpt_oss", "gemma3", "phi3",
)  # fmt: skip

# config.json's `architectures` names the family when `model_type` is missing.
ARCHITECTURE_FAMILIES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "GptOssForCausalLM": "gpt_oss",
    "Gemma3ForConditionalGeneration": "gemma3",
    "Gemma3ForCausalLM": "gemma3",
    "Phi3ForCausalLM": "phi3",
}
MODEL_TYPE_ALIASES = {"gemma3_text": "gemma3"}

TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}

# Bounds that no published model comes near; they keep a hostile config from asking for
# astronomically large integers.
MAX_LAYERS = 10_000
MAX_DIM = 10_000_000
MAX_EXPERTS = 100_000
# Where each format writes the modules it leaves unquantized: compressed-tensors /
# llm-compressor `ignore`, transformers (fp8, fbgemm_fp8, mxfp4, AWQ) `modules_to_not_convert`,
# bitsandbytes `llm_int8_skip_modules`, vLLM fp8 `ignored_layers`, ModelOpt `exclude_modules`.
IGNORE_LIST_KEYS = ("ignore", "modules_to_not_convert", "llm_int8_skip_modules", "ignored_layers", "exclude_modules")
MAX_IGNORE_ENTRIES = 100_000
MAX_IGNORE_ENTRY_LENGTH = 1000
MAX_LAYER_PATTERNS = 100  # distinct non-numeric layer parts an ignore list may use


class HFConfigError(ValueError):
    """config.json lacks a field the family needs, or holds one that makes no sense.

    `field` is a dotted path inside the config (`text_config.hidden_size`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# --------------------------------------------------------------------------- reading config


class _Fields:
    """Typed reads of one config mapping; errors name the dotted field."""

    def __init__(self, raw: Mapping[str, Any], prefix: str = "") -> None:
        self.raw = raw
        self.prefix = prefix

    def name(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def present(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def integer(self, key: str, *, minimum: int = 1, maximum: int = MAX_DIM, default: int | None = None) -> int:
        value = self.raw.get(key)
        if value is None:
            if default is not None:
                return default
            raise HFConfigError(self.name(key), "required")
        # JSON has one number type: 4096.0 is 4096, 4096.5 is not; true is not 1.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise HFConfigError(self.name(key), f"must be an integer, got {value!r}")
        if not minimum <= value <= maximum:
            raise HFConfigError(self.name(key), f"must be between {minimum} and {maximum}, got {value}")
        return value

    def optional_integer(self, key: str, *, minimum: int = 1, maximum: int = MAX_DIM) -> int | None:
        return self.integer(key, minimum=minimum, maximum=maximum) if self.present(key) else None

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise HFConfigError(self.name(key), f"must be true or false, got {value!r}")
        return value

    def integer_list(self, key: str, *, maximum: int) -> list[int]:
        value = self.raw.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or len(value) > MAX_LAYERS:
            raise HFConfigError(self.name(key), "must be a list of layer indices")
        out = []
        for item in value:
            if not isinstance(item, int) or isinstance(item, bool) or not 0 <= item <= maximum:
                raise HFConfigError(self.name(key), f"must hold layer indices 0..{maximum}, got {item!r}")
            out.append(item)
        return out


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ParamBreakdown:
    """Where the parameters sit. `routed_experts` is the catalog's `expert_params`."""

    embedding: int
    lm_head: int
    attention: int
    dense_mlp: int
    shared_experts: int
    routed_experts: int
    router: int
    norms: int

    @property
    def total(self) -> int:
        return (
            self.embedding + self.lm_head + self.attention + self.dense_mlp
            + self.shared_experts + self.routed_experts + self.router + self.norms
        )  # fmt: skip


@dataclass(frozen=True)
class DerivedModel:
    """What a config.json says about a model, in the catalog's field names."""

    family: str
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    attention: str
    vocab_size: int
    tie_word_embeddings: bool
    params: ParamBreakdown
    intermediate_size: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    experts: int | None = None
    experts_per_token: int | None = None
    shared_experts: int | None = None
    moe_intermediate_size: int | None = None
    native_precision: str | None = None
    max_context: int | None = None
    hf_repo: str | None = None
    assumptions: tuple[str, ...] = ()
    # MoE layers (routed experts) by index; every other layer has a dense MLP.
    sparse_layers: tuple[int, ...] = ()
    # What config.json's quantization_config ignore lists say (None: it names none).
    quantization: ComponentReading | None = None

    @property
    def layout(self) -> ComponentLayout:
        """The layers each linear component sits on, and whether an untied LM head exists."""
        return ComponentLayout.build(
            self.layers,
            self.sparse_layers if self.experts else None,
            bool(self.params.shared_experts),
            lm_head=not self.tie_word_embeddings,
        )

    @property
    def params_total(self) -> int:
        return self.params.total

    @property
    def expert_params(self) -> int | None:
        return self.params.routed_experts if self.experts else None

    def params_active(self, params_total: int | None = None) -> int:
        """Everything but the routed experts, plus k/E of them (SCHEMA.md's convention)."""
        total = self.params_total if params_total is None else params_total
        # routed is layers x experts x per-expert, so the k/E share is exact.
        return default_params_active(total, self.experts, self.experts_per_token, self.params.routed_experts)

    @property
    def kv_bytes_per_token(self) -> int:
        """KV cache per token at bf16 over every layer, by the sizing core's own formula."""
        spec = ModelSpec(
            self.family,
            self.params_total,
            self.layers,
            self.hidden_size,
            self.attention_heads,
            self.kv_heads,
            self.head_dim,
            attention=self.attention,
            kv_lora_rank=self.kv_lora_rank,
            qk_rope_head_dim=self.qk_rope_head_dim,
        )
        return round(kv_bytes_per_token(spec, "bf16"))

    def catalog_fields(self, params_total: int | None = None) -> dict[str, Any]:
        """The catalog's model fields (slug, name and source are the caller's)."""
        total = self.params_total if params_total is None else params_total
        return {
            "family": self.family,
            "hf_repo": self.hf_repo,
            "params_total": total,
            "params_active": self.params_active(total),
            "layers": self.layers,
            "hidden_size": self.hidden_size,
            "attention_heads": self.attention_heads,
            "kv_heads": self.kv_heads,
            "head_dim": self.head_dim,
            "attention": self.attention,
            "kv_lora_rank": self.kv_lora_rank,
            "qk_rope_head_dim": self.qk_rope_head_dim,
            "sliding_window": self.sliding_window,
            "sliding_window_layers": self.sliding_window_layers,
            "experts": self.experts,
            "experts_per_token": self.experts_per_token,
            "shared_experts": self.shared_experts,
            "expert_params": self.expert_params,
            "vocab_size": self.vocab_size,
            "intermediate_size": self.intermediate_size,
            "moe_intermediate_size": self.moe_intermediate_size,
            "tie_word_embeddings": self.tie_word_embeddings,
            "native_precision": self.native_precision,
            "max_context": self.max_context,
            "quantized_components": settle_quantized_components(self, None)[0],
        }


# --------------------------------------------------------------------------- shared parts


@dataclass
class _Layers:
    """Running totals while walking the layers of one model."""

    attention: int = 0
    dense_mlp: int = 0
    shared_experts: int = 0
    routed_experts: int = 0
    router: int = 0
    norms: int = 0
    moe_layers: int = 0
    notes: list[str] = field(default_factory=list)


def _gated_mlp(hidden: int, width: int, *, bias: bool = False) -> int:
    """gate, up and down projections (SwiGLU / GeGLU), optionally with biases."""
    return 3 * hidden * width + ((2 * width + hidden) if bias else 0)


def _gqa_attention(hidden: int, heads: int, kv_heads: int, head_dim: int, *, qkv_bias: bool, o_bias: bool) -> int:
    q = hidden * heads * head_dim
    kv = 2 * hidden * kv_heads * head_dim
    o = heads * head_dim * hidden
    biases = (heads * head_dim + 2 * kv_heads * head_dim if qkv_bias else 0) + (hidden if o_bias else 0)
    return q + kv + o + biases


def _family(config: Mapping[str, Any]) -> str:
    model_type = config.get("model_type")
    if model_type is None:
        architectures = config.get("architectures")
        if isinstance(architectures, list):
            for name in architectures:
                if name in ARCHITECTURE_FAMILIES:
                    return ARCHITECTURE_FAMILIES[name]
        raise HFConfigError("model_type", "required (neither model_type nor a known architectures entry is given)")
    if not isinstance(model_type, str):
        raise HFConfigError("model_type", f"must be a string, got {model_type!r}")
    family = MODEL_TYPE_ALIASES.get(model_type, model_type)
    if family not in SUPPORTED_FAMILIES:
        raise HFConfigError(
            "model_type", f"{model_type!r} is not supported; supported: {', '.join(SUPPORTED_FAMILIES)}"
        )
    return family


def _quantization_config(configs: list[tuple[Mapping[str, Any], str]]) -> tuple[Mapping[str, Any] | None, str]:
    """The first quantization_config of the configs, and its dotted field name."""
    for config, prefix in configs:
        quant = config.get("quantization_config")
        if isinstance(quant, Mapping):
            return quant, f"{prefix}quantization_config"
    return None, ""


def _compressed_tensors_format(quant: Mapping[str, Any]) -> str | None:
    """llm-compressor's weight scheme, when every config group agrees on one."""
    groups = quant.get("config_groups")
    found: set[str | None] = set()
    for group in groups.values() if isinstance(groups, Mapping) else ():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        if not isinstance(weights, Mapping):
            continue
        bits, kind, size = weights.get("num_bits"), weights.get("type"), weights.get("group_size")
        layout = str(quant.get("format", "")).lower()
        if (bits, kind) == (8, "float"):
            found.add("fp8")
        elif (bits, kind) == (8, "int"):
            found.add("int8")
        elif (bits, kind) == (4, "int"):
            found.add("int4")
        elif (bits, kind) == (4, "float") and (size == 16 or "nvfp4" in layout):
            found.add("nvfp4")
        elif (bits, kind) == (4, "float") and (size == 32 or "mxfp4" in layout):
            found.add("mxfp4")
        else:
            found.add(None)
    return found.pop() if len(found) == 1 else None


def _modelopt_format(quant: Mapping[str, Any]) -> str | None:
    """NVIDIA ModelOpt's quant_algo (at the top, or under `quantization` as hf_quant_config.json has it)."""
    inner = quant.get("quantization")
    algo = quant.get("quant_algo") or (inner.get("quant_algo") if isinstance(inner, Mapping) else None)
    algo = str(algo or "").upper()
    if "NVFP4" in algo:
        return "nvfp4"
    if algo.startswith("FP8"):
        return "fp8"
    if algo.startswith("W4A"):
        return "int4"
    return None


def _native_precision(
    quant: Mapping[str, Any] | None, configs: list[Mapping[str, Any]], notes: list[str]
) -> str | None:
    """The checkpoint's weight format: a quantization_config wins over torch_dtype."""
    if quant is not None:
        method = str(quant.get("quant_method", "")).lower()
        bits = quant.get("bits")
        if method in ("fp8", "mxfp4"):
            return method
        if method == "fbgemm_fp8":
            return "fp8"  # Meta's row-wise FP8 (Llama 3.1 405B FP8)
        if method in ("gptq", "awq") and bits in (4, 8):
            return "int4" if bits == 4 else "int8"
        found = {"compressed-tensors": _compressed_tensors_format, "modelopt": _modelopt_format}.get(method)
        if found is not None and found(quant) is not None:
            return found(quant)
        notes.append(f"quantization_config quant_method {method!r} not recognised: native_precision left null")
        return None
    for config in configs:
        # transformers >= 4.56 writes `dtype`; older configs `torch_dtype`.
        for key in ("torch_dtype", "dtype"):
            dtype = config.get(key)
            if isinstance(dtype, str) and dtype in TORCH_DTYPES:
                return TORCH_DTYPES[dtype]
    return None


def _sliding(
    fields: _Fields, layers: int, *, family: str, max_context: int | None, notes: list[str]
) -> tuple[int | None, int]:
    """(window, how many layers use it), from layer_types or the family's own rule."""
    window = fields.optional_integer("sliding_window", maximum=2**31 - 1)
    layer_types = fields.raw.get("layer_types")
    windowed: int | None = None
    if layer_types is not None:
        allowed = {"sliding_attention", "full_attention"}
        if not isinstance(layer_types, list) or len(layer_types) != layers or not set(layer_types) <= allowed:
            raise HFConfigError(
                fields.name("layer_types"), f"must list {layers} entries of sliding_attention / full_attention"
            )
        windowed = layer_types.count("sliding_attention")
    elif family in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        # Qwen: the window applies only with use_sliding_window, from layer max_window_layers on.
        if fields.flag("use_sliding_window", False):
            start = fields.integer("max_window_layers", minimum=0, maximum=layers, default=layers)
            windowed = layers - start
        else:
            windowed = 0
    elif family == "gemma3":
        pattern = fields.integer("sliding_window_pattern", maximum=MAX_LAYERS, default=6)
        if not fields.present("sliding_window_pattern"):
            notes.append("sliding_window_pattern absent: transformers' Gemma 3 default 6 (5 local : 1 global)")
        windowed = layers - layers // pattern
    elif family == "gpt_oss":
        windowed = (layers + 1) // 2
        notes.append("layer_types absent: gpt-oss default (even layers windowed)")
    elif window is not None:
        windowed = default_sliding_window_layers(layers, window)
    if window is None or not windowed:
        if windowed and window is None:
            raise HFConfigError(fields.name("sliding_window"), "required: layers are marked sliding_attention")
        return None, 0
    if max_context is not None and window >= max_context:
        notes.append(f"sliding_window {window} >= max_position_embeddings {max_context}: no layer is windowed")
        return None, 0
    return window, windowed


def _moe_layer_indices(fields: _Fields, layers: int, experts: int) -> list[int]:
    """Qwen MoE: layer i is sparse unless in mlp_only_layers, every decoder_sparse_step."""
    step = fields.integer("decoder_sparse_step", maximum=MAX_LAYERS, default=1)
    dense_only = set(fields.integer_list("mlp_only_layers", maximum=layers - 1))
    return [i for i in range(layers) if i not in dense_only and experts > 0 and (i + 1) % step == 0]


# --------------------------------------------------------------------------- families


@dataclass(frozen=True)
class _Shape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool


def _shape(fields: _Fields, *, head_dim_default: int | None = None, tie_default: bool = False) -> _Shape:
    layers = fields.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = fields.integer("hidden_size")
    heads = fields.integer("num_attention_heads", maximum=MAX_EXPERTS)
    # transformers: num_key_value_heads None means multi-head attention.
    kv_heads = fields.integer("num_key_value_heads", maximum=heads, default=heads)
    if heads % kv_heads:
        raise HFConfigError(fields.name("num_key_value_heads"), f"must divide num_attention_heads ({heads})")
    if fields.present("head_dim"):
        head_dim = fields.integer("head_dim")
    elif head_dim_default is not None:
        head_dim = head_dim_default
    else:
        implied = default_head_dim(hidden, heads)
        if implied is None:
            raise HFConfigError(
                fields.name("head_dim"), "required: hidden_size is not a multiple of num_attention_heads"
            )
        head_dim = implied
    vocab = fields.integer("vocab_size", maximum=100_000_000)
    tied = fields.flag("tie_word_embeddings", tie_default)
    return _Shape(layers, hidden, heads, kv_heads, head_dim, vocab, tied)


def _dense_decoder(family: str, f: _Fields, s: _Shape) -> _Layers:
    """Llama, Mistral, Qwen2, Qwen3, Phi-3, Gemma 3: attention + one gated MLP per layer."""
    acc = _Layers()
    width = f.integer("intermediate_size")
    if family == "llama":
        bias = f.flag("attention_bias", False)
        attention = _gqa_attention(s.hidden, s.heads, s.kv_heads, s.head_dim, qkv_bias=bias, o_bias=bias)
        mlp = _gated_mlp(s.hidden, width, bias=f.flag("mlp_bias", False))
    elif family == "qwen2":
        # Qwen2 attention: biases on q, k and v, none on o.
        attention = _gqa_attention(s.hidden, s.heads, s.kv_heads, s.head_dim, qkv_bias=True, o_bias=False)
        mlp = _gated_mlp(s.hidden, width)
    elif family in ("qwen3", "gemma3"):
        bias = f.flag("attention_bias", False)
        attention = _gqa_attention(s.hidden, s.heads, s.kv_heads, s.head_dim, qkv_bias=bias, o_bias=bias)
        mlp = _gated_mlp(s.hidden, width)
    else:  # mistral, phi3 (fused qkv_proj / gate_up_proj hold the same weights)
        attention = _gqa_attention(s.hidden, s.heads, s.kv_heads, s.head_dim, qkv_bias=False, o_bias=False)
        mlp = _gated_mlp(s.hidden, width)
    # RMSNorm weights: before attention and MLP; Gemma 3 also after each; QK-norm per head_dim.
    norms = (4 if family == "gemma3" else 2) * s.hidden
    if family in ("qwen3", "gemma3"):
        norms += 2 * s.head_dim
    acc.attention = s.layers * attention
    acc.dense_mlp = s.layers * mlp
    acc.norms = s.layers * norms
    return acc


def _qwen_moe(family: str, f: _Fields, s: _Shape) -> tuple[_Layers, dict[str, Any]]:
    acc = _Layers()
    experts = f.integer("num_experts", maximum=MAX_EXPERTS)
    top_k = f.integer("num_experts_per_tok", maximum=experts)
    expert_width = f.integer("moe_intermediate_size")
    qkv_bias = family == "qwen2_moe" or f.flag("attention_bias", False)
    o_bias = family != "qwen2_moe" and f.flag("attention_bias", False)
    attention = _gqa_attention(s.hidden, s.heads, s.kv_heads, s.head_dim, qkv_bias=qkv_bias, o_bias=o_bias)
    sparse = _moe_layer_indices(f, s.layers, experts)
    dense_layers = s.layers - len(sparse)
    shared_width = f.integer("shared_expert_intermediate_size", minimum=0, default=0) if family == "qwen2_moe" else 0
    width = f.integer("intermediate_size") if dense_layers else None
    acc.attention = s.layers * attention
    acc.dense_mlp = dense_layers * _gated_mlp(s.hidden, width) if width else 0
    acc.routed_experts = len(sparse) * experts * _gated_mlp(s.hidden, expert_width)
    # Router; Qwen2-MoE adds a shared expert and its one-logit gate.
    acc.router = len(sparse) * (experts * s.hidden + (s.hidden if shared_width else 0))
    acc.shared_experts = len(sparse) * _gated_mlp(s.hidden, shared_width) if shared_width else 0
    acc.norms = s.layers * (2 * s.hidden + (2 * s.head_dim if family == "qwen3_moe" else 0))
    moe = {
        "experts": experts,
        "experts_per_token": top_k,
        "shared_experts": 1 if shared_width else 0,
        "moe_intermediate_size": expert_width,
        "intermediate_size": width,
        "sparse_layers": tuple(sparse),
    }
    return acc, moe


def _every_layer_moe(experts: int, top_k: int, width: int, layers: int) -> dict[str, Any]:
    """The MoE fields of a model whose every layer routes to `experts` of one width and has no
    shared expert (Mixtral, gpt-oss)."""
    return {
        "experts": experts,
        "experts_per_token": top_k,
        "shared_experts": 0,
        "moe_intermediate_size": width,
        "sparse_layers": tuple(range(layers)),
    }


def _mixtral(f: _Fields, s: _Shape) -> tuple[_Layers, dict[str, Any]]:
    acc = _Layers()
    experts = f.integer("num_local_experts", maximum=MAX_EXPERTS)
    top_k = f.integer("num_experts_per_tok", maximum=experts)
    width = f.integer("intermediate_size")
    acc.attention = s.layers * _gqa_attention(s.hidden, s.heads, s.kv_heads, s.head_dim, qkv_bias=False, o_bias=False)
    acc.routed_experts = s.layers * experts * _gated_mlp(s.hidden, width)
    acc.router = s.layers * experts * s.hidden
    acc.norms = s.layers * 2 * s.hidden
    # Every layer is MoE: the config's intermediate_size is the expert width.
    return acc, _every_layer_moe(experts, top_k, width, s.layers)


def _gpt_oss(f: _Fields, s: _Shape) -> tuple[_Layers, dict[str, Any]]:
    acc = _Layers()
    experts = f.integer("num_local_experts", maximum=MAX_EXPERTS)
    if f.present("num_experts_per_tok"):
        top_k = f.integer("num_experts_per_tok", maximum=experts)
    else:
        top_k = f.integer("experts_per_token", maximum=experts)
    width = f.integer("intermediate_size")
    bias = f.flag("attention_bias", True)
    attention = _gqa_attention(s.hidden, s.heads, s.kv_heads, s.head_dim, qkv_bias=bias, o_bias=bias)
    sinks = s.heads  # one learned attention-sink logit per head
    # Each expert: gate_up (hidden x 2*width, + bias) and down (width x hidden, + bias).
    per_expert = _gated_mlp(s.hidden, width, bias=True)
    acc.attention = s.layers * (attention + sinks)
    acc.routed_experts = s.layers * experts * per_expert
    acc.router = s.layers * (experts * s.hidden + experts)  # linear with bias
    acc.norms = s.layers * 2 * s.hidden
    return acc, _every_layer_moe(experts, top_k, width, s.layers)


def _deepseek_v3(f: _Fields, s: _Shape) -> tuple[_Layers, dict[str, Any], dict[str, int]]:
    acc = _Layers()
    h, heads = s.hidden, s.heads
    q_lora = f.optional_integer("q_lora_rank")
    kv_lora = f.integer("kv_lora_rank")
    nope = f.integer("qk_nope_head_dim")
    rope = f.integer("qk_rope_head_dim")
    v_dim = f.integer("v_head_dim")
    qk_dim = nope + rope
    # A low-rank query is down-projection, norm, up-projection; else one projection.
    q_params = h * q_lora + q_lora + q_lora * heads * qk_dim if q_lora else h * heads * qk_dim
    kv_params = h * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v_dim)
    attention = q_params + kv_params + heads * v_dim * h
    experts = f.integer("n_routed_experts", maximum=MAX_EXPERTS)
    top_k = f.integer("num_experts_per_tok", maximum=experts)
    shared = f.integer("n_shared_experts", minimum=0, maximum=MAX_EXPERTS, default=0)
    expert_width = f.integer("moe_intermediate_size")
    first_dense = f.integer("first_k_dense_replace", minimum=0, maximum=s.layers, default=0)
    frequency = f.integer("moe_layer_freq", maximum=MAX_LAYERS, default=1)
    sparse = [i for i in range(s.layers) if i >= first_dense and i % frequency == 0]
    dense_layers = s.layers - len(sparse)
    width = f.integer("intermediate_size") if dense_layers else None
    # noaux_tc routing keeps a per-expert correction bias beside the gate weight.
    correction = experts if f.raw.get("topk_method") == "noaux_tc" else 0
    acc.attention = s.layers * attention
    acc.dense_mlp = dense_layers * _gated_mlp(h, width) if width else 0
    acc.routed_experts = len(sparse) * experts * _gated_mlp(h, expert_width)
    acc.shared_experts = len(sparse) * shared * _gated_mlp(h, expert_width)
    acc.router = len(sparse) * (experts * h + correction)
    acc.norms = s.layers * 2 * h
    moe = {
        "experts": experts,
        "experts_per_token": top_k,
        "shared_experts": shared,
        "moe_intermediate_size": expert_width,
        "intermediate_size": width,
        "sparse_layers": tuple(sparse),
    }
    mla = {"kv_lora_rank": kv_lora, "qk_rope_head_dim": rope, "head_dim": v_dim}
    return acc, moe, mla


# --------------------------------------------------------------------------- entry point


def derive(config: Mapping[str, Any]) -> DerivedModel:
    """The catalog's view of a config.json; raises HFConfigError naming the field at fault."""
    if not isinstance(config, Mapping):
        raise HFConfigError("", "must be a JSON object")
    family = _family(config)
    notes: list[str] = []
    text = config
    prefix = ""
    if family == "gemma3" and config.get("model_type") == "gemma3":
        text = config.get("text_config")  # type: ignore[assignment]
        if not isinstance(text, Mapping):
            raise HFConfigError("text_config", "required for a Gemma 3 multimodal config")
        prefix = "text_config."
        notes.append("multimodal checkpoint: the text decoder is counted, the vision tower is not")
    f = _Fields(text, prefix)
    if family == "gemma3":
        # Gemma3TextConfig defaults, used when the config leaves them out (as the 27B's does).
        defaults = {"vocab_size": 262_208, "max_position_embeddings": 131_072}
        missing = {k: v for k, v in defaults.items() if not f.present(k)}
        if missing:
            text = {**text, **missing}
            f = _Fields(text, prefix)
            notes.append("transformers' Gemma 3 defaults used for " + ", ".join(sorted(missing)))
        s = _shape(f, head_dim_default=256, tie_default=True)
    else:
        s = _shape(f)
    max_context = f.optional_integer("max_position_embeddings", maximum=2**31 - 1)

    moe: dict[str, Any] = {}
    mla: dict[str, int] = {}
    if family in ("qwen2_moe", "qwen3_moe"):
        acc, moe = _qwen_moe(family, f, s)
    elif family == "mixtral":
        acc, moe = _mixtral(f, s)
    elif family == "gpt_oss":
        acc, moe = _gpt_oss(f, s)
    elif family == "deepseek_v3":
        acc, moe, mla = _deepseek_v3(f, s)
        if f.present("num_nextn_predict_layers"):
            notes.append("multi-token-prediction layers (num_nextn_predict_layers) are not counted")
    else:
        acc = _dense_decoder(family, f, s)
        moe = {"intermediate_size": f.integer("intermediate_size")}
    if family == "deepseek_v3":
        window, windowed = None, 0
    else:
        window, windowed = _sliding(f, s.layers, family=family, max_context=max_context, notes=notes)

    embedding = s.vocab * s.hidden
    params = ParamBreakdown(
        embedding=embedding,
        lm_head=0 if s.tied else embedding,
        attention=acc.attention,
        dense_mlp=acc.dense_mlp,
        shared_experts=acc.shared_experts,
        routed_experts=acc.routed_experts,
        router=acc.router,
        norms=acc.norms + s.hidden,  # + the final norm
    )
    attention_kind = MLA if mla else default_attention(s.heads, s.kv_heads)
    experts = moe.get("experts")
    configs = [(config, "")] + ([(text, prefix)] if text is not config else [])
    quant, quant_field = _quantization_config(configs)
    native = _native_precision(quant, [c for c, _ in configs], notes)
    layout = ComponentLayout.build(
        s.layers, moe.get("sparse_layers", ()) if experts else None, bool(acc.shared_experts), lm_head=not s.tied
    )
    quantization = read_quantization_config(quant, quant_field, layout) if quant is not None else None
    return DerivedModel(
        family=family,
        layers=s.layers,
        hidden_size=s.hidden,
        attention_heads=s.heads,
        kv_heads=s.kv_heads,
        head_dim=mla.get("head_dim", s.head_dim),
        attention=attention_kind,
        vocab_size=s.vocab,
        tie_word_embeddings=s.tied,
        params=params,
        intermediate_size=moe.get("intermediate_size"),
        kv_lora_rank=mla.get("kv_lora_rank"),
        qk_rope_head_dim=mla.get("qk_rope_head_dim"),
        sliding_window=window,
        sliding_window_layers=windowed,
        experts=experts,
        experts_per_token=moe.get("experts_per_token"),
        shared_experts=moe.get("shared_experts") if experts else None,
        moe_intermediate_size=moe.get("moe_intermediate_size"),
        native_precision=native,
        max_context=max_context,
        hf_repo=_hf_repo(config),
        assumptions=tuple(notes),
        sparse_layers=moe.get("sparse_layers", ()),
        quantization=quantization,
    )


_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _hf_repo(config: Mapping[str, Any]) -> str | None:
    name = config.get("_name_or_path")
    return name if isinstance(name, str) and len(name) <= 200 and _REPO_ID.match(name) else None


# --------------------------------------------------------------------------- quantized components
#
# The catalog stores the list only where it says something the format's convention does not
# (precision.quantized_by_default over the linear components the model has): a list equal
# to the convention is stored null, so null keeps meaning "the convention holds", and the
# import notes say the list was read and agreed.


def _ranges(layers: Iterable[int], limit: int = 12) -> str:
    """0, 2-5, 125: layer indices as runs."""
    runs = []
    for _, group in groupby(enumerate(sorted(layers)), lambda pair: pair[1] - pair[0]):
        run = [value for _, value in group]
        runs.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(runs[:limit]) + (", …" if len(runs) > limit else "")


def _listed(entries: list[str], limit: int = 3) -> str:
    shown = [repr(e if len(e) <= 60 else e[:57] + "...") for e in entries[:limit]]
    return ", ".join(shown) + (f" and {len(entries) - limit} more" if len(entries) > limit else "")


def read_ignore_list(entries: Iterable[str], layout: ComponentLayout, source: str, field: str = "") -> ComponentReading:
    """The linear components a checkpoint quantizes, by its ignore list: those the list does
    not cover on every layer they sit on. Embeddings and the LM head are never reported as
    quantized from a list (the formats keep them in 16 bits by convention)."""
    kept: dict[str, set[int]] = {name: set() for name in COMPONENTS}
    unread: list[str] = []
    guessed: list[str] = []
    cache: dict[tuple[str, bool], frozenset[int] | None] = {}
    for entry in entries:
        scope = module_scope(entry, layout.depth, cache)
        if len(cache) > MAX_LAYER_PATTERNS:
            raise HFConfigError(field, f"more than {MAX_LAYER_PATTERNS} distinct layer patterns")
        if scope.components is None:
            unread.append(entry)
            continue
        if scope.guessed:
            guessed.append(entry)
        for name in scope.components:
            on = layout.layers.get(name)
            if on is not None:
                kept[name] |= on if scope.layers is None else scope.layers & on
            elif name == EMBEDDINGS or (name == LM_HEAD and layout.lm_head):
                kept[name].add(-1)
    quantized = tuple(name for name in LINEAR_COMPONENTS if name in layout.layers and kept[name] < layout.layers[name])
    partial = {name: tuple(sorted(kept[name])) for name in quantized if kept[name]}
    notes = []
    if unread:
        notes.append(f"{source}: {_listed(unread)} name{'s' if len(unread) == 1 else ''} no component: not counted")
    if guessed:
        notes.append(f"{source}: the layer part of {_listed(guessed)} could not be read: taken as every layer")
    held = tuple(name for name in COMPONENTS if kept[name] and name not in quantized)
    return ComponentReading(quantized, source, held, partial, tuple(notes))


def read_quantization_config(quant: Mapping[str, Any], where: str, layout: ComponentLayout) -> ComponentReading | None:
    """What a quantization_config's ignore lists say (None: it has none). `where` is its
    dotted field name; a list that is not a list of strings is an HFConfigError."""
    entries: list[str] = []
    read: list[str] = []
    inner = quant.get("quantization")
    holders = [(quant, where)] + ([(inner, f"{where}.quantization")] if isinstance(inner, Mapping) else [])
    for holder, prefix in holders:
        for key in IGNORE_LIST_KEYS:
            value = holder.get(key)
            if value is None:
                continue
            name = f"{prefix}.{key}"
            if (
                not isinstance(value, list)
                or len(value) > MAX_IGNORE_ENTRIES
                or not all(isinstance(v, str) and len(v) <= MAX_IGNORE_ENTRY_LENGTH for v in value)
            ):
                raise HFConfigError(
                    name,
                    f"must be a list of at most {MAX_IGNORE_ENTRIES} module names or patterns "
                    f"of at most {MAX_IGNORE_ENTRY_LENGTH} characters",
                )
            read.append(name)
            entries.extend(value)
    if not read:
        return None
    return read_ignore_list(entries, layout, "config.json " + " and ".join(read), field=read[0])


def _format(native: str | None) -> str | None:
    try:
        return normalise(native) if native is not None else None
    except UnknownPrecision:
        return None


def settle_quantized_components(
    derived: DerivedModel, summary: HeaderSummary | None
) -> tuple[list[str] | None, list[str]]:
    """(quantized_components to store, notes saying where it came from).

    The header's dtypes beat the config's ignore lists (a note says when they disagree). The
    list is stored only where it differs from the format's convention; null when it agrees,
    when nothing says (no list, no header) or when the format is unknown or not quantized."""
    layout = derived.layout
    config = derived.quantization
    header = read_header_components(summary, layout) if summary is not None else None
    chosen = header or config
    notes = list(config.notes) if config is not None else []
    if chosen is None:
        return None, notes
    fmt = _format(derived.native_precision)
    if fmt is None or not is_quantized(fmt):
        if header is not None and header.quantized and fmt is not None:
            notes.append(
                f"the safetensors header stores {', '.join(header.quantized)} in a quantized dtype, but "
                f"native_precision is {fmt}: quantized_components left null"
            )
        elif fmt is None:
            notes.append(f"{chosen.source} read, but the weight format is unknown: quantized_components left null")
        return None, notes
    convention = tuple(name for name in quantized_by_default(fmt) if name in layout.layers)
    value = None if set(chosen.quantized) == set(convention) else list(chosen.quantized)
    kept = f"; {', '.join(chosen.kept)} kept in 16 bits" if chosen.kept else ""
    if value is None:
        notes.append(
            f"quantized_components null (the {fmt} convention, {', '.join(convention) or 'none'}): "
            f"{chosen.source} agree{'' if chosen is header else 's'}{kept}"
        )
    else:
        notes.append(
            f"quantized_components {', '.join(value) or 'none'}: from {chosen.source}{kept} "
            f"(the {fmt} convention would be {', '.join(convention) or 'none'})"
        )
    where = "the safetensors header" if chosen is header else "the ignore list"
    for name, layers in chosen.partial.items():
        plural = "s" if len(layers) > 1 else ""
        notes.append(f"{name} counted as quantized, but {where} keeps layer{plural} {_ranges(layers)} in 16 bits")
    if header is not None and config is not None and set(header.quantized) != set(config.quantized):
        notes.append(
            f"the safetensors header quantizes {', '.join(header.quantized) or 'nothing'}, {config.source} "
            f"implies {', '.join(config.quantized) or 'nothing'}: the header's dtypes are used"
        )
    return value, notes

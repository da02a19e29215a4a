"""A model's architecture and parameter count from its Hugging Face `config.json`, and the
exact count from its safetensors header(s), without ever reading a weight.

Standard library and the sizing core only: the API and the CLI both call in here and map the two error types
to their own answers. Counts follow the modelling code of each family in transformers
(every weight, bias and norm a checkpoint stores), with the catalog's conventions
(catalog_seed/SCHEMA.md): `expert_params` is the routed experts only, `params_active`
includes the embedding and the LM head, and a multimodal checkpoint counts its text decoder.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.sizing.memory import kv_bytes_per_token
from app.sizing.specs import ModelSpec

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

MAX_HEADER_BYTES = 16 * 1024 * 1024
MAX_TENSORS = 1_000_000
MAX_SHARDS = 10_000
MAX_RANK = 8


class HFConfigError(ValueError):
    """config.json lacks a field the family needs, or holds one that makes no sense.

    `field` is a dotted path inside the config (`text_config.hidden_size`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class HeaderError(ValueError):
    """A safetensors header (or index of headers) that is malformed or over the size cap.

    `path` is a dotted path inside the header ("" for the whole); `too_large` marks the cap."""

    def __init__(self, message: str, path: str = "", *, too_large: bool = False) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message
        self.too_large = too_large


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

    @property
    def params_total(self) -> int:
        return self.params.total

    @property
    def expert_params(self) -> int | None:
        return self.params.routed_experts if self.experts else None

    def params_active(self, params_total: int | None = None) -> int:
        """Everything but the routed experts, plus k/E of them (SCHEMA.md's convention)."""
        total = self.params_total if params_total is None else params_total
        if not self.experts or not self.experts_per_token:
            return total
        routed = self.params.routed_experts
        # routed is layers x experts x per-expert, so the division is exact.
        return total - routed + routed * self.experts_per_token // self.experts

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


def _native_precision(configs: list[Mapping[str, Any]], notes: list[str]) -> str | None:
    """The checkpoint's weight format: a quantization_config wins over torch_dtype."""
    for config in configs:
        quant = config.get("quantization_config")
        if isinstance(quant, Mapping):
            method = str(quant.get("quant_method", "")).lower()
            bits = quant.get("bits")
            if method in ("fp8", "mxfp4"):
                return method
            if method in ("gptq", "awq") and bits in (4, 8):
                return "int4" if bits == 4 else "int8"
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
        windowed = layers  # Mistral v0.1, Phi-3: one window on every layer.
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
    elif hidden % heads:
        raise HFConfigError(fields.name("head_dim"), "required: hidden_size is not a multiple of num_attention_heads")
    else:
        head_dim = hidden // heads
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
    }
    return acc, moe


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
    moe = {"experts": experts, "experts_per_token": top_k, "shared_experts": 0, "moe_intermediate_size": width}
    return acc, moe


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
    moe = {"experts": experts, "experts_per_token": top_k, "shared_experts": 0, "moe_intermediate_size": width}
    return acc, moe


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
    attention_kind = "mla" if mla else "mha" if s.kv_heads == s.heads else "gqa"
    experts = moe.get("experts")
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
        native_precision=_native_precision([config, text] if text is not config else [config], notes),
        max_context=max_context,
        hf_repo=_hf_repo(config),
        assumptions=tuple(notes),
    )


_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _hf_repo(config: Mapping[str, Any]) -> str | None:
    name = config.get("_name_or_path")
    return name if isinstance(name, str) and len(name) <= 200 and _REPO_ID.match(name) else None


# --------------------------------------------------------------------------- safetensors

# Bytes per element as stored; sub-byte formats are packed (F4: two per byte).
DTYPE_BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64, "F64": 64,
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}  # fmt: skip

# Quantisation side tensors: stored, but not parameters of the model.
SCALE_SUFFIXES = ("_scales", ".weight_scale_inv", ".weight_scale", ".input_scale", ".scales")
# gpt-oss stores MXFP4 weights as U8 `*_blocks`: two 4-bit values per byte.
MXFP4_BLOCKS_SUFFIX = "_blocks"
NON_TEXT_PREFIXES = ("vision_tower.", "multi_modal_projector.", "model.vision_tower.", "model.multi_modal_projector.")
_LAYER_INDEX = re.compile(r"(?:^|\.)layers\.(\d+)\.")


@dataclass
class HeaderSummary:
    """Exact counts from safetensors headers: nothing here comes from the config."""

    params_total: int = 0
    tensors: int = 0
    bytes_total: int = 0
    bytes_by_dtype: dict[str, int] = field(default_factory=dict)
    params_by_dtype: dict[str, int] = field(default_factory=dict)
    mxfp4_packed_bytes: int = 0
    scale_bytes: int = 0
    excluded_params: dict[str, int] = field(default_factory=dict)
    shards: int = 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "params_total": self.params_total,
            "tensors": self.tensors,
            "shards": self.shards,
            "bytes_total": self.bytes_total,
            "bytes_by_dtype": dict(sorted(self.bytes_by_dtype.items())),
            "params_by_dtype": dict(sorted(self.params_by_dtype.items())),
            "mxfp4_packed_bytes": self.mxfp4_packed_bytes,
            "quantization_scale_bytes": self.scale_bytes,
            "excluded_params": dict(sorted(self.excluded_params.items())),
        }


def _tensor_entry(name: str, entry: Any, where: str) -> tuple[str, tuple[int, ...], int]:
    """(dtype, shape, stored bytes) of one header entry, checked for consistency."""
    path = f"{where}{name}"
    if not isinstance(entry, Mapping):
        raise HeaderError("must be an object with dtype, shape and data_offsets", path)
    dtype = entry.get("dtype")
    if dtype not in DTYPE_BITS:
        raise HeaderError(f"dtype must be one of {', '.join(DTYPE_BITS)}, got {dtype!r}", f"{path}.dtype")
    shape = entry.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_RANK
        or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**40 for d in shape)
    ):
        raise HeaderError(f"must be a list of at most {MAX_RANK} non-negative integers", f"{path}.shape")
    offsets = entry.get("data_offsets")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)
        or offsets[0] > offsets[1]
    ):
        raise HeaderError("must be [begin, end] with 0 <= begin <= end", f"{path}.data_offsets")
    elements = math.prod(shape)
    stored = offsets[1] - offsets[0]
    if stored != (elements * DTYPE_BITS[dtype] + 7) // 8:
        raise HeaderError(f"{stored} bytes do not hold {shape} {dtype}", f"{path}.data_offsets")
    return str(dtype), tuple(shape), stored


def _add_header(summary: HeaderSummary, header: Any, where: str, seen: set[str], layers: int | None) -> None:
    if not isinstance(header, Mapping):
        raise HeaderError(
            "must be a JSON object mapping tensor names to {dtype, shape, data_offsets}", where.rstrip(".")
        )
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, Mapping) or not all(isinstance(v, str) for v in entry.values()):
                raise HeaderError("must map strings to strings", f"{where}__metadata__")
            continue
        if name in seen:
            raise HeaderError("tensor appears in more than one shard", f"{where}{name}")
        seen.add(name)
        if len(seen) > MAX_TENSORS:
            raise HeaderError(f"more than {MAX_TENSORS} tensors", where.rstrip("."), too_large=True)
        dtype, shape, stored = _tensor_entry(name, entry, where)
        elements = math.prod(shape)
        summary.tensors += 1
        summary.bytes_total += stored
        summary.bytes_by_dtype[dtype] = summary.bytes_by_dtype.get(dtype, 0) + stored
        if name.endswith(SCALE_SUFFIXES):
            summary.scale_bytes += stored
            continue
        if name.endswith(MXFP4_BLOCKS_SUFFIX) and dtype == "U8":
            summary.mxfp4_packed_bytes += stored
            elements *= 2
            dtype = "MXFP4"
        excluded = _excluded(name, layers)
        if excluded:
            summary.excluded_params[excluded] = summary.excluded_params.get(excluded, 0) + elements
            continue
        summary.params_total += elements
        summary.params_by_dtype[dtype] = summary.params_by_dtype.get(dtype, 0) + elements


def _excluded(name: str, layers: int | None) -> str | None:
    """Why a tensor is not part of the text decoder the catalog counts, or None."""
    if name.startswith(NON_TEXT_PREFIXES):
        return "vision"
    if layers is not None and not name.startswith(("model.vision", "vision")):
        match = _LAYER_INDEX.search(name)
        if match and int(match.group(1)) >= layers:
            return "extra_layers"  # DeepSeek's multi-token-prediction layer(s)
    return None


def summarise_header(header: Any, *, layers: int | None = None) -> HeaderSummary:
    """Count a safetensors header, or an index `{"weight_map": ..., "headers": {shard: header}}`.

    `layers` (the config's num_hidden_layers) sets tensors of higher layer indices apart.
    """
    if not isinstance(header, Mapping):
        raise HeaderError("must be a JSON object (a safetensors header or an index with headers)")
    summary = HeaderSummary()
    seen: set[str] = set()
    shards = header.get("headers")
    if isinstance(shards, Mapping) and "dtype" not in shards:
        if not shards:
            raise HeaderError("must hold at least one shard header", "headers")
        if len(shards) > MAX_SHARDS:
            raise HeaderError(f"more than {MAX_SHARDS} shards", "headers", too_large=True)
        weight_map = header.get("weight_map")
        if weight_map is not None:
            if not isinstance(weight_map, Mapping) or not all(isinstance(v, str) for v in weight_map.values()):
                raise HeaderError("must map tensor names to shard file names", "weight_map")
            missing = sorted(set(weight_map.values()) - set(shards))
            if missing:
                raise HeaderError(f"no header given for shard(s) {', '.join(missing[:5])}", "headers")
        for shard, shard_header in shards.items():
            _add_header(summary, shard_header, f"headers.{shard}.", seen, layers)
        summary.shards = len(shards)
        if weight_map is not None:
            absent = sorted(set(weight_map) - seen)
            if absent:
                raise HeaderError(f"tensor(s) not in their shard's header: {', '.join(absent[:5])}", "weight_map")
    else:
        _add_header(summary, header, "", seen, layers)
    if summary.tensors == 0:
        raise HeaderError("holds no tensors")
    return summary


def read_header_bytes(path: Path) -> bytes:
    """The JSON header of a .safetensors file: its 8-byte length, then only those bytes."""
    with path.open("rb") as handle:
        prefix = handle.read(8)
        if len(prefix) != 8:
            raise HeaderError(f"{path.name}: too short for a safetensors file")
        (length,) = struct.unpack("<Q", prefix)
        if length > MAX_HEADER_BYTES:
            raise HeaderError(f"{path.name}: header of {length} bytes is over {MAX_HEADER_BYTES}", too_large=True)
        data = handle.read(length)
    if len(data) != length:
        raise HeaderError(f"{path.name}: truncated header")
    return data


def _json(data: bytes, label: str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HeaderError(f"{label}: not valid JSON ({exc})") from None


def load_header_file(path: Path) -> Any:
    """A header as `summarise_header` takes it, from a file on disk. Accepts a .safetensors
    file (only its header is read), a JSON header, an index with a "headers" map, or a
    `model.safetensors.index.json` whose shards sit beside it (their headers are read)."""
    with path.open("rb") as handle:
        first = handle.read(1)
    if first not in (b"{", b" ", b"\n", b"\r", b"\t"):
        return _json(read_header_bytes(path), path.name)
    if path.stat().st_size > MAX_HEADER_BYTES:
        raise HeaderError(f"{path.name}: over {MAX_HEADER_BYTES} bytes", too_large=True)
    document = _json(path.read_bytes(), path.name)
    if isinstance(document, Mapping) and "weight_map" in document and "headers" not in document:
        weight_map = document["weight_map"]
        if not isinstance(weight_map, Mapping):
            raise HeaderError("must map tensor names to shard file names", "weight_map")
        headers: dict[str, Any] = {}
        budget = MAX_HEADER_BYTES
        for shard in sorted({str(v) for v in weight_map.values()}):
            shard_path = path.parent / Path(shard).name
            if not shard_path.is_file():
                raise HeaderError(f"shard {shard} not found beside {path.name}", "headers")
            data = read_header_bytes(shard_path)
            budget -= len(data)
            if budget < 0:
                raise HeaderError(f"shard headers total over {MAX_HEADER_BYTES} bytes", too_large=True)
            headers[shard] = _json(data, shard)
        return {**document, "headers": headers}
    return document

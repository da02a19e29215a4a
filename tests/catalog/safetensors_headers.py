"""Safetensors headers for small models, built tensor by tensor as transformers names and
shapes them, so that the header count can be checked against the config-derived one."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

BITS = {"BF16": 16, "F32": 32, "U8": 8, "F8_E4M3": 8, "I8": 8}


class HeaderBuilder:
    """Appends tensors with consecutive data offsets, as a safetensors writer lays them out."""

    def __init__(self) -> None:
        self.header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
        self.offset = 0

    def add(self, name: str, shape: list[int], dtype: str = "BF16") -> None:
        size = math.prod(shape) * BITS[dtype] // 8
        self.header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [self.offset, self.offset + size]}
        self.offset += size


def dense_header(config: dict[str, Any]) -> dict[str, Any]:
    """A Llama / Mistral / Qwen2 / Qwen3 checkpoint's header (qwen2: q/k/v biases; qwen3: QK-norm)."""
    family = config["model_type"]
    h, layers, vocab = config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    hd = config.get("head_dim", h // heads)
    width = config["intermediate_size"]
    b = HeaderBuilder()
    b.add("model.embed_tokens.weight", [vocab, h])
    for i in range(layers):
        p = f"model.layers.{i}."
        for proj, rows in (("q_proj", heads * hd), ("k_proj", kv * hd), ("v_proj", kv * hd)):
            b.add(f"{p}self_attn.{proj}.weight", [rows, h])
            if family == "qwen2":
                b.add(f"{p}self_attn.{proj}.bias", [rows])
        b.add(f"{p}self_attn.o_proj.weight", [h, heads * hd])
        if family == "qwen3":
            b.add(f"{p}self_attn.q_norm.weight", [hd])
            b.add(f"{p}self_attn.k_norm.weight", [hd])
        b.add(f"{p}mlp.gate_proj.weight", [width, h])
        b.add(f"{p}mlp.up_proj.weight", [width, h])
        b.add(f"{p}mlp.down_proj.weight", [h, width])
        b.add(f"{p}input_layernorm.weight", [h])
        b.add(f"{p}post_attention_layernorm.weight", [h])
    b.add("model.norm.weight", [h])
    if not config.get("tie_word_embeddings", False):
        b.add("lm_head.weight", [vocab, h])
    return b.header


def gpt_oss_header(config: dict[str, Any]) -> dict[str, Any]:
    """A gpt-oss checkpoint's header: experts as MXFP4 blocks (U8, two values a byte) with
    one E8M0 scale byte per 32 values, the rest bf16."""
    h, layers, vocab = config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]
    heads, kv, hd = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    experts, width = config["num_local_experts"], config["intermediate_size"]
    b = HeaderBuilder()
    b.add("model.embed_tokens.weight", [vocab, h])
    for i in range(layers):
        p = f"model.layers.{i}."
        for proj, rows in (("q_proj", heads * hd), ("k_proj", kv * hd), ("v_proj", kv * hd)):
            b.add(f"{p}self_attn.{proj}.weight", [rows, h])
            b.add(f"{p}self_attn.{proj}.bias", [rows])
        b.add(f"{p}self_attn.o_proj.weight", [h, heads * hd])
        b.add(f"{p}self_attn.o_proj.bias", [h])
        b.add(f"{p}self_attn.sinks", [heads])
        b.add(f"{p}mlp.router.weight", [experts, h])
        b.add(f"{p}mlp.router.bias", [experts])
        b.add(f"{p}mlp.experts.gate_up_proj_blocks", [experts, 2 * width, h // 32, 16], "U8")
        b.add(f"{p}mlp.experts.gate_up_proj_scales", [experts, 2 * width, h // 32], "U8")
        b.add(f"{p}mlp.experts.gate_up_proj_bias", [experts, 2 * width])
        b.add(f"{p}mlp.experts.down_proj_blocks", [experts, h, width // 32, 16], "U8")
        b.add(f"{p}mlp.experts.down_proj_scales", [experts, h, width // 32], "U8")
        b.add(f"{p}mlp.experts.down_proj_bias", [experts, h])
        b.add(f"{p}input_layernorm.weight", [h])
        b.add(f"{p}post_attention_layernorm.weight", [h])
    b.add("model.norm.weight", [h])
    b.add("lm_head.weight", [vocab, h])
    return b.header


def requantized(header: dict[str, Any], dtype: str, quantize: Callable[[str], bool]) -> dict[str, Any]:
    """The same tensors, the weight matrices `quantize` picks stored in `dtype` (offsets laid
    out again), each with a per-channel F32 `weight_scale` as FP8 / INT8 checkpoints store them."""
    b = HeaderBuilder()
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        picked = name.endswith(".weight") and len(tensor["shape"]) == 2 and quantize(name)
        b.add(name, tensor["shape"], dtype if picked else tensor["dtype"])
        if picked:
            b.add(name.removesuffix(".weight") + ".weight_scale", [tensor["shape"][0], 1], "F32")
    return b.header


def header_size(header: dict[str, Any]) -> int:
    """Bytes of tensor data the header describes."""
    return max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)


def write_safetensors(path: Path, header: dict[str, Any]) -> None:
    """A real .safetensors file: 8-byte length, JSON header, then (zeroed) tensor data."""
    encoded = json.dumps(header).encode()
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", len(encoded)))
        handle.write(encoded)
        handle.write(b"\0" * header_size(header))


TINY_LLAMA = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 176,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
    "tie_word_embeddings": False,
    "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16",
}

TINY_GPT_OSS = {
    "model_type": "gpt_oss",
    "hidden_size": 64,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_local_experts": 4,
    "num_experts_per_tok": 2,
    "vocab_size": 500,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"],
    "max_position_embeddings": 4096,
    "quantization_config": {"quant_method": "mxfp4"},
}

"""A model's exact parameter count, its dtypes and its quantized components from its
safetensors header(s), without ever reading a weight.

Standard library and the sizing core only. A header is the JSON a .safetensors file starts
with (tensor name -> dtype, shape, data offsets), or an index of one per shard; nothing here
looks at config.json (hf_config does, and settles what the two say together).
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

from app.catalog.checkpoint_components import AUX_SUFFIXES, ComponentLayout, ComponentReading, tensor_component
from app.sizing.memory import COMPONENTS

MAX_HEADER_BYTES = 16 * 1024 * 1024
MAX_TENSORS = 1_000_000
MAX_SHARDS = 10_000
MAX_RANK = 8


class HeaderError(ValueError):
    """A safetensors header (or index of headers) that is malformed or over the size cap.

    `path` is a dotted path inside the header ("" for the whole); `too_large` marks the cap."""

    def __init__(self, message: str, path: str = "", *, too_large: bool = False) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message
        self.too_large = too_large


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
# safetensors dtypes a quantized weight is stored in (packed int4 as I32/U8, MXFP4 blocks as U8).
QUANTIZED_DTYPES = frozenset({"F8_E4M3", "F8_E5M2", "I8", "U8", "I32", "U32", "F4", "F6_E2M3", "F6_E3M2", "MXFP4"})
KEPT_DTYPES = frozenset({"BF16", "F16", "F32", "F64"})


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
    # Weight matrices per component (memory.COMPONENTS) and layer (-1: none), as
    # [stored in a quantized dtype, stored in 16/32 bits]; read by read_header_components.
    component_weights: dict[str, dict[int, list[int]]] = field(default_factory=dict)

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
        _tally_component(summary, name, dtype, shape)


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


def _tally_component(summary: HeaderSummary, name: str, dtype: str, shape: tuple[int, ...]) -> None:
    """Count one weight matrix towards its component: quantized dtype or 16/32-bit."""
    if len(shape) < 2 or name.endswith(AUX_SUFFIXES) or name.endswith(("bias", "_bias")):
        return
    if dtype in QUANTIZED_DTYPES:
        slot = 0
    elif dtype in KEPT_DTYPES:
        slot = 1
    else:
        return
    component = tensor_component(name)
    if component is None:
        return
    match = _LAYER_INDEX.search(name)
    layer = int(match.group(1)) if match else -1
    summary.component_weights.setdefault(component, {}).setdefault(layer, [0, 0])[slot] += 1


def read_header_components(summary: HeaderSummary, layout: ComponentLayout) -> ComponentReading | None:
    """The components whose weight matrices the header stores in a quantized dtype (None:
    it holds no weight the import can place). A layer of a component counts as quantized
    when at least half its matrices are; the component when any layer is."""
    if not summary.component_weights:
        return None
    quantized: list[str] = []
    kept: list[str] = []
    partial: dict[str, tuple[int, ...]] = {}
    for name in COMPONENTS:
        by_layer = summary.component_weights.get(name)
        if not by_layer:
            continue
        narrow = {layer for layer, (q, k) in by_layer.items() if q and q >= k}
        if not narrow:
            kept.append(name)
            continue
        quantized.append(name)
        wide = sorted(layer for layer in by_layer if layer not in narrow and layer >= 0)
        if wide:
            partial[name] = tuple(wide)
    return ComponentReading(tuple(quantized), "the safetensors header's dtypes", tuple(kept), partial)

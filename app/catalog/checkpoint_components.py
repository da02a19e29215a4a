"""Which model component a checkpoint's module or tensor name belongs to, and where each
component sits: what both halves of the Hugging Face import share (the config's
quantization_config ignore lists in hf_config, the safetensors header's dtypes in
safetensors_header).

Module names map to components (memory.COMPONENTS) by the names transformers gives them
(module_scope). A component counts as quantized unless the checkpoint keeps it in 16 bits on
every layer it has; layers kept in 16 bits in a quantized component are noted.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.sizing.memory import ATTENTION, COMPONENTS, DENSE_MLP, EMBEDDINGS, EXPERTS, LM_HEAD

LINEAR_COMPONENTS = (ATTENTION, DENSE_MLP, EXPERTS)
MAX_LAYER_PATTERN_LENGTH = 100

# Quantization side tensors that are neither a weight nor a scale summarise_header sets apart.
AUX_SUFFIXES = ("qzeros", "g_idx", "weight_zero_point", "weight_shape", "weight_global_scale", "input_global_scale")

_ATTENTION_TOKENS = frozenset(
    {"self_attn", "attn", "attention", "self_attention", "q_proj", "k_proj", "v_proj", "o_proj", "out_proj"}
)
_ATTENTION_PREFIXES = ("qkv", "kv_a", "kv_b", "q_a", "q_b")  # fused QKV, MLA's low-rank projections
_MLP_PROJECTIONS = frozenset({"gate_proj", "up_proj", "down_proj", "gate_up_proj", "w1", "w2", "w3", "fc1", "fc2"})
_MLP_BLOCKS = frozenset({"mlp", "feed_forward", "ffn", "block_sparse_moe", "moe"})
_ROUTER_TOKENS = frozenset({"gate", "router", "shared_expert_gate"})
_EMBEDDING_TOKENS = frozenset({"embed_tokens", "wte", "word_embeddings", "embeddings"})
_NOT_DECODER = ("vision", "visual", "multi_modal_projector", "mm_projector", "audio")
_WRAPPERS = frozenset({"model", "language_model", "transformer", "layers"})
_PARAM_TOKENS = frozenset(
    {"weight", "bias", "qweight", "weight_packed", "scales", "weight_scale", "weight_scale_inv", "input_scale"}
    | set(AUX_SUFFIXES)
)
_WILDCARD = "\x01"  # `.*` of a regex, `*` of a glob
_LAYERS_PIECE = re.compile(r"(?:^|[.\x01])layers\.([^.]*)")
_TOKEN_SPLIT = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True)
class ComponentLayout:
    """Where a model's components sit: the layer indices of each linear component it has
    (attention, dense_mlp, experts; absent when it has none), and whether it has its own
    LM head. `depth` is num_hidden_layers."""

    layers: Mapping[str, frozenset[int]]
    depth: int
    lm_head: bool = True

    @classmethod
    def build(
        cls, depth: int, sparse_layers: Iterable[int] | None, shared_experts: bool, *, lm_head: bool
    ) -> ComponentLayout:
        """`sparse_layers`: the MoE layers (None for a dense model). Shared experts count as
        dense_mlp (memory.params_by_component), so with them every layer has a dense MLP."""
        every = frozenset(range(depth))
        sparse = frozenset(sparse_layers) if sparse_layers is not None else frozenset()
        dense = every if shared_experts else every - sparse
        found = {ATTENTION: every, DENSE_MLP: dense, EXPERTS: sparse}
        return cls({name: on for name, on in found.items() if on}, depth, lm_head)


@dataclass(frozen=True)
class ModuleScope:
    """What one module name or ignore-list pattern covers. `components` is None when the
    name maps to no component the import knows; `layers` None means every layer (or a
    module outside the layers); `guessed` marks a layer part that could not be read."""

    components: frozenset[str] | None
    layers: frozenset[int] | None = None
    guessed: bool = False


@dataclass(frozen=True)
class ComponentReading:
    """Which components a checkpoint stores quantized, as one source says, in
    memory.COMPONENTS order; `kept` the ones it keeps in 16 bits throughout; `partial` the
    quantized ones some layers of which stay in 16 bits."""

    quantized: tuple[str, ...]
    source: str
    kept: tuple[str, ...] = ()
    partial: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _normalise_entry(entry: str) -> tuple[str, bool]:
    r"""(text with wildcards as _WILDCARD and `\.` as `.`, whether it was a `re:` regex)."""
    text = entry.strip()
    regex = text.startswith("re:")
    if regex:
        text = text[3:].strip().removeprefix("^").removesuffix("$")
        text = text.replace("\\.", "\0")
        text = re.sub(r"\.[*+]\??", _WILDCARD, text)
        text = text.replace("\0", ".")
    else:
        text = text.replace("*", _WILDCARD)
    return text, regex


def _tokens(text: str) -> list[str]:
    """Identifier pieces of a module name, parameter suffixes of gpt-oss's fused tensors cut."""
    out = []
    for token in _TOKEN_SPLIT.split(text.lower()):
        for suffix in ("_blocks", "_scales", "_bias"):
            token = token.removesuffix(suffix)
        if token:
            out.append(token)
    return out


def _components_named(tokens: list[str]) -> frozenset[str] | None:
    """The component a module path (below the layer index) names; frozenset() for a module
    that is none (norm, router, vision tower); None when the name is not recognised."""
    named = [t for t in tokens if t not in _PARAM_TOKENS]
    if not named:
        return None
    if any(t.startswith(_NOT_DECODER) for t in named):
        return frozenset()
    if "lm_head" in named:
        return frozenset({LM_HEAD})
    if any(t in _EMBEDDING_TOKENS for t in named):
        return frozenset({EMBEDDINGS})
    last = named[-1]
    if "norm" in last or last in _ROUTER_TOKENS or "router" in last:
        return frozenset()
    if any(t.startswith("shared_expert") for t in named):
        return frozenset({DENSE_MLP})
    if "experts" in named:
        return frozenset({EXPERTS})
    if any(t in _ATTENTION_TOKENS or t.startswith(_ATTENTION_PREFIXES) for t in named):
        return frozenset({ATTENTION})
    for index, token in enumerate(named):
        if token in _MLP_PROJECTIONS:
            # `mlp.down_proj` is the dense MLP's; a bare `down_proj` pattern hits the experts' too.
            inside_mlp = index > 0 and named[index - 1] in _MLP_BLOCKS
            return frozenset({DENSE_MLP}) if inside_mlp else frozenset({DENSE_MLP, EXPERTS})
    if last in _MLP_BLOCKS:
        return frozenset({DENSE_MLP, EXPERTS})  # the whole MLP block, experts included
    return None


def _layers_matching(
    piece: str, regex: bool, depth: int, cache: dict[tuple[str, bool], frozenset[int] | None]
) -> frozenset[int] | None:
    """Layer indices the layer part of a name covers; None when it cannot be read."""
    if piece.isdigit():
        return frozenset({int(piece)})
    key = (piece, regex)
    if key not in cache:
        glob = piece.replace(_WILDCARD, "*")
        found: frozenset[int] | None
        if glob == "*":
            found = frozenset(range(depth))
        elif len(piece) > MAX_LAYER_PATTERN_LENGTH:
            found = None
        elif not regex and not any(mark in glob for mark in "\\(|+{"):
            found = frozenset(i for i in range(depth) if fnmatch.fnmatchcase(str(i), glob))
        else:
            # Only layer numbers (at most 5 digits) are matched: a pattern cannot run long.
            try:
                compiled = re.compile(piece.replace(_WILDCARD, ".*"))
            except re.error:
                found = None
            else:
                found = frozenset(i for i in range(depth) if compiled.fullmatch(str(i)))
        cache[key] = found
    return cache[key]


def module_scope(
    name: str, depth: int, cache: dict[tuple[str, bool], frozenset[int] | None] | None = None
) -> ModuleScope:
    """What a module name, glob (`model.layers.*.self_attn`) or `re:` regex of an ignore list
    covers, over a model of `depth` layers.

    `model.layers.0` is every component of layer 0; `*` and `re:.*` everything; names with
    self_attn/attn/attention or q/k/v/o_proj, qkv, kv_a/kv_b, q_a/q_b are attention;
    `experts` the routed experts; mlp and gate/up/down_proj dense_mlp (a bare projection
    pattern, or the whole `mlp` block, the experts too); shared experts dense_mlp;
    embed_tokens/wte embeddings; lm_head itself. Routers and norms are no component."""
    text, regex = _normalise_entry(name)
    match = _LAYERS_PIECE.search(text)
    layers: frozenset[int] | None = None
    guessed = False
    rest = text
    if match:
        layers = _layers_matching(match.group(1), regex, depth, {} if cache is None else cache)
        guessed = layers is None
        rest = text[match.end() :]
    tokens = _tokens(rest)
    if all(t in _WRAPPERS for t in tokens):
        # A whole layer (`model.layers.0`), every layer (`model.layers`), or everything (`*`).
        whole_layers = bool(match) or "layers" in tokens
        return ModuleScope(frozenset(LINEAR_COMPONENTS if whole_layers else COMPONENTS), layers, guessed)
    return ModuleScope(_components_named(tokens), layers, guessed)


def tensor_component(name: str) -> str | None:
    """The component a safetensors tensor belongs to (`model.layers.3.mlp.experts.down_proj_blocks`
    -> experts), or None (norms, routers, sinks, vision tower)."""
    components = module_scope(name, 0).components
    return next(iter(components)) if components is not None and len(components) == 1 else None

"""Plain descriptions of what is planned for: a model, a GPU, a MIG slice.

These are the only inputs the sizing core knows about. The catalog (database rows) and
the API (inline JSON objects) both turn into these before any arithmetic happens, so the
core never sees an ORM object or a request.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Attention kinds the KV-cache formulas distinguish.
MHA = "mha"
GQA = "gqa"
MLA = "mla"
ATTENTION_KINDS = (MHA, GQA, MLA)


# --------------------------------------------------------------------------- model defaults
#
# What a model's omitted architecture fields mean (catalog_seed/SCHEMA.md), wherever a model is
# given: written to the catalog, given inline for planning, seeded, or read from a config.json.


def default_head_dim(hidden_size: int, attention_heads: int) -> int | None:
    """hidden_size / attention_heads; None when that is not whole (the head_dim must be given)."""
    if hidden_size % attention_heads:
        return None
    return hidden_size // attention_heads


def default_attention(attention_heads: int, kv_heads: int) -> str:
    """MHA when every query head has its own KV head, else GQA (MLA is never implied)."""
    return MHA if kv_heads == attention_heads else GQA


def default_sliding_window_layers(layers: int, sliding_window: int | None) -> int:
    """A window with no layer count means every layer is windowed (Mistral 7B v0.1, Phi-3)."""
    return layers if sliding_window else 0


def default_params_active(
    params_total: int, experts: int | None, experts_per_token: int | None, expert_params: int | None
) -> int:
    """Parameters one token uses, in whole parameters: all of a dense model; for a
    mixture-of-experts model everything but the routed experts, plus k/E of them (embedding
    and LM head included). Integer arithmetic, so a count near 10^14 stays exact."""
    if not experts or not experts_per_token or expert_params is None:
        return params_total
    return params_total - expert_params + expert_params * experts_per_token // experts


def model_defaults(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The derivable architecture fields a model leaves out (absent or None), filled in:
    head_dim, attention, sliding_window_layers, params_active. `fields` holds the model's
    validated shape (params_total, layers, hidden_size, attention_heads, kv_heads and the
    expert fields); what it gives wins."""
    head_dim = fields.get("head_dim")
    if head_dim is None:
        head_dim = default_head_dim(fields["hidden_size"], fields["attention_heads"])
    attention = fields.get("attention") or default_attention(fields["attention_heads"], fields["kv_heads"])
    windowed = fields.get("sliding_window_layers")
    if windowed is None:
        windowed = default_sliding_window_layers(fields["layers"], fields.get("sliding_window"))
    active = fields.get("params_active")
    if active is None:
        active = default_params_active(
            fields["params_total"], fields.get("experts"), fields.get("experts_per_token"), fields.get("expert_params")
        )
    return {"head_dim": head_dim, "attention": attention, "sliding_window_layers": windowed, "params_active": active}


@dataclass(frozen=True)
class ModelSpec:
    """A transformer's architecture, as far as memory and timing need it.

    `params_total` counts every stored parameter (embeddings included). For a
    mixture-of-experts model `expert_params` is the routed experts' share of it, all
    experts of all layers; shared experts count as non-expert because every token uses them.
    """

    name: str
    params_total: int
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    attention: str = GQA
    params_active: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    # How many of `layers` attend only to the last `sliding_window` tokens.
    sliding_window_layers: int = 0
    experts: int | None = None
    experts_per_token: int | None = None
    expert_params: int | None = None
    # The checkpoint's weight format; None when the config does not say.
    native_precision: str | None = "bf16"
    max_context: int | None = None
    # What splits the weights into components (memory.params_by_component); None = unknown,
    # and then every parameter counts as a quantizable linear weight.
    vocab_size: int | None = None
    tie_word_embeddings: bool = False
    # Components the checkpoint's own format quantizes (a quantization_config's ignore list
    # read on import); None = the format's convention (precision.QUANTIZED_BY_DEFAULT).
    quantized_components: tuple[str, ...] | None = None
    # Where the checkpoint lives on Hugging Face (org/name).
    hf_repo: str | None = None
    # The instruction-tuned release of the same architecture (what a `vllm serve` line names by
    # default), where hf_repo is a base model's; None when hf_repo is itself the one deployed.
    instruct_repo: str | None = None
    # Other names a request may use for this model (renamed or derived releases of it).
    aliases: tuple[str, ...] = ()

    @property
    def is_moe(self) -> bool:
        return bool(self.experts and self.experts_per_token and self.expert_params)

    @property
    def non_expert_params(self) -> int:
        return self.params_total - (self.expert_params or 0) if self.is_moe else self.params_total

    @property
    def active_params(self) -> float:
        """Parameters one token touches: all of a dense model, shared + k/E of the experts.

        The real-valued share, for the arithmetic; default_params_active is the same rule in
        whole parameters, for the catalog's column."""
        if not self.is_moe:
            return float(self.params_total)
        assert self.experts and self.experts_per_token and self.expert_params
        return self.non_expert_params + self.expert_params * self.experts_per_token / self.experts


@dataclass(frozen=True)
class MigProfile:
    """A MIG slice: `compute_slices` sevenths of the SMs, `memory_slices` eighths of HBM."""

    name: str
    compute_slices: int
    memory_slices: int
    memory_gb: float
    max_instances: int


# How far a model's params_total may sit from what its shape counts (shape_params) before a
# write must say why (params_beyond_shape): the seeded models sit within 0.2%.
PARAMS_SHAPE_TOLERANCE = 0.05


def shape_params(fields: Mapping[str, Any]) -> int | None:
    """The parameters a model's shape (its catalog fields) counts: the embeddings and an untied
    LM head, each layer's Q, K, V and output projections and its gated MLP (three matrices of
    `intermediate_size`, or for a mixture of experts each routed and shared expert's of
    `moe_intermediate_size`, and the router); norms and biases left out. None where the fields
    do not describe the weights: MLA's low-rank projections, no MLP width or no vocabulary."""
    hidden, layers = fields["hidden_size"], fields["layers"]
    vocab = fields.get("vocab_size")
    experts = fields.get("experts")
    width = fields.get("intermediate_size")
    if experts:
        width = fields.get("moe_intermediate_size") or width
    heads, kv_heads = fields["attention_heads"], fields["kv_heads"]
    head_dim = fields.get("head_dim") or default_head_dim(hidden, heads)
    if fields.get("attention") == MLA or not vocab or not width or head_dim is None:
        return None
    embeddings = vocab * hidden * (1 if fields.get("tie_word_embeddings") else 2)
    attention = hidden * (2 * heads * head_dim + 2 * kv_heads * head_dim)
    mlp = 3 * hidden * width
    if experts:
        mlp = mlp * (experts + (fields.get("shared_experts") or 0)) + hidden * experts
    return int(embeddings + layers * (attention + mlp))


# NVIDIA's MIG geometry: HBM in eighths, SMs in at most sevenths (A30 and RTX PRO 6000 in quarters).
MIG_MEMORY_SLICES = 8
MIG_COMPUTE_SLICES = 7


def mig_profile_problems(profile: MigProfile, card_memory_gb: float | None) -> dict[str, str]:
    """What makes a MIG profile impossible on its card, by field: its instances together need
    more memory eighths or compute slices than a card has, or its memory is more than its
    eighths of the card's (NVIDIA's names round up to a whole GB: 3g.71gb is 4/8 of 141 GB)."""
    problems = {}
    n = profile.max_instances
    if profile.memory_slices * n > MIG_MEMORY_SLICES:
        problems["max_instances"] = (
            f"{n} instances of {profile.memory_slices}/{MIG_MEMORY_SLICES} of the memory need "
            f"{profile.memory_slices * n} eighths: a card has {MIG_MEMORY_SLICES}"
        )
    elif profile.compute_slices * n > MIG_COMPUTE_SLICES:
        problems["max_instances"] = (
            f"{n} instances of {profile.compute_slices} compute slices need {profile.compute_slices * n}: "
            f"a card has at most {MIG_COMPUTE_SLICES}"
        )
    if card_memory_gb is not None:
        share_gb = math.ceil(profile.memory_slices * card_memory_gb / MIG_MEMORY_SLICES - 1e-9)
        if profile.memory_gb > share_gb:
            problems["memory_gb"] = (
                f"{profile.memory_gb:g} GB is more than {profile.memory_slices}/{MIG_MEMORY_SLICES} of the card's "
                f"{card_memory_gb:g} GB ({share_gb} GB rounded up)"
            )
    return problems


@dataclass(frozen=True)
class GpuPrices:
    """What a GPU costs beyond its on-demand rate (GpuSpec.hourly_price_usd) and what it draws,
    per whole card; None means not known. A MIG slice's share of them is the card's over its
    profile's max_instances, as its hourly price is (parallelism.slice_target)."""

    reserved_1y_usd_per_hour: float | None = None
    reserved_3y_usd_per_hour: float | None = None
    spot_usd_per_hour: float | None = None
    # The chance that an hour of spot capacity is taken back (0 <= rate < 1).
    spot_interruptions_per_hour: float | None = None
    purchase_usd: float | None = None
    power_w: float | None = None  # board power at full load
    idle_power_w: float | None = None

    def share(self, fraction: float) -> GpuPrices:
        """The prices and power of `fraction` of the card (a MIG slice's); the interruption
        rate is the card's: a slice is taken back with its card."""

        def part(value: float | None) -> float | None:
            return None if value is None else value * fraction

        return GpuPrices(
            reserved_1y_usd_per_hour=part(self.reserved_1y_usd_per_hour),
            reserved_3y_usd_per_hour=part(self.reserved_3y_usd_per_hour),
            spot_usd_per_hour=part(self.spot_usd_per_hour),
            spot_interruptions_per_hour=self.spot_interruptions_per_hour,
            purchase_usd=part(self.purchase_usd),
            power_w=part(self.power_w),
            idle_power_w=part(self.idle_power_w),
        )


@dataclass(frozen=True)
class GpuSpec:
    """A GPU's datasheet figures. None means "not known": planning that needs it refuses.

    `peak_tflops` is dense (no 2:4 sparsity) per precision: keys among bf16, fp16, fp8,
    int8, fp4. `interconnect_bandwidth_gb_per_s` is per direction per GPU (NVLink 4's
    "900 GB/s" total is 450 each way), the figure a ring all-reduce moves data at.
    """

    name: str
    memory_gb: float | None
    memory_bandwidth_tb_per_s: float | None
    peak_tflops: dict[str, float | None] = field(default_factory=dict)
    native_precisions: tuple[str, ...] | None = None
    interconnect_kind: str | None = None
    interconnect_bandwidth_gb_per_s: float | None = None
    interconnect_latency_us: float | None = None
    gpus_per_node: int = 8
    hourly_price_usd: float | None = None
    host_cpu_cores: float | None = None
    mig_profiles: tuple[MigProfile, ...] = ()
    # What the driver shows an engine (torch's total_memory), GiB; a datasheet's "80 GB" H100
    # shows about 79.2 GiB. None = not known: engines then derive it (engine.visible_gib).
    memory_visible_gib: float | None = None
    # hopper, ampere, ada, blackwell, cdna3…: which kernel efficiencies an engine reaches.
    architecture: str | None = None
    prices: GpuPrices = field(default_factory=GpuPrices)

"""Splitting a model over GPUs (tensor parallel) or a GPU over models (MIG slices)."""

from __future__ import annotations

from dataclasses import replace

from .specs import GpuSpec, MigProfile, ModelSpec

# Seed 004: about two all-reduces per layer per decode step (after attention, after the MLP).
ALL_REDUCES_PER_LAYER = 2
# Activations cross the link in 16-bit.
ACTIVATION_BYTES = 2
# MIG splits SMs in sevenths (most cards) and HBM in eighths.
COMPUTE_SLICES_PER_CARD = 7
MEMORY_SLICES_PER_CARD = 8


def valid_tensor_parallel(model: ModelSpec, gpus_per_node: int) -> list[int]:
    """tp must divide the attention heads, kv_heads and tp must divide one another, and the
    group must sit inside one NVLink domain (seed 002: "8 GPUs on a model with 40 heads is a
    crash at startup")."""
    sizes = []
    for tp in range(1, max(gpus_per_node, 1) + 1):
        if model.attention_heads % tp:
            continue
        if model.kv_heads % tp and tp % model.kv_heads:
            continue
        sizes.append(tp)
    return sizes


def all_reduce_s(payload_bytes: float, tp: int, link_bytes_per_s: float, latency_s: float) -> float:
    """Ring all-reduce: each GPU sends and receives 2 (tp - 1) / tp of the payload."""
    return latency_s + 2 * (tp - 1) / tp * payload_bytes / link_bytes_per_s


def tp_communication_s(
    tokens: float,
    hidden_size: int,
    layers: int,
    tp: int,
    link_gb_per_s: float,
    latency_us: float,
) -> float:
    """Time one forward step over `tokens` tokens spends in all-reduces, with no overlap."""
    if tp <= 1:
        return 0.0
    payload = tokens * hidden_size * ACTIVATION_BYTES
    per_collective = all_reduce_s(payload, tp, link_gb_per_s * 1e9, latency_us * 1e-6)
    return ALL_REDUCES_PER_LAYER * layers * per_collective


def ep_all_to_all_s(
    tokens: float,
    hidden_size: int,
    moe_layers: int,
    experts_per_token: int,
    ep: int,
    link_gb_per_s: float,
    latency_us: float,
) -> float:
    """Expert parallel: each MoE layer dispatches every token's hidden state to the GPUs
    holding its k experts and combines the results back (two all-to-alls). Each GPU sends
    its share of the tokens, k copies each, (ep - 1) / ep of them to other GPUs."""
    if ep <= 1:
        return 0.0
    payload = tokens / ep * experts_per_token * hidden_size * ACTIVATION_BYTES * (ep - 1) / ep
    per_all_to_all = latency_us * 1e-6 + payload / (link_gb_per_s * 1e9)
    return 2 * moe_layers * per_all_to_all


def card_compute_slices(gpu: GpuSpec) -> int:
    """Compute slices in a whole card: seven on A100/H100/H200/B200, but four on an A30 or
    an RTX PRO 6000, whose largest profile (the whole card) says so."""
    return max((p.compute_slices for p in gpu.mig_profiles), default=COMPUTE_SLICES_PER_CARD)


def mig_target(gpu: GpuSpec, profile: MigProfile) -> GpuSpec:
    """A MIG slice as a GPU of its own: its own memory, compute_slices/7 of the card's
    compute, memory_slices/8 of its bandwidth, and the same share of the host's CPU cores
    (seed 002: 2 cores for a seventh, 14 for the card). Slices do not form TP groups.

    A slice's prices (and power) are the card's over the profile's max instances: what each
    slice costs when cards are filled with that profile, the way a fleet packs them."""
    compute_share = profile.compute_slices / card_compute_slices(gpu)
    bandwidth_share = profile.memory_slices / MEMORY_SLICES_PER_CARD
    return replace(
        gpu,
        name=f"{gpu.name} MIG {profile.name}",
        memory_gb=profile.memory_gb,
        memory_bandwidth_tb_per_s=(
            None if gpu.memory_bandwidth_tb_per_s is None else gpu.memory_bandwidth_tb_per_s * bandwidth_share
        ),
        peak_tflops={k: None if v is None else v * compute_share for k, v in gpu.peak_tflops.items()},
        gpus_per_node=1,
        interconnect_kind=None,
        interconnect_bandwidth_gb_per_s=None,
        interconnect_latency_us=None,
        hourly_price_usd=None if gpu.hourly_price_usd is None else gpu.hourly_price_usd / profile.max_instances,
        prices=gpu.prices.share(1 / profile.max_instances),
        host_cpu_cores=None if gpu.host_cpu_cores is None else gpu.host_cpu_cores * compute_share,
        mig_profiles=(),
        # The slice's own memory; what the driver shows of it is derived from that.
        memory_visible_gib=None,
    )

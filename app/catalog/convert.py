"""Catalog rows to the sizing core's specs, and to the public JSON shape of API.md.

The only place that knows both the column layout and the outside shapes, so renaming a
column touches this file and the migration, nothing else.
"""

from __future__ import annotations

from typing import Any

from app.catalog.models import Gpu, Model, Precision
from app.catalog.models import MigProfile as MigProfileRow
from app.sizing.specs import GpuSpec, MigProfile, ModelSpec

PEAK_TFLOPS_KEYS = ("bf16", "fp16", "fp8", "int8", "fp4")

# Public model fields in API.md order, then the descriptive extras. All are plain columns.
MODEL_PUBLIC_FIELDS = (
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
    "version",
)


def peak_tflops(row: Gpu) -> dict[str, float | None]:
    """The five per-precision dense peaks of a GPU row, keyed bf16 … fp4."""
    return {key: getattr(row, f"peak_tflops_{key}") for key in PEAK_TFLOPS_KEYS}


def model_to_spec(row: Model) -> ModelSpec:
    """The sizing core's view of a stored model.

    A checkpoint dtype the catalog does not know stays None: planning then asks for an
    explicit weight_precision rather than guessing one.
    """
    return ModelSpec(
        name=row.name,
        params_total=row.params_total,
        layers=row.layers,
        hidden_size=row.hidden_size,
        attention_heads=row.attention_heads,
        kv_heads=row.kv_heads,
        head_dim=row.head_dim,
        attention=row.attention,
        params_active=row.params_active,
        kv_lora_rank=row.kv_lora_rank,
        qk_rope_head_dim=row.qk_rope_head_dim,
        sliding_window=row.sliding_window,
        sliding_window_layers=row.sliding_window_layers,
        experts=row.experts,
        experts_per_token=row.experts_per_token,
        expert_params=row.expert_params,
        max_context=row.max_context,
        native_precision=row.native_precision,
    )


def mig_profile_to_spec(row: MigProfileRow) -> MigProfile:
    """One MIG slice as the sizing core sees it."""
    return MigProfile(
        name=row.name,
        compute_slices=row.compute_slices,
        memory_slices=row.memory_slices,
        memory_gb=row.memory_gb,
        max_instances=row.max_instances,
    )


def _profiles(row: Gpu) -> list[MigProfileRow]:
    # order_by applies when the collection is loaded; profiles added in this session (a seed,
    # a POST) sit in insertion order until then, so sort again for a stable output.
    return sorted(row.mig_profiles, key=MigProfileRow.sort_key)


def gpu_to_spec(row: Gpu) -> GpuSpec:
    """The sizing core's view of a stored GPU, MIG profiles included."""
    return GpuSpec(
        name=row.name,
        memory_gb=row.memory_gb,
        memory_bandwidth_tb_per_s=row.memory_bandwidth_tb_per_s,
        peak_tflops=peak_tflops(row),
        native_precisions=(tuple(row.native_precisions) if row.native_precisions is not None else None),
        interconnect_kind=row.interconnect_kind,
        interconnect_bandwidth_gb_per_s=row.interconnect_bandwidth_gb_per_s,
        interconnect_latency_us=row.interconnect_latency_us,
        gpus_per_node=row.gpus_per_node,
        hourly_price_usd=row.hourly_price_usd,
        host_cpu_cores=row.host_cpu_cores,
        mig_profiles=tuple(mig_profile_to_spec(profile) for profile in _profiles(row)),
    )


def model_to_dict(row: Model) -> dict[str, Any]:
    """A model in the public JSON shape (no database id)."""
    return {field: getattr(row, field) for field in MODEL_PUBLIC_FIELDS}


def mig_profile_to_dict(row: MigProfileRow) -> dict[str, Any]:
    """A MIG profile in the public JSON shape."""
    return {
        "name": row.name,
        "compute_slices": row.compute_slices,
        "memory_slices": row.memory_slices,
        "memory_gb": row.memory_gb,
        "max_instances": row.max_instances,
    }


def gpu_to_dict(row: Gpu) -> dict[str, Any]:
    """A GPU in the public JSON shape: peaks and interconnect nested, profiles listed."""
    return {
        "slug": row.slug,
        "name": row.name,
        "vendor": row.vendor,
        "architecture": row.architecture,
        "form_factor": row.form_factor,
        "memory_gb": row.memory_gb,
        "memory_bandwidth_tb_per_s": row.memory_bandwidth_tb_per_s,
        "peak_tflops": peak_tflops(row),
        "native_precisions": (list(row.native_precisions) if row.native_precisions is not None else None),
        "interconnect": {
            "kind": row.interconnect_kind,
            "bandwidth_gb_per_s": row.interconnect_bandwidth_gb_per_s,
            "latency_us": row.interconnect_latency_us,
        },
        "gpus_per_node": row.gpus_per_node,
        "host_cpu_cores": row.host_cpu_cores,
        "hourly_price_usd": row.hourly_price_usd,
        "price_date": row.price_date,
        "mig_profiles": [mig_profile_to_dict(profile) for profile in _profiles(row)],
        "confidence": row.confidence,
        "source": row.source,
        "notes": row.notes,
        "version": row.version,
    }


def precision_to_dict(row: Precision) -> dict[str, Any]:
    """A precision in the public JSON shape."""
    return {
        "name": row.name,
        "bits": row.bits,
        "bytes_per_param": row.bytes_per_param,
        "kind": row.kind,
        "block_scaled": row.block_scaled,
        "source": row.source,
        "version": row.version,
    }

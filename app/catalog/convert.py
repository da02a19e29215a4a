"""Catalog rows to the sizing core's specs, and to their public JSON shape.

The only place that knows both the column layout and the outside shapes, so renaming a
column touches this file and the migration, nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from app.catalog.models import (
    GPU_COLUMNS,
    INTERCONNECT_KEYS,
    MIG_PROFILE_COLUMNS,
    MODEL_COLUMNS,
    PEAK_TFLOPS_KEYS,
    PRECISION_COLUMNS,
    PRICES_KEYS,
    Engine,
    Gpu,
    Model,
    Precision,
)
from app.catalog.models import MigProfile as MigProfileRow
from app.sizing.engine import EngineProfile, KernelEfficiency, Uncertainty
from app.sizing.specs import GpuPrices, GpuSpec, MigProfile, ModelSpec

# Public model fields: every column in the API's order, then the ETag. All are plain columns.
MODEL_PUBLIC_FIELDS = (*MODEL_COLUMNS, "version")
# The GPU columns a document holds as they are (peaks and interconnect are nested objects).
GPU_PLAIN_COLUMNS = tuple(
    name for name in GPU_COLUMNS if not name.startswith(("peak_tflops_", "interconnect_", "prices_"))
)
# A document's `prices` field held in a column of another name (the rest: gpus.prices_<key>).
PRICES_COLUMNS = {"on_demand_usd_per_hour": "hourly_price_usd", "price_date": "price_date"}
# ModelSpec's fields are all model columns of the same name.
_MODEL_SPEC_FIELDS = tuple(f.name for f in fields(ModelSpec))

# The Uncertainty fields that are [p10, p90] ranges (the others: `rows`, `unseen_widening`).
UNCERTAINTY_RANGES = tuple(f.name for f in fields(Uncertainty) if f.name not in ("rows", "unseen_widening"))
# EngineProfile's scalar fields, stored one column each; `version` is the column
# `engine_version` (the row's own `version` is its ETag), the rest are JSON.
ENGINE_JSON_FIELDS = ("efficiencies", "uncertainty", "fitted_on")
ENGINE_SCALAR_FIELDS = tuple(
    f.name for f in fields(EngineProfile) if f.name not in ("name", "version", *ENGINE_JSON_FIELDS)
)
# Public engine fields: EngineProfile's, with its `version` as `engine_version`, then the ETag.
ENGINE_PUBLIC_FIELDS = (
    "name",
    *(("engine_version" if f.name == "version" else f.name) for f in fields(EngineProfile) if f.name != "name"),
    "version",
)


def peak_tflops(row: Gpu) -> dict[str, float | None]:
    """The five per-precision dense peaks of a GPU row, keyed bf16 … fp4."""
    return {key: getattr(row, f"peak_tflops_{key}") for key in PEAK_TFLOPS_KEYS}


def prices(row: Gpu) -> dict[str, Any]:
    """A GPU row's `prices` object: the on-demand rate first, its month last."""
    return {
        "on_demand_usd_per_hour": row.hourly_price_usd,
        **{key: getattr(row, f"prices_{key}") for key in PRICES_KEYS},
        "price_date": row.price_date,
    }


def model_to_spec(row: Model) -> ModelSpec:
    """The sizing core's view of a stored model.

    A checkpoint dtype the catalog does not know stays None: planning then asks for an
    explicit weight_precision rather than guessing one.
    """
    stored = {name: getattr(row, name) for name in _MODEL_SPEC_FIELDS}
    stored["tie_word_embeddings"] = bool(row.tie_word_embeddings)
    if row.quantized_components is not None:
        stored["quantized_components"] = tuple(row.quantized_components)
    stored["aliases"] = tuple(row.aliases or ())
    return ModelSpec(**stored)


def mig_profile_to_spec(row: MigProfileRow) -> MigProfile:
    """One MIG slice as the sizing core sees it."""
    return MigProfile(**mig_profile_to_dict(row))


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
        memory_visible_gib=row.memory_visible_gib,
        architecture=row.architecture,
        prices=GpuPrices(**{name: getattr(row, f"prices_{name}") for name in GpuPrices.__dataclass_fields__}),
    )


def model_to_dict(row: Model) -> dict[str, Any]:
    """A model in the public JSON shape (no database id)."""
    model = {field: getattr(row, field) for field in MODEL_PUBLIC_FIELDS}
    if model["quantized_components"] is not None:
        model["quantized_components"] = list(model["quantized_components"])
    if model["aliases"] is not None:
        model["aliases"] = list(model["aliases"])
    return model


def mig_profile_to_dict(row: MigProfileRow) -> dict[str, Any]:
    """A MIG profile in the public JSON shape."""
    return {name: getattr(row, name) for name in MIG_PROFILE_COLUMNS}


def gpu_to_dict(row: Gpu) -> dict[str, Any]:
    """A GPU in the public JSON shape: peaks and interconnect nested, profiles listed."""
    return {
        "slug": row.slug,
        "name": row.name,
        "vendor": row.vendor,
        "architecture": row.architecture,
        "form_factor": row.form_factor,
        "memory_gb": row.memory_gb,
        "memory_visible_gib": row.memory_visible_gib,
        "memory_bandwidth_tb_per_s": row.memory_bandwidth_tb_per_s,
        "peak_tflops": peak_tflops(row),
        "native_precisions": (list(row.native_precisions) if row.native_precisions is not None else None),
        "interconnect": {key: getattr(row, f"interconnect_{key}") for key in INTERCONNECT_KEYS},
        "gpus_per_node": row.gpus_per_node,
        "host_cpu_cores": row.host_cpu_cores,
        "hourly_price_usd": row.hourly_price_usd,
        "price_date": row.price_date,
        "prices": prices(row),
        "mig_profiles": [mig_profile_to_dict(profile) for profile in _profiles(row)],
        "confidence": row.confidence,
        "source": row.source,
        "notes": row.notes,
        "version": row.version,
    }


def gpu_columns(document: Mapping[str, Any]) -> dict[str, Any]:
    """A GPU document in the public shape (peak_tflops, interconnect and prices nested,
    mig_profiles as dicts), loaded by the write schema or the seed, as gpus columns plus `mig_profiles`
    (column dicts): what writes.new_gpu and writes.update_gpu take. Absent fields are None;
    `slug` only when the document has one (a PUT's is the URL's)."""
    peaks = document.get("peak_tflops") or {}
    link = document.get("interconnect") or {}
    priced = document.get("prices") or {}
    columns = {name: document.get(name) for name in GPU_PLAIN_COLUMNS if name != "slug" or "slug" in document}
    columns.update({f"peak_tflops_{key}": peaks.get(key) for key in PEAK_TFLOPS_KEYS})
    columns.update({f"interconnect_{key}": link.get(key) for key in INTERCONNECT_KEYS})
    columns.update({f"prices_{key}": priced.get(key) for key in PRICES_KEYS})
    for key, column in PRICES_COLUMNS.items():
        if priced.get(key) is not None:  # the write schema made it the same as the top-level alias
            columns[column] = priced[key]
    columns["mig_profiles"] = [dict(profile) for profile in document.get("mig_profiles") or []]
    return columns


def precision_to_dict(row: Precision) -> dict[str, Any]:
    """A precision in the public JSON shape."""
    return {name: getattr(row, name) for name in (*PRECISION_COLUMNS, "version")}


def uncertainty_to_spec(stored: dict[str, Any]) -> Uncertainty:
    """A stored uncertainty object as the sizing core's Uncertainty; keys it lacks keep the
    dataclass defaults (a row written before a metric existed)."""
    given: dict[str, Any] = {}
    for name in UNCERTAINTY_RANGES:
        if stored.get(name) is not None:
            low, high = stored[name]
            given[name] = (float(low), float(high))
    if stored.get("rows") is not None:
        given["rows"] = {str(metric): int(count) for metric, count in stored["rows"].items()}
    if stored.get("unseen_widening") is not None:
        given["unseen_widening"] = float(stored["unseen_widening"])
    return Uncertainty(**given)


def uncertainty_to_dict(uncertainty: Uncertainty) -> dict[str, Any]:
    """An Uncertainty in the stored and public shape: ranges as [low, high] lists."""
    return {
        **{name: list(getattr(uncertainty, name)) for name in UNCERTAINTY_RANGES},
        "rows": dict(uncertainty.rows),
        "unseen_widening": uncertainty.unseen_widening,
    }


def efficiency_to_spec(stored: dict[str, Any]) -> KernelEfficiency:
    return KernelEfficiency(
        architecture=stored["architecture"],
        memory=float(stored["memory"]),
        compute=float(stored["compute"]),
        moe_memory=float(stored.get("moe_memory", 1.0)),
    )


def engine_to_spec(row: Engine) -> EngineProfile:
    """The sizing core's view of a stored engine profile."""
    return EngineProfile(
        name=row.name,
        version=row.engine_version,
        **{name: getattr(row, name) for name in ENGINE_SCALAR_FIELDS},
        efficiencies=tuple(efficiency_to_spec(item) for item in row.efficiencies or ()),
        uncertainty=uncertainty_to_spec(row.uncertainty or {}),
        fitted_on={str(key): str(value) for key, value in (row.fitted_on or {}).items()},
    )


def engine_to_dict(row: Engine) -> dict[str, Any]:
    """An engine in the public JSON shape: EngineProfile's fields (its `version` as
    `engine_version`), nested parts filled out as planning reads them, and the row's ETag
    `version`."""
    spec = engine_to_spec(row)
    engine = {name: getattr(row, name) for name in ("name", "engine_version", *ENGINE_SCALAR_FIELDS)}
    engine["efficiencies"] = [
        {"architecture": e.architecture, "memory": e.memory, "compute": e.compute, "moe_memory": e.moe_memory}
        for e in spec.efficiencies
    ]
    engine["uncertainty"] = uncertainty_to_dict(spec.uncertainty)
    engine["fitted_on"] = dict(spec.fitted_on)
    engine["version"] = row.version
    return {name: engine[name] for name in ENGINE_PUBLIC_FIELDS}

"""The calibration a planning request uses, and what its answer says about it.

Planning answers for a catalog model on a catalog GPU (never for inline objects) use the
newest calibration stored for the same (model, GPU, MIG profile, weight precision), whatever
the engine: its efficiencies and its memory overhead (as reserved_gb), each unless the request
gives that field itself. Without one, the newest calibration of the same model family on the
same target lends its efficiencies (not its memory overhead, which is the model's own), and
the answer says so: `basis: calibrated-nearest`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from app.catalog.snapshots import CalibrationRecord, CalibrationSnapshot, Key
from app.sizing.plan import PlanInputs, resolve_target
from app.sizing.precision import choose_weight_precision
from app.sizing.specs import GpuSpec, ModelSpec

from ..answers import CalibrationEngine, CalibrationUsed
from ..context import Context
from ..requests import GpuRef, ModelRef

EXACT = "calibrated"
NEAREST = "calibrated-nearest"
DATASHEET = "datasheet"
MEASURED = "measured"
# Calibration field -> the planning input it stands in for.
OVERRIDES = {
    "memory_efficiency": "memory_efficiency",
    "compute_efficiency": "compute_efficiency",
    "memory_overhead_gb": "reserved_gb",
}
EFFICIENCIES = ("memory_efficiency", "compute_efficiency")
ALL_FIELDS = tuple(OVERRIDES)
# What /v1/fit can use: only memory enters a fit.
MEMORY_ONLY = ("memory_overhead_gb",)


@dataclass(frozen=True)
class Applied:
    """A request's planning inputs with the calibration's values put in."""

    inputs: PlanInputs
    record: CalibrationRecord | None = None
    fields_used: tuple[str, ...] = ()
    nearest: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def mape_percent(self) -> float | None:
        """The calibration's own error, when its efficiencies are in use (its error bars)."""
        if self.record is None or not any(name in EFFICIENCIES for name in self.fields_used):
            return None
        return self.record.mape_percent

    @property
    def basis(self) -> str:
        if self.record is None or not self.fields_used:
            return DATASHEET
        return NEAREST if self.nearest else EXACT

    def used(self) -> CalibrationUsed | None:
        """The calibration the plan took figures from (None: it took none)."""
        record = self.record
        if record is None or not self.fields_used:
            return None
        return CalibrationUsed(
            id=record.id,
            model=record.model,
            match="nearest" if self.nearest else "exact",
            point_count=record.point_count,
            mape_percent=record.mape_percent,
            engine=CalibrationEngine(record.engine, record.engine_version),
            tensor_parallel=record.tensor_parallel,
            created_at=record.created_at,
            memory_efficiency=record.memory_efficiency,
            compute_efficiency=record.compute_efficiency,
            memory_overhead_gb=record.memory_overhead_gb,
            fields_used=self.fields_used,
        )

    def notes(self, tensor_parallel: int | None, kv_precision: str | None) -> list[str]:
        """Where the calibration in use was measured under other settings than the plan's."""
        record = self.record
        if record is None or not self.fields_used:
            return []
        notes = list(self.warnings)
        if tensor_parallel is not None and tensor_parallel != record.tensor_parallel:
            notes.append(
                f"calibration {record.id} was measured at tensor_parallel {record.tensor_parallel}, "
                f"this plan uses {tensor_parallel}: its values are carried over"
            )
        if kv_precision is not None and kv_precision != record.kv_precision:
            notes.append(
                f"calibration {record.id} was measured with a {record.kv_precision} KV cache, "
                f"this plan uses {kv_precision}"
            )
        return notes


def _weight_precision(model: ModelSpec, gpu: GpuSpec, inputs: PlanInputs) -> str | None:
    """The precision plan_fit will resolve to, or None when it will refuse (and say why)."""
    try:
        target = resolve_target(gpu, inputs.mig_profile)
        return choose_weight_precision(inputs.weight_precision, model, target.gpu).weight_precision
    except ValueError:  # SizingError, UnknownPrecision: plan_fit names the field
        return None


def _nearest(snapshot: CalibrationSnapshot, model_slug: str, key: Key) -> CalibrationRecord | None:
    """The newest calibration of the closest-sized model of the same family on this target."""
    facts = snapshot.models.get(model_slug)
    if facts is None or facts.family is None:
        return None
    candidates = []
    for record in snapshot.newest.values():
        other = snapshot.models.get(record.model)
        if record.key[1:] != key[1:] or record.model == model_slug or other is None or other.family != facts.family:
            continue
        if record.memory_efficiency is None and record.compute_efficiency is None:
            continue
        candidates.append((abs(math.log(other.params_total / facts.params_total)), -record.id, record))
    return min(candidates, default=(None, None, None))[2]


def apply(
    context: Context,
    model_ref: ModelRef | None,
    gpu_ref: GpuRef | None,
    inputs: PlanInputs,
    given: frozenset[str],
    usable: Iterable[str] = ALL_FIELDS,
) -> Applied:
    """`inputs` with the matching calibration's values for the `usable` fields the request
    does not give itself (`given`); unchanged for inline models or GPUs (and without a GPU)."""
    if not isinstance(model_ref, str) or not isinstance(gpu_ref, str):
        return Applied(inputs)
    model, model_ref = context.model(model_ref)  # by its catalog slug, however the request named it
    gpu, gpu_ref = context.gpu(gpu_ref)
    precision = _weight_precision(model, gpu, inputs)
    if precision is None:
        return Applied(inputs)
    snapshot = context.calibrations
    key: Key = (model_ref, gpu_ref, inputs.mig_profile, precision)
    record = snapshot.newest.get(key)
    nearest = False
    if record is None:
        record = _nearest(snapshot, model_ref, key)
        nearest = record is not None
    if record is None:
        return Applied(inputs)
    changes: dict[str, Any] = {}
    used = []
    for name in usable:
        value = getattr(record, name)
        if value is None or OVERRIDES[name] in given or (nearest and name not in EFFICIENCIES):
            continue
        changes[OVERRIDES[name]] = value
        used.append(name)
    if any(name in EFFICIENCIES for name in used):
        # The efficiencies were fitted on the roofline alone: the engine's own step overheads
        # and kernel shares would count twice; and at the step budget they were measured under.
        changes["engine_timing"] = False
        if "max_batched_tokens" not in given:
            changes["max_batched_tokens"] = record.max_batched_tokens
    warnings = []
    if nearest and used:
        warnings.append(
            f"no calibration of {model_ref} on {gpu_ref}: the efficiencies of calibration {record.id} "
            f"({record.model}, the same family) are used"
        )
    return Applied(replace(inputs, **changes), record, tuple(used), nearest, tuple(warnings))


def basis(applied: Applied | None, *, measured: bool = False) -> str:
    """What an answer's figures rest on: a measured rate, a calibration, or the datasheet."""
    return MEASURED if measured else DATASHEET if applied is None else applied.basis


def ranking_note(context: Context, model_ref: ModelRef) -> list[str]:
    """A whole-catalog ranking plans every option on datasheet figures: say so when
    calibrations of the model exist, and where."""
    if not isinstance(model_ref, str):
        return []
    records = context.calibrations.of_model(context.slug(model_ref))
    calibrated = sorted({r.gpu + (f" {r.mig_profile}" if r.mig_profile else "") for r in records})
    if not calibrated:
        return []
    return [
        "the ranking plans every option on datasheet efficiencies; calibrations of this model exist for "
        + ", ".join(calibrated)
        + ": pass gpu (and mig_profile) to plan with them"
    ]

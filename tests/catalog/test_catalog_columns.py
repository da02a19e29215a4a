"""One list of columns per table, read off the SQLAlchemy models, and what it feeds: the public
documents, the write schemas' column dicts and the seed's field rules."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.api.catalog_schemas import EngineWriteSchema, GpuWriteSchema, ModelWriteSchema
from app.catalog.convert import MODEL_PUBLIC_FIELDS, engine_to_dict, gpu_columns, gpu_to_dict
from app.catalog.models import (
    ENGINE_COLUMNS,
    GPU_COLUMNS,
    INTERCONNECT_KEYS,
    MODEL_COLUMNS,
    PEAK_TFLOPS_KEYS,
)
from app.catalog.queries import get_engine, get_gpu
from app.catalog.seed import ENGINE_FIELDS, MODEL_FIELDS
from app.catalog.writes import new_gpu


def test_the_model_columns_are_the_public_fields_less_the_etag() -> None:
    assert MODEL_COLUMNS[:2] == ("slug", "name") and "version" not in MODEL_COLUMNS and "id" not in MODEL_COLUMNS
    assert (*MODEL_COLUMNS, "version") == MODEL_PUBLIC_FIELDS
    assert tuple(MODEL_FIELDS) == MODEL_COLUMNS


def test_the_gpu_columns_hold_one_peak_per_precision_and_the_interconnect_flattened() -> None:
    assert PEAK_TFLOPS_KEYS == ("bf16", "fp16", "fp8", "int8", "fp4")
    assert INTERCONNECT_KEYS == ("kind", "bandwidth_gb_per_s", "latency_us")
    assert {f"peak_tflops_{key}" for key in PEAK_TFLOPS_KEYS} <= set(GPU_COLUMNS)


def test_the_engine_seed_fields_are_the_columns_with_the_release_as_version() -> None:
    assert tuple("engine_version" if name == "version" else name for name in ENGINE_FIELDS) == ENGINE_COLUMNS


def test_a_written_model_has_every_column_and_its_defaults() -> None:
    values = ModelWriteSchema().load(
        {
            "slug": "tiny",
            "name": "Tiny",
            "params_total": 1000,
            "layers": 2,
            "hidden_size": 64,
            "attention_heads": 4,
            "kv_heads": 4,
            "sliding_window": 16,
            "native_precision": "BFloat16",
            "source": "test",
        }
    )
    assert tuple(values) == MODEL_COLUMNS
    assert values["head_dim"] == 16 and values["attention"] == "mha" and values["params_active"] == 1000
    assert values["sliding_window_layers"] == 2 and values["native_precision"] == "bf16"


def test_a_gpu_document_round_trips_through_its_columns(seeded: Session) -> None:
    row = get_gpu(seeded, "h100-sxm")
    assert row is not None
    document = gpu_to_dict(row)
    columns = gpu_columns(document)
    assert set(columns) == set(GPU_COLUMNS) | {"mig_profiles"}
    assert GpuWriteSchema().load({k: v for k, v in document.items() if k != "version"}) == columns
    copy = new_gpu({**columns, "slug": "h100-copy"})
    seeded.add(copy)
    seeded.flush()
    assert {**gpu_to_dict(copy), "slug": "h100-sxm", "version": row.version} == document


def test_a_stored_engine_document_loads_back_into_its_columns(seeded: Session) -> None:
    row = get_engine(seeded, "vllm")
    assert row is not None
    document = {k: v for k, v in engine_to_dict(row).items() if k != "version"}
    values = EngineWriteSchema().load(document)
    assert set(values) == set(ENGINE_COLUMNS)
    assert all(values[name] == getattr(row, name) for name in ENGINE_COLUMNS if name != "uncertainty")

"""The engines table: seeded from engines.yaml, read back as EngineProfile, guarded by its
constraints and its version column, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine as DbEngine
from sqlalchemy import inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.catalog import writes
from app.catalog.convert import ENGINE_PUBLIC_FIELDS, engine_to_dict, engine_to_spec
from app.catalog.models import Engine
from app.catalog.queries import filter_engines, get_engine, list_engines
from app.catalog.seed import (
    ENGINE_FIELDS,
    SEED_DIR,
    SEED_FILES,
    SeedError,
    engines_are_empty,
    load_seed_files,
    seed_catalog,
)
from app.sizing.engine import EngineProfile, KernelEfficiency, Uncertainty

from .conftest import FIXTURES

PROFILE_FIELDS = [f.name for f in dataclasses.fields(EngineProfile)]


def engine_values(name: str = "custom", **changes: Any) -> dict[str, Any]:
    """A complete engines row as the write schema would hand it over."""
    values = {
        "name": name,
        "display_name": f"Engine {name}",
        "engine_version": "1.2.3",
        "kv_rule": "static_fraction",
        "gpu_memory_utilization": 0.85,
        "max_batched_tokens": 4096,
        "max_num_seqs": 512,
        "block_size": 1,
        "large_gpu_gib": None,
        "max_batched_tokens_large_gpu": None,
        "max_num_seqs_large_gpu": None,
        "activation_bytes_per_token_hidden": 0.0,
        "activation_bytes_per_token_expert_hidden": 0.0,
        "logits_bytes_per_vocab_entry": 0.0,
        "non_torch_gib": 1.5,
        "non_torch_gib_per_extra_rank": 0.1,
        "cuda_graph_gib": 0.0,
        "cuda_graph_in_budget": False,
        "engine_buffers_gib": 0.0,
        "step_overhead_ms": 0.8,
        "layer_overhead_us": 12.0,
        "ttft_overhead_ms": 3.0,
        "sequence_overhead_us": 4.0,
        "collective_latency_us": 8.0,
        "expert_overhead_us": 1.5,
        "mla_layer_overhead_us": 30.0,
        "efficiencies": [{"architecture": "*", "memory": 0.7, "compute": 0.5, "moe_memory": 1.0}],
        "uncertainty": {
            "time_per_token": [0.7, 1.5],
            "ttft": [0.6, 1.7],
            "tokens_per_s": [0.6, 1.4],
            "kv_capacity_tokens": [0.85, 1.1],
            "rows": {},
            "unseen_widening": 1.5,
        },
        "fitted_on": {},
        "source": "test fixture",
        "notes": None,
    }
    return {**values, **changes}


# --------------------------------------------------------------------------- shape


def test_the_seed_format_is_exactly_the_engine_profile_fields() -> None:
    assert list(ENGINE_FIELDS) == PROFILE_FIELDS


def test_every_profile_field_has_a_column(engine: DbEngine) -> None:
    columns = {column["name"] for column in inspect(engine).get_columns("engines")}
    expected = {"engine_version" if name == "version" else name for name in PROFILE_FIELDS}
    assert expected <= columns
    assert {"id", "version", "created_at", "updated_at"} <= columns


def test_the_public_shape_is_the_profile_with_engine_version_and_the_etag() -> None:
    renamed = tuple(("engine_version" if f == "version" else f) for f in PROFILE_FIELDS if f != "name")
    assert ("name", *renamed, "version") == ENGINE_PUBLIC_FIELDS


# --------------------------------------------------------------------------- seed and read


def test_seeded_engines_read_back_as_profiles(seeded: Session) -> None:
    seeded.expunge_all()
    assert [row.name for row in list_engines(seeded)] == ["trtllm", "vllm"]
    row = get_engine(seeded, "vllm")
    assert row is not None and row.engine_version == "0.10" and row.version == 1
    profile = engine_to_spec(row)
    assert profile == EngineProfile(
        name="vllm",
        display_name="vLLM fixture",
        version="0.10",
        kv_rule="util_of_visible",
        gpu_memory_utilization=0.9,
        max_batched_tokens=2048,
        max_num_seqs=256,
        block_size=16,
        large_gpu_gib=70.0,
        max_batched_tokens_large_gpu=8192,
        max_num_seqs_large_gpu=1024,
        activation_bytes_per_token_hidden=25.6,
        activation_bytes_per_token_expert_hidden=16.9,
        logits_bytes_per_vocab_entry=4.0,
        non_torch_gib=0.3,
        non_torch_gib_per_extra_rank=0.05,
        cuda_graph_gib=0.4,
        cuda_graph_in_budget=True,
        engine_buffers_gib=0.0,
        step_overhead_ms=1.0,
        layer_overhead_us=20.0,
        ttft_overhead_ms=6.5,
        efficiencies=(
            KernelEfficiency("hopper", 0.8, 0.6, 0.5),
            KernelEfficiency("*", 0.7, 0.5, 1.0),
        ),
        uncertainty=Uncertainty(
            time_per_token=(0.8, 1.3),
            ttft=(0.6, 1.7),
            tokens_per_s=(0.7, 1.25),
            kv_capacity_tokens=(0.9, 1.05),
            rows={"time_per_token": 12, "kv_capacity_tokens": 4},
            unseen_widening=1.5,
        ),
        fitted_on={"step_overhead_ms": "tpot-h100-1..tpot-h100-12"},
        source="fixture (vLLM engine arguments)",
        notes="fixture notes",
    )
    assert profile.efficiency("hopper").memory == 0.8
    assert profile.efficiency("ada").memory == 0.7


def test_omitted_seed_fields_take_the_profile_defaults(seeded: Session) -> None:
    row = get_engine(seeded, "trtllm")
    assert row is not None
    profile = engine_to_spec(row)
    default = EngineProfile(
        name="trtllm",
        display_name="TensorRT-LLM fixture",
        version="1.0",
        kv_rule="fraction_of_free",
        gpu_memory_utilization=0.9,
        max_batched_tokens=8192,
        max_num_seqs=2048,
        block_size=32,
        source="fixture (TensorRT-LLM LLM API defaults)",
    )
    assert profile == default
    public = engine_to_dict(row)
    assert public["efficiencies"] == [] and public["fitted_on"] == {}
    assert public["uncertainty"]["time_per_token"] == [0.7, 1.5]


def test_the_public_dict_names_the_engine_version_and_the_row_version(seeded: Session) -> None:
    row = get_engine(seeded, "vllm")
    assert row is not None
    public = engine_to_dict(row)
    assert tuple(public) == ENGINE_PUBLIC_FIELDS
    assert (public["engine_version"], public["version"]) == ("0.10", 1)
    assert "id" not in public
    assert public["efficiencies"][1] == {"architecture": "*", "memory": 0.7, "compute": 0.5, "moe_memory": 1.0}
    assert public["uncertainty"]["rows"] == {"time_per_token": 12, "kv_capacity_tokens": 4}


def test_engines_page_by_name(seeded: Session) -> None:
    page, total = filter_engines(seeded, limit=1, offset=1)
    assert total == 2 and [row.name for row in page] == ["vllm"]


def test_a_stored_engine_is_left_alone_by_seeding(session: Session) -> None:
    seed_catalog(session, FIXTURES)
    row = get_engine(session, "vllm")
    assert row is not None
    row.step_overhead_ms = 9.0
    session.commit()
    counts = seed_catalog(session, FIXTURES)
    assert counts["engines"] == 0
    session.expire_all()
    assert session.scalar(select(Engine.step_overhead_ms).where(Engine.name == "vllm")) == 9.0


def test_seeding_only_the_engines(session: Session) -> None:
    assert engines_are_empty(session)
    counts = seed_catalog(session, FIXTURES, kinds=("engines",))
    assert counts == {"models": 0, "gpus": 0, "mig_profiles": 0, "precisions": 0, "engines": 2}
    assert not engines_are_empty(session)


_REAL_ENGINES = (SEED_DIR / "engines.yaml").exists()


@pytest.mark.skipif(not _REAL_ENGINES, reason="catalog_seed/engines.yaml not written yet")
def test_the_real_engines_load_and_convert(session: Session) -> None:
    seed_catalog(session)
    names = [row.name for row in list_engines(session)]
    assert "vllm" in names and "ideal" not in names
    for row in list_engines(session):
        profile = engine_to_spec(row)
        assert profile.source and profile.kv_rule
        assert profile.efficiency(None).memory > 0


# --------------------------------------------------------------------------- constraints


def test_an_engine_round_trips_through_the_write_functions(session: Session) -> None:
    session.add(writes.new_engine(engine_values()))
    session.commit()
    session.expunge_all()
    row = get_engine(session, "custom")
    assert row is not None
    public = engine_to_dict(row)
    assert {k: v for k, v in public.items() if k != "version"} == engine_values()


@pytest.mark.parametrize(
    "changes",
    [
        {"kv_rule": "whatever_fits"},
        {"gpu_memory_utilization": 0.0},
        {"gpu_memory_utilization": 1.01},
        {"block_size": 0},
        {"max_num_seqs": 0},
        {"max_batched_tokens": -1},
        {"large_gpu_gib": 0.0},
        {"non_torch_gib": -0.1},
        {"step_overhead_ms": -1.0},
        {"layer_overhead_us": -1.0},
        {"engine_buffers_gib": -2.0},
        {"ttft_overhead_ms": -0.5},
    ],
    ids=lambda changes: next(iter(changes)) + "=" + str(next(iter(changes.values()))),
)
def test_the_database_refuses_values_out_of_range(session: Session, changes: dict[str, Any]) -> None:
    session.add(writes.new_engine(engine_values(**changes)))
    with pytest.raises(IntegrityError):
        session.flush()


def test_engine_names_are_unique(session: Session) -> None:
    session.add(writes.new_engine(engine_values("twice")))
    session.flush()
    session.add(writes.new_engine(engine_values("twice")))
    with pytest.raises(IntegrityError):
        session.flush()


def test_source_is_required(session: Session) -> None:
    session.add(writes.new_engine(engine_values(source=None)))
    with pytest.raises(IntegrityError):
        session.flush()


def test_every_change_bumps_the_version_and_a_stale_one_fails(engine: DbEngine, session: Session) -> None:
    row = writes.new_engine(engine_values("locked"))
    session.add(row)
    session.commit()
    assert row.version == 1
    writes.update_engine(row, {"step_overhead_ms": 2.0})
    session.commit()
    assert row.version == 2
    # A JSON part replaced whole counts as a change too.
    writes.update_engine(row, {"efficiencies": [{"architecture": "hopper", "memory": 0.8, "compute": 0.6}]})
    session.commit()
    assert row.version == 3
    # Equal values are no change: the ETag stands.
    writes.update_engine(row, {"step_overhead_ms": 2.0, "fitted_on": {}})
    session.commit()
    assert row.version == 3
    # Another writer got there first: the UPDATE's version check finds no row.
    session.execute(Engine.__table__.update().where(Engine.name == "locked").values(version=7))
    writes.update_engine(row, {"step_overhead_ms": 3.0})
    with pytest.raises(StaleDataError):
        session.flush()


# --------------------------------------------------------------------------- invalid seed files


def _copy_fixtures(tmp_path: Path) -> Path:
    for filename in SEED_FILES.values():
        shutil.copy(FIXTURES / filename, tmp_path / filename)
    return tmp_path


@pytest.mark.parametrize(
    ("filename", "old", "new", "message"),
    [
        ("engines.yaml", "kv_rule: util_of_visible", "kv_rule: greedy", "'vllm': field 'kv_rule': 'greedy' is not one"),
        ("engines.yaml", "    block_size: 16\n", "", "engines.yaml: 'vllm': field 'block_size': required"),
        ("engines.yaml", "block_size: 16", "block_sizes: 16", "'vllm': field 'block_sizes': unknown field"),
        ("engines.yaml", 'version: "0.10"', "version: 0.10", "'vllm': field 'version': expected str, got float"),
        (
            "engines.yaml",
            "utilization: 0.9\n    max_batched_tokens: 2048",
            "utilization: 1.2\n    max_batched_tokens: 2048",
            "'vllm': field 'gpu_memory_utilization': must be at most 1",
        ),
        ("engines.yaml", "non_torch_gib: 0.3", "non_torch_gib: -0.3", "'vllm': field 'non_torch_gib': must be >= 0"),
        ("engines.yaml", "  - name: trtllm", "  - name: ideal", "'ideal': field 'name': 'ideal' is reserved"),
        ("engines.yaml", "  - name: trtllm", "  - name: vllm", "engines.yaml: duplicate 'vllm'"),
        ("engines.yaml", "  - name: trtllm", "  - name: TRT", "'TRT': field 'name': lowercase"),
        (
            "engines.yaml",
            "    large_gpu_gib: 70\n",
            "",
            "'vllm': field 'max_batched_tokens_large_gpu': only with large_gpu_gib",
        ),
        ("engines.yaml", "architecture: hopper", 'architecture: "*"', "'vllm' efficiencies: duplicate '*'"),
        ("engines.yaml", "memory: 0.8,", "memory: 1.8,", "'vllm' efficiencies[0]: field 'memory': must be at most 1"),
        (
            "engines.yaml",
            '{architecture: "*", memory: 0.7, compute: 0.5}',
            '{architecture: "*", memory: 0.7}',
            "'vllm' efficiencies[1]: field 'compute': required",
        ),
        (
            "engines.yaml",
            "ttft: [0.6, 1.7]",
            "ttft: [1.7, 0.6]",
            "'vllm' uncertainty: field 'ttft': low 1.7 above high",
        ),
        ("engines.yaml", "ttft: [0.6, 1.7]", "ttft: [0.6]", "'vllm' uncertainty: field 'ttft': expected [low, high]"),
        ("engines.yaml", "unseen_widening: 1.5", "unseen_widening: 0.5", "field 'unseen_widening': must be at least 1"),
        ("engines.yaml", "ttft: [0.6, 1.7]", "ttfb: [0.6, 1.7]", "'vllm' uncertainty: field 'ttfb': unknown field"),
        (
            "engines.yaml",
            "rows: {time_per_token: 12,",
            "rows: {time_per_token: 1.5,",
            "field 'rows': counts must be whole",
        ),
        (
            "engines.yaml",
            "    source: fixture (TensorRT-LLM LLM API defaults)\n",
            "",
            "'trtllm': field 'source': required",
        ),
        ("engines.yaml", "engines:", "profiles:", "expected a top-level 'engines:' list"),
        (
            "gpus.yaml",
            "memory_visible_gib: 79.19",
            "memory_visible_gib: 95",
            "'h100-sxm': field 'memory_visible_gib': 95",
        ),
        ("gpus.yaml", "memory_visible_gib: 79.19", "memory_visible_gib: 0", "field 'memory_visible_gib': must be > 0"),
        (
            "models.yaml",
            "quantized_components: [attention, experts]",
            "quantized_components: [attention, router]",
            "'qwen3-30b-a3b': field 'quantized_components': 'router' is not one of",
        ),
        (
            "models.yaml",
            "quantized_components: [attention, experts]",
            "quantized_components: [experts, experts]",
            "'qwen3-30b-a3b' quantized_components: duplicate 'experts'",
        ),
    ],
)
def test_invalid_engine_gpu_and_model_fields_are_named(
    tmp_path: Path, filename: str, old: str, new: str, message: str
) -> None:
    seed_dir = _copy_fixtures(tmp_path)
    path = seed_dir / filename
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(SeedError) as caught:
        load_seed_files(seed_dir)
    assert any(message in problem for problem in caught.value.problems), caught.value.problems


def test_a_missing_engines_file_is_named(tmp_path: Path) -> None:
    seed_dir = _copy_fixtures(tmp_path)
    (seed_dir / "engines.yaml").unlink()
    with pytest.raises(SeedError) as caught:
        load_seed_files(seed_dir)
    assert any("engines.yaml: file not found" in problem for problem in caught.value.problems)

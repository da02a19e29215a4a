"""Seeding: validation of the YAML files, and idempotent insert-only loading."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from app.catalog.models import Gpu, Model
from app.catalog.queries import catalog_counts, get_gpu, get_model
from app.catalog.seed import (
    SEED_DIR,
    SEED_FILES,
    SeedError,
    catalog_is_empty,
    load_seed_files,
    seed_catalog,
)

from .conftest import FIXTURES


def _copy_fixtures(tmp_path: Path) -> Path:
    for filename in SEED_FILES.values():
        shutil.copy(FIXTURES / filename, tmp_path / filename)
    return tmp_path


def _replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_fixture_files_load_with_every_optional_field_filled() -> None:
    data = load_seed_files(FIXTURES)
    assert [len(data[key]) for key in ("models", "gpus", "precisions", "engines")] == [3, 3, 3, 2]
    llama_405b = next(m for m in data["models"] if m["slug"] == "llama-3.1-405b")
    assert llama_405b["kv_lora_rank"] is None and llama_405b["notes"] is None
    l4 = next(g for g in data["gpus"] if g["slug"] == "l4")
    assert l4["peak_tflops"]["fp4"] is None
    assert l4["interconnect"] == {"kind": "pcie4", "bandwidth_gb_per_s": 32, "latency_us": 20}
    h100 = next(g for g in data["gpus"] if g["slug"] == "h100-sxm")
    assert h100["prices"]["spot_interruptions_per_hour"] == 0.05 and h100["prices"]["idle_power_w"] == 80
    assert l4["prices"]["power_w"] is None  # no prices block: every figure unknown


def test_seeding_an_empty_catalog_inserts_every_entry(session: Session) -> None:
    assert catalog_is_empty(session)
    counts = seed_catalog(session, FIXTURES)
    assert counts == {"models": 3, "gpus": 3, "mig_profiles": 4, "precisions": 3, "engines": 2}
    assert not catalog_is_empty(session)
    assert catalog_counts(session) == {
        "models": 3,
        "gpus": 3,
        "mig_profiles": 4,
        "precisions": 3,
        "engines": 2,
    }


def test_seeding_twice_inserts_nothing_the_second_time(session: Session) -> None:
    seed_catalog(session, FIXTURES)
    session.commit()
    assert seed_catalog(session, FIXTURES) == {
        "models": 0,
        "gpus": 0,
        "mig_profiles": 0,
        "precisions": 0,
        "engines": 0,
    }
    assert catalog_counts(session)["models"] == 3


def test_seeding_never_overwrites_a_stored_row(session: Session) -> None:
    seed_catalog(session, FIXTURES)
    model = get_model(session, "llama-3.1-8b")
    assert model is not None
    model.notes = "edited through the API"
    session.commit()
    seed_catalog(session, FIXTURES)
    session.expire_all()
    assert session.scalar(select(Model.notes).where(Model.slug == "llama-3.1-8b")) == ("edited through the API")


def test_seeding_adds_only_the_missing_entries(session: Session) -> None:
    seed_catalog(session, FIXTURES)
    gpu = get_gpu(session, "l4")
    assert gpu is not None
    session.delete(gpu)
    session.flush()
    assert seed_catalog(session, FIXTURES) == {
        "models": 0,
        "gpus": 1,
        "mig_profiles": 0,
        "precisions": 0,
        "engines": 0,
    }


def test_seeding_does_not_commit(engine: Engine, session: Session) -> None:
    seed_catalog(session, FIXTURES)
    # A second connection outside the test's transaction sees nothing yet.
    with engine.connect() as other:
        assert other.execute(select(Gpu.slug)).all() == []


def test_unknown_facts_are_stored_as_null(seeded: Session) -> None:
    a10g = get_gpu(seeded, "a10g")
    assert a10g is not None
    assert a10g.memory_gb is None and a10g.confidence is None
    assert a10g.native_precisions is None
    # none_as_null: SQL NULL, not the JSON text 'null'.
    assert seeded.scalar(select(Gpu.slug).where(Gpu.native_precisions.is_(None))) == "a10g"


@pytest.mark.parametrize(
    ("filename", "old", "new", "message"),
    [
        (
            "models.yaml",
            "    layers: 32\n",
            "",
            "models.yaml: 'llama-3.1-8b': field 'layers': required",
        ),
        (
            "models.yaml",
            "attention: gqa",
            "attention: sparse",
            "models.yaml: 'llama-3.1-8b': field 'attention': 'sparse' is not one of",
        ),
        (
            "models.yaml",
            "kv_heads: 8",
            "kv_heads: eight",
            "models.yaml: 'llama-3.1-8b': field 'kv_heads': expected int, got str",
        ),
        (
            "models.yaml",
            "head_dim: 128",
            "head_dims: 128",
            "models.yaml: 'llama-3.1-8b': field 'head_dims': unknown field",
        ),
        (
            "gpus.yaml",
            "memory_gb: 80\n",
            "memory_gb: -80\n",
            "gpus.yaml: 'h100-sxm': field 'memory_gb': must be > 0",
        ),
        (
            "gpus.yaml",
            "{name: 1g.20gb, compute_slices: 1,",
            "{name: 1g.20gb,",
            "gpus.yaml: 'h100-sxm' mig_profiles[1]: field 'compute_slices': required",
        ),
        (
            "gpus.yaml",
            "{name: 1g.20gb,",
            "{name: 1g.10gb,",
            "gpus.yaml: 'h100-sxm' mig_profiles: duplicate '1g.10gb'",
        ),
        (
            "gpus.yaml",
            'price_date: "2026-11"',
            'price_date: "Nov 2026"',
            "gpus.yaml: 'h100-sxm': field 'price_date': expected YYYY-MM",
        ),
        (
            "gpus.yaml",
            "spot_usd_per_hour: 1.5",
            "spot_usd_per_hour: -1.5",
            "gpus.yaml: 'h100-sxm': field 'prices.spot_usd_per_hour': must be >= 0",
        ),
        (
            "gpus.yaml",
            "spot_interruptions_per_hour: 0.05",
            "spot_interruptions_per_hour: 1",
            "gpus.yaml: 'h100-sxm': field 'prices.spot_interruptions_per_hour': must be below 1",
        ),
        (
            "gpus.yaml",
            "idle_power_w: 80",
            "idle_power_w: 800",
            "gpus.yaml: 'h100-sxm': field 'prices.idle_power_w': 800.0 is more than power_w (700.0)",
        ),
        (
            "gpus.yaml",
            "      source: fixture (a provider's page, 2026-11)\n",
            "",
            "gpus.yaml: 'h100-sxm': field 'prices.source': required",
        ),
        (
            "gpus.yaml",
            '    hourly_price_usd: 3.0\n    price_date: "2026-11"\n',
            "",
            "gpus.yaml: 'h100-sxm': field 'price_date': required with a price",
        ),
        (
            "gpus.yaml",
            "purchase_usd: 27500",
            "rebate_usd: 27500",
            "gpus.yaml: 'h100-sxm' prices: field 'rebate_usd': unknown field",
        ),
        (
            "gpus.yaml",
            "fp8: 1979,",
            "fp9: 1979,",
            "gpus.yaml: 'h100-sxm': field 'peak_tflops.fp9': unknown precision",
        ),
        ("gpus.yaml", "slug: l4", "slug: h100-sxm", "gpus.yaml: duplicate 'h100-sxm'"),
        ("gpus.yaml", "slug: l4", "slug: NVIDIA L4", "gpus.yaml: 'NVIDIA L4': field 'slug': lowercase"),
        (
            "precisions.yaml",
            "bits: 8,",
            "bits: 8.5,",
            "precisions.yaml: 'fp8': field 'bits': expected int, got float",
        ),
        ("precisions.yaml", "precisions:", "formats:", "expected a top-level 'precisions:' list"),
    ],
)
def test_invalid_seed_files_are_rejected_naming_file_entry_and_field(
    tmp_path: Path, filename: str, old: str, new: str, message: str
) -> None:
    seed_dir = _copy_fixtures(tmp_path)
    _replace_in(seed_dir / filename, old, new)
    with pytest.raises(SeedError) as caught:
        load_seed_files(seed_dir)
    assert any(message in problem for problem in caught.value.problems), caught.value.problems


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    seed_dir = _copy_fixtures(tmp_path)
    _replace_in(seed_dir / "models.yaml", "layers: 32", "layers: 0")
    _replace_in(seed_dir / "gpus.yaml", "vendor: nvidia", "vendor: intel")
    with pytest.raises(SeedError) as caught:
        load_seed_files(seed_dir)
    assert len(caught.value.problems) == 2
    assert "layers" in str(caught.value) and "vendor" in str(caught.value)


def test_missing_and_unparsable_files_are_named(tmp_path: Path) -> None:
    seed_dir = _copy_fixtures(tmp_path)
    (seed_dir / "precisions.yaml").unlink()
    (seed_dir / "models.yaml").write_text("models: [unclosed\n", encoding="utf-8")
    with pytest.raises(SeedError) as caught:
        load_seed_files(seed_dir)
    problems = "\n".join(caught.value.problems)
    assert "precisions.yaml: file not found" in problems
    assert "models.yaml: not valid YAML" in problems


def test_an_invalid_seed_inserts_nothing(session: Session, tmp_path: Path) -> None:
    seed_dir = _copy_fixtures(tmp_path)
    _replace_in(seed_dir / "gpus.yaml", "gpus_per_node: 1", "gpus_per_node: 0")
    with pytest.raises(SeedError):
        seed_catalog(session, seed_dir)
    assert catalog_is_empty(session)


_REAL_SEED_PRESENT = all((SEED_DIR / name).exists() for name in SEED_FILES.values())


@pytest.mark.skipif(not _REAL_SEED_PRESENT, reason="catalog_seed/*.yaml not written yet")
def test_the_real_seed_catalog_loads_and_is_idempotent(session: Session) -> None:
    first = seed_catalog(session)
    assert first["models"] > 0 and first["gpus"] > 0 and first["precisions"] > 0
    session.commit()
    assert set(seed_catalog(session).values()) == {0}
    counts = catalog_counts(session)
    assert counts == {key: first[key] for key in counts}
    # The API's example slugs must all resolve.
    for slug in ("llama-3.1-8b", "llama-3.1-405b", "qwen3-30b-a3b", "deepseek-v3"):
        assert get_model(session, slug) is not None, slug
    for slug in ("h100-sxm", "a100-sxm-80gb", "l4", "mi300x"):
        assert get_gpu(session, slug) is not None, slug
    h100 = get_gpu(session, "h100-sxm")
    assert h100 is not None and "7g.80gb" in {p.name for p in h100.mig_profiles}

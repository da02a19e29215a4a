"""Queries and row behaviour: MIG profiles, optimistic locking, big numbers, cascades."""

from __future__ import annotations

from datetime import UTC

import pytest
from sqlalchemy import delete, func, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.catalog.models import Gpu, MigProfile, Model
from app.catalog.queries import (
    catalog_counts,
    get_gpu,
    get_model,
    get_precision,
    list_gpus,
    list_models,
    list_precisions,
)


def test_unknown_slugs_give_none(seeded: Session) -> None:
    assert get_model(seeded, "no-such-model") is None
    assert get_gpu(seeded, "no-such-gpu") is None
    assert get_precision(seeded, "fp3") is None


def test_gpu_comes_back_with_its_mig_profiles_sorted(seeded: Session) -> None:
    seeded.expunge_all()  # make the query load them, not the identity map
    h100 = get_gpu(seeded, "h100-sxm")
    assert h100 is not None
    assert "mig_profiles" in h100.__dict__  # loaded eagerly, not on first touch
    assert [p.name for p in h100.mig_profiles] == ["1g.10gb", "1g.20gb", "3g.40gb", "7g.80gb"]
    seven = h100.mig_profiles[-1]
    assert (seven.compute_slices, seven.memory_slices, seven.memory_gb) == (7, 8, 80.0)


def test_lists_are_ordered_by_slug_and_gpus_carry_profiles(seeded: Session) -> None:
    seeded.expunge_all()
    assert [m.slug for m in list_models(seeded)] == [
        "llama-3.1-405b",
        "llama-3.1-8b",
        "qwen3-30b-a3b",
    ]
    gpus = list_gpus(seeded)
    assert [g.slug for g in gpus] == ["a10g", "h100-sxm", "l4"]
    assert all("mig_profiles" in g.__dict__ for g in gpus)
    assert [p.name for p in list_precisions(seeded)] == ["bf16", "fp8", "mxfp4"]


def test_catalog_counts_count_profiles_too(seeded: Session) -> None:
    assert catalog_counts(seeded) == {"models": 3, "gpus": 3, "mig_profiles": 4, "precisions": 3, "engines": 2}


def test_parameter_counts_beyond_32_bits_survive_the_round_trip(seeded: Session) -> None:
    seeded.expunge_all()
    model = get_model(seeded, "llama-3.1-405b")
    assert model is not None and model.params_total == 405_853_388_800


def test_the_version_counter_increments_on_every_update(seeded: Session) -> None:
    model = get_model(seeded, "llama-3.1-8b")
    assert model is not None and model.version == 1
    model.max_context = 65536
    seeded.commit()
    assert model.version == 2
    model.notes = "again"
    seeded.flush()
    assert model.version == 3


def test_a_stale_version_refuses_to_overwrite(seeded: Session) -> None:
    gpu = get_gpu(seeded, "l4")
    assert gpu is not None
    # Someone else updated the row meanwhile: our in-memory version 1 is now stale.
    # (plain SQL, so the ORM does not synchronise our copy).
    seeded.execute(text("UPDATE gpus SET version = version + 1 WHERE slug = 'l4'"))
    gpu.hourly_price_usd = 0.5
    with pytest.raises(StaleDataError):
        seeded.flush()
    seeded.rollback()


def test_timestamps_are_set_by_the_database_and_timezone_aware(seeded: Session) -> None:
    seeded.expunge_all()
    model = get_model(seeded, "llama-3.1-8b")
    assert model is not None
    assert model.created_at.tzinfo is not None
    assert model.created_at.utcoffset() == UTC.utcoffset(None)
    assert model.updated_at >= model.created_at


def test_deleting_a_gpu_in_sql_cascades_to_its_profiles(seeded: Session) -> None:
    # Through the database's ON DELETE CASCADE (SQLite needs foreign_keys=ON for that).
    seeded.execute(delete(Gpu).where(Gpu.slug == "h100-sxm"))
    assert seeded.scalar(select(func.count()).select_from(MigProfile)) == 0


def test_removing_a_profile_from_the_list_deletes_it(seeded: Session) -> None:
    h100 = get_gpu(seeded, "h100-sxm")
    assert h100 is not None
    h100.mig_profiles = [p for p in h100.mig_profiles if p.name != "7g.80gb"]
    seeded.flush()
    assert seeded.scalar(select(func.count()).select_from(MigProfile)) == 3


def test_duplicate_slugs_are_refused(seeded: Session) -> None:
    duplicate = Model(
        slug="llama-3.1-8b",
        name="again",
        params_total=1,
        layers=1,
        hidden_size=1,
        attention_heads=1,
        kv_heads=1,
        head_dim=1,
        attention="mha",
        source="test",
    )
    seeded.add(duplicate)
    with pytest.raises(IntegrityError):
        seeded.flush()
    seeded.rollback()


@pytest.mark.parametrize(("column", "value"), [("attention", "sparse"), ("layers", 0), ("params_total", -1)])
def test_check_constraints_refuse_nonsense(seeded: Session, column: str, value: object) -> None:
    fields: dict[str, object] = {
        "slug": "bad",
        "name": "bad",
        "params_total": 1,
        "layers": 1,
        "hidden_size": 1,
        "attention_heads": 1,
        "kv_heads": 1,
        "head_dim": 1,
        "attention": "mha",
        "source": "test",
    }
    fields[column] = value
    seeded.add(Model(**fields))
    with pytest.raises(IntegrityError):
        seeded.flush()
    seeded.rollback()


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("hourly_price_usd", -1.0),
        ("prices_spot_usd_per_hour", -0.5),
        ("prices_purchase_usd", -1.0),
        ("prices_power_w", -700.0),
        ("prices_spot_interruptions_per_hour", 1.0),
        ("prices_idle_power_w", 800.0),  # above the card's 700 W
    ],
)
def test_gpu_price_checks_refuse_nonsense(seeded: Session, column: str, value: float) -> None:
    gpu = Gpu(slug="bad-price", name="bad", vendor="nvidia", gpus_per_node=8, source="test", prices_power_w=700.0)
    setattr(gpu, column, value)
    seeded.add(gpu)
    with pytest.raises(IntegrityError):
        seeded.flush()
    seeded.rollback()


def test_editing_mig_profiles_bumps_the_gpu_version(seeded: Session) -> None:
    # The profiles are part of the GPU's document: an ETag must change with them.
    h100 = get_gpu(seeded, "h100-sxm")
    assert h100 is not None and h100.version == 1
    h100.mig_profiles[0].max_instances = 6
    seeded.commit()
    assert h100.version == 2
    h100.mig_profiles.append(
        MigProfile(name="2g.20gb", compute_slices=2, memory_slices=2, memory_gb=20.0, max_instances=3)
    )
    seeded.commit()
    assert h100.version == 3
    seeded.expire_all()  # also when the GPU's own attributes have to be loaded again
    h100.mig_profiles = [p for p in h100.mig_profiles if p.name != "7g.80gb"]
    seeded.commit()
    assert h100.version == 4
    h100.name = "renamed"
    h100.mig_profiles[0].max_instances = 5
    seeded.commit()
    assert h100.version == 5  # one edit, one increment
    profile = h100.mig_profiles[0]
    seeded.expire(h100)  # the GPU's columns must be loaded again inside the flush
    profile.max_instances = 4
    seeded.commit()
    assert h100.version == 6


def test_a_stale_gpu_refuses_a_profile_edit(seeded: Session) -> None:
    h100 = get_gpu(seeded, "h100-sxm")
    assert h100 is not None
    seeded.execute(text("UPDATE gpus SET version = version + 1 WHERE slug = 'h100-sxm'"))
    h100.mig_profiles[0].max_instances = 6
    with pytest.raises(StaleDataError):
        seeded.flush()
    seeded.rollback()

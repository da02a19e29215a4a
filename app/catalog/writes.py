"""Catalog writes as plain functions on rows: the caller validates the values (a column dict
from app.api.catalog_schemas, or a checked seed entry) and owns the transaction (commits in
the view, the import service's caller or the seed's).

Optimistic locking is the mapper's `version_id_col`: an UPDATE or DELETE carries
`WHERE version = <the version loaded>`, so a row changed in between raises StaleDataError
at flush and nothing is written.
"""

from __future__ import annotations

from typing import Any

from app.catalog.models import Engine, Gpu, MigProfile, Model


def new_model(values: dict[str, Any]) -> Model:
    """A model row from a complete column dict (slug included)."""
    return Model(**values)


def update_model(row: Model, values: dict[str, Any]) -> None:
    """Replace every column the dict names; SQLAlchemy writes (and bumps the version) only
    if something actually changed."""
    for name, value in values.items():
        if name != "slug":
            setattr(row, name, value)


def new_gpu(values: dict[str, Any]) -> Gpu:
    """A GPU row with its MIG profiles from a complete column dict (slug included)."""
    columns = {k: v for k, v in values.items() if k != "mig_profiles"}
    return Gpu(**columns, mig_profiles=[MigProfile(**profile) for profile in values.get("mig_profiles") or []])


def update_gpu(row: Gpu, values: dict[str, Any]) -> None:
    """Replace the GPU's columns and its whole list of MIG profiles.

    Profiles are matched by name and edited in place: dropping and re-adding a profile of the
    same name in one flush would trip the (gpu_id, name) unique constraint, because the unit
    of work inserts before it deletes.
    """
    for name, value in values.items():
        if name not in ("slug", "mig_profiles"):
            setattr(row, name, value)
    wanted = {profile["name"]: profile for profile in values.get("mig_profiles") or []}
    kept = []
    for profile in list(row.mig_profiles):
        if profile.name in wanted:
            for key, value in wanted.pop(profile.name).items():
                setattr(profile, key, value)
            kept.append(profile)
    kept.extend(MigProfile(**profile) for profile in wanted.values())
    # Assigning the list orphans (and so deletes) the profiles left out.
    row.mig_profiles = kept


def new_engine(values: dict[str, Any]) -> Engine:
    """An engine row from a complete column dict (name included)."""
    return Engine(**values)


def update_engine(row: Engine, values: dict[str, Any]) -> None:
    """Replace every column the dict names (the JSON parts whole); the version moves only if
    something changed."""
    for name, value in values.items():
        if name != "name":
            setattr(row, name, value)

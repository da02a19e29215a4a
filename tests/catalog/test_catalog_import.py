"""The import service (app.planning.catalog_import) without HTTP: what `flask import-model`
and POST /v1/models/import share, and the domain errors it refuses with."""

from __future__ import annotations

from typing import Any

import pytest
from marshmallow import ValidationError
from sqlalchemy.orm import Session

from app.api.catalog_schemas import ImportSchema, load_model_columns
from app.catalog import safetensors_header
from app.catalog.queries import get_model
from app.planning.catalog_import import prepare_import, store_model
from app.planning.errors import Conflict, InvalidRequest, TooLarge

from .safetensors_headers import TINY_LLAMA, dense_header


def _prepare(**payload: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return prepare_import(ImportSchema().load({"config": TINY_LLAMA, **payload}), load_model_columns)


def test_a_config_becomes_validated_columns_and_a_report() -> None:
    values, report = _prepare(slug="tiny-llama")
    assert values["slug"] == "tiny-llama" and values["params_total"] == report["params_total_from_config"]
    assert report["safetensors"] is None


def test_a_dry_run_without_any_slug_has_none() -> None:
    values, _ = _prepare(dry_run=True)
    assert values["slug"] is None


def test_a_stored_import_needs_a_slug() -> None:
    with pytest.raises(InvalidRequest) as refused:
        _prepare()
    assert refused.value.errors == {"slug": ["required"]}


def test_a_config_error_names_the_field_under_config() -> None:
    config = {k: v for k, v in TINY_LLAMA.items() if k != "hidden_size"}
    with pytest.raises(InvalidRequest) as refused:
        prepare_import(ImportSchema().load({"config": config, "slug": "x"}), load_model_columns)
    assert refused.value.errors == {"config.hidden_size": ["required"]}


def test_a_header_over_the_tensor_cap_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safetensors_header, "MAX_TENSORS", 3)
    with pytest.raises(TooLarge) as refused:
        _prepare(slug="x", safetensors_header=dense_header(TINY_LLAMA))
    assert list(refused.value.errors or {}) == ["safetensors_header"]


def test_a_document_the_write_schema_refuses_is_a_validation_error() -> None:
    # The config may say more than the catalog stores: a context of 200M tokens.
    config = {**TINY_LLAMA, "max_position_embeddings": 200_000_000}
    with pytest.raises(ValidationError) as refused:
        prepare_import(ImportSchema().load({"config": config, "slug": "x"}), load_model_columns)
    assert "max_context" in refused.value.messages


def test_storing_adds_the_row_and_a_taken_slug_is_a_conflict(session: Session) -> None:
    values, _ = _prepare(slug="tiny-llama")
    row = store_model(session, values)
    session.commit()
    assert get_model(session, "tiny-llama") is row and row.version == 1
    with pytest.raises(Conflict) as refused:
        store_model(session, values)
    assert refused.value.errors == {"slug": ["already exists"]}

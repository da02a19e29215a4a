"""The planning services called as the CLI and the benchmarks call them: a typed request and
snapshots in, the whole answer out, no Flask request anywhere. The views are parse -> service
-> render, so a service's answer is the endpoint's answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.api import lookup
from app.api.schemas import PLANNING_BY_PATH
from app.api.wire import dump
from app.catalog.snapshots import CalibrationRecord, CalibrationSnapshot, CatalogSnapshot, ModelFacts
from app.planning import batch, fleet, replica
from app.planning.calibration import basis as calibration
from app.planning.context import Context
from app.planning.errors import InvalidRequest, UnknownResource

FIT = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt_tokens": 2000, "output_tokens": 400}


@pytest.fixture(scope="module")
def snapshot(app: Flask) -> CatalogSnapshot:
    with app.test_request_context():
        return lookup.context().catalog


def load(path: str, payload: dict[str, Any]) -> Any:
    return PLANNING_BY_PATH[path].schema.load(payload)


def as_json(value: Any) -> Any:
    """An answer as its endpoint writes it (a typed one through its schema)."""
    return json.loads(json.dumps(dump(value)))


@pytest.mark.parametrize(
    ("path", "payload"),
    [
        ("/v1/fit", FIT),
        ("/v1/throughput", {**FIT, "concurrency": 16, "sweep": [1, 8]}),
        ("/v1/cost", {**FIT, "utilization": 0.5}),
        ("/v1/roofline", {"m": 64, "k": 4096, "n": 4096, "gpu": "h100-sxm"}),
        ("/v1/fleet", {**FIT, "requests_per_day": 1e6, "tpot_slo_ms": 40}),
        ("/v1/batch", {**FIT, "requests": 300, "output_tokens_cv": 1}),
    ],
)
def test_a_service_answers_as_its_endpoint(
    client: FlaskClient, snapshot: CatalogSnapshot, path: str, payload: dict[str, Any]
) -> None:
    service = {
        "/v1/fit": replica.fit,
        "/v1/throughput": replica.throughput,
        "/v1/cost": replica.cost,
        "/v1/roofline": replica.roofline,
        "/v1/fleet": lambda request, context: fleet.plan(request, context).answer,
        "/v1/batch": batch.batch,
    }[path]
    over_http = client.post(path, json=payload)
    assert over_http.status_code == 200, over_http.get_data(as_text=True)
    assert as_json(service(load(path, payload), Context(snapshot))) == over_http.get_json()


def test_an_unknown_name_rechecks_the_catalog_once_then_is_a_domain_error(snapshot: CatalogSnapshot) -> None:
    refreshed: list[int] = []

    def refresh() -> CatalogSnapshot:
        refreshed.append(1)
        return snapshot

    context = Context(snapshot, refresh=refresh)
    with pytest.raises(UnknownResource) as caught:
        replica.fit(load("/v1/fit", {**FIT, "model": "no-such-model"}), context)
    assert caught.value.errors == {"model": ["unknown model 'no-such-model'"]}
    with pytest.raises(UnknownResource):
        context.gpu("no-such-gpu")
    assert refreshed == [1]  # once per request, however many names it misses
    with pytest.raises(InvalidRequest) as refused:
        context.engine("tgi")
    assert list(refused.value.errors or {}) == ["engine"]


def record(record_id: int, model: str, **values: Any) -> CalibrationRecord:
    fields: dict[str, Any] = {
        "id": record_id,
        "model": model,
        "gpu": "h100-sxm",
        "mig_profile": None,
        "tensor_parallel": 1,
        "weight_precision": "bf16",
        "kv_precision": "bf16",
        "engine": "vllm",
        "engine_version": None,
        "max_batched_tokens": 4096,
        "memory_efficiency": 0.5,
        "compute_efficiency": 0.4,
        "memory_overhead_gb": 3.0,
        "point_count": 6,
        "mape_percent": 4.0,
        "created_at": "2026-12-01T00:00:00Z",
    }
    return CalibrationRecord(**{**fields, **values})


FAMILY = {
    "llama-3.1-8b": ModelFacts("llama-3.1", 8_030_000_000),
    "llama-3.1-70b": ModelFacts("llama-3.1", 70_600_000_000),
}


def test_the_exact_calibration_applies_unless_the_request_gives_the_field(snapshot: CatalogSnapshot) -> None:
    exact = record(7, "llama-3.1-8b")
    context = Context(snapshot, CalibrationSnapshot({exact.key: exact}, FAMILY, 1))
    request = load("/v1/throughput", FIT)
    applied = calibration.apply(context, "llama-3.1-8b", "h100-sxm", request.inputs, frozenset())
    assert (applied.inputs.memory_efficiency, applied.inputs.compute_efficiency) == (0.5, 0.4)
    assert applied.inputs.reserved_gb == 3.0 and applied.inputs.max_batched_tokens == 4096
    assert applied.inputs.engine_timing is False  # fitted on the roofline alone
    assert (applied.basis, applied.mape_percent) == ("calibrated", 4.0)
    given = calibration.apply(
        context, "llama-3.1-8b", "h100-sxm", request.inputs, frozenset({"memory_efficiency", "max_batched_tokens"})
    )
    assert given.inputs.memory_efficiency is None and given.inputs.compute_efficiency == 0.4
    assert given.inputs.max_batched_tokens == request.inputs.max_batched_tokens
    # Inline objects never take a stored calibration.
    inline = calibration.apply(context, snapshot.models["llama-3.1-8b"], "h100-sxm", request.inputs, frozenset())
    assert inline.record is None and inline.basis == "datasheet"


def test_a_same_family_calibration_lends_its_efficiencies_only(snapshot: CatalogSnapshot) -> None:
    lender = record(9, "llama-3.1-70b")
    context = Context(snapshot, CalibrationSnapshot({lender.key: lender}, FAMILY, 1))
    answer = replica.throughput(load("/v1/throughput", FIT), context)
    assert answer.basis == "calibrated-nearest"
    assert answer.calibration is not None and answer.calibration.id == 9
    assert answer.calibration.fields_used == ("memory_efficiency", "compute_efficiency")
    assert answer.memory_efficiency == 0.5  # lent; its memory overhead is the 70B's own, not lent
    assert any("calibration 9 (llama-3.1-70b, the same family)" in w for w in answer.warnings)


def test_the_outage_note_is_in_every_answer_with_warnings(snapshot: CatalogSnapshot) -> None:
    note = "catalog served from memory: the database is unreachable since 2026-12-01T00:00:00Z"
    context = Context(snapshot, notes=(note,))
    assert note in replica.fit(load("/v1/fit", FIT), context).warnings
    assert note in fleet.plan(load("/v1/fleet", {**FIT, "requests_per_day": 1e5}), context).answer.warnings

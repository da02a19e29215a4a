"""Typed answers (app/planning/answers.py) as the services return them, before any HTTP: their
figures in SI units, worked out here by hand; and their wire form (app/api/wire.py) as the
schemas that document them write it, key for key and unit for unit."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from flask import Flask
from marshmallow import Schema

from app.api import lookup
from app.api.wire import compiled, dump, keys
from app.openapi.answers import WRITERS
from app.planning import replica
from app.planning.answers import CalibrationEngine, CalibrationUsed, CostAnswer, RooflineAnswer
from app.planning.context import Context
from app.planning.requests import CostRequest, RooflineRequest
from app.sizing.plan import PlanInputs
from app.sizing.vocabulary import RooflineBound


@pytest.fixture(scope="module")
def context(app: Flask) -> Context:
    with app.test_request_context():
        return Context(lookup.context().catalog)


def test_a_given_rate_is_priced_per_gpu_hour_and_per_million_tokens(context: Context) -> None:
    request = CostRequest(None, None, None, PlanInputs(price_per_gpu_hour_usd=2.5), 1000.0, 4, 730.0, 0.5)
    answer = replica.cost(request, context)
    assert isinstance(answer, CostAnswer)
    # 4 GPUs at $2.50 an hour: $10 an hour, $7,300 for 730 hours.
    assert answer.hourly_cost_usd == pytest.approx(10.0)
    assert answer.monthly_cost_usd == pytest.approx(7300.0)
    # Busy half the time, 1,000 tokens/s makes 1,800,000 tokens an hour: $10 / 1.8M tokens.
    assert answer.cost_per_million_output_tokens_usd == pytest.approx(10.0 / 1.8)
    assert (answer.engine, answer.tokens_per_s_basis, answer.basis, answer.calibration) == (
        None,
        "given",
        "measured",
        None,
    )


def test_a_gemm_on_given_roofs_is_held_in_seconds_and_flops_per_second(context: Context) -> None:
    # 64 x 4096 by 4096 x 4096 in bf16 on 1,000 TFLOP/s and 2 TB/s.
    request = RooflineRequest(64, 4096, 4096, None, 1000.0, 2.0, "bf16", "bf16", "bf16")
    answer = replica.roofline(request, context)
    assert isinstance(answer, RooflineAnswer)
    flops = 2 * 64 * 4096 * 4096
    moved = 2 * (64 * 4096 + 4096 * 4096 + 64 * 4096)  # A, B and C once, two bytes each
    assert (answer.flops, answer.bytes_moved) == (flops, moved)
    assert answer.arithmetic_intensity == pytest.approx(flops / moved)
    assert answer.ridge_flops_per_byte == pytest.approx(1000e12 / 2e12)
    # Under the ridge (about 62 FLOP/byte against 500): memory-bound, at intensity x bandwidth.
    assert answer.bound == RooflineBound.MEMORY
    assert answer.attainable_flops_per_s == pytest.approx(flops / moved * 2e12)
    assert answer.time_s == pytest.approx(moved / 2e12)
    wire = dump(answer)
    assert wire["attainable_tflops"] == answer.attainable_flops_per_s / 1e12
    assert wire["time_us"] == answer.time_s * 1e6
    assert "time_s" not in wire and "attainable_flops_per_s" not in wire


@pytest.mark.parametrize("answer_type", list(WRITERS))
def test_a_typed_answer_and_its_schema_agree_field_for_field(answer_type: type) -> None:
    """Every field of the type is written (the writer refuses one it cannot), and every field
    the schema documents is one the type holds: nothing documented goes unwritten."""
    schema = WRITERS[answer_type]
    assert sorted(keys(answer_type, schema)) == sorted(schema().fields)


def _sample(answer_type: type) -> Any:
    """An instance with a distinct value in every field (a nested answer for a nested type)."""
    values: dict[str, Any] = {}
    for number, field in enumerate(dataclasses.fields(answer_type), start=1):
        kind = str(field.type)
        if "CalibrationUsed" in kind:
            values[field.name] = _sample(CalibrationUsed)
        elif "CalibrationEngine" in kind:
            values[field.name] = CalibrationEngine("vllm", "0.10")
        elif "tuple" in kind:
            values[field.name] = ("memory_efficiency",)
        elif "RooflineBound" in kind:
            values[field.name] = RooflineBound.COMPUTE
        elif kind.startswith("str"):
            values[field.name] = f"text {number}"
        elif kind.startswith("int"):
            values[field.name] = number
        else:
            values[field.name] = number + 0.25
    return answer_type(**values)


@pytest.mark.parametrize("answer_type", list(WRITERS))
def test_the_compiled_writer_writes_what_marshmallow_dumps(answer_type: type) -> None:
    schema: type[Schema] = WRITERS[answer_type]
    sample = _sample(answer_type)
    written = compiled(answer_type, schema)(sample)
    assert written == schema().dump(sample)
    # In the type's field order.
    assert list(written) == keys(answer_type, schema)


def test_a_calibration_in_use_is_written_as_the_dict_answers_hold_it() -> None:
    used = _sample(CalibrationUsed)
    written = dump(used)
    assert written["engine"] == {"name": "vllm", "version": "0.10"}
    assert written["fields_used"] == ["memory_efficiency"]
    assert math.isfinite(written["id"])


def test_a_field_no_schema_writes_is_refused_when_the_writer_is_compiled() -> None:
    @dataclasses.dataclass(frozen=True)
    class Roofline(RooflineAnswer):
        undocumented_s: float = 0.0

    with pytest.raises(TypeError, match="undocumented_s"):
        compiled(Roofline, WRITERS[RooflineAnswer])

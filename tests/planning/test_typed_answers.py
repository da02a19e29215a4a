"""Typed answers (app/planning/answers.py) as the services return them, before any HTTP: their
figures in SI units, worked out here by hand; and their wire form (app/api/wire.py) as the
schemas that document them write it, key for key and unit for unit."""

from __future__ import annotations

import dataclasses
import math
import typing
from enum import StrEnum
from types import SimpleNamespace
from typing import Any

import pytest
from flask import Flask
from marshmallow import Schema, fields
from marshmallow.class_registry import get_class
from marshmallow.exceptions import RegistryError

from app.api import lookup
from app.api.schemas import PLANNING_BY_PATH
from app.api.wire import compiled, dump, keys
from app.openapi.answers import WRITERS
from app.planning import batch as batch_service
from app.planning import latency as latency_service
from app.planning import replica
from app.planning import simulated_day as day_service
from app.planning import traces as traces_service
from app.planning.answers import (
    FLAT,
    FLAT_KEY,
    OMITTED,
    OMITTED_FLAT,
    AutoscalingAnswer,
    BatchAnswer,
    CalibrationEngine,
    CalibrationUsed,
    CostAnswer,
    FitAnswer,
    LatencyAnswer,
    LatencyRow,
    PairLatencyAnswer,
    RooflineAnswer,
    SimulatedDay,
    SimulatedRow,
    SpeculationPlanned,
    StaticDay,
    ThroughputAnswer,
    TracesAnswer,
    TriggerAnswer,
)
from app.planning.context import Context
from app.planning.requests import CostRequest, RooflineRequest
from app.sizing import trace_log
from app.sizing.plan import PlanInputs
from app.sizing.vocabulary import FleetLayout, LatencyMode, Role, RooflineBound


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
    """Every field of the type is written (the writer refuses one it cannot), every key the
    schema requires is one the type holds, and every field the schema documents is held by one
    of the types it writes (a simulated latency row's extras, a P/D pair's): nothing documented
    goes unwritten."""
    schema = WRITERS[answer_type]
    documented = schema().fields
    written = keys(answer_type, schema)
    assert len(set(written)) == len(written)
    assert {name for name, f in documented.items() if f.required} <= set(written)
    kin = [t for t, s in WRITERS.items() if s is schema]
    assert sorted({key for t in kin for key in keys(t, schema)}) == sorted(documented)


def _sample(answer_type: type) -> Any:
    """An instance with a distinct value in every field (a nested answer for a nested type)."""
    hints = typing.get_type_hints(answer_type)
    values: dict[str, Any] = {}
    for number, field in enumerate(dataclasses.fields(answer_type), start=1):
        kind = str(field.type)
        nested = next((t for t in _pieces(hints[field.name]) if dataclasses.is_dataclass(t)), None)
        if nested is CalibrationEngine:
            values[field.name] = CalibrationEngine("vllm", "0.10")
        elif nested is not None:
            values[field.name] = _sample(nested)
            if kind.startswith("tuple"):
                values[field.name] = (values[field.name],)
        elif kind.startswith("tuple[str"):
            values[field.name] = ("memory_efficiency",)
        elif kind.startswith("tuple[tuple[int"):  # (prompt, output) pairs
            values[field.name] = ((number, number + 1), (2, 3))
        elif kind.startswith("tuple[int"):
            values[field.name] = (1, 2, number)
        elif kind.startswith("tuple[float"):
            values[field.name] = (number + 0.5, number + 1.5)
        elif kind.startswith("Mapping[str, int]"):
            values[field.name] = {"attention": number, "experts": number + 1}
        elif kind.startswith("Mapping[str, Mapping"):  # spreads by figure
            spread = {"mean": number + 0.5, "p50": number, "p90": None, "p95": number + 2, "p99": 1e3}
            values[field.name] = {"ttft_ms": spread, "tpot_ms": spread, "queue_wait_ms": spread, "e2e_ms": spread}
        elif kind.startswith("Mapping[str, float"):  # a spread: mean and percentiles
            values[field.name] = {"mean": number + 0.5, "p50": number, "p90": None, "p95": number + 2, "p99": 1e3}
        elif kind.startswith("Mapping"):
            values[field.name] = {"ttft_ms": [number - 0.5, number + 0.5], "tokens_per_s": None}
        elif "RooflineBound" in kind:
            values[field.name] = RooflineBound.COMPUTE
        elif (enum := next((t for t in _pieces(hints[field.name]) if _is_enum(t)), None)) is not None:
            values[field.name] = list(enum)[-1]
        elif kind.startswith("bool"):
            values[field.name] = number % 2 == 0
        elif kind.startswith("str"):
            values[field.name] = f"text {number}"
        elif kind.startswith("int"):
            values[field.name] = number
        else:
            values[field.name] = number + 0.25
    return answer_type(**values)


def _is_enum(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, StrEnum)


def _pieces(hint: Any) -> tuple[Any, ...]:
    """The types a field's annotation names: itself, an optional's, a tuple's items' (a union's
    members each)."""
    return (hint, *(piece for arg in typing.get_args(hint) for piece in _pieces(arg)))


def _flattened(answer: Any) -> Any:
    """The answer as marshmallow reads it: its flat pieces' fields as its own attributes, and
    so in every answer it nests."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(answer):
        value = getattr(answer, field.name)
        if field.metadata.get(FLAT_KEY):
            if value is not None:  # an OMITTED piece that is None writes none of its fields
                values.update(vars(_flattened(value)))
        elif dataclasses.is_dataclass(value):
            values[field.name] = _flattened(value)
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            values[field.name] = [_flattened(item) for item in value]
        else:
            values[field.name] = value
    return SimpleNamespace(**values)


def _request_component(field: Any) -> bool:
    if not isinstance(field, fields.Nested) or not isinstance(field.nested, str):
        return False
    try:
        get_class(field.nested)
    except RegistryError:
        return True
    return False


@pytest.mark.parametrize("answer_type", list(WRITERS))
def test_the_compiled_writer_writes_what_marshmallow_dumps(answer_type: type) -> None:
    schema: type[Schema] = WRITERS[answer_type]
    sample = _sample(answer_type)
    written = compiled(answer_type, schema)(sample)
    # A request body (a /v1/traces answer's fleet_request) nests a request component marshmallow
    # cannot dump by name: the writer writes that mapping as it is.
    passed = {name for name, f in schema().fields.items() if _request_component(f)}
    assert {k: v for k, v in written.items() if k not in passed} == schema(exclude=passed).dump(_flattened(sample))
    assert all(written[name] == getattr(sample, name) for name in passed)
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


@dataclasses.dataclass(frozen=True)
class _Split:
    committed_gpus: int
    spot_gpus: int


@dataclasses.dataclass(frozen=True)
class _Figures:
    gpus_total: int
    split: _Split | None = dataclasses.field(metadata=OMITTED_FLAT)


@dataclasses.dataclass(frozen=True)
class _Row:
    period: str
    figures: _Figures = dataclasses.field(metadata=FLAT)
    alternatives: tuple[str, ...] | None = dataclasses.field(metadata=OMITTED)
    note: str | None = None


class _RowSchema(Schema):
    period = fields.String()
    gpus_total = fields.Integer()
    committed_gpus = fields.Integer()
    spot_gpus = fields.Integer()
    alternatives = fields.List(fields.String())
    note = fields.String(allow_none=True)


def test_an_omitted_field_is_left_out_while_none_and_written_in_its_place_otherwise() -> None:
    write = compiled(_Row, _RowSchema)
    bare = _Row("2027-01", _Figures(4, None), None)
    # An OMITTED field and every field of an OMITTED flat piece are absent; a plain None is null.
    assert write(bare) == {"period": "2027-01", "gpus_total": 4, "note": None}
    full = _Row("2027-02", _Figures(6, _Split(2, 1)), ("a", "b"), "n")
    written = write(full)
    assert list(written) == ["period", "gpus_total", "committed_gpus", "spot_gpus", "alternatives", "note"]
    assert written == {**_RowSchema().dump(_flattened(full)), "alternatives": ["a", "b"]}
    # Every key it may write is documented, in the type's order.
    assert keys(_Row, _RowSchema) == list(written)


def _load(path: str, payload: dict[str, Any]) -> Any:
    return PLANNING_BY_PATH[path].schema.load(payload)


def test_a_fit_is_held_in_unrounded_bytes_and_written_whole(context: Context) -> None:
    # Llama 3.1 8B in bf16: 32 layers x 8 KV heads x 128 dims x (K and V) x 2 bytes = 131,072
    # bytes a token; a 3,000-token conversation holds 3,000 of them.
    payload = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "ideal", "prompt_tokens": 2000}
    answer = replica.fit(_load("/v1/fit", {**payload, "output_tokens": 1000, "concurrency": 4}), context)
    assert isinstance(answer, FitAnswer)
    memory = answer.memory
    assert memory.kv_bytes_per_token == 32 * 8 * 128 * 2 * 2
    assert memory.kv_bytes_per_sequence == 3000 * memory.kv_bytes_per_token
    assert memory.kv_bytes_at_concurrency == 4 * memory.kv_bytes_per_sequence
    assert memory.fits and memory.concurrency == 4 and memory.tensor_parallel == 1
    assert answer.engine_figures.engine == "ideal" and answer.ranges.uncertainty is None
    wire = dump(answer)
    assert wire["weights_bytes"] == round(memory.weights_bytes) and isinstance(wire["weights_bytes"], int)
    assert wire["valid_tensor_parallel"] == list(memory.valid_tensor_parallel)
    # One flat object: the pieces' own fields, no key for a piece.
    assert not {"memory", "engine_figures", "ranges"} & set(wire)
    assert list(wire)[:2] == ["model", "gpu"] and list(wire)[-1] == "calibration"


def test_a_throughput_answer_is_held_in_seconds_and_its_decode_is_its_bytes_over_bandwidth(context: Context) -> None:
    payload = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "ideal", "prompt_tokens": 1000}
    answer = replica.throughput(_load("/v1/throughput", {**payload, "concurrency": 8, "sweep": [1, 8]}), context)
    assert isinstance(answer, ThroughputAnswer)
    # At batch 8 a decode step reads the weights once and eight sequences' KV: memory-bound,
    # its time those bytes over the bandwidth the plan reaches.
    assert answer.decode_bound == RooflineBound.MEMORY
    bandwidth = answer.memory_bandwidth_bytes_per_s * answer.memory_efficiency
    assert answer.memory_bandwidth_bytes_per_s == 3.35e12  # the H100 SXM datasheet's 3.35 TB/s
    read_s = (answer.weight_bytes_per_step + answer.kv_bytes_per_step) / bandwidth
    assert answer.decode_memory_s == pytest.approx(read_s, rel=1e-9)
    assert answer.tokens_per_s == pytest.approx(8 / answer.time_per_token_s, rel=1e-12)
    assert [row.concurrency for row in answer.sweep] == [1, 8]
    assert answer.sweep[1].time_per_token_s == answer.time_per_token_s
    wire = dump(answer)
    assert wire["time_per_token_ms"] == answer.time_per_token_s * 1e3
    assert wire["memory_bandwidth_tb_per_s"] == 3.35
    assert wire["sweep"][0]["memory_ms"] == answer.sweep[0].decode_memory_s * 1e3
    steady = answer.continuous_batching
    assert steady is not None and wire["continuous_batching"]["ttft_ms"] == steady.ttft_s * 1e3
    assert "time_per_token_s" not in wire and "time_per_token_s" not in wire["sweep"][0]


def test_a_batch_answer_holds_its_makespan_and_speculation_typed(context: Context) -> None:
    payload = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "requests": 40, "prompt_tokens": 500, "output_tokens": 60}
    answer = batch_service.batch(_load("/v1/batch", {**payload, "speculative": {"method": "ngram"}}), context)
    assert isinstance(answer, BatchAnswer)
    assert answer.requests_per_s == pytest.approx(40 / answer.makespan_s, rel=1e-12)
    assert answer.output_tokens_total == 40 * 60  # fixed lengths: every answer whole
    planned = answer.speculative
    assert isinstance(planned, SpeculationPlanned) and planned.used and not planned.auto
    wire = dump(answer)
    assert wire["speculative"]["method"] == "ngram" and wire["engine"] == answer.engine_figures.engine
    assert wire["ttft_ms"] == answer.ttft_ms and "engine_figures" not in wire


def test_a_latency_answer_holds_its_rows_typed_and_writes_them_flat(context: Context) -> None:
    payload = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt_tokens": 1000, "output_tokens": 200}
    answer = latency_service.latency(_load("/v1/latency", {**payload, "sweep_rates": [1, 1000]}), context)
    assert isinstance(answer, LatencyAnswer)
    assert (answer.mode, answer.topology, answer.max_request_rate_meets_slo) == (
        LatencyMode.ANALYTIC,
        FleetLayout.AGGREGATED,
        None,  # no SLO given
    )
    low, high = answer.rates
    assert isinstance(low, LatencyRow) and (low.request_rate, high.request_rate) == (1.0, 1000.0)
    # 1,000 requests/s is past the replica's saturation: no steady state, every figure null.
    assert low.stable and not high.stable and answer.saturation_rate < 1000
    assert set(high.ttft_ms.values()) == {None} and high.output_tokens_per_s is None
    assert any(w.startswith("past capacity") for w in answer.provenance.warnings)
    # The queue wait is part of the TTFT: the mean TTFT exceeds the mean wait.
    assert low.ttft_ms["mean"] > low.queue_wait_ms["mean"]  # type: ignore[operator]
    wire = dump(answer)
    assert (
        wire["rates"][0]["ttft_ms"] == low.ttft_ms
        and wire["max_request_rate_bound_by"] == answer.max_request_rate_bound_by
    )
    assert "figures" not in wire["rates"][0] and "engine_figures" not in wire


def test_a_simulated_row_writes_its_figures_and_half_widths_as_one_object(context: Context) -> None:
    payload = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "request_rate": 2, "mode": "simulate", "requests": 1000}
    answer = latency_service.latency(_load("/v1/latency", payload), context)
    assert isinstance(answer, LatencyAnswer) and answer.mode == LatencyMode.SIMULATE
    (row,) = answer.rates
    assert isinstance(row, SimulatedRow) and row.figures.request_rate == 2.0
    assert row.measured_requests <= 1000 and row.preemptions == 0
    written = dump(answer)["rates"][0]
    assert list(written)[: len(dataclasses.fields(LatencyRow))] == [f.name for f in dataclasses.fields(LatencyRow)]
    assert written["confidence_95_ms"]["ttft_ms"] == row.confidence_95_ms["ttft_ms"]
    assert written["ttft_ms"] == row.figures.ttft_ms


def test_a_disaggregated_latency_answer_holds_the_pair_and_its_kv_transfer_in_seconds(context: Context) -> None:
    payload = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt_tokens": 2000, "output_tokens": 200}
    answer = latency_service.latency(
        _load("/v1/latency", {**payload, "request_rate": 1, "topology": "disaggregated"}), context
    )
    assert isinstance(answer, PairLatencyAnswer) and answer.answer.topology == FleetLayout.DISAGGREGATED
    transfer = answer.kv_transfer
    # Llama 3.1 8B's bf16 KV is 131,072 bytes a token: a 2,000-token prompt's is 262,144,000.
    assert transfer.bytes_per_request == 2000 * 131_072
    assert answer.max_request_rate_pool in (Role.PREFILL, Role.DECODE)
    wire = dump(answer)
    assert wire["kv_transfer"]["ms"] == transfer.seconds * 1e3 and "seconds" not in wire["kv_transfer"]
    assert wire["topology"] == "disaggregated" and "answer" not in wire
    # The pair's own figures come after the answer every layout gives, as they always have.
    assert list(wire)[-4:] == [
        "max_request_rate_pool",
        "prefill_saturation_rate",
        "decode_saturation_rate",
        "kv_transfer",
    ]


def test_a_simulated_day_holds_its_cost_unrounded_and_writes_it_to_the_cent(context: Context) -> None:
    # Four hours of Llama 3.1 8B on H100 at $2.50 per GPU-hour; the static plan holds its peak
    # fleet all four hours.
    hours = (1800, 3600, 5400, 3600)
    payload = {
        "model": "llama-3.1-8b",
        "gpu": "h100-sxm",
        "prompt_tokens": 1000,
        "output_tokens": 4000,
        "ttft_slo_ms": 1000,
        "tpot_slo_ms": 15,
        "price_per_gpu_hour_usd": 2.5,
        "forecast": [{"hour": f"{h:02d}:00", "requests": r} for h, r in enumerate(hours)],
    }
    answer = day_service.simulate(_load("/v1/autoscaling/simulate", payload), context)
    assert isinstance(answer, AutoscalingAnswer) and answer.hours == 4
    static = answer.static
    assert isinstance(static, StaticDay) and isinstance(static.day, SimulatedDay)
    # A static fleet runs from the first instant to the last request's end: at least the
    # replicas times the four hours, each hour's share priced at $2.50 a GPU.
    assert static.day.replica_hours >= static.replicas * 4 - 1e-9
    assert static.day.cost_usd == pytest.approx(static.day.replica_hours * 2.5)
    assert [h.hour for h in answer.autoscaled.per_hour] == [0, 1, 2, 3]
    assert all(isinstance(t, TriggerAnswer) for t in answer.policy.triggers)
    wire = dump(answer)
    assert wire["static"]["replicas"] == static.replicas and "day" not in wire["static"]
    assert wire["static"]["cost_usd"] == round(static.day.cost_usd, 2)
    assert wire["autoscaled"]["per_hour"][0]["cost_usd"] == round(answer.autoscaled.per_hour[0].cost_usd or 0, 2)
    assert wire["policy"]["triggers"][0]["metrics"] == list(answer.policy.triggers[0].metrics)


def test_a_trace_profile_holds_the_profilers_own_values_and_writes_them_as_objects() -> None:
    # Three requests a minute apart in one hour: 3 requests over 120 s of span.
    lines = [
        "timestamp,prompt_tokens,output_tokens,cached_tokens",
        "1700000000,100,10,0",
        "1700000060,200,20,0",
        "1700000120,300,30,0",
    ]
    answer = traces_service.profile(lines, log_format="csv", model="llama-3.1-8b", gpu=None)
    assert isinstance(answer, TracesAnswer) and answer.requests == 3 and answer.span_s == 120.0
    assert isinstance(answer.prompt_tokens, trace_log.Spread) and answer.prompt_tokens.mean == 200.0
    assert all(isinstance(period, trace_log.HourlyPeriod) for period in answer.periods)
    assert answer.fleet_request is not None and answer.fleet_request["prompt_tokens"] == 200
    wire = dump(answer)
    assert wire["prompt_tokens"]["mean"] == 200.0 and wire["periods"][0]["requests"] == answer.periods[0].requests
    assert wire["length_samples"] == [list(pair) for pair in answer.length_samples]
    assert wire["fleet_request"] == answer.fleet_request


def test_an_answer_without_a_writer_is_refused_not_passed_through():
    # A dict built by hand would reach a user with no schema documenting it.
    with pytest.raises(TypeError, match="no writer"):
        dump({"tokens_per_s": 1.0})

"""POST /v1/traces: a request log's workload (app/sizing/trace_log.py), and the /v1/fleet body
that plans it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.sizing import trace_log
from app.sizing.trace_log import TraceError, TraceProfile
from app.sizing.vocabulary import Arrival

from .answers import TracesAnswer
from .errors import InvalidRequest

# /v1/fleet's ranges for the spread of lengths (WorkloadSchema).
MAX_LENGTH_CV = 4.0


def profile(lines: Iterable[str], *, log_format: str | None, model: str | None, gpu: str | None) -> TracesAnswer:
    """The log's workload, its hourly periods and a ready /v1/fleet body; a log the profiler
    cannot read is an InvalidRequest naming `log.<line>.<column>` (or `log`)."""
    try:
        found = trace_log.profile_log(lines, log_format)
    except TraceError as exc:
        raise refusal(exc) from None
    warnings = list(found.warnings)
    named = model if model is not None else _log_model(found, warnings)
    return TracesAnswer(
        requests=found.requests,
        first_arrival=found.first_arrival,
        last_arrival=found.last_arrival,
        span_s=found.span_s,
        requests_per_day=found.requests_per_day,
        requests_per_second=found.requests_per_day / trace_log.SECONDS_PER_DAY,
        peak_to_average=found.peak_to_average,
        burstiness=found.burstiness,
        arrival_cv=found.arrival_cv,
        prompt_tokens=found.prompt_tokens,
        output_tokens=found.output_tokens,
        prefix_cache_hit_rate=found.prefix_cache_hit_rate,
        models=found.models,
        length_buckets=found.length_buckets,
        periods=found.periods,
        length_samples=found.length_samples,
        fleet_request=None if named is None else fleet_request(found, named, gpu),
        warnings=tuple(warnings),
    )


def refusal(exc: TraceError) -> InvalidRequest:
    name = "log" if exc.line is None else f"log.{exc.line}" + ("" if exc.column is None else f".{exc.column}")
    return InvalidRequest(str(exc), {name: [str(exc)]})


def _log_model(found: TraceProfile, warnings: list[str]) -> str | None:
    """The model the log names, when it names one; several: the busiest, said so."""
    if not found.models:
        warnings.append("the log names no model: give ?model= for a fleet_request")
        return None
    busiest = next(iter(found.models))
    if len(found.models) > 1:
        warnings.append(
            f"the log names {len(found.models)} models and is profiled as one workload; fleet_request plans "
            f"{busiest}, the busiest: split the log per model to plan each"
        )
    return busiest


def fleet_request(found: TraceProfile, model: str, gpu: str | None) -> dict[str, Any]:
    """A /v1/fleet body for the log's traffic: its rate and peak, mean lengths with their
    spread, and its arrivals (gamma of the fitted shape; Poisson when none was fitted)."""
    body: dict[str, Any] = {"model": model}
    if gpu is not None:
        body["gpu"] = gpu
    body.update(
        {
            "requests_per_day": found.requests_per_day,
            "peak_to_average": found.peak_to_average,
            "prompt_tokens": max(1, round(found.prompt_tokens.mean)),
            "output_tokens": max(1, round(found.output_tokens.mean)),
            "prompt_tokens_cv": min(MAX_LENGTH_CV, found.prompt_tokens.cv),
            "output_tokens_cv": min(MAX_LENGTH_CV, found.output_tokens.cv),
        }
    )
    if found.prefix_cache_hit_rate:
        body["prefix_cache_hit_rate"] = found.prefix_cache_hit_rate
    if found.burstiness is None:
        body["arrival"] = Arrival.POISSON
    else:
        body.update({"arrival": Arrival.GAMMA, "burstiness": found.burstiness})
    return body

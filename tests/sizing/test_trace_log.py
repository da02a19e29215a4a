"""The request-log profiler (app/sizing/trace_log.py) against logs drawn with known parameters,
and its refusals naming the line and column."""

from __future__ import annotations

import json
import math
import random
import time
from datetime import UTC, datetime

import pytest

from app.sizing import trace_log
from app.sizing.trace_log import TraceError, profile_log

# 2026-12-01T00:00:00Z
START_S = 1_796_083_200
# A diurnal shape (quiet nights, a busy afternoon), stretched about its mean into hourly rate
# factors of mean 1 and peak 2.5: the synthetic log.
DIURNAL = [0.3, 0.25, 0.2, 0.2, 0.25, 0.35, 0.5, 0.7, 0.9, 1.1, 1.3, 1.5, 1.7, 2.0, 2.3, 2.5, 2.4, 2.1, 1.7, 1.4,
           1.1, 0.9, 0.6, 0.4]  # fmt: skip
PEAK = 2.5
_MEAN = sum(DIURNAL) / 24
PROFILE = [1 + (weight - _MEAN) * (PEAK - 1) / (max(DIURNAL) - _MEAN) for weight in DIURNAL]


def synthetic_rows(
    days: int, requests_per_day: float, *, shape: float, seed: int = 7
) -> list[tuple[float, int, int, int]]:
    """Arrivals hour by hour at the diurnal profile's rate, gaps gamma of `shape` within each
    hour (1: Poisson); prompts gamma (mean 1,500, cv 0.8), outputs gamma (mean 300, cv 0.5);
    a quarter of each prompt cached."""
    rng = random.Random(seed)
    rows = []
    for hour in range(days * 24):
        rate_per_s = requests_per_day / 86_400 * PROFILE[hour % 24]
        begin = START_S + hour * 3600
        moment = begin + rng.gammavariate(shape, 1 / (shape * rate_per_s))
        while moment < begin + 3600:
            prompt = max(1, round(rng.gammavariate(1 / 0.8**2, 1500 * 0.8**2)))
            output = max(1, round(rng.gammavariate(1 / 0.5**2, 300 * 0.5**2)))
            rows.append((moment, prompt, output, prompt // 4))
            moment += rng.gammavariate(shape, 1 / (shape * rate_per_s))
    return rows


def csv_lines(rows: list[tuple[float, int, int, int]], *, iso: bool = False) -> list[str]:
    def stamp(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, UTC).isoformat() if iso else f"{seconds:.3f}"

    return ["timestamp,prompt_tokens,output_tokens,cached_tokens"] + [f"{stamp(t)},{p},{o},{c}" for t, p, o, c in rows]


@pytest.fixture(scope="module")
def poisson_rows() -> list[tuple[float, int, int, int]]:
    return synthetic_rows(3, 40_000, shape=1.0)


def test_a_diurnal_poisson_log_comes_back_with_its_parameters(poisson_rows: list[tuple[float, int, int, int]]) -> None:
    found = profile_log(csv_lines(poisson_rows))
    assert found.requests == len(poisson_rows)
    assert min(PROFILE) > 0
    assert sum(PROFILE) / 24 == pytest.approx(1) and max(PROFILE) == pytest.approx(2.5)
    assert found.requests_per_day == pytest.approx(40_000, rel=0.02)
    assert found.peak_to_average == pytest.approx(PEAK, rel=0.10)
    assert found.burstiness == pytest.approx(1.0, abs=0.15)
    assert found.arrival_cv == pytest.approx(1.0, rel=0.10)
    assert found.prompt_tokens.mean == pytest.approx(1500, rel=0.02)
    assert found.output_tokens.mean == pytest.approx(300, rel=0.02)
    assert found.prompt_tokens.cv == pytest.approx(0.8, rel=0.10)
    assert found.output_tokens.cv == pytest.approx(0.5, rel=0.10)
    # A quarter of each prompt, rounded down.
    assert found.prefix_cache_hit_rate == pytest.approx(0.25, abs=0.001)
    # Three whole days of hours; each hour's rate is its profile weight's.
    assert len(found.periods) == 72
    assert found.periods[15].period == "2026-12-01T15:00Z"
    assert found.periods[15].requests_per_day == pytest.approx(40_000 * PROFILE[15], rel=0.1)


def test_gamma_arrivals_are_fitted_as_their_shape() -> None:
    found = profile_log(csv_lines(synthetic_rows(2, 30_000, shape=0.4, seed=3)))
    assert found.burstiness == pytest.approx(0.4, abs=0.15)
    assert found.arrival_cv == pytest.approx(1 / math.sqrt(0.4), rel=0.15)


def test_percentiles_are_nearest_rank_and_buckets_share_every_request() -> None:
    rows = [(START_S + i, prompt, 10 * (i % 2) + 5, 0) for i, prompt in enumerate(range(1, 101))]
    found = profile_log(csv_lines(rows))
    assert (found.prompt_tokens.p50, found.prompt_tokens.p90, found.prompt_tokens.p99) == (50, 90, 99)
    assert found.prompt_tokens.mean == 50.5
    assert found.output_tokens.mean == 10  # 5 and 15 alternate
    assert sum(bucket.share for bucket in found.length_buckets) == pytest.approx(1, abs=1e-9)
    # Prompt quartiles (<= 25, <= 50, <= 75, above) x outputs at or below the median (5) and above.
    assert len(found.length_buckets) == 8
    assert {bucket.output_tokens for bucket in found.length_buckets} == {5, 15}
    assert found.prefix_cache_hit_rate == 0.0


def test_iso_and_epoch_timestamps_and_json_lines_read_the_same() -> None:
    rows = synthetic_rows(1, 5_000, shape=1.0, seed=11)
    by_epoch = profile_log(csv_lines(rows))
    by_iso = profile_log(csv_lines(rows, iso=True))
    lines = [
        json.dumps({"timestamp": t, "prompt_tokens": p, "output_tokens": o, "cached_tokens": c, "model": "m"})
        for t, p, o, c in rows
    ]
    by_json = profile_log(lines)
    for other in (by_iso, by_json):
        assert other.requests == by_epoch.requests
        assert other.requests_per_day == pytest.approx(by_epoch.requests_per_day, rel=1e-6)
        assert other.prompt_tokens == by_epoch.prompt_tokens
        assert other.burstiness == pytest.approx(by_epoch.burstiness, rel=1e-3)
    assert by_json.models == {"m": len(rows)}


def test_an_iso_timestamp_without_an_offset_is_utc_and_offsets_count() -> None:
    lines = ["timestamp,prompt_tokens,output_tokens", "2026-12-01T10:00:00,10,5", "2026-12-01T12:00:00+02:00,10,5"]
    with pytest.raises(TraceError, match="same timestamp"):
        profile_log(lines)
    found = profile_log([*lines[:2], "2026-12-01T11:00:00Z,10,5"])
    assert found.span_s == 3600
    assert found.first_arrival == "2026-12-01T10:00:00Z"


def test_rows_with_spare_columns_blank_lines_and_blank_cached_cells_are_read() -> None:
    lines = [
        "\ufeffid,Timestamp,prompt_tokens,output_tokens,cached_tokens,model,extra",
        "1,100,10,5,,a,x",
        "",
        "2,200,30,5,6,a,x",
        "3,300,20,5,4,b,x",
    ]
    lines[0] = lines[0].removeprefix("\ufeff")  # the HTTP edge drops a byte-order mark
    found = profile_log(lines)
    assert found.requests == 3
    assert found.prefix_cache_hit_rate == pytest.approx(10 / 60)
    assert found.models == {"a": 2, "b": 1}


@pytest.mark.parametrize(
    ("lines", "line", "column", "message"),
    [
        (["timestamp,prompt_tokens", "1,2"], 1, "output_tokens", "lacks output_tokens"),
        (["timestamp,prompt_tokens,output_tokens", "1,2,3", "2,x,3"], 3, "prompt_tokens", "'x' is not a whole"),
        (["timestamp,prompt_tokens,output_tokens", "1,2,3", "yesterday,2,3"], 3, "timestamp", "neither ISO"),
        (["timestamp,prompt_tokens,output_tokens", "1,2,3", "1796083200000,2,3"], 3, "timestamp", "milliseconds"),
        (["timestamp,prompt_tokens,output_tokens", "1,2,3", "2,2"], 3, "output_tokens", "2 columns"),
        (["timestamp,prompt_tokens,output_tokens", "1,2,-3"], 2, "output_tokens", "0 to"),
        (["timestamp,prompt_tokens,output_tokens,cached_tokens", "1,2,3,0", "2,2,3,5"], 3, "cached_tokens", "more"),
        (['{"timestamp": 1, "prompt_tokens": 2, "output_tokens": 3}', "[1]"], 2, None, "not a JSON object"),
        (['{"timestamp": 1, "prompt_tokens": 2, "output_tokens": 3}', '{"timestamp": 2}'], 2, "prompt_tokens", "miss"),
        (['{"timestamp": 1, "prompt_tokens": 2.5, "output_tokens": 3}'], 1, "prompt_tokens", "whole number"),
        (['{"timestamp": true, "prompt_tokens": 2, "output_tokens": 3}'], 1, "timestamp", "timestamp"),
        # A bare carriage return inside a line: the csv module refuses it; the answer names the line.
        (["timestamp,prompt_tokens\routput_tokens", "1,2,3"], 1, None, "header row is not CSV"),
        (["timestamp,prompt_tokens,output_tokens", "1,2,3", "2,2\r,3", "3,2,3"], 3, None, "row is not CSV"),
    ],
)
def test_a_bad_row_is_named_by_line_and_column(lines: list[str], line: int, column: str | None, message: str) -> None:
    with pytest.raises(TraceError, match=message) as caught:
        profile_log(lines)
    assert (caught.value.line, caught.value.column) == (line, column)


def test_a_bad_row_deep_in_a_long_log_is_named() -> None:
    lines = csv_lines(synthetic_rows(1, 20_000, shape=1.0))
    lines[12_345] = lines[12_345].replace(",", ",abc", 1)
    with pytest.raises(TraceError) as caught:
        profile_log(lines)
    assert (caught.value.line, caught.value.column) == (12_346, "prompt_tokens")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], "empty"),
        (["timestamp,prompt_tokens,output_tokens"], "0 requests"),
        (["timestamp,prompt_tokens,output_tokens", "5,1,1"], "1 request:"),
        (["timestamp,prompt_tokens,output_tokens", "5,1,1", "5,2,2"], "time span"),
    ],
)
def test_a_log_without_two_requests_or_a_time_span_is_refused(lines: list[str], message: str) -> None:
    with pytest.raises(TraceError, match=message) as caught:
        profile_log(lines)
    assert caught.value.line is None


@pytest.mark.simulation
def test_whole_second_timestamps_at_a_high_rate_leave_burstiness_unfitted() -> None:
    rows = synthetic_rows(1, 200_000, shape=1.0, seed=5)
    found = profile_log(csv_lines([(float(int(t)), p, o, c) for t, p, o, c in rows]))
    assert found.burstiness is None
    assert any("whole seconds" in warning for warning in found.warnings)


def test_length_samples_are_pairs_of_the_log_drawn_the_same_each_time(
    poisson_rows: list[tuple[float, int, int, int]],
) -> None:
    lines = csv_lines(poisson_rows)
    first, again = profile_log(lines), profile_log(lines)
    assert len(first.length_samples) == trace_log.LENGTH_SAMPLES
    assert first.length_samples == again.length_samples
    pairs = {(p, o) for _, p, o, _ in poisson_rows}
    assert set(first.length_samples) <= pairs


@pytest.mark.simulation
def test_a_million_rows_profile_in_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    """The benchmark of the issue: prints rows/s (CPU time, so a loaded machine reads fairly)."""
    rng = random.Random(1)
    moment, lines = float(START_S), ["timestamp,prompt_tokens,output_tokens"]
    for _ in range(1_000_000):
        moment += rng.expovariate(12.0)
        lines.append(f"{moment:.3f},{rng.randrange(1, 4000)},{rng.randrange(1, 800)}")
    started = time.process_time()
    found = profile_log(lines)
    elapsed_s = time.process_time() - started
    with capsys.disabled():
        print(f"\ntrace_log: 1,000,000 rows in {elapsed_s:.2f} s CPU, {1_000_000 / elapsed_s:,.0f} rows/s")
    assert found.requests == 1_000_000
    assert found.requests_per_day == pytest.approx(12 * 86_400, rel=0.01)
    assert elapsed_s < 20

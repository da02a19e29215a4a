"""A request log reduced to the workload it describes (POST /v1/traces).

A log is one request a row: when it arrived (`timestamp`, ISO 8601 or epoch seconds), its
`prompt_tokens` and `output_tokens`, optionally the prompt tokens the engine found in its prefix
cache (`cached_tokens`) and the `model` it asked for; as CSV with a header row, or as JSON lines
(one object a line). Rows are read one at a time into flat arrays, so a log of millions of rows
costs about 20 bytes a row, and the figures come from one sort of each column:

    requests_per_day  = requests / span × 86,400          span = last − first arrival
    hourly rate       = the hour's arrivals / the seconds of it the log covers
    peak_to_average   = the busiest hour's rate / requests_per_day × 86,400
                        (hours the log covers less than half of are left out: their few
                        arrivals over a short stretch say nothing about an hour's rate)
    burstiness        = 1 / cv² of the gaps between arrivals within each hour, each gap
                        divided by its hour's mean gap (the gamma shape fitted by moments;
                        dividing takes the diurnal swing out, which would read as burstiness)
    lengths           = mean, cv (population), nearest-rank p50, p90, p99
    length_buckets    = prompt quartiles × output halves, each cell's mean lengths and share
    prefix hit rate   = Σ cached_tokens / Σ prompt_tokens

`burstiness` is vLLM's benchmark convention, the gamma shape of inter-arrival times (1:
Poisson, below 1 burstier); `arrival_cv` is its 1/√shape.
"""

from __future__ import annotations

import bisect
import contextlib
import csv
import functools
import itertools
import json
import math
import operator
import random
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

SECONDS_PER_HOUR = 3600
SECONDS_PER_DAY = 86_400
REQUIRED_COLUMNS = ("timestamp", "prompt_tokens", "output_tokens")
OPTIONAL_COLUMNS = ("cached_tokens", "model")
# An hour the log covers less of than this share is left out of the peak (see the module text).
MIN_HOUR_COVERAGE = 0.5
# Epoch seconds past this are in the year 5138: the log is in milliseconds (or worse).
MAX_EPOCH_S = 1e11
# Whole-second timestamps cannot resolve gaps much shorter than a second: below this mean gap
# within hours the fitted burstiness would measure the clock, not the traffic.
MIN_MEAN_GAP_WHOLE_SECONDS_S = 5.0
# The bounds /v1/latency and /v1/fleet accept for burstiness.
BURSTINESS_RANGE = (0.05, 100.0)
PROMPT_QUANTILES = (0.25, 0.5, 0.75)
OUTPUT_QUANTILES = (0.5,)
# How many (prompt, output) pairs the answer keeps as the empirical length distribution.
LENGTH_SAMPLES = 1000
SAMPLE_SEED = 0
MAX_TOKENS = 10_000_000


class TraceError(ValueError):
    """A log the profiler cannot read or cannot describe: `line` (1-based, None for the log
    as a whole) and `column` name where."""

    def __init__(self, message: str, line: int | None = None, column: str | None = None) -> None:
        where = "" if line is None else f"line {line}" + ("" if column is None else f", column {column}") + ": "
        super().__init__(where + message)
        self.line = line
        self.column = column
        self.message = message


@dataclass(frozen=True)
class Spread:
    """One length's distribution over the log's requests, tokens."""

    mean: float
    cv: float
    p50: int
    p90: int
    p99: int


@dataclass(frozen=True)
class HourlyPeriod:
    """One UTC hour of the log: its arrivals and their rate as requests per day (a forecast
    period's unit)."""

    period: str
    requests: int
    covered_s: float
    requests_per_day: float


@dataclass(frozen=True)
class Bucket:
    prompt_tokens: int
    output_tokens: int
    share: float


@dataclass(frozen=True)
class TraceProfile:
    requests: int
    first_arrival: str
    last_arrival: str
    span_s: float
    requests_per_day: float
    peak_to_average: float
    periods: tuple[HourlyPeriod, ...]
    burstiness: float | None
    arrival_cv: float | None
    prompt_tokens: Spread
    output_tokens: Spread
    length_buckets: tuple[Bucket, ...]
    prefix_cache_hit_rate: float | None
    models: dict[str, int]
    length_samples: tuple[tuple[int, int], ...]
    warnings: tuple[str, ...]


class _Columns:
    """The log's rows as flat arrays (8 bytes a timestamp, 8 a length)."""

    def __init__(self) -> None:
        self.timestamps = array("d")
        self.prompts = array("q")
        self.outputs = array("q")
        self.cached_total = 0
        self.has_cached = False
        self.models: Counter[str] = Counter()
        self.whole_seconds = True

    def add_batch(self, batch: _Batch, one_by_one: Callable[[], None]) -> None:
        """A batch of rows converted column by column (fast), or, when any value of it is not
        as expected, `one_by_one`: the batch again row by row, which names the first bad row's
        line and column."""
        if not self._add_fast(batch):
            one_by_one()

    def _add_fast(self, batch: _Batch) -> bool:
        """Whole columns at a time, on lists (ranges checked before the values are packed into
        the arrays: min and max over an array box every element). False: something in the
        batch needs the row-by-row pass."""
        columns = [batch.prompts, batch.outputs] + ([] if batch.cached_absent else [batch.cached])
        try:
            if batch.text:
                seconds = list(map(float, batch.timestamps))
                tokens = [list(map(int, column)) for column in columns]
            else:
                if not all(type(value) in (int, float) for value in batch.timestamps):
                    return False
                if not all(type(value) is int for column in columns for value in column):
                    return False
                seconds, tokens = [float(value) for value in batch.timestamps], columns
        except (ValueError, TypeError, OverflowError):
            return False
        if not all(map(math.isfinite, seconds)) or min(seconds) < 0 or max(seconds) > MAX_EPOCH_S:
            return False
        if any(min(column) < 0 or max(column) > MAX_TOKENS for column in tokens):
            return False
        if len(tokens) == 3:
            if any(map(operator.gt, tokens[2], tokens[0])):
                return False
            self.cached_total += sum(tokens[2])
            self.has_cached = True
        if self.whole_seconds and not all(map(float.is_integer, seconds)):
            self.whole_seconds = False
        if batch.models[0] is not None or any(model is not None for model in batch.models):
            self.models.update(str(model) for model in batch.models if model is not None and model != "")
        self.timestamps.extend(seconds)
        self.prompts.extend(tokens[0])
        self.outputs.extend(tokens[1])
        return True

    def add(self, line: int, timestamp: object, prompt: object, output: object, cached: object, model: object) -> None:
        seconds = _timestamp(timestamp, line)
        if self.whole_seconds and seconds != int(seconds):
            self.whole_seconds = False
        prompt_tokens = _tokens(prompt, line, "prompt_tokens")
        output_tokens = _tokens(output, line, "output_tokens")
        if cached is not None and cached != "":
            cached_tokens = _tokens(cached, line, "cached_tokens")
            if cached_tokens > prompt_tokens:
                message = f"{cached_tokens} cached tokens is more than the prompt's {prompt_tokens}"
                raise TraceError(message, line, "cached_tokens")
            self.cached_total += cached_tokens
            self.has_cached = True
        if model is not None and model != "":
            if isinstance(model, str) and not _encodable(model):
                raise TraceError("a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair)", line, "model")
            self.models[str(model)] += 1
        self.timestamps.append(seconds)
        self.prompts.append(prompt_tokens)
        self.outputs.append(output_tokens)


@dataclass
class _Batch:
    """Up to BATCH_ROWS rows as columns of raw values (text from CSV, JSON values from JSON
    lines); `cached` and `models` hold None where absent."""

    text: bool
    timestamps: list[Any]
    prompts: list[Any]
    outputs: list[Any]
    cached: list[Any]
    models: list[Any]

    @property
    def cached_absent(self) -> bool:
        return all(value is None for value in self.cached)


def _timestamp(value: object, line: int) -> float:
    if isinstance(value, bool) or value is None or value == "":
        raise TraceError("a timestamp is required (ISO 8601 or epoch seconds)", line, "timestamp")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            seconds = _iso_seconds(text) if _looks_iso(text) else float(text)
        except ValueError:
            raise TraceError(f"{text[:40]!r} is neither ISO 8601 nor epoch seconds", line, "timestamp") from None
    else:
        raise TraceError("a timestamp is ISO 8601 text or epoch seconds", line, "timestamp")
    if not math.isfinite(seconds) or seconds < 0:
        raise TraceError("a timestamp is a time after 1970 (epoch seconds >= 0)", line, "timestamp")
    if seconds > MAX_EPOCH_S:
        message = f"{seconds:.0f} is past the year 5000 as epoch seconds: give seconds, not milliseconds"
        raise TraceError(message, line, "timestamp")
    return seconds


def _looks_iso(text: str) -> bool:
    return len(text) > 4 and text[4] == "-"  # 2026-12-01...


def _iso_seconds(text: str) -> float:
    """ISO 8601 as epoch seconds; without an offset it is UTC."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _tokens(value: object, line: int, column: str) -> int:
    if isinstance(value, bool):
        raise TraceError("must be a whole number of tokens", line, column)
    if isinstance(value, int):
        tokens = value
    elif isinstance(value, float) and value.is_integer():
        tokens = int(value)
    elif isinstance(value, str):
        try:
            tokens = int(value)
        except ValueError:
            raise TraceError(f"{value.strip()[:40]!r} is not a whole number of tokens", line, column) from None
    else:
        raise TraceError("must be a whole number of tokens", line, column)
    if not 0 <= tokens <= MAX_TOKENS:
        raise TraceError(f"must be 0 to {MAX_TOKENS:,} tokens", line, column)
    return tokens


# --- reading -----------------------------------------------------------------------------------

# Rows converted together: short enough that a batch's row lists die young (the collector's
# passes over long-lived lists would cost more than the parsing), long enough to amortize.
BATCH_ROWS = 4096


def read_csv(lines: Iterable[str], columns: _Columns) -> None:
    """CSV with a header row naming at least the required columns (others are ignored). A
    quoted field may not span lines."""
    stream = iter(lines)
    try:
        header = next(csv.reader(itertools.islice(stream, 1)), None)
    except csv.Error as exc:
        raise TraceError(f"the header row is not CSV ({exc})", 1) from None
    if header is None:
        raise TraceError("the log is empty")
    names = [name.strip().lower() for name in header]
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    if missing:
        message = "the header row lacks " + ", ".join(missing) + " (the first line names the columns)"
        raise TraceError(message, 1, missing[0])
    at = {name: names.index(name) for name in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if name in names}
    width = max(at.values()) + 1
    first_line = 2
    while True:
        texts = list(itertools.islice(stream, BATCH_ROWS))
        if not texts:
            return
        try:
            rows = list(filter(None, csv.reader(texts)))
        except csv.Error:
            rows = []  # the row-by-row pass names the line
        if rows and min(map(len, rows)) >= width:
            batch = _csv_batch(rows, at)
            columns.add_batch(
                batch, functools.partial(_csv_rows_one_by_one, texts, at, first_line, len(names), columns)
            )
        else:
            _csv_rows_one_by_one(texts, at, first_line, len(names), columns)
        first_line += len(texts)


def _csv_batch(rows: list[list[str]], at: dict[str, int]) -> _Batch:
    """Rows of full width as columns (their line numbers are the row-by-row pass's)."""
    stamps: list[Any] = list(map(operator.itemgetter(at["timestamp"]), rows))
    if _looks_iso(stamps[0].strip()):
        with contextlib.suppress(ValueError):  # the row-by-row pass names the bad one
            stamps = [_iso_seconds(text.strip()) for text in stamps]
    absent = [None] * len(rows)
    cached = absent
    if "cached_tokens" in at:
        cached = [value or None for value in map(operator.itemgetter(at["cached_tokens"]), rows)]
    return _Batch(
        text=True,
        timestamps=stamps,
        prompts=list(map(operator.itemgetter(at["prompt_tokens"]), rows)),
        outputs=list(map(operator.itemgetter(at["output_tokens"]), rows)),
        cached=cached,
        models=list(map(operator.itemgetter(at["model"]), rows)) if "model" in at else absent,
    )


def _csv_rows_one_by_one(
    texts: list[str], at: dict[str, int], first_line: int, header_width: int, columns: _Columns
) -> None:
    reader = csv.reader(texts)
    try:
        for row in reader:
            line = first_line + reader.line_num - 1
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) <= max(at.values()):
                absent = next(name for name, index in at.items() if index >= len(row))
                raise TraceError(f"the row has {len(row)} columns, the header {header_width}", line, absent)
            columns.add(
                line,
                row[at["timestamp"]],
                row[at["prompt_tokens"]],
                row[at["output_tokens"]],
                row[at["cached_tokens"]] if "cached_tokens" in at else None,
                row[at["model"]] if "model" in at else None,
            )
    except csv.Error as exc:
        # A bare carriage return or NUL inside a field: the csv module refuses the line.
        raise TraceError(f"the row is not CSV ({exc})", first_line + reader.line_num - 1) from None


def read_json_lines(lines: Iterable[str], columns: _Columns) -> None:
    """One JSON object a line, with the required keys (others are ignored)."""
    stream = iter(lines)
    first_line = 1
    while True:
        texts = list(itertools.islice(stream, BATCH_ROWS))
        if not texts:
            return
        batch = _json_batch(texts)
        if batch is None:
            _json_rows_one_by_one(texts, first_line, columns)
        else:
            columns.add_batch(batch, functools.partial(_json_rows_one_by_one, texts, first_line, columns))
        first_line += len(texts)


def _json_batch(texts: list[str]) -> _Batch | None:
    """The lines as columns, or None when one is not an object with the required keys."""
    try:
        rows = list(map(json.loads, filter(str.strip, texts)))
        if not all(type(row) is dict for row in rows):
            return None
        stamps: list[Any] = list(map(operator.itemgetter("timestamp"), rows))
        prompts = list(map(operator.itemgetter("prompt_tokens"), rows))
        outputs = list(map(operator.itemgetter("output_tokens"), rows))
    except (ValueError, KeyError, TypeError):
        return None
    if not rows:
        return None
    models = [row.get("model") for row in rows]
    if not all(_encodable(model) for model in models if isinstance(model, str)):
        return None  # the row-by-row pass names the line
    if any(isinstance(value, str) for value in stamps):
        stamps = [_json_seconds(value) for value in stamps]
    return _Batch(
        text=False,
        timestamps=stamps,
        prompts=prompts,
        outputs=outputs,
        cached=[row.get("cached_tokens") for row in rows],
        models=models,
    )


def _encodable(text: str) -> bool:
    """Text UTF-8 can encode: no lone UTF-16 surrogate (JSON's "\\ud800" escape without its pair)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_rows_one_by_one(texts: list[str], first_line: int, columns: _Columns) -> None:
    for line, text in enumerate(texts, start=first_line):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except ValueError:
            raise TraceError("not a JSON object", line) from None
        if not isinstance(row, dict):
            raise TraceError("not a JSON object", line)
        for name in REQUIRED_COLUMNS:
            if name not in row:
                raise TraceError("missing", line, name)
        stamp = _json_seconds(row["timestamp"])
        columns.add(line, stamp, row["prompt_tokens"], row["output_tokens"], row.get("cached_tokens"), row.get("model"))


def _json_seconds(value: Any) -> Any:
    """A JSON timestamp as seconds where it reads as one; anything else is left for the row by
    row pass to name."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        return _iso_seconds(text) if _looks_iso(text) else float(text)
    except ValueError:
        return value


CSV = "csv"
JSON_LINES = "jsonl"
FORMATS = (CSV, JSON_LINES)


def profile_log(lines: Iterable[str], log_format: str | None = None) -> TraceProfile:
    """Read a log (CSV or JSON lines; None: told apart by its first non-blank character, `{`
    for JSON lines) and describe its workload."""
    stream = iter(lines)
    first = next((text for text in stream if text.strip()), None)
    if first is None:
        raise TraceError("the log is empty: give a CSV header and rows, or JSON lines")
    if log_format is None:
        log_format = JSON_LINES if first.lstrip().startswith("{") else CSV
    columns = _Columns()
    rows = _chain(first, stream)
    if log_format == JSON_LINES:
        read_json_lines(rows, columns)
    else:
        read_csv(rows, columns)
    return describe(columns)


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


# --- describing --------------------------------------------------------------------------------


def describe(columns: _Columns) -> TraceProfile:
    count = len(columns.timestamps)
    if count < 2:
        raise TraceError(f"the log holds {count} request{'s' if count != 1 else ''}: a rate needs at least two")
    times = sorted(columns.timestamps)
    first, last = times[0], times[-1]
    span_s = last - first
    if span_s <= 0:
        raise TraceError("every request has the same timestamp: a rate needs a time span")
    warnings: list[str] = []
    per_day = count / span_s * SECONDS_PER_DAY
    periods = hourly_periods(times)
    covered = [p for p in periods if p.covered_s >= MIN_HOUR_COVERAGE * SECONDS_PER_HOUR]
    if not covered:
        covered = list(periods)
        warnings.append("the log covers no hour by half: peak_to_average is the busiest partial hour's")
    peak = max(1.0, max(p.requests_per_day for p in covered) / per_day)
    burstiness = fitted_burstiness(times)
    if burstiness is not None and columns.whole_seconds and _mean_gap_s(times) < MIN_MEAN_GAP_WHOLE_SECONDS_S:
        warnings.append(
            "timestamps are whole seconds and requests arrive faster than one every "
            f"{MIN_MEAN_GAP_WHOLE_SECONDS_S:g} s: burstiness is not measurable at that resolution"
        )
        burstiness = None
    elif burstiness is None:
        warnings.append("no hour holds three arrivals: burstiness is not fitted (Poisson assumed)")
    if burstiness is not None:
        burstiness = min(max(burstiness, BURSTINESS_RANGE[0]), BURSTINESS_RANGE[1])
    prompts, outputs = sorted(columns.prompts), sorted(columns.outputs)
    prompt_total = sum(prompts)
    hit_rate = columns.cached_total / prompt_total if columns.has_cached and prompt_total else None
    return TraceProfile(
        requests=count,
        first_arrival=_iso(first),
        last_arrival=_iso(last),
        span_s=span_s,
        requests_per_day=per_day,
        peak_to_average=peak,
        periods=periods,
        burstiness=burstiness,
        arrival_cv=None if burstiness is None else 1.0 / math.sqrt(burstiness),
        prompt_tokens=spread(prompts),
        output_tokens=spread(outputs),
        length_buckets=length_buckets(columns.prompts, columns.outputs, prompts, outputs),
        prefix_cache_hit_rate=hit_rate,
        models=dict(columns.models.most_common()),
        length_samples=length_samples(columns.prompts, columns.outputs),
        warnings=tuple(warnings),
    )


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def hourly_periods(times: list[float]) -> tuple[HourlyPeriod, ...]:
    """Every UTC hour from the first arrival's to the last's (empty ones included)."""
    first, last = times[0], times[-1]
    start_hour, end_hour = int(first // SECONDS_PER_HOUR), int(last // SECONDS_PER_HOUR)
    counts = [0] * (end_hour - start_hour + 1)
    for moment in times:
        counts[int(moment // SECONDS_PER_HOUR) - start_hour] += 1
    periods = []
    for index, arrivals in enumerate(counts):
        begin = (start_hour + index) * SECONDS_PER_HOUR
        covered = min(begin + SECONDS_PER_HOUR, last) - max(begin, first)
        rate = arrivals / covered * SECONDS_PER_DAY if covered > 0 else 0.0
        label = datetime.fromtimestamp(begin, UTC).strftime("%Y-%m-%dT%H:00Z")
        periods.append(HourlyPeriod(label, arrivals, covered, rate))
    return tuple(periods)


def fitted_burstiness(times: list[float]) -> float | None:
    """The gamma shape of inter-arrival times within hours, by moments: 1 / the pooled squared
    CV of the gaps, each divided by its hour's mean gap. None when no hour has three arrivals."""
    squares, gaps_used = 0.0, 0
    start = 0
    while start < len(times):
        hour = int(times[start] // SECONDS_PER_HOUR)
        end = start
        while end < len(times) and int(times[end] // SECONDS_PER_HOUR) == hour:
            end += 1
        if end - start >= 3:
            gaps = [times[i + 1] - times[i] for i in range(start, end - 1)]
            mean = sum(gaps) / len(gaps)
            if mean > 0:
                squares += sum((gap / mean - 1.0) ** 2 for gap in gaps)
                gaps_used += len(gaps)
        start = end
    if gaps_used < 2 or squares <= 0:
        return None if gaps_used < 2 else BURSTINESS_RANGE[1]
    return gaps_used / squares


def _mean_gap_s(times: list[float]) -> float:
    return (times[-1] - times[0]) / (len(times) - 1)


def spread(ordered: list[int]) -> Spread:
    """Mean, population cv and nearest-rank percentiles of sorted values."""
    count = len(ordered)
    total = sum(ordered)
    mean = total / count
    # Whole numbers: the sum of squares is exact, so this form loses nothing.
    variance = (count * sum(map(operator.mul, ordered, ordered)) - total * total) / (count * count)
    return Spread(
        mean=mean,
        cv=math.sqrt(variance) / mean if mean > 0 else 0.0,
        p50=nearest_rank(ordered, 0.50),
        p90=nearest_rank(ordered, 0.90),
        p99=nearest_rank(ordered, 0.99),
    )


def nearest_rank(ordered: list[int], quantile: float) -> int:
    return ordered[min(len(ordered) - 1, max(0, math.ceil(quantile * len(ordered)) - 1))]


def length_buckets(
    prompts: array[int], outputs: array[int], sorted_prompts: list[int], sorted_outputs: list[int]
) -> tuple[Bucket, ...]:
    """Prompt quartiles × output halves: each non-empty cell's mean lengths (whole tokens, at
    least 1) and share of the requests; equal boundaries merge cells."""
    prompt_edges = sorted({nearest_rank(sorted_prompts, q) for q in PROMPT_QUANTILES})
    output_edges = sorted({nearest_rank(sorted_outputs, q) for q in OUTPUT_QUANTILES})
    width = len(output_edges) + 1
    cells = [[0, 0, 0] for _ in range((len(prompt_edges) + 1) * width)]
    for prompt, output in zip(prompts, outputs, strict=True):
        cell = cells[bisect.bisect_left(prompt_edges, prompt) * width + bisect.bisect_left(output_edges, output)]
        cell[0] += 1
        cell[1] += prompt
        cell[2] += output
    total = len(prompts)
    return tuple(Bucket(max(1, round(p / n)), max(1, round(o / n)), n / total) for n, p, o in cells if n)


def length_samples(prompts: array[int], outputs: array[int]) -> tuple[tuple[int, int], ...]:
    """Up to LENGTH_SAMPLES (prompt, output) pairs drawn without replacement (a fixed seed, so
    one log always gives the same), each at least 1 token: the empirical joint distribution."""
    count = len(prompts)
    chosen = (
        range(count)
        if count <= LENGTH_SAMPLES
        else sorted(random.Random(SAMPLE_SEED).sample(range(count), LENGTH_SAMPLES))
    )
    return tuple((max(1, prompts[i]), max(1, outputs[i])) for i in chosen)

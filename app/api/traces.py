"""POST /v1/traces: a request log (CSV or JSON lines) streamed in, its workload out
(app/planning/traces.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from flask import Blueprint, Response, request
from marshmallow import EXCLUDE, Schema, fields, validate
from werkzeug.exceptions import RequestEntityTooLarge

from app.planning import traces as service
from app.sizing.trace_log import CSV, FORMATS, JSON_LINES, TraceError

from .errors import ApiError
from .render import respond
from .requests import query_args
from .wire import dump

bp = Blueprint("traces", __name__, url_prefix="/v1")

# A log of two to three million rows (24 to 70 bytes a row): a worker profiles it well within
# gunicorn's 30 s timeout.
MAX_TRACE_BYTES = 128 * 1024 * 1024
READ_BYTES = 1024 * 1024
# Content types that say which format the body is; text/plain, application/octet-stream and
# none leave it to the body's first character.
CONTENT_TYPES = {
    "text/csv": CSV,
    "application/x-ndjson": JSON_LINES,
    "application/jsonl": JSON_LINES,
    "application/json-lines": JSON_LINES,
    "application/x-jsonlines": JSON_LINES,
}
SNIFFED = frozenset({"", "text/plain", "application/octet-stream", "application/json"})


class TraceQuery(Schema):
    """POST /v1/traces query parameters (unknown names are refused before loading)."""

    class Meta:
        unknown = EXCLUDE

    log_format = fields.String(validate=validate.OneOf(FORMATS))
    model = fields.String(validate=validate.Length(min=1, max=200))
    gpu = fields.String(validate=validate.Length(min=1, max=200))


@bp.post("/traces")
def traces() -> Response:
    """A request log's workload: rate, peak, burstiness, lengths, hourly periods, a /v1/fleet body."""
    query = TraceQuery().load({k: v for k, v in query_args(TraceQuery()).items() if v.strip()})
    if request.content_length is not None and request.content_length > MAX_TRACE_BYTES:
        raise RequestEntityTooLarge(f"the log is over {MAX_TRACE_BYTES // 2**20} MiB (the limit)")
    request.max_content_length = MAX_TRACE_BYTES
    answer = dump(
        service.profile(
            body_lines(request.stream, MAX_TRACE_BYTES),
            log_format=query.get("log_format") or _format_of_content_type(),
            model=query.get("model"),
            gpu=query.get("gpu"),
        )
    )
    return respond(answer, rows=answer["periods"])


def _format_of_content_type() -> str | None:
    kind = (request.mimetype or "").lower()
    if kind in CONTENT_TYPES:
        return CONTENT_TYPES[kind]
    if kind in SNIFFED:
        return None
    raise ApiError(415, "send the log as text/csv or application/x-ndjson (JSON lines)")


def body_lines(stream: IO[bytes], limit: int) -> Iterator[str]:
    """The body's lines, decoded as UTF-8 (a byte-order mark dropped), read a megabyte at a
    time; past `limit` bytes a 413, bytes that are not UTF-8 a 422 naming their line."""
    total, line, pending = 0, 1, b""
    first = True
    while True:
        chunk = stream.read(READ_BYTES)
        if not chunk:
            break
        total += len(chunk)
        if total > limit:
            raise RequestEntityTooLarge(f"the log is over {limit // 2**20} MiB (the limit)")
        data = pending + chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            pending = data
            continue
        pending = data[cut + 1 :]
        texts = _decoded(data[: cut + 1], line, first).split("\n")[:-1]
        first = False
        line += len(texts)
        yield from texts
    if pending:
        yield _decoded(pending, line, first)


def _decoded(data: bytes, line: int, first: bool) -> str:
    try:
        return data.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        bad = line + data.count(b"\n", 0, exc.start)
        raise service.refusal(TraceError("the log is not UTF-8 text", bad)) from None

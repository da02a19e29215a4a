"""Planning answers kept per worker: the same GET against the same catalog gets the same answer.

Dashboards refresh one URL every few seconds and spreadsheets recompute the same cells, and
every planning answer is a pure function of the query string, the Accept header, the
catalog and the stored calibrations. Each worker keeps recent 200 answers keyed by those
(the catalog and the calibrations by the serials of this worker's in-memory copies, which
lookup.py renews when the database's fingerprint changes), so a
repeated GET skips parsing, sizing and rendering, and a write anywhere changes the key of
every answer as soon as this worker sees it.

Only successful GETs are kept (problem bodies carry their request's id), and only the
body and content type: X-Request-ID and the metrics are added per request as for any other.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, g, request
from sqlalchemy.exc import SQLAlchemyError

from app.observability import PLANNING_CACHE

from .lookup import calibrations, catalog, stale_note
from .requests import QUERY_METHODS
from .schemas import PLANNING_BY_ENDPOINT

ENDPOINTS = frozenset(PLANNING_BY_ENDPOINT)
# Per worker: a whole-catalog fleet answer is ~15 KB, a fit ~1.5 KB.
MAX_TOTAL_BYTES = 16 * 1024 * 1024
MAX_ANSWER_BYTES = 256 * 1024
PER_REQUEST_HEADERS = frozenset({"content-length", "x-request-id"})


@dataclass(frozen=True)
class Answer:
    body: bytes
    headers: tuple[tuple[str, str], ...]


class AnswerMemo:
    """A byte-bounded LRU map of request keys to answers."""

    def __init__(self, max_total_bytes: int = MAX_TOTAL_BYTES) -> None:
        self._answers: OrderedDict[Any, Answer] = OrderedDict()
        self._bytes = 0
        self._max_total_bytes = max_total_bytes
        self._lock = threading.Lock()

    def get(self, key: Any) -> Answer | None:
        with self._lock:
            answer = self._answers.get(key)
            if answer is not None:
                self._answers.move_to_end(key)
            return answer

    def put(self, key: Any, answer: Answer) -> None:
        with self._lock:
            old = self._answers.pop(key, None)
            if old is not None:
                self._bytes -= len(old.body)
            self._answers[key] = answer
            self._bytes += len(answer.body)
            while self._bytes > self._max_total_bytes:
                _, evicted = self._answers.popitem(last=False)
                self._bytes -= len(evicted.body)

    def __len__(self) -> int:
        return len(self._answers)


def _key() -> tuple[Any, ...] | None:
    # A HEAD is the GET's answer without its body (Werkzeug leaves the body out): one key.
    if request.method not in QUERY_METHODS or request.endpoint not in ENDPOINTS:
        return None
    try:
        # Answers read the catalog and the calibrations: a new copy of either is a new key.
        # An answer given during an outage carries its note: part of the key.
        copies = (catalog().serial, calibrations().serial, stale_note())
    except SQLAlchemyError:
        return None  # no catalog: let the view answer (an inline spec needs none)
    return (request.endpoint, request.query_string, request.headers.get("Accept", ""), copies)


def init_app(app: Flask) -> None:
    """Serve repeated planning GETs from this worker's memo. Register after observability,
    so that a remembered answer is timed, counted, logged and given its request id."""
    memo = AnswerMemo()
    app.extensions["fleet_sizer"]["answer_memo"] = memo

    @app.before_request
    def _remembered() -> Response | None:
        key = _key()
        if key is None:
            return None
        answer = memo.get(key)
        if answer is None:
            g.memo_key = key
            PLANNING_CACHE.labels(result="miss").inc()
            return None
        PLANNING_CACHE.labels(result="hit").inc()
        return Response(answer.body, status=200, headers=list(answer.headers))

    @app.after_request
    def _remember(response: Response) -> Response:
        key = g.pop("memo_key", None)
        if key is None or response.status_code != 200 or response.is_streamed:
            return response
        body = response.get_data()
        if len(body) <= MAX_ANSWER_BYTES:
            headers = tuple((k, v) for k, v in response.headers.items() if k.lower() not in PER_REQUEST_HEADERS)
            memo.put(key, Answer(body, headers))
        return response

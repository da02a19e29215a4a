"""What an operator sees of the service: Prometheus metrics, JSON logs, request ids.

Metrics follow prometheus client_python's multiprocess mode for gunicorn: the start script
sets PROMETHEUS_MULTIPROC_DIR, gunicorn.conf.py empties it at start and marks dead workers,
and each scrape of /metrics builds a fresh registry that reads every worker's files.
Without the variable (tests, `flask run`) the process's default registry is served.

Every request gets an id: the client's `X-Request-ID` when it is a safe token, else a new
one. It is echoed in the response header, in problem+json bodies and in every log line
written while the request runs; the app writes one JSON access line per request.
"""

from __future__ import annotations

import logging
import os
import platform
import re
import sys
import threading
import time
import tomllib
import uuid
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from flask import Flask, Response, g, has_request_context, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from pythonjsonlogger.json import JsonFormatter
from sqlalchemy.exc import SQLAlchemyError

from app.api.schemas import PLANNING_ENDPOINTS

REQUEST_ID_HEADER = "X-Request-ID"
# What a client may send as its own id: enough for UUIDs, ULIDs and trace ids, nothing that
# could break a log line or a header.
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,128}")
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
UNMATCHED = "unmatched"
# Label values stay bounded: a method outside these is counted as "other".
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# Planning endpoints, counted as estimates by endpoint and outcome.
ESTIMATE_ENDPOINTS = {e.endpoint: e.label for e in PLANNING_ENDPOINTS}
ACCESS_LOGGER = "fleet_sizer.access"

REQUESTS = Counter(
    "fleet_sizer_http_requests_total",
    "HTTP requests answered, by method, route template and status code.",
    ["method", "route", "status"],
)
DURATION = Histogram(
    "fleet_sizer_http_request_duration_seconds",
    "Time from routing to response, by method and route template.",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
IN_PROGRESS = Gauge(
    "fleet_sizer_http_requests_in_progress",
    "Requests being handled now, summed over live workers.",
    ["method", "route"],
    multiprocess_mode="livesum",
)
ESTIMATES = Counter(
    "fleet_sizer_estimates_total",
    "Planning answers by endpoint and outcome (ok, client_error, server_error).",
    ["endpoint", "outcome"],
)
PLANNING_CACHE = Counter(
    "fleet_sizer_planning_cache_lookups_total",
    "Planning GETs answered from the worker's memo (hit) or computed (miss).",
    ["result"],
)
CATALOG_ENTRIES = Gauge(
    "fleet_sizer_catalog_entries",
    "Models, GPUs and engine profiles in the catalog, as last loaded by a live worker.",
    ["kind"],
    multiprocess_mode="livemostrecent",
)
STALE_ANSWERS = Counter(
    "fleet_sizer_catalog_stale_answers_total",
    "Planning answers given from a worker's in-memory catalog while the database is unreachable.",
)
DATABASE_UNAVAILABLE = Counter(
    "fleet_sizer_database_unavailable_total",
    "Requests answered 503 because the database could not be reached or did not answer.",
)
BUDGET_STOPS = Counter(
    "fleet_sizer_budget_stops_total",
    "Computations stopped at their request's time budget (TIME_BUDGET_S), answered 503.",
)
WORKER_TIMEOUTS = Counter(
    "fleet_sizer_worker_timeouts_total",
    "Requests whose worker gunicorn aborted (its timeout) or interrupted while they ran, by route template.",
    ["method", "route"],
)
BUILD_INFO = Gauge(
    "fleet_sizer_build_info",
    "Always 1; the labels say which build and Python answer.",
    ["version", "python"],
    multiprocess_mode="max",
)


def _version() -> str:
    try:
        return metadata.version("fleet-sizer")
    except metadata.PackageNotFoundError:
        pass
    try:
        with (Path(__file__).resolve().parents[1] / "pyproject.toml").open("rb") as handle:
            return str(tomllib.load(handle)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


VERSION = _version()


# --------------------------------------------------------------------------- request ids


def request_id() -> str:
    """This request's id: the client's X-Request-ID if it is a safe token, else a new one."""
    rid: str | None = g.get("request_id")
    if rid is None:
        offered = request.headers.get(REQUEST_ID_HEADER, "")
        rid = offered if REQUEST_ID_PATTERN.fullmatch(offered) else uuid.uuid4().hex
        g.request_id = rid
    return rid


# --------------------------------------------------------------------------- logs


class _StdoutHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stdout is at the time (test runners swap it)."""

    @property
    def stream(self) -> Any:
        return sys.stdout

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


class _RequestIdFilter(logging.Filter):
    """Stamps every record written during a request with its id."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id") and has_request_context():
            record.request_id = request_id()
        return True


def json_formatter() -> JsonFormatter:
    """One JSON object per line: time, level, logger, pid, message, then any extra fields."""
    return JsonFormatter(
        "%(levelname)s %(name)s %(process)d %(message)s",
        rename_fields={"levelname": "level", "name": "logger", "process": "pid"},
        timestamp="time",  # ISO 8601 in UTC, to the microsecond
    )


def configure_logging(level: str) -> None:
    """JSON lines on stdout from the root logger, installed once per process."""
    root = logging.getLogger()
    if not any(getattr(handler, "_fleet_sizer", False) for handler in root.handlers):
        handler = _StdoutHandler()
        handler._fleet_sizer = True  # type: ignore[attr-defined]
        handler.setFormatter(json_formatter())
        handler.addFilter(_RequestIdFilter())
        root.addHandler(handler)
    root.setLevel(level)


# --------------------------------------------------------------------------- metrics


def catalog_loaded(models: int, gpus: int, engines: int | None = None) -> None:
    CATALOG_ENTRIES.labels(kind="models").set(models)
    CATALOG_ENTRIES.labels(kind="gpus").set(gpus)
    if engines is not None:
        CATALOG_ENTRIES.labels(kind="engines").set(engines)


def _labels() -> tuple[str, str]:
    method = request.method if request.method in METHODS else "other"
    rule = request.url_rule
    return method, rule.rule if rule is not None else UNMATCHED


def _outcome(status: int) -> str:
    if status < 400:
        return "ok"
    return "client_error" if status < 500 else "server_error"


# The requests this worker is running, by thread (the app lane runs one at a time, the probe
# lane one probe: app/gunicorn_worker.py), for the gunicorn hooks that run when the worker is
# aborted or interrupted mid-request.
_running: dict[int, dict[str, Any]] = {}


def _before() -> None:
    g.observed_start = time.perf_counter()
    g.observed_labels = _labels()
    IN_PROGRESS.labels(*g.observed_labels).inc()
    _running[threading.get_ident()] = dict(
        request_id=request_id(),
        method=request.method,
        path=request.path,
        labels=g.observed_labels,
        start=g.observed_start,
    )


def worker_stopped(how: str) -> None:
    """In a worker that gunicorn aborts (`how`: "timeout") or interrupts mid-request: count
    the request in fleet_sizer_worker_timeouts_total and log it with its request id (the
    client gets no answer, so no access line would say it happened). Nothing running:
    nothing is logged. Several (a probe beside the app's request): each, the oldest first."""
    for running in sorted(list(_running.values()), key=lambda item: item["start"]):
        method, route = running["labels"]
        WORKER_TIMEOUTS.labels(method, route).inc()
        logging.getLogger(ACCESS_LOGGER).error(
            "worker stopped mid-request",
            extra={
                "reason": how,
                "method": running["method"],
                "path": running["path"],
                "route": route,
                "duration_ms": round((time.perf_counter() - running["start"]) * 1000, 3),
                "request_id": running["request_id"],
            },
        )


def _after(response: Response) -> Response:
    response.headers[REQUEST_ID_HEADER] = request_id()
    start = g.get("observed_start")
    if start is None:  # an earlier before_request failed before ours ran
        return response
    seconds = time.perf_counter() - start
    method, route = g.observed_labels
    status = response.status_code
    REQUESTS.labels(method, route, str(status)).inc()
    DURATION.labels(method, route).observe(seconds)
    endpoint = ESTIMATE_ENDPOINTS.get(request.endpoint or "")
    if endpoint is not None:
        ESTIMATES.labels(endpoint, _outcome(status)).inc()
    logging.getLogger(ACCESS_LOGGER).info(
        "request",
        extra={
            "method": request.method,
            "path": request.path,
            "route": route,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
            "remote_addr": request.remote_addr,
        },
    )
    return response


def _teardown(_exc: BaseException | None = None) -> None:
    _running.pop(threading.get_ident(), None)
    labels = g.pop("observed_labels", None)
    if labels is not None:
        IN_PROGRESS.labels(*labels).dec()


def _refresh_gauges(before_scrape: Callable[[], object] | None) -> None:
    """Before a scrape: the build gauge in this worker, and (through `before_scrape`, which
    reloads the catalog when it changed) the catalog gauge as of now."""
    BUILD_INFO.labels(version=VERSION, python=platform.python_version()).set(1)
    if before_scrape is None:
        return
    try:
        before_scrape()
    except SQLAlchemyError:
        logging.getLogger(__name__).warning("catalog unavailable for the catalog gauge", exc_info=True)


def exposition() -> Response:
    """Prometheus text exposition of every worker's metrics."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        data = generate_latest(registry)
    else:
        data = generate_latest(REGISTRY)
    response = Response(data)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


def init_app(app: Flask, *, before_scrape: Callable[[], object] | None = None) -> None:
    """Request ids, metrics and the access log on every request, and GET /metrics.

    Call first in create_app, so its hooks run before (and its after_request after) any
    other app-level ones. `before_scrape` runs before each scrape (the app passes the
    catalog lookup, which this module cannot import: app/api imports this one)."""

    def metrics() -> Response:
        """Prometheus text exposition of every worker's metrics."""
        _refresh_gauges(before_scrape)
        return exposition()

    BUILD_INFO.labels(version=VERSION, python=platform.python_version()).set(1)
    app.before_request(_before)
    app.after_request(_after)
    app.teardown_request(_teardown)
    app.add_url_rule("/metrics", "metrics", metrics, methods=["GET"])

"""gunicorn settings; every value can be overridden by the environment.

Metrics run in prometheus client_python's multiprocess mode, as its documentation lays out
for gunicorn: the start script (`make serve`, the container's entrypoint) sets
PROMETHEUS_MULTIPROC_DIR, `on_starting` empties it before the first worker forks, and
`child_exit` marks each dead worker so its live gauges stop counting. A worker gunicorn aborts
at its timeout (or interrupts) mid-request counts the request in
fleet_sizer_worker_timeouts_total and logs it with its request id (`worker_abort`,
`worker_int`): the app's time budget (TIME_BUDGET_S) should stop every computation first.
"""

import logging
import multiprocessing
import os
import sys
from pathlib import Path

from gunicorn import glogging
from prometheus_client import multiprocess
from pythonjsonlogger.json import JsonFormatter

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# Loopback unless told otherwise: containers set BIND_HOST=0.0.0.0.
bind = f"{os.environ.get('BIND_HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Planning is CPU-bound and quick: a process per core, capped so a big host does not fork dozens.
workers = int(os.environ.get("WEB_CONCURRENCY") or min(multiprocessing.cpu_count() * 2 + 1, 8))
# gunicorn's gthread worker with one app thread (requests run one at a time, as under the sync
# worker) and a lane of its own for /livez and /healthz, so that probes answer at once while the
# app waits on a frozen database; gunicorn's own error answers (a request line it cannot parse)
# are problem+json with an X-Request-ID instead of an HTML page (app/gunicorn_worker.py).
worker_class = "app.gunicorn_worker.ProblemJsonWorker"
threads = 1
# gunicorn's request-line (4,094 bytes) and header-field (8,190) limits would answer a long GET
# with an HTML page: the request line is unlimited here (gunicorn still stops at 1 MiB) and
# header fields may be 64 KiB, so the app's own limits (app/api/edge.py: 16 KiB URLs, 8 KiB per
# header field, 100 fields, 32 KiB of headers) answer 414 and 431 as problem+json.
limit_request_line = 0
limit_request_field_size = 64 * 1024
limit_request_fields = 200
# Heartbeat files on tmpfs: a slow disk must not make the arbiter kill healthy workers.
worker_tmp_dir = "/dev/shm"
# A request still running after 30 s is a bug (every computation stops at TIME_BUDGET_S, 20 s by
# default, with a 503): the worker is replaced, and the request counted and logged (worker_abort);
# the worker sends its heartbeat only between app requests (app/gunicorn_worker.py).
timeout = 30
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak cannot grow without bound. Rarely, and far apart:
# a worker's slot stays empty while the old process winds down (measured here: 0.5 to 0.7 s),
# and with a narrow jitter the workers, started together, all recycle at once.
max_requests = 100_000
max_requests_jitter = 50_000
# The app is built once in the master and forked: a recycled worker serves within milliseconds
# instead of re-importing everything (about a second, a gap under load every max_requests).
preload_app = True
# The app writes one JSON access line per request (with the route template and request id),
# so gunicorn's own access log stays off: one line per request, not two.
accesslog = None
errorlog = "-"
# No runtime control socket (gunicornc): scaling is the orchestrator's job, and a shared
# default path ($HOME/.gunicorn/gunicorn.ctl) would collide between servers on one host.
control_socket_disable = True
loglevel = os.environ.get("LOG_LEVEL", "info").lower()


class JsonLogger(glogging.Logger):  # type: ignore[misc]
    """gunicorn's error log as JSON lines on stdout, like the app's own logs."""

    def setup(self, cfg):  # type: ignore[no-untyped-def]
        super().setup(cfg)
        formatter = JsonFormatter(
            "%(levelname)s %(name)s %(process)d %(message)s",
            rename_fields={"levelname": "level", "name": "logger", "process": "pid"},
            timestamp="time",  # ISO 8601 in UTC, to the microsecond
        )
        for handler in self.error_log.handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stderr:
                handler.setStream(sys.stdout)
            handler.setFormatter(formatter)


logger_class = JsonLogger


def on_starting(server):  # type: ignore[no-untyped-def]
    """In the master, before any worker: start the metrics from zero."""
    path = os.environ.get(MULTIPROC_ENV)
    if not path:
        if server.cfg.workers > 1:
            server.log.warning(
                "%s is not set: each of the %d workers keeps its own metrics and /metrics shows one "
                "worker's share; start through `make serve`, or set it to an empty directory",
                MULTIPROC_ENV,
                server.cfg.workers,
            )
        return
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    # The metric files of a previous run; nothing else in the directory is touched.
    for stale in directory.glob("*.db"):
        stale.unlink()


def post_fork(server, worker):  # type: ignore[no-untyped-def]
    """In each new worker: no database connection may be shared with the master or a sibling.

    create_app opens none, but should that change, SQLAlchemy's recipe for forked processes
    (dispose without closing the parent's connections) keeps the workers apart."""
    extensions = getattr(server.app.wsgi(), "extensions", {})
    engine = extensions.get("fleet_sizer", {}).get("engine")
    if engine is not None:
        engine.dispose(close=False)


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    """A worker is gone: its live gauges (in-progress requests, catalog size) stop counting."""
    if os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(worker.pid)


def worker_abort(worker):  # type: ignore[no-untyped-def]
    """In a worker the arbiter aborts (SIGABRT: past `timeout`): count and log the request it
    was running, before it exits."""
    from app import observability

    observability.worker_stopped("timeout")


def worker_int(worker):  # type: ignore[no-untyped-def]
    """In a worker interrupted by SIGINT or SIGQUIT (a fast shutdown): the same for its request."""
    from app import observability

    observability.worker_stopped("interrupted")

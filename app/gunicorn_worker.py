"""The gunicorn worker: one request at a time through the app, liveness probes on a lane of their
own, and gunicorn's own error answers as problem+json.

- **App lane.** Requests run one at a time per worker, as under gunicorn's sync worker: the app's
  per-worker state (the catalog copies, the outage backoff) is single-threaded by design, and
  planning is CPU-bound, so a second thread would add no throughput under the GIL.
- **Probe lane.** `GET` or `HEAD` of /livez and /healthz (which touch nothing) run on a thread of
  their own. Under a sync worker a probe waits behind whatever the worker is doing; with the
  database frozen that is seconds per request ahead of it, and an orchestrator restarts healthy
  workers. Here the main thread (gunicorn's gthread event loop) waits for a connection's first
  bytes, peeks at its request line, and hands a probe to the probe lane: it answers within
  milliseconds whatever the app lane is waiting on (tests/ops/test_database_faults.py).
- **Timeouts.** The heartbeat the arbiter watches is sent only while the app lane is idle and at
  the start of each request, as the sync worker does between requests: a request still running
  after gunicorn's `timeout` gets its worker replaced, as before.
- **Errors.** What gunicorn refuses itself (a malformed request line, a header over gunicorn's own
  limits, a broken chunked body) is answered as problem+json with an X-Request-ID, like every
  answer of the app, instead of gunicorn's HTML page. gunicorn.conf.py lets URLs and headers far
  past what the app accepts reach the app (which answers 414 and 431 itself, app/api/edge.py);
  only what gunicorn cannot parse ends here.
"""

from __future__ import annotations

import errno
import json
import selectors
import socket
import time
import uuid
from concurrent import futures
from functools import partial
from typing import Any

from gunicorn import util  # type: ignore[import-untyped]
from gunicorn.workers.gthread import TConn, ThreadWorker  # type: ignore[import-untyped]

from app.api.errors import TYPES

PROBLEM_JSON = "application/problem+json"
# The routes answered on the probe lane: they read no database, file or shared state.
PROBE_PATHS = frozenset({b"/livez", b"/healthz"})
PROBE_METHODS = frozenset({b"GET", b"HEAD"})
PROBE_THREADS = 1
# Enough of a request to read its request line ("HEAD /healthz?x=y HTTP/1.1").
PEEK_BYTES = 256


def problem_bytes(status: int, reason: str, detail: str) -> bytes:
    """A whole HTTP/1.1 answer: status line, headers and a problem+json body."""
    request_id = uuid.uuid4().hex
    body = json.dumps(
        {
            "type": TYPES.get(status, "about:blank"),
            "title": reason,
            "status": status,
            "detail": detail or reason,
            "request_id": request_id,
        }
    ).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        f"Content-Type: {PROBLEM_JSON}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-ID: {request_id}\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "\r\n"
    )
    return head.encode("latin-1") + body


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn.util.write_error's signature, writing problem+json instead of HTML."""
    util.write_nonblock(sock, problem_bytes(status_int, reason, mesg))


def is_probe(head: bytes) -> bool:
    """Whether these first bytes of a request are a whole request line of GET or HEAD on a
    probe path (anything else, a partial line included, goes to the app lane)."""
    line, newline, _ = head.partition(b"\r\n")
    parts = line.split(b" ")
    if not newline or len(parts) != 3 or parts[0] not in PROBE_METHODS:
        return False
    return parts[1].partition(b"?")[0] in PROBE_PATHS


class ProblemJsonWorker(ThreadWorker):  # type: ignore[misc]
    """gunicorn's gthread worker with `threads` app threads (gunicorn.conf.py: one), a probe
    lane, and problem+json error answers (BaseWorker.handle_error renders through
    gunicorn.util.write_error; this worker points that at write_problem before it serves)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.probe_pool: futures.ThreadPoolExecutor | None = None
        self.app_request_since: float | None = None

    def init_process(self) -> None:
        util.write_error = write_problem
        self.probe_pool = futures.ThreadPoolExecutor(max_workers=PROBE_THREADS, thread_name_prefix="probe")
        super().init_process()

    def accept(self, listener: socket.socket) -> None:
        """ThreadWorker.accept, except that the connection waits in the poller (not in a thread)
        for its first bytes, so that `enqueue_req` can read which lane it belongs to."""
        try:
            client_sock, client_addr = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = TConn(self.cfg, client_sock, client_addr, listener.getsockname())  # non-blocking
        conn.timeout = time.monotonic() + self.cfg.keepalive
        self.pending_conns.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_pending_socket_readable, conn))

    def enqueue_req(self, conn: Any) -> None:
        if self.probe_pool is not None and is_probe(self._first_bytes(conn)):
            future = self.probe_pool.submit(self.handle, conn)
        else:
            future = self.tpool.submit(self._handle_app, conn)
        future.add_done_callback(lambda done: self.method_queue.defer(self.finish_request, conn, done))

    @staticmethod
    def _first_bytes(conn: Any) -> bytes:
        """The start of the connection's next request, without consuming it."""
        parser = getattr(conn, "parser", None)
        buffered = getattr(getattr(parser, "unreader", None), "buf", None)
        if buffered is not None and buffered.getvalue():
            return bytes(buffered.getvalue()[:PEEK_BYTES])
        try:
            return bytes(conn.sock.recv(PEEK_BYTES, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except (OSError, ValueError):  # nothing yet, closed, or a TLS socket (no peeking)
            return b""

    def _handle_app(self, conn: Any) -> Any:
        super().notify()
        self.app_request_since = time.monotonic()
        try:
            return self.handle(conn)
        finally:
            self.app_request_since = None

    def notify(self) -> None:
        """The arbiter's heartbeat, withheld while an app request runs (see the module's doc)."""
        if self.app_request_since is None:
            super().notify()

    def run(self) -> None:
        try:
            super().run()
        finally:
            if self.probe_pool is not None:
                self.probe_pool.shutdown(wait=False)

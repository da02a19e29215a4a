"""gunicorn's sync worker, answering the requests gunicorn refuses itself (a malformed request
line, a header over gunicorn's own limits, a broken chunked body) as problem+json with an
X-Request-ID, like every answer of the app, instead of gunicorn's HTML page.

gunicorn.conf.py lets URLs and headers far past what the app accepts reach the app (which
answers 414 and 431 itself, app/api/edge.py); only what gunicorn cannot parse ends here.
"""

from __future__ import annotations

import json
import socket
import uuid

from gunicorn import util  # type: ignore[import-untyped]
from gunicorn.workers.sync import SyncWorker  # type: ignore[import-untyped]

from app.api.errors import TYPES

PROBLEM_JSON = "application/problem+json"


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


class ProblemJsonWorker(SyncWorker):  # type: ignore[misc]
    """SyncWorker whose error answers (BaseWorker.handle_error) are problem+json.

    handle_error renders through gunicorn.util.write_error; this worker process points that at
    write_problem before it serves (gunicorn offers no hook for the error body)."""

    def init_process(self) -> None:
        util.write_error = write_problem
        super().init_process()

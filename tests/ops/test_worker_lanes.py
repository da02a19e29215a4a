"""Which lane of app/gunicorn_worker.py a request's first bytes go to: only a whole request line
of GET or HEAD on /livez or /healthz takes the probe lane (the real-gunicorn tests are in
test_database_faults.py)."""

from __future__ import annotations

import pytest

from app.gunicorn_worker import is_probe


@pytest.mark.parametrize(
    "head",
    [
        b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n",
        b"HEAD /healthz HTTP/1.1\r\n",
        b"GET /healthz?probe=kubelet HTTP/1.0\r\n",
    ],
)
def test_probes_take_the_probe_lane(head: bytes) -> None:
    assert is_probe(head)


@pytest.mark.parametrize(
    "head",
    [
        b"GET /readyz HTTP/1.1\r\n",  # reads the database
        b"POST /livez HTTP/1.1\r\n",
        b"GET /livez/x HTTP/1.1\r\n",
        b"GET /v1/fit?x=/livez HTTP/1.1\r\n",
        b"GET /livez HTTP/1.1",  # the line is not whole yet
        b"GET /li",
        b"",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"\x16\x03\x01\x02\x00",  # a TLS hello
    ],
)
def test_everything_else_takes_the_app_lane(head: bytes) -> None:
    assert not is_probe(head)

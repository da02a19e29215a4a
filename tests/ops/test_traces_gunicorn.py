"""Against real gunicorn: a request log many times MAX_BODY_BYTES streams into /v1/traces, sent
with a Content-Length and chunked, and is profiled within the worker timeout."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator

import pytest

from bench.server import Server, running_server
from tests.sizing.test_trace_log import csv_lines, synthetic_rows

pytestmark = pytest.mark.slow
BUDGET_S = 20.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(1, workdir=tmp_path_factory.mktemp("traces-server")) as live:
        yield live


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_log_of_several_megabytes_streams_in(server: Server, chunked: bool) -> None:
    rows = synthetic_rows(7, 30_000, shape=1.0, seed=9)
    body = "\n".join(csv_lines(rows)).encode()
    assert len(body) > 5 * 1024 * 1024  # five times the JSON body cap

    def pieces() -> Iterator[bytes]:
        for start in range(0, len(body), 256 * 1024):
            yield body[start : start + 256 * 1024]

    request = urllib.request.Request(
        server.base_url + "/v1/traces?model=llama-3.1-8b",
        data=pieces() if chunked else body,
        headers={"Content-Type": "text/csv", "Connection": "close"},
        method="POST",
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.load(response)
    assert time.monotonic() - started < BUDGET_S
    assert answer["requests"] == len(rows)
    assert answer["requests_per_day"] == pytest.approx(30_000, rel=0.02)
    assert len(answer["periods"]) == 7 * 24
    assert answer["fleet_request"]["model"] == "llama-3.1-8b"

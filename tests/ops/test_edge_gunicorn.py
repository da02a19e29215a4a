"""Against real gunicorn: what gunicorn used to answer with its HTML error page (a request line
over 4,094 bytes, an oversized header, a malformed request line), a chunked body over the cap
and a NUL in a slug all answer problem+json with an X-Request-ID."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from app.api.edge import MAX_HEADER_FIELD_BYTES, MAX_URL_BYTES
from bench.server import Server, running_server

pytestmark = pytest.mark.slow
FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(1, workdir=tmp_path_factory.mktemp("edge-server")) as live:
        yield live


def raw(server: Server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as is on a fresh connection; (status, headers, body) of the answer."""
    address = urlsplit(server.base_url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def get(server: Server, target: str, extra: str = "") -> tuple[int, dict[str, str], bytes]:
    return raw(server, f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\r\n".encode())


def assert_problem(answer: tuple[int, dict[str, str], bytes], status: int) -> dict[str, Any]:
    code, headers, body = answer
    assert code == status, body[:300]
    assert headers["content-type"].startswith("application/problem+json"), headers
    assert headers.get("x-request-id")
    assert headers.get("x-content-type-options") == "nosniff"
    document: dict[str, Any] = json.loads(body)
    assert document["status"] == status and document["detail"]
    return document


def test_a_request_line_past_gunicorns_old_limit_is_answered(server: Server) -> None:
    code, headers, body = get(server, FIT + "&_pad=" + "x" * 6_000)
    assert code == 200, body[:300]
    assert headers["content-type"].startswith("application/json")


def test_a_url_over_the_apps_limit_is_414_problem_json(server: Server) -> None:
    assert_problem(get(server, FIT + "&_pad=" + "x" * MAX_URL_BYTES), 414)


def test_a_header_over_the_apps_limit_is_431_problem_json(server: Server) -> None:
    assert_problem(get(server, FIT, f"X-Padding: {'x' * MAX_HEADER_FIELD_BYTES}\r\n"), 431)


def test_a_header_over_gunicorns_limit_is_431_problem_json(server: Server) -> None:
    assert_problem(get(server, FIT, f"X-Padding: {'x' * 100_000}\r\n"), 431)


@pytest.mark.parametrize(
    "request_bytes",
    [b"GARBAGE\r\n\r\n", b"GET /v1/fit HTTP/9.9\r\nHost: x\r\n\r\n", b"GET /v1/fit HTTP/1.1\r\nBad Header\r\n\r\n"],
)
def test_what_gunicorn_cannot_parse_is_problem_json(server: Server, request_bytes: bytes) -> None:
    code, headers, body = raw(server, request_bytes)
    assert 400 <= code < 500
    assert_problem((code, headers, body), code)
    assert b"<html" not in body


def test_a_chunked_body_over_the_cap_is_413(server: Server) -> None:
    payload = json.dumps({"model": "llama-3.1-8b", "gpu": "h100-sxm", "x": "y" * (2 << 20)}).encode()
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(payload[i : i + 65536]), payload[i : i + 65536]) for i in range(0, len(payload), 65536)
    )
    request = (
        b"POST /v1/fit HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
    )
    assert_problem(raw(server, request), 413)


def test_a_small_chunked_body_is_read(server: Server) -> None:
    payload = b'{"model": "llama-3.1-8b", "gpu": "h100-sxm"}'
    request = (
        b"POST /v1/fit HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload)
    )
    code, _, body = raw(server, request)
    assert code == 200, body[:300]


def test_a_nul_in_a_slug_is_404_problem_json(server: Server) -> None:
    assert_problem(get(server, "/v1/models/llama%00"), 404)


def test_a_deep_dotted_key_is_422_problem_json(server: Server) -> None:
    assert_problem(get(server, "/v1/fit?model=llama-3.1-8b&gpu." + ".".join(["a"] * 1_000) + "=1"), 422)


def head(server: Server, target: str, extra: str = "") -> tuple[int, dict[str, str], bytes]:
    return raw(server, f"HEAD {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\r\n".encode())


@pytest.mark.parametrize(
    "target",
    [
        FIT,
        "/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&format=csv",
        "/v1/fleet?model=llama-3.2-1b&gpu=h100-sxm&requests_per_day=1e5",
        "/v1/models",
        "/healthz",
        "/openapi.yaml",
    ],
)
def test_head_answers_the_gets_headers_without_a_body(server: Server, target: str) -> None:
    """What a spreadsheet's import-by-URL, `curl -I` or an uptime monitor sends first."""
    got_code, got_headers, got_body = get(server, target)
    code, headers, body = head(server, target)
    assert (code, got_code) == (200, 200), body[:300]
    assert body == b""
    assert headers["content-type"] == got_headers["content-type"]
    assert int(headers["content-length"]) == len(got_body)


def test_an_answer_chosen_by_accept_varies_on_it(server: Server) -> None:
    _, as_json, _ = get(server, FIT)
    _, as_csv, body = get(server, FIT, "Accept: text/csv\r\n")
    assert as_csv["content-type"].startswith("text/csv"), body[:300]
    for headers in (as_json, as_csv):
        assert "accept" in [part.strip().lower() for part in headers["vary"].split(",")]
    _, by_format, _ = get(server, FIT + "&format=csv", "Accept: application/json\r\n")
    assert "accept" not in by_format.get("vary", "").lower()


def test_a_version_in_csv_is_marked_as_text(server: Server) -> None:
    """Through gunicorn too, the engine version 0.10 arrives as U+2060 then 0.10 (UTF-8), so a
    spreadsheet keeps it text (tests/api/test_csv_text_cells.py imports it into LibreOffice)."""
    code, headers, body = get(server, FIT + "&engine=vllm&format=csv")
    assert code == 200 and headers["content-type"] == "text/csv; charset=utf-8", body[:300]
    header, row = body.decode("utf-8").splitlines()[:2]
    cells = dict(zip(header.split(","), row.split(","), strict=False))
    assert cells["engine_version"].encode("utf-8") == b"\xe2\x81\xa00.10"


def test_a_doubled_slash_redirect_never_names_the_host_headers_site(server: Server) -> None:
    answer = raw(server, b"GET /v1//models?limit=1 HTTP/1.1\r\nHost: evil.example.com\r\nConnection: close\r\n\r\n")
    document = assert_problem(answer, 308)
    assert answer[1]["location"] == "/v1/models?limit=1"
    assert "evil.example.com" not in answer[1]["location"] and "/v1/models" in document["detail"]

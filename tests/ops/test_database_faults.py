"""Database faults against real gunicorn and real PostgreSQL.

Each test creates a database of its own on the TEST_DATABASE_URL server (never renaming the
shared one), migrates and seeds it through `running_server`, and drops it at the end:

- renamed mid-run (connections refused: "database does not exist"): planning answers 200 from
  each worker's in-memory copy and says so in `warnings`, writes answer 503 with Retry-After,
  /readyz 503, and after renaming back everything recovers without a restart;
- stops answering (a loopback proxy between gunicorn and PostgreSQL that stops forwarding
  without closing): /livez answers at once, planning answers from memory within a few
  seconds (the engine's answer and connect timeouts), no worker is killed, and it recovers.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from app.catalog.cache import CHECK_INTERVAL_S
from bench.server import Server, running_server
from tests.catalog.conftest import postgres_url_or_skip

pytestmark = pytest.mark.postgres

TOKEN = "faults-token-0123456789abcdef"
FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=2048&output_tokens=512"
FLEET = "/v1/fleet?model=llama-3.2-1b&requests_per_day=1e5"
STALE = "served from memory: the database is unreachable since"
MODEL = {
    "slug": "faulty-8b",
    "name": "Faulty 8B",
    "family": "llama",
    "params_total": 8_030_261_248,
    "layers": 32,
    "hidden_size": 4096,
    "attention_heads": 32,
    "kv_heads": 8,
    "vocab_size": 128256,
    "intermediate_size": 14336,
    "native_precision": "bf16",
    "max_context": 131072,
    "source": "fault test",
}
# Short timeouts and backoff, so that each test stays well under 20 s.
FAST = {
    "DB_CONNECT_TIMEOUT_S": "2",
    "DB_STATEMENT_TIMEOUT_MS": "500",
    "DB_RETRY_MAX_S": "1",
    "API_TOKENS": TOKEN,
}


def _admin(server_url: str) -> Any:
    return create_engine(server_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")


def _drop(admin: Any, *names: str) -> None:
    with admin.connect() as connection:
        for name in names:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def own_database() -> Iterator[tuple[str, str, Any]]:
    """(server URL, name of a fresh database, an AUTOCOMMIT admin engine); dropped after."""
    server_url = postgres_url_or_skip()
    name = f"fleet_sizer_faults_{uuid.uuid4().hex[:10]}"
    admin = _admin(server_url)
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server_url, name, admin
    finally:
        _drop(admin, name, f"{name}_away")
        admin.dispose()


def _url(server_url: str, database: str, port: int | None = None) -> str:
    url = make_url(server_url).set(database=database)
    if port is not None:
        url = url.set(host="127.0.0.1", port=port)
    return url.render_as_string(hide_password=False)


def _rename(admin: Any, old: str, new: str) -> None:
    """ALTER DATABASE RENAME needs the database idle: end its sessions, retry if a worker
    reconnects in between."""
    deadline = time.monotonic() + 5
    while True:
        with admin.connect() as connection:
            connection.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"), {"name": old}
            )
            try:
                connection.execute(text(f'ALTER DATABASE "{old}" RENAME TO "{new}"'))
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
        time.sleep(0.05)


def _get(server: Server, path: str, timeout: float = 10.0) -> tuple[int, Any, Any, float]:
    started = time.monotonic()
    status, headers, body = server.get(path, timeout=timeout)
    elapsed = time.monotonic() - started
    return status, headers, json.loads(body) if body else None, elapsed


def _post_model(server: Server, slug: str) -> tuple[int, Any, Any]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        server.base_url + "/v1/models",
        data=json.dumps({**MODEL, "slug": slug}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}", "Connection": "close"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, json.loads(error.read())


def _stale(body: Any) -> bool:
    return any(STALE in warning for warning in body.get("warnings", []))


def _wait_recovered(server: Server, slug: str, within_s: float = 10.0) -> None:
    """Planning without the stale note on every worker we reach, a write accepted, /readyz 200."""
    deadline = time.monotonic() + within_s
    while True:
        answers = [_get(server, FIT) for _ in range(6)]
        ready = _get(server, "/readyz")[0]
        if ready == 200 and all(a[0] == 200 and not _stale(a[2]) for a in answers):
            break
        assert time.monotonic() < deadline, (ready, [a[2].get("warnings") for a in answers])
        time.sleep(0.2)
    status, _, body = _post_model(server, slug)
    assert status == 201, body


def _warm(server: Server, workers: int) -> None:
    """Until every worker has answered a planning request (the access log names its pid), so
    that each holds a copy of the catalog: a worker that never loaded one has none to serve."""
    deadline = time.monotonic() + 10
    while True:
        for path in (FIT, FLEET):
            status, _, body, _ = _get(server, path)
            assert status == 200 and not _stale(body), body
        pids = {
            record["pid"]
            for record in server.log_records()
            if record.get("message") == "request" and record.get("path") == "/v1/fit"
        }
        if len(pids) >= workers:
            return
        assert time.monotonic() < deadline, pids


def _assert_planning_from_memory(server: Server, within_s: float, rounds: int = 3) -> None:
    time.sleep(CHECK_INTERVAL_S)  # until then a worker has no reason to ask the database
    for path in (FIT, FLEET) * rounds:
        status, headers, body, elapsed = _get(server, path)
        assert status == 200, body
        assert headers["Content-Type"].startswith("application/json")
        assert _stale(body), body["warnings"]
        assert elapsed < within_s, (path, elapsed)
    fleet = _get(server, FLEET)[2]
    assert fleet["options"], fleet  # the whole-catalog ranking still walks every GPU


def _assert_writes_unavailable(server: Server) -> None:
    status, headers, body = _post_model(server, "faulty-during")
    assert status == 503, body
    assert headers["Content-Type"] == "application/problem+json"
    assert int(headers["Retry-After"]) > 0
    status, headers, _, _ = _get(server, "/readyz")
    assert status == 503
    assert headers["Content-Type"] == "application/problem+json"


def _worker_deaths(server: Server) -> list[str]:
    return [line for line in server.log_lines() if "WORKER TIMEOUT" in line or "was sent SIGKILL" in line]


def test_a_renamed_database_plans_from_memory_and_recovers(own_database: tuple[str, str, Any]) -> None:
    server_url, name, admin = own_database
    env = {**FAST, "DATABASE_URL": _url(server_url, name)}
    with running_server(2, env=env) as server:
        _warm(server, 2)

        _rename(admin, name, f"{name}_away")
        try:
            _assert_planning_from_memory(server, within_s=5.0)
            _assert_writes_unavailable(server)
            for path in ("/livez", "/healthz"):
                assert _get(server, path)[0] == 200
        finally:
            _rename(admin, f"{name}_away", name)

        _wait_recovered(server, "faulty-after")
        assert not _worker_deaths(server)


class FreezingProxy:
    """A loopback TCP proxy to PostgreSQL that can stop forwarding without closing anything,
    as a hung host or a stuck network path looks to a client. Runs in one thread and stops by
    itself after `lifetime_s` at the latest."""

    def __init__(self, upstream: tuple[str, int], lifetime_s: float = 60.0) -> None:
        self.upstream = upstream
        self.frozen = threading.Event()
        self._stop = threading.Event()
        self._deadline = time.monotonic() + lifetime_s
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self._peers: dict[socket.socket, socket.socket] = {}
        self._thread = threading.Thread(target=self._run, name="freezing-proxy", daemon=True)

    def __enter__(self) -> FreezingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _accept(self) -> None:
        with contextlib.suppress(BlockingIOError):
            client, _ = self._listener.accept()
            upstream = socket.create_connection(self.upstream, timeout=5)
            self._peers[client] = upstream
            self._peers[upstream] = client

    def _close(self, sock: socket.socket) -> None:
        other = self._peers.pop(sock, None)
        sock.close()
        if other is not None:
            self._peers.pop(other, None)
            other.close()

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and time.monotonic() < self._deadline:
                # Frozen: keep accepting (the kernel would anyway) but read and forward nothing.
                watched = [self._listener] + ([] if self.frozen.is_set() else list(self._peers))
                readable, _, _ = select.select(watched, [], [], 0.05)
                for sock in readable:
                    if sock is self._listener:
                        self._accept()
                        continue
                    if sock not in self._peers or self.frozen.is_set():
                        continue
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        self._close(sock)
                        continue
                    self._peers[sock].sendall(data)
        finally:
            for sock in list(self._peers):
                with contextlib.suppress(OSError):
                    sock.close()
            self._listener.close()


def test_a_database_that_stops_answering_never_stalls_a_worker(own_database: tuple[str, str, Any]) -> None:
    server_url, name, _admin_engine = own_database
    target = make_url(server_url)
    with FreezingProxy((target.host or "127.0.0.1", target.port or 5432)) as proxy:
        # Backoff up to 2 s: each retry against a frozen database costs a request a connect timeout.
        env = {**FAST, "DB_RETRY_MAX_S": "2", "DATABASE_URL": _url(server_url, name, port=proxy.port)}
        with running_server(2, env=env) as server:
            _warm(server, 2)
            booted = sum("Booting worker" in line for line in server.log_lines())

            proxy.frozen.set()
            for path in ("/livez", "/healthz", "/livez"):
                status, _, _, elapsed = _get(server, path, timeout=5)
                assert status == 200 and elapsed < 1.0, (path, elapsed)
            # A worker's first check: the pool's ping (statement 0.5 s + 1 s), then a reconnect (2 s);
            # every later retry one connect timeout (2 s).
            _assert_planning_from_memory(server, within_s=5.0, rounds=2)
            _assert_writes_unavailable(server)
            status, _, _, elapsed = _get(server, "/livez", timeout=5)
            assert status == 200 and elapsed < 1.0, elapsed

            proxy.frozen.clear()
            _wait_recovered(server, "faulty-after")
            assert not _worker_deaths(server)
            assert sum("Booting worker" in line for line in server.log_lines()) == booted
    assert os.environ.get("DATABASE_URL", "") != env["DATABASE_URL"]


def test_probes_answer_within_a_second_while_requests_wait_on_a_frozen_database(
    own_database: tuple[str, str, Any],
) -> None:
    """Every worker busy with requests that wait on the database (planning's first check after
    the freeze, catalog listings that read it): /livez and /healthz still answer at once, for
    they never queue behind those requests (app/gunicorn_worker.py's probe lane)."""
    server_url, name, _admin_engine = own_database
    target = make_url(server_url)
    with FreezingProxy((target.host or "127.0.0.1", target.port or 5432)) as proxy:
        env = {**FAST, "DB_RETRY_MAX_S": "2", "DATABASE_URL": _url(server_url, name, port=proxy.port)}
        with running_server(2, env=env) as server:
            _warm(server, 2)
            proxy.frozen.set()
            time.sleep(CHECK_INTERVAL_S)  # every worker's next planning request checks the database
            in_flight = [FIT, FLEET, FIT, FLEET] + ["/v1/models", "/v1/gpus"] * 2
            results: list[tuple[int, float]] = []

            def send(path: str) -> None:
                status, _, _, elapsed = _get(server, path, timeout=20)
                results.append((status, elapsed))

            senders = [threading.Thread(target=send, args=(path,)) for path in in_flight]
            for sender in senders:
                sender.start()
            time.sleep(0.3)  # the requests have reached the workers
            probes = []
            for path in ("/livez", "/healthz") * 3:
                status, _, body, elapsed = _get(server, path, timeout=10)
                probes.append((path, status, round(elapsed, 3)))
                assert status == 200 and body == {"status": "ok"}
            for sender in senders:
                sender.join(timeout=30)
            assert all(elapsed < 1.0 for _, _, elapsed in probes), probes
            # The requests did wait on the database: the probes did not wait behind them.
            assert max(elapsed for _, elapsed in results) > 1.0, results
            proxy.frozen.clear()
            _wait_recovered(server, "faulty-after")
            assert not _worker_deaths(server)

"""Prometheus metrics: exact counts across real gunicorn workers, the multiprocess hooks,
route templates as labels, and Prometheus naming.

The gunicorn tests start the real server (bench/server.py: migrate, seed, a fresh
PROMETHEUS_MULTIPROC_DIR, then gunicorn with gunicorn.conf.py), as `make serve` does.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from bench.server import Server, running_server

FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"
N_REQUESTS = 60
STALE_FILE = "counter_999999.db"
SEED_DIR = Path(__file__).resolve().parents[2] / "catalog_seed"


def seeded(kind: str) -> int:
    """How many entries of a kind catalog_seed/ holds: what the server seeds."""
    document = yaml.safe_load((SEED_DIR / f"{kind}.yaml").read_text(encoding="utf-8"))
    return len(document[kind])


def samples(text: str) -> list[Sample]:
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def value(text: str, name: str, **labels: str) -> float | None:
    found = [s.value for s in samples(text) if s.name == name and s.labels == labels]
    assert len(found) <= 1, f"{name}{labels} appears {len(found)} times"
    return found[0] if found else None


def scrape(server: Server) -> str:
    status, headers, body = server.get("/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain")
    return body.decode("utf-8")


def fit_pids(server: Server) -> set[int]:
    return {
        r["pid"] for r in server.log_records() if r.get("logger") == "fleet_sizer.access" and r["route"] == "/v1/fit"
    }


def wait_for(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


# --- the real server, two workers ------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    def plant_stale_file(directory: Path) -> None:
        # A metric file a previous run could have left: on_starting must remove it.
        (directory / STALE_FILE).write_bytes(b"left over")

    workdir = tmp_path_factory.mktemp("metrics-server")
    with running_server(2, workdir=workdir, prepare_multiproc_dir=plant_stale_file) as live:
        yield live


@pytest.fixture(scope="module")
def after_load(server: Server) -> str:
    """N GETs of /v1/fit, each on its own connection, eight at a time so that both workers
    take a share; then one scrape."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda _: server.get(FIT)[0], range(N_REQUESTS)))
    assert statuses == [200] * N_REQUESTS
    return scrape(server)


@pytest.mark.slow
def test_on_starting_empties_the_metrics_directory(server: Server) -> None:
    assert not (server.multiproc_dir / STALE_FILE).exists()


@pytest.mark.slow
def test_the_request_counter_is_exact_across_workers(server: Server, after_load: str) -> None:
    pids = fit_pids(server)
    assert len(pids) >= 2, f"the requests all went to one worker ({pids}): nothing was summed"
    for pid in pids:
        assert (server.multiproc_dir / f"counter_{pid}.db").exists()
    labels = {"method": "GET", "route": "/v1/fit"}
    assert value(after_load, "fleet_sizer_http_requests_total", **labels, status="200") == N_REQUESTS
    assert value(after_load, "fleet_sizer_http_request_duration_seconds_count", **labels) == N_REQUESTS
    assert value(after_load, "fleet_sizer_http_requests_in_progress", **labels) == 0
    assert value(after_load, "fleet_sizer_estimates_total", endpoint="fit", outcome="ok") == N_REQUESTS
    hits = value(after_load, "fleet_sizer_planning_cache_lookups_total", result="hit") or 0
    misses = value(after_load, "fleet_sizer_planning_cache_lookups_total", result="miss") or 0
    assert hits + misses == N_REQUESTS
    assert misses <= len(pids)  # one computed answer per worker, then remembered


@pytest.mark.slow
def test_the_scrape_counts_itself_in_progress_and_the_catalog(server: Server, after_load: str) -> None:
    assert value(after_load, "fleet_sizer_http_requests_in_progress", method="GET", route="/metrics") == 1
    for kind in ("models", "gpus"):
        assert value(after_load, "fleet_sizer_catalog_entries", kind=kind) == seeded(kind)
    build = [s for s in samples(after_load) if s.name == "fleet_sizer_build_info"]
    assert len(build) == 1 and build[0].value == 1
    assert set(build[0].labels) == {"version", "python"}


@pytest.mark.slow
def test_names_follow_prometheus_conventions(after_load: str) -> None:
    families = list(text_string_to_metric_families(after_load))
    assert families
    for family in families:
        assert family.name.startswith("fleet_sizer_"), family.name
        names = {sample.name for sample in family.samples}
        if family.type == "counter":
            assert names == {f"{family.name}_total"}, names
        if family.type == "histogram":
            assert family.name.endswith("_seconds"), family.name
        for sample in family.samples:
            assert "pid" not in sample.labels


@pytest.mark.slow
def test_counts_survive_a_worker_restart_and_its_live_gauges_go(server: Server, after_load: str) -> None:
    victim = min(fit_pids(server))
    booted = sum("Booting worker" in line for line in server.log_lines())
    os.kill(victim, signal.SIGTERM)  # a worker of the gunicorn this module started
    wait_for(lambda: sum("Booting worker" in line for line in server.log_lines()) > booted)
    # child_exit -> mark_process_dead: the dead worker's livesum/livemostrecent files are gone,
    # its counters stay (the requests it answered still happened).
    wait_for(lambda: not list(server.multiproc_dir.glob(f"gauge_live*_{victim}.db")))
    assert (server.multiproc_dir / f"counter_{victim}.db").exists()
    text = scrape(server)
    labels = {"method": "GET", "route": "/v1/fit"}
    assert value(text, "fleet_sizer_http_requests_total", **labels, status="200") == N_REQUESTS
    assert value(text, "fleet_sizer_http_requests_in_progress", method="GET", route="/metrics") == 1


# --- in process: labels ----------------------------------------------------------------------


@pytest.fixture
def counted() -> Iterator[None]:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        pytest.skip("the test process itself runs in multiprocess mode")
    yield


def _count(route: str, status: str, method: str = "GET") -> float:
    labels = {"method": method, "route": route, "status": status}
    return REGISTRY.get_sample_value("fleet_sizer_http_requests_total", labels) or 0.0


def test_route_is_the_rule_template_never_the_raw_path(counted: None, client: FlaskClient) -> None:
    before = _count("/v1/models/<slug>", "200")
    assert client.get("/v1/models/llama-3.1-8b").status_code == 200
    assert client.get("/v1/models/qwen3-30b-a3b").status_code == 200
    assert _count("/v1/models/<slug>", "200") == before + 2
    assert (
        REGISTRY.get_sample_value(
            "fleet_sizer_http_requests_total", {"method": "GET", "route": "/v1/models/llama-3.1-8b", "status": "200"}
        )
        is None
    )


def test_unknown_paths_share_one_label(counted: None, client: FlaskClient) -> None:
    before = _count("unmatched", "404")
    assert client.get("/no/such/page").status_code == 404
    assert client.get("/another/one?x=1").status_code == 404
    assert _count("unmatched", "404") == before + 2


def test_unusual_methods_share_one_label(counted: None, client: FlaskClient) -> None:
    # Routing failed (405), so there is no rule either.
    before = _count("unmatched", "405", method="other")
    assert client.open("/healthz", method="PROPFIND").status_code == 405
    assert client.open("/healthz", method="BREW").status_code == 405
    assert _count("unmatched", "405", method="other") == before + 2


def test_estimates_count_outcomes(counted: None, client: FlaskClient) -> None:
    def estimates(outcome: str) -> float:
        return REGISTRY.get_sample_value("fleet_sizer_estimates_total", {"endpoint": "fit", "outcome": outcome}) or 0.0

    ok, client_error = estimates("ok"), estimates("client_error")
    assert client.get(FIT).status_code == 200
    assert client.get("/v1/fit?model=no-such-model&gpu=h100-sxm").status_code == 404
    assert client.get("/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=-1").status_code == 422
    assert (estimates("ok"), estimates("client_error")) == (ok + 1, client_error + 2)


def test_metrics_in_one_process_serve_the_default_registry(counted: None, client: FlaskClient) -> None:
    client.get("/healthz")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    text = response.get_data(as_text=True)
    assert 'fleet_sizer_http_requests_total{method="GET",route="/healthz",status="200"}' in text
    assert "fleet_sizer_build_info{" in text


def test_metrics_survive_an_unreachable_catalog(counted: None, tmp_path: Path) -> None:
    from app import create_app

    bare: Flask = create_app({"database_url": f"sqlite:///{tmp_path / 'empty.sqlite3'}"})
    response = bare.test_client().get("/metrics")
    assert response.status_code == 200
    bare.extensions["fleet_sizer"]["engine"].dispose()

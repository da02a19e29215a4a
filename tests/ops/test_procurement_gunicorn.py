"""Issue 25's "done when" against real gunicorn over PostgreSQL: the catalog's prices listed
with their sources and dates and exported to CSV, a price written through the API and planned
with, and a forecast's commitment mix with its arithmetic."""

from __future__ import annotations

import csv
import io
import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from app.api.workbook import XLSX
from bench.server import Server, running_server
from tests.api.test_workbook import labelled, libreoffice, recalculated, total
from tests.catalog.conftest import postgres_url_or_skip

__all__ = ["libreoffice"]  # a fixture, used by name

pytestmark = pytest.mark.slow
TOKEN = "procurement-token-0123456789"
# A measured replica (2 requests/s: 1,000 output tokens/s at 500 a request) on one H100 SXM.
FLEET = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "tensor_parallel": 1,
    "per_replica_tokens_per_s": 1000,
    "prompt_tokens": 1000,
    "output_tokens": 500,
    "engine": "ideal",
}
DAY = 1_555_200.0  # 18 requests/s: 9 replicas, 10 GPUs with the spare


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """gunicorn over a PostgreSQL database of its own, migrated and seeded afresh (the test
    database's other suites keep theirs), dropped after."""
    server_url = postgres_url_or_skip()
    name = f"fleet_sizer_procurement_{uuid.uuid4().hex[:10]}"
    admin = create_engine(server_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
    try:
        with running_server(
            1, workdir=tmp_path_factory.mktemp("procurement-server"), env={"DATABASE_URL": url, "API_TOKENS": TOKEN}
        ) as live:
            yield live
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def call(server: Server, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, dict[str, str], bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.base_url + path, data=data, method=method)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_catalog_lists_every_gpus_prices_with_their_source_and_date(server: Server) -> None:
    assert server.database_url.startswith("postgresql")
    status, _, body = call(server, "GET", "/v1/gpus?limit=500")
    assert status == 200
    gpus = {gpu["slug"]: gpu for gpu in json.loads(body)["items"]}
    h100 = gpus["h100-sxm"]["prices"]
    assert (h100["on_demand_usd_per_hour"], h100["reserved_1y_usd_per_hour"], h100["reserved_3y_usd_per_hour"]) == (
        3.0,
        2.16,
        1.62,
    )
    assert (h100["spot_usd_per_hour"], h100["purchase_usd"], h100["power_w"]) == (1.5, 27_500.0, 700.0)
    assert h100["price_date"] == "2026-11" and "Archera" in h100["source"]
    priced = [gpu for gpu in gpus.values() if gpu["prices"]["reserved_1y_usd_per_hour"] is not None]
    # Every card with a list price has its committed rates; the GeForce cards and the L40 have none.
    unpriced = {slug for slug, gpu in gpus.items() if gpu["prices"]["on_demand_usd_per_hour"] is None}
    assert unpriced == {"rtx-4090", "rtx-5090", "l40"}
    assert len(priced) == len(gpus) - len(unpriced)
    assert all(gpu["prices"]["source"] and gpu["prices"]["price_date"] for gpu in priced)
    status, headers, text = call(server, "GET", "/v1/gpus?limit=500&format=csv")
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    rows = {row["slug"]: row for row in csv.DictReader(io.StringIO(text.decode()))}
    assert rows["a100-sxm-80gb"]["prices_idle_power_w"] == "62.12"
    assert rows["h100-sxm"]["prices_reserved_3y_usd_per_hour"] == "1.62"
    assert "Digiteria Labs" in rows["h100-sxm"]["prices_source"]


def test_a_price_written_to_postgresql_is_what_the_next_plan_uses(server: Server) -> None:
    status, headers, _ = call(server, "GET", "/v1/gpus/l4")
    etag = headers["ETag"]
    patch = {"prices": {"spot_interruptions_per_hour": 0.1, "idle_power_w": 16, "source": "test: a measurement"}}
    status, _, body = call(server, "PATCH", "/v1/gpus/l4", patch, Authorization=f"Bearer {TOKEN}", If_Match=etag)
    assert status == 200, body
    prices = json.loads(body)["prices"]
    assert (prices["spot_interruptions_per_hour"], prices["idle_power_w"]) == (0.1, 16.0)
    assert prices["reserved_1y_usd_per_hour"] == 0.58  # the seed's, kept by the merge
    bad = {"prices": {"spot_interruptions_per_hour": 1.5}}
    status, headers, body = call(server, "PATCH", "/v1/gpus/l4", bad, Authorization=f"Bearer {TOKEN}", If_Match='"2"')
    assert status == 422 and "prices.spot_interruptions_per_hour" in json.loads(body)["errors"]
    query = "model=llama-3.2-1b&gpu=l4&requests_per_day=1e6&pricing=optimize&spot=true"
    status, _, body = call(server, "GET", f"/v1/fleet?{query}")
    assert status == 200, body
    answer = json.loads(body)
    assert answer["procurement"]["rates"]["spot_share"] == 0.9
    assert answer["energy"]["power_per_gpu_w"] == pytest.approx(16 + (72 - 16) * answer["energy"]["utilization"])


def test_a_forecast_with_one_busy_month_commits_the_base_and_rents_the_peak(server: Server) -> None:
    """10 GPUs a month, 19 in July: 10 committed for the year, 9 rented in July:
    10 x 2.16 x 8,760 + 9 x 3.00 x 730 = 208,926.00 USD against 282,510.00 on demand."""
    forecast = [{"period": f"2027-{m:02d}", "requests_per_day": DAY * (2 if m == 7 else 1)} for m in range(1, 13)]
    status, _, body = call(server, "POST", "/v1/fleet", {**FLEET, "forecast": forecast, "pricing": "optimize"})
    assert status == 200, body
    procurement = json.loads(body)["procurement"]
    assert [(c["term"], c["gpus"]) for c in procurement["commitment"]] == [("1y", 10)]
    assert [p["on_demand_gpus"] for p in procurement["periods"]] == [0] * 6 + [9] + [0] * 5
    assert procurement["cost_usd"] == 208_926.00
    assert procurement["on_demand_cost_usd"] == 11 * 10 * 3 * 730 + 19 * 3 * 730 == 282_510


def test_a_commitment_longer_than_the_horizon_is_422(server: Server) -> None:
    forecast = [{"period": f"2027-{m:02d}", "requests_per_day": DAY} for m in range(1, 13)]
    body = {**FLEET, "forecast": forecast, "pricing": "optimize", "commitments": "3y"}
    status, headers, text = call(server, "POST", "/v1/fleet", body)
    assert status == 422 and headers["Content-Type"].startswith("application/problem+json")
    assert "longer than the 12-month horizon" in json.loads(text)["errors"]["commitments"][0]


def test_the_workbook_gunicorn_serves_reproduces_its_json_to_the_cent(
    server: Server, libreoffice: Path, tmp_path: Path
) -> None:
    """GET ?format=xlsx through gunicorn, recalculated by LibreOffice: the fleet's month and
    the split's total are the JSON answer's."""
    query = urllib.parse.urlencode(
        {
            **FLEET,
            "requests_per_day": DAY,
            "pricing": "optimize",
            "prices.idle_power_w": 70,
            "ownership.amortization_months": 36,
            "ownership.electricity_usd_per_kwh": 0.1,
            "ownership.hosting_usd_per_kw_month": 150,
        }
    )
    status, _, body = call(server, "GET", f"/v1/fleet?{query}")
    assert status == 200, body
    answer = json.loads(body)
    status, headers, data = call(server, "GET", f"/v1/fleet?{query}&format=xlsx")
    assert status == 200 and headers["Content-Type"] == XLSX
    book = recalculated(libreoffice, data, tmp_path)
    assert labelled(book, "Fleet", "Monthly cost") == answer["monthly_cost_usd"] == 21_900.00
    assert labelled(book, "Fleet", "Owned monthly cost") == answer["ownership"]["owned_monthly_cost_usd"]
    assert total(book, "Procurement", "Period cost, USD") == answer["procurement"]["cost_usd"] == 425_736.00

"""A GPU's prices in the catalog: listed with their source and month, exported to CSV, written
with the catalog's writes (checked: no negative price or power, an interruption rate in
[0, 1), idle power at most board power, a source and a date), and the on-demand rate under
both its names.

These tests write, so they run on their own seeded SQLite file; tests/ops/test_procurement_gunicorn.py
reads the same through gunicorn on PostgreSQL.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient

from app.api.render import TEXT_MARK
from app.catalog.seed import SEED_DIR
from tests.api.test_catalog_writes import gpu_body
from tests.support import seeded_app

TOKEN = "prices-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PRICES = {
    "reserved_1y_usd_per_hour": 2.5,
    "reserved_3y_usd_per_hour": 1.9,
    "spot_usd_per_hour": 1.4,
    "spot_interruptions_per_hour": 0.05,
    "purchase_usd": 30_000,
    "power_w": 700,
    "idle_power_w": 90,
    "source": "test fixture: a provider's page, 2026-01",
}
FIGURES = [name for name in PRICES if name != "source"]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with seeded_app(tmp_path_factory, "prices", api_tokens=(TOKEN,)) as flask_app:
        yield flask_app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _seeded_gpus() -> list[dict[str, Any]]:
    return list(yaml.safe_load((SEED_DIR / "gpus.yaml").read_text())["gpus"])


def test_every_seeded_gpu_lists_its_prices_with_their_source_and_month(client: FlaskClient) -> None:
    listed = {gpu["slug"]: gpu for gpu in client.get("/v1/gpus?limit=500").get_json()["items"]}
    for entry in _seeded_gpus():
        prices = listed[entry["slug"]]["prices"]
        seeded = entry.get("prices") or {}
        assert prices["on_demand_usd_per_hour"] == entry["hourly_price_usd"]
        assert prices["price_date"] == entry["price_date"]
        for name in FIGURES:
            assert prices[name] == seeded.get(name), (entry["slug"], name)
        if any(seeded.get(name) is not None for name in FIGURES):
            # Sourced: the pages the illustrative figures come from, and the month of the prices.
            assert "Archera" in prices["source"] and "Digiteria Labs" in prices["source"], entry["slug"]
            assert prices["price_date"] is not None


def test_the_seeded_committed_and_spot_rates_are_the_on_demand_rate_less_the_cited_discounts(
    client: FlaskClient,
) -> None:
    """The source says 28% and 46% off for one and three years, 50% off for spot: the figures
    are those, to the cent (H100 SXM: 3.00 on demand -> 2.16, 1.62, 1.50)."""
    h100 = client.get("/v1/gpus/h100-sxm").get_json()["prices"]
    assert (h100["reserved_1y_usd_per_hour"], h100["reserved_3y_usd_per_hour"], h100["spot_usd_per_hour"]) == (
        2.16,
        1.62,
        1.5,
    )
    for entry in _seeded_gpus():
        if entry["hourly_price_usd"] is None:
            # No list price found (RTX 4090, L40): no rate derived from one either.
            assert not any(entry.get("prices", {}).get(k) for k in ("reserved_1y_usd_per_hour", "spot_usd_per_hour"))
            continue
        on_demand, seeded = entry["hourly_price_usd"], entry["prices"]
        assert seeded["reserved_1y_usd_per_hour"] == round(on_demand * (1 - 0.28), 2)
        assert seeded["reserved_3y_usd_per_hour"] == round(on_demand * (1 - 0.46), 2)
        assert seeded["spot_usd_per_hour"] == round(on_demand * (1 - 0.50), 2)
        # No public per-hour interruption rate was found: not guessed.
        assert seeded["spot_interruptions_per_hour"] is None


def test_the_gpu_csv_exports_every_price(client: FlaskClient) -> None:
    text = client.get("/v1/gpus?format=csv&limit=500").get_data(as_text=True)
    rows = {row["slug"]: row for row in csv.DictReader(io.StringIO(text))}
    h100 = rows["h100-sxm"]
    assert h100["prices_on_demand_usd_per_hour"] == "3.0"
    assert h100["prices_reserved_1y_usd_per_hour"] == "2.16"
    assert h100["prices_power_w"] == "700.0"
    assert h100["prices_idle_power_w"] == ""
    assert h100["prices_price_date"] == TEXT_MARK + "2026-11"  # a month, kept as text in a spreadsheet
    assert "Archera" in h100["prices_source"]


def test_a_gpu_is_written_with_its_prices_and_read_back(client: FlaskClient) -> None:
    response = client.post("/v1/gpus", json=gpu_body("priced-gpu", prices=PRICES), headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    prices = client.get("/v1/gpus/priced-gpu").get_json()["prices"]
    assert prices == {**PRICES, "on_demand_usd_per_hour": 3.5, "price_date": "2026-01", "purchase_usd": 30_000.0}
    assert response.get_json()["prices"] == prices


def test_the_on_demand_rate_may_be_given_by_either_name(client: FlaskClient) -> None:
    body = {k: v for k, v in gpu_body("nested-price").items() if k not in ("hourly_price_usd", "price_date")}
    body["prices"] = {**PRICES, "on_demand_usd_per_hour": 2.0, "price_date": "2026-02"}
    created = client.post("/v1/gpus", json=body, headers=AUTH).get_json()
    assert (created["hourly_price_usd"], created["price_date"]) == (2.0, "2026-02")
    # A patch of one name moves the other with it.
    patched = client.patch(
        "/v1/gpus/nested-price", json={"hourly_price_usd": 2.2}, headers={**AUTH, "If-Match": '"1"'}
    ).get_json()
    assert (patched["hourly_price_usd"], patched["prices"]["on_demand_usd_per_hour"]) == (2.2, 2.2)
    patched = client.patch(
        "/v1/gpus/nested-price",
        json={"prices": {"on_demand_usd_per_hour": 2.4, "price_date": "2026-03"}},
        headers={**AUTH, "If-Match": '"2"'},
    ).get_json()
    assert (patched["hourly_price_usd"], patched["price_date"]) == (2.4, "2026-03")
    assert patched["prices"]["spot_usd_per_hour"] == PRICES["spot_usd_per_hour"]  # merged, not replaced


def test_both_names_of_the_on_demand_rate_must_agree(client: FlaskClient) -> None:
    body = gpu_body("two-prices", prices={**PRICES, "on_demand_usd_per_hour": 9.0})
    response = client.post("/v1/gpus", json=body, headers=AUTH)
    assert response.status_code == 422
    assert {"hourly_price_usd", "prices.on_demand_usd_per_hour"} <= set(response.get_json()["errors"])


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"spot_usd_per_hour": -0.01}, "prices.spot_usd_per_hour"),
        ({"reserved_1y_usd_per_hour": -1}, "prices.reserved_1y_usd_per_hour"),
        ({"reserved_3y_usd_per_hour": -1}, "prices.reserved_3y_usd_per_hour"),
        ({"purchase_usd": -1}, "prices.purchase_usd"),
        ({"power_w": -700}, "prices.power_w"),
        ({"power_w": 0}, "prices.power_w"),
        ({"idle_power_w": -1}, "prices.idle_power_w"),
        ({"idle_power_w": 800}, "prices.idle_power_w"),
        ({"spot_interruptions_per_hour": 1.0}, "prices.spot_interruptions_per_hour"),
        ({"spot_interruptions_per_hour": -0.1}, "prices.spot_interruptions_per_hour"),
        ({"source": None}, "prices.source"),
        ({"rebate_usd": 1}, "prices.rebate_usd"),
        ({"price_date": "2026-13"}, "prices.price_date"),
    ],
)
def test_a_bad_price_is_422_naming_it(client: FlaskClient, changes: dict[str, Any], field: str) -> None:
    response = client.post("/v1/gpus", json=gpu_body("bad-price", prices={**PRICES, **changes}), headers=AUTH)
    assert response.status_code == 422, response.get_data(as_text=True)
    assert field in response.get_json()["errors"]


def test_a_price_needs_its_date(client: FlaskClient) -> None:
    body = gpu_body("undated", hourly_price_usd=None, price_date=None, prices=PRICES)
    response = client.post("/v1/gpus", json=body, headers=AUTH)
    assert response.status_code == 422
    assert "prices.price_date" in response.get_json()["errors"]


def test_power_alone_needs_a_source_but_no_date(client: FlaskClient) -> None:
    body = gpu_body("powered", hourly_price_usd=None, price_date=None, prices={"power_w": 300})
    assert "prices.source" in client.post("/v1/gpus", json=body, headers=AUTH).get_json()["errors"]
    body["prices"]["source"] = "datasheet"
    response = client.post("/v1/gpus", json=body, headers=AUTH)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["prices"]["power_w"] == 300.0

"""format=xlsx on /v1/fleet, read back through LibreOffice headless: every
formula recalculated by a real spreadsheet reproduces the JSON answer's totals to the cent,
and changing an input cell moves the totals as the arithmetic says."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from flask.testing import FlaskClient
from openpyxl.workbook.workbook import Workbook

from app.api.workbook import XLSX

pytestmark = pytest.mark.slow
SOFFICE = shutil.which("soffice")
HOURS = 730
# LibreOffice recalculates every formula of a file it opens (Excel's own cached results are
# absent from what openpyxl writes; "always" makes it never trust any).
RECALCULATE_ALWAYS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse">
<value>0</value></prop></item>
</oor:items>
"""
FLEET = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "tensor_parallel": 1,
    "per_replica_tokens_per_s": 1000,
    "prompt_tokens": 1000,
    "output_tokens": 500,
    "engine": "ideal",
}
DAY = 1_555_200.0  # 18 requests/s: 9 measured replicas of 2 requests/s, 10 GPUs with N+1


@pytest.fixture(scope="module")
def libreoffice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LibreOffice profile of its own that recalculates on load (skipped without
    LibreOffice on a developer's machine; CI must have it: `make test` installs it)."""
    if SOFFICE is None:
        if os.environ.get("CI") == "true":
            pytest.fail("LibreOffice is missing; CI must run the workbook tests (`make test` installs it)")
        pytest.skip("LibreOffice (soffice) is not installed")
    profile = tmp_path_factory.mktemp("libreoffice-profile")
    (profile / "user").mkdir()
    (profile / "user" / "registrymodifications.xcu").write_text(RECALCULATE_ALWAYS, encoding="utf-8")
    return profile


def recalculated(libreoffice: Path, data: bytes, tmp_path: Path) -> Workbook:
    """The workbook as LibreOffice computes it: opened, recalculated, saved, read back."""
    source, out = tmp_path / "in", tmp_path / "out"
    source.mkdir(exist_ok=True)
    out.mkdir(exist_ok=True)
    (source / "fleet.xlsx").write_bytes(data)
    assert SOFFICE is not None
    subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation={libreoffice.as_uri()}",
            "--headless",
            "--calc",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(out),
            str(source / "fleet.xlsx"),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    return openpyxl.load_workbook(out / "fleet.xlsx", data_only=True)


def labelled(book: Workbook, sheet: str, label: str) -> Any:
    """The value beside a label in column A."""
    for row in book[sheet].iter_rows(min_col=1, max_col=2):
        if row[0].value == label:
            return row[1].value
    raise KeyError(f"{sheet}: no row {label!r}")


def column(book: Workbook, sheet: str, header: str) -> list[Any]:
    """A table's column below its header (row 3), up to the first empty period."""
    rows = list(book[sheet].iter_rows(min_row=3, values_only=True))
    index = list(rows[0]).index(header)
    values = []
    for row in rows[1:]:
        if row[0] in (None, "Total"):
            break
        values.append(row[index])
    return values


def total(book: Workbook, sheet: str, header: str) -> Any:
    rows = list(book[sheet].iter_rows(min_row=3, values_only=True))
    index = list(rows[0]).index(header)
    return next(row[index] for row in rows if row[0] == "Total")


def _post(client: FlaskClient, body: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    answer = client.post("/v1/fleet", json=body)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    sheet = client.post("/v1/fleet?format=xlsx", json=body)
    assert sheet.status_code == 200, sheet.get_data(as_text=True)[:500]
    assert sheet.headers["Content-Type"] == XLSX
    assert sheet.headers["Content-Disposition"].startswith("attachment; filename=")
    return answer.get_json(), sheet.get_data()


BUSY_JULY = {
    **FLEET,
    "forecast": [
        {"period": f"2027-{m:02d}", "requests_per_day": DAY * (2 if m == 7 else 1), "peak_to_average": 1.0}
        for m in range(1, 13)
    ],
    "pricing": "optimize",
    "prices": {"idle_power_w": 70},
    "ownership": {
        "amortization_months": 36,
        "pue": 1.3,
        "electricity_usd_per_kwh": 0.12,
        "hosting_usd_per_kw_month": 150,
    },
    "grid_g_co2_per_kwh": 400,
    "api_price_per_million_input_tokens_usd": 0.2,
    "api_price_per_million_output_tokens_usd": 0.6,
}


def test_the_workbooks_formulas_reproduce_the_answer_to_the_cent(
    client: FlaskClient, libreoffice: Path, tmp_path: Path
) -> None:
    answer, data = _post(client, BUSY_JULY)
    raw = openpyxl.load_workbook(io.BytesIO(data))
    assert raw.sheetnames == ["Inputs", "Fleet", "Periods", "Procurement"]
    assert str(raw["Fleet"]["B" + str(_row(raw, "Fleet", "Monthly cost"))].value).startswith("=ROUND(")
    book = recalculated(libreoffice, data, tmp_path)
    assert labelled(book, "Fleet", "Monthly cost") == answer["monthly_cost_usd"] == 41_610.00  # 19 x 3 x 730
    assert labelled(book, "Fleet", "Energy per month") == pytest.approx(answer["energy_kwh_per_month"], rel=1e-9)
    assert labelled(book, "Fleet", "CO2e per month") == pytest.approx(answer["co2e_kg_per_month"], rel=1e-9)
    wh = labelled(book, "Fleet", "Energy per million output tokens")
    assert wh == pytest.approx(answer["energy_wh_per_million_tokens"], rel=1e-9)
    owned = answer["ownership"]
    assert labelled(book, "Fleet", "Owned monthly cost") == owned["owned_monthly_cost_usd"]
    # Owning the busy month's 19 GPUs against renting each month's fleet: 11 x 21,900 + 41,610 over 12.
    rented = labelled(book, "Fleet", "Rented monthly cost (the forecast's average)")
    assert rented == owned["rented_monthly_cost_usd"] == round((11 * 21_900 + 41_610) / 12, 2) == 23_542.50
    assert labelled(book, "Fleet", "Break-even against renting") == pytest.approx(owned["break_even_months"])
    assert labelled(book, "Fleet", "Hosted API monthly cost") == answer["hosted_api_monthly_cost_usd"]
    assert column(book, "Periods", "Monthly cost, USD") == [p["monthly_cost_usd"] for p in answer["periods"]]
    procurement = answer["procurement"]
    assert column(book, "Procurement", "Period cost, USD") == [p["cost_usd"] for p in procurement["periods"]]
    assert total(book, "Procurement", "Period cost, USD") == procurement["cost_usd"] == 208_926.00
    assert total(book, "Procurement", "All on demand, USD") == procurement["on_demand_cost_usd"]
    assert labelled(book, "Procurement", "Monthly cost, USD") == procurement["monthly_cost_usd"]


def test_a_commitment_bills_every_hour_in_the_workbook_too(
    client: FlaskClient, libreoffice: Path, tmp_path: Path
) -> None:
    """Billed 600 hours a month, the 10 committed GPUs still cost every hour of the year:
    10 x 2.16 x 730 x 12 = 189,216.00, the JSON's and the workbook's."""
    body = {**FLEET, "requests_per_day": DAY, "hours_per_month": 600, "pricing": "optimize", "horizon_months": 12}
    answer, data = _post(client, body)
    book = recalculated(libreoffice, data, tmp_path)
    assert column(book, "Procurement", "Committed, USD") == [189_216.00]
    assert total(book, "Procurement", "Period cost, USD") == answer["procurement"]["cost_usd"] == 189_216.00
    assert total(book, "Procurement", "All on demand, USD") == answer["procurement"]["on_demand_cost_usd"]


def _row(book: Workbook, sheet: str, label: str) -> int:
    for row in book[sheet].iter_rows(min_col=1, max_col=1):
        if row[0].value == label:
            return row[0].row
    raise KeyError(label)


def test_changing_an_input_cell_changes_the_totals(client: FlaskClient, libreoffice: Path, tmp_path: Path) -> None:
    """On demand from 3.00 to 4.00 USD an hour: the fleet's month is 19 x 4 x 730 = 55,480.00;
    the split's is July's 9 rented GPUs dearer, 208,926 + 9 x 1.00 x 730 = 215,496.00. The
    electricity at 0.24 instead of 0.12 doubles that line of the owned cost."""
    answer, data = _post(client, BUSY_JULY)
    book = openpyxl.load_workbook(io.BytesIO(data))
    target = book.defined_names["OnDemandUsdPerHour"].attr_text.split("!")
    book[target[0].strip("'")][target[1].replace("$", "")] = 4.0
    target = book.defined_names["ElectricityUsdPerKwh"].attr_text.split("!")
    book[target[0].strip("'")][target[1].replace("$", "")] = 0.24
    edited = io.BytesIO()
    book.save(edited)
    after = recalculated(libreoffice, edited.getvalue(), tmp_path)
    assert labelled(after, "Fleet", "Monthly cost") == 19 * 4 * HOURS == 55_480.00
    assert total(after, "Procurement", "Period cost, USD") == 208_926.00 + 9 * 1.00 * HOURS == 215_496.00
    electricity = answer["ownership"]["electricity_usd_per_month"]
    assert labelled(after, "Fleet", "Electricity per month") == pytest.approx(2 * electricity, abs=0.01)


def test_every_pool_has_its_sheet_and_the_fleet_sums_them(
    client: FlaskClient, libreoffice: Path, tmp_path: Path
) -> None:
    body = {
        "model": "llama-3.1-8b",
        "gpu": "h200-sxm",
        "requests_per_day": 2e6,
        "peak_to_average": 2,
        "prompt_tokens": 8000,
        "output_tokens": 200,
        "ttft_slo_ms": 1000,
        "tpot_slo_ms": 20,
        "topology": "disaggregated",
        "forecast": [{"period": "2027-01", "requests_per_day": 1e6}, {"period": "2027-02", "requests_per_day": 2e6}],
    }
    answer, data = _post(client, body)
    book = recalculated(libreoffice, data, tmp_path)
    assert book.sheetnames == [
        "Inputs",
        "Prefill pool",
        "Prefill pool periods",
        "Decode pool",
        "Decode pool periods",
        "Fleet",
    ]
    for sheet, key in (("Prefill pool", "prefill_pool"), ("Decode pool", "decode_pool")):
        assert labelled(book, sheet, "Monthly cost") == answer[key]["monthly_cost_usd"]
        assert labelled(book, sheet, "Energy per month") == pytest.approx(answer[key]["energy_kwh_per_month"], rel=1e-9)
    assert labelled(book, "Fleet", "Monthly cost") == answer["monthly_cost_usd"]
    assert labelled(book, "Fleet", "Energy per month") == pytest.approx(answer["energy_kwh_per_month"], rel=1e-9)
    prefill = column(book, "Prefill pool periods", "Monthly cost, USD")
    decode = column(book, "Decode pool periods", "Monthly cost, USD")
    assert [round(p + d, 2) for p, d in zip(prefill, decode, strict=True)] == [
        period["monthly_cost_usd"] for period in answer["periods"]
    ]

"""The planner's "Paying for it" panel in a real browser (Debian's Chromium, Playwright, gunicorn
over a freshly seeded SQLite catalog: conftest.py's fixtures): pricing=optimize's committed,
on-demand and spot split over a forecast, the energy, owning against renting and a hosted API,
entered from the keyboard. Every figure the page shows is compared with what POST /v1/fleet
answers for the same inputs, asked directly here: no figure of an answer is written in this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from app.api.workbook import XLSX

from .conftest import VIEWPORT
from .test_plan import ARTIFACTS, PHONE, fleet, form_body, leaving, no_horizontal_scroll, post, rendered, type_into

if TYPE_CHECKING:  # playwright may be missing: the fixtures (conftest.py) skip, or fail in CI
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

# A year whose sixth month is twice as busy as the rest: the base is worth committing, the
# busy month is not (the worked case, on the planner).
YEAR = [(f"2027-{m:02d}", 2_000_000 * (2 if m == 6 else 1), None) for m in range(1, 13)]
PASTE = "Month\tRequests per day\n" + "\n".join(f"{p}\t{r:,}" for p, r, _ in YEAR)
# Inputs a finance team types (not figures of an answer): a spot interruption rate the
# catalog has none of, the owning figures and a hosted API's prices.
INTERRUPTIONS = 0.05
IDLE_W = 100
OWNING = {"amortization_months": 36, "electricity_usd_per_kwh": 0.12, "hosting_usd_per_kw_month": 150}
API = {"api_price_per_million_input_tokens_usd": 0.2, "api_price_per_million_output_tokens_usd": 0.6}


def choose(page: Page, select: str, value: str) -> None:
    """A select moved from the keyboard to `value`."""
    page.focus(f'[id="{select}"]')
    options = page.locator(f'[id="{select}"] option').evaluate_all("(os) => os.map((o) => o.value)")
    current = page.locator(f'[id="{select}"]').input_value()
    steps = options.index(value) - options.index(current)
    for _ in range(abs(steps)):
        page.keyboard.press("ArrowDown" if steps > 0 else "ArrowUp")
    assert page.locator(f'[id="{select}"]').input_value() == value


def field(page: Page, name: str, text: str) -> None:
    type_into(page, f'[id="{name}"]', text)


def paste_year(page: Page) -> None:
    page.focus("#traffic-one")
    page.keyboard.press("ArrowRight")
    page.locator("#forecast").fill(PASTE)


def split_bars(page: Page) -> list[dict[str, Any]]:
    bars: list[dict[str, Any]] = page.locator("#split-chart .split-period").evaluate_all(
        """(groups) => groups.map((g) => ({
            period: g.dataset.period,
            committed_gpus: Number(g.dataset.committedGpus),
            on_demand_gpus: Number(g.dataset.onDemandGpus),
            spot_gpus: Number(g.dataset.spotGpus),
            committed_cost_usd: Number(g.dataset.committedCostUsd),
            on_demand_cost_usd: Number(g.dataset.onDemandCostUsd),
            spot_cost_usd: Number(g.dataset.spotCostUsd),
            cost_usd: Number(g.dataset.costUsd),
            on_demand_only_cost_usd: Number(g.dataset.onDemandOnlyCostUsd),
            rects: g.querySelectorAll('rect').length,
        }))"""
    )
    return bars


def value(page: Page, selector: str, attribute: str = "data-value") -> float | None:
    text = page.locator(selector).get_attribute(attribute)
    return None if text in (None, "") else float(text)


def test_a_forecast_is_split_into_committed_on_demand_and_spot_as_the_api_splits_it(page: Page, server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server}/plan?gpu=h100-pcie")
    rendered(page)
    # On demand: the panel says so, and shows no split.
    assert page.locator("#paying-panel").get_attribute("data-pricing") == "on_demand"
    assert page.locator("#procurement").is_hidden()
    assert "Choose Optimize" in page.locator("#procurement-off").inner_text()
    assert page.locator('[id="spot"]').is_hidden() and page.locator("#horizon_months").is_hidden()

    paste_year(page)
    rendered(page)
    choose(page, "pricing", "optimize")
    rendered(page)
    assert page.locator('[id="spot"]').is_visible()
    assert page.locator("#horizon_months").is_hidden(), "a forecast is its own horizon"
    page.locator("#price-overrides summary").focus()
    page.keyboard.press("Enter")
    field(page, "prices.spot_interruptions_per_hour", str(INTERRUPTIONS))
    rendered(page)

    body = {
        **form_body(page, YEAR),
        "pricing": "optimize",
        "prices": {"spot_interruptions_per_hour": INTERRUPTIONS},
    }
    answer = fleet(server, body)
    proc = answer["procurement"]
    periods = proc["periods"]
    # The answer itself has the shape: a committed base, the busy month rented.
    assert proc["commitment"] and any(p["on_demand_gpus"] for p in periods)

    bars = split_bars(page)
    assert [b["period"] for b in bars] == [p for p, _, _ in YEAR]
    for bar, period in zip(bars, periods, strict=True):
        for name in (
            "committed_gpus",
            "on_demand_gpus",
            "spot_gpus",
            "committed_cost_usd",
            "on_demand_cost_usd",
            "spot_cost_usd",
            "cost_usd",
            "on_demand_only_cost_usd",
        ):
            assert bar[name] == period[name], (name, bar, period)
        parts = sum(1 for name in ("committed_cost_usd", "on_demand_cost_usd", "spot_cost_usd") if period[name] > 0)
        assert bar["rects"] == parts
    rows = page.locator("#split-table tbody tr")
    assert rows.count() == len(periods)
    assert rows.evaluate_all("(rs) => rs.map((r) => Number(r.dataset.costUsd))") == [p["cost_usd"] for p in periods]

    # The horizon's totals, the commitments and the reasons, as answered.
    assert value(page, "#procured_cost_usd") == proc["cost_usd"]
    assert value(page, "#procured_cost_usd", "data-on-demand-cost-usd") == proc["on_demand_cost_usd"]
    assert value(page, "#procured_cost_usd", "data-savings-usd") == proc["savings_usd"]
    commitments = page.locator("#commitments-list li").all_inner_texts()
    assert len(commitments) == len(proc["commitment"])
    for text, commitment in zip(commitments, proc["commitment"], strict=True):
        assert f"Commit {commitment['gpus']:,} GPUs for {commitment['term']}" in text
        assert commitment["first_period"] in text and commitment["last_period"] in text
    assert page.locator("#procurement-why li").all_inner_texts() == proc["why"]
    assert page.locator("#procurement-solver").get_attribute("data-solver-status") == proc["solver_status"]
    prices_line = page.locator("#paying-prices").inner_text()
    assert f"taken back {INTERRUPTIONS:.1%} of hours" in prices_line

    # The energy of the plan (the busiest period's fleet), as answered.
    assert value(page, "#energy_kwh_per_month") == answer["energy_kwh_per_month"]
    assert answer["energy_basis"] in page.locator("#energy-basis").inner_text()

    # The link holds the pricing and the override, and reproduces the split.
    query = parse_qs(urlsplit(page.url).query)
    assert query["pricing"] == ["optimize"]
    assert query["prices.spot_interruptions_per_hour"] == [str(INTERRUPTIONS)]
    again = page.context.new_page()
    try:
        again.goto(page.url)
        rendered(again)
        assert split_bars(again) == bars
    finally:
        again.close()

    # The workbook is the API's own for the same inputs.
    with page.expect_download() as download:
        page.focus("#download-xlsx")
        page.keyboard.press("Enter")
    status, workbook = post(server, "/v1/fleet?format=xlsx", body, accept=XLSX)
    assert status == 200
    saved = Path(download.value.path()).read_bytes()
    assert saved[:2] == workbook[:2] == b"PK"  # both zip archives: an .xlsx
    assert len(saved) == pytest.approx(len(workbook), rel=0.01)  # the same sheets (only zip times differ)

    # Quarters instead of months: twelve periods of three months, a 36-month horizon in which
    # a 3-year commitment fits; the bars follow the API's split.
    choose(page, "period_months", "3")
    rendered(page)
    quarters = fleet(server, {**body, "period_months": 3})["procurement"]
    assert quarters["horizon_months"] == 36 and quarters["period_months"] == 3
    assert [b["cost_usd"] for b in split_bars(page)] == [p["cost_usd"] for p in quarters["periods"]]
    assert value(page, "#procured_cost_usd") == quarters["cost_usd"]
    assert parse_qs(urlsplit(page.url).query)["period_months"] == ["3"]
    body["period_months"] = 3

    no_horizontal_scroll(page, VIEWPORT["width"])
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)
    no_horizontal_scroll(page, PHONE["width"])
    assert len(split_bars(page)) == 12
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "plan-paying-390.png"), full_page=True)
    page.locator("#paying-panel").screenshot(path=str(ARTIFACTS / "plan-paying-panel-390.png"))
    page.set_viewport_size(VIEWPORT)
    page.locator("#paying-panel").screenshot(path=str(ARTIFACTS / "plan-paying-1280.png"))

    # A mixed fleet is not offered pricing=optimize yet: the API's 422 shows beside the choice.
    choose(page, "topology", "mix")
    rendered(page, status="error")
    status, data = post(server, "/v1/fleet", {**body, "mix": True, "gpu": None})
    assert status == 422
    message = json.loads(data)["errors"]["pricing"][0]
    assert message in page.locator("#pricing-error").inner_text()
    assert page.locator("#pricing").get_attribute("aria-invalid") == "true"
    assert leaving(requests, server) == []


def test_owning_and_a_hosted_api_beside_the_rented_fleet(page: Page, server: str) -> None:
    page.goto(f"{server}/plan?gpu=h100-sxm")
    rendered(page)
    assert page.locator("#owning").is_hidden()
    assert "not compared" in page.locator("#owned_note").inner_text()
    for name, figure in OWNING.items():
        field(page, f"ownership.{name}", str(figure))
    # The H100 SXM has no idle power in the catalog: owning it is refused, naming the price,
    # beside the field that gives it.
    rendered(page, status="error")
    body = {**form_body(page, None), "ownership": OWNING}
    status, data = post(server, "/v1/fleet", body)
    assert status == 422
    problem = json.loads(data)
    message = problem["errors"]["prices.idle_power_w"][0]
    beside = page.locator('[id="prices.idle_power_w-error"]')
    assert beside.is_visible() and message in beside.inner_text()
    assert page.locator('[id="prices.idle_power_w"]').get_attribute("aria-invalid") == "true"

    field(page, "prices.idle_power_w", str(IDLE_W))
    for name, figure in API.items():
        field(page, name, str(figure))
    rendered(page)
    assert beside.is_hidden()
    body = {**form_body(page, None), "ownership": OWNING, "prices": {"idle_power_w": IDLE_W}, **API}
    answer = fleet(server, body)
    owned = answer["ownership"]
    assert value(page, "#owned_monthly_cost_usd") == owned["owned_monthly_cost_usd"]
    assert value(page, "#owned_monthly_cost_usd", "data-rented-monthly-cost-usd") == owned["rented_monthly_cost_usd"]
    assert value(page, "#owned_monthly_cost_usd", "data-break-even-months") == owned["break_even_months"]
    months = page.locator("#owning-chart .owning-month").evaluate_all(
        "(gs) => gs.map((g) => ({month: Number(g.dataset.month), owned_usd: Number(g.dataset.ownedUsd),"
        " rented_usd: Number(g.dataset.rentedUsd)}))"
    )
    assert months == owned["months"]
    assert page.locator("#owning-chart path[data-series]").count() == 2
    if owned["break_even_months"] is not None:
        assert value(page, "#owning-chart .break-even", "data-months") == owned["break_even_months"]
    assert owned["why"] in page.locator("#owning-why").inner_text()

    assert value(page, "#hosted_api_monthly_cost_usd") == answer["hosted_api_monthly_cost_usd"]
    even = answer["break_even_requests_per_day"]
    assert value(page, "#hosted_api_monthly_cost_usd", "data-break-even-requests-per-day") == even
    assert answer["hosted_api_comparison"] in page.locator("#api-comparison").inner_text()
    assert value(page, "#energy_kwh_per_month") == answer["energy_kwh_per_month"]

    # A PUE below 1 is the API's 422, beside its field.
    field(page, "pue", "0.9")
    rendered(page, status="error")
    status, data = post(server, "/v1/fleet", {**body, "pue": 0.9})
    assert status == 422
    assert json.loads(data)["errors"]["pue"][0] in page.locator("#pue-error").inner_text()
    no_horizontal_scroll(page, VIEWPORT["width"])

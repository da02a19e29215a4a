"""The planner's simulated day in a real browser (Debian's Chromium, Playwright, gunicorn over a
freshly seeded SQLite catalog: conftest.py's fixtures).

Llama 3.1 8B on an H100 answering 4,000 tokens at a 15 ms TPOT, through four hours whose busiest
brings 3x the quietest's requests, typed from the keyboard; every figure the panel shows is
compared with what POST /v1/autoscaling/simulate answers for the request the page made, asked
directly here: no number of the answer is written in this file.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import VIEWPORT
from .test_plan import PHONE, no_horizontal_scroll, post, rendered, type_into

if TYPE_CHECKING:  # playwright may be missing: the fixtures (conftest.py) skip, or fail in CI
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

PLAN = "model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=1000&output_tokens=4000&ttft_slo_ms=1000&tpot_slo_ms=15"
HOURS = (1800, 3600, 5400, 3600)


def simulated(page: Page) -> None:
    page.wait_for_function("() => ['ready', 'error'].includes(document.getElementById('day-panel').dataset.status)")


def run_day(page: Page, *, delay: str = "", recommend: bool = False) -> dict[str, Any]:
    type_into(page, "#day-hours", "\n".join(f"{h:,}".replace(",", "") for h in HOURS))
    type_into(page, "#day-min", "1")
    if delay:
        type_into(page, "#day-delay", delay)
    if recommend:
        page.focus("#day-recommend")
        page.keyboard.press("Space")
    page.focus("#day-run")
    page.evaluate("document.getElementById('day-panel').dataset.status = 'pending'")
    page.keyboard.press("Enter")
    simulated(page)
    request: dict[str, Any] = json.loads(page.locator("#day-panel").get_attribute("data-request") or "{}")
    return request


def table(page: Page) -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = page.locator("#day-table tbody tr").evaluate_all(
        """(rows) => Object.fromEntries(rows.map((r) => [r.dataset.day,
            Object.fromEntries([...r.cells].map((c) => [c.dataset.field, c.textContent]))]))"""
    )
    return rows


def hour_points(page: Page) -> list[dict[str, str]]:
    points: list[dict[str, str]] = page.locator("#day-chart .hour-point").evaluate_all(
        "(groups) => groups.map((g) => ({...g.dataset}))"
    )
    return points


def test_a_typed_day_is_simulated_and_shown_as_the_api_answers_it(page: Page, server: str) -> None:
    page.goto(f"{server}/plan?{PLAN}")
    rendered(page)
    request = run_day(page, recommend=True)
    assert page.locator("#day-panel").get_attribute("data-status") == "ready", page.locator("#day-error").inner_text()
    # The page asked about the plan's replica and the hours and policy as typed.
    assert request["model"] == "llama-3.1-8b" and request["gpu"] == "h100-sxm"
    assert [row["requests"] for row in request["forecast"]] == list(HOURS)
    assert request["policy"] == {"min_replicas": 1} and request["recommend"] is True
    assert (request["output_tokens"], request["tpot_slo_ms"]) == (4000, 15)
    status, data = post(server, "/v1/autoscaling/simulate", request)
    assert status == 200, data
    answer = json.loads(data)
    days = {
        "static": answer["static"],
        "autoscaled": answer["autoscaled"],
        "recommended": answer["recommendation"]["day"],
    }
    shown = table(page)
    assert set(shown) == set(days)
    for name, day in days.items():
        # The share missing an SLO as a percentage to two decimals, the GPU-hours to three figures.
        assert shown[name]["violation_rate"] == f"{day['violation_rate'] * 100:.2f}%"
        assert float(shown[name]["gpu_hours"].replace(",", "")) == pytest.approx(day["gpu_hours"], rel=5e-3)
    assert shown["static"]["replicas"] == str(answer["static"]["replicas"])
    points = hour_points(page)
    assert [int(p["requests"]) for p in points] == [h["requests"] for h in answer["autoscaled"]["per_hour"]]
    for name, day in days.items():
        assert [int(p[f"{name}Replicas"]) for p in points] == [h["replicas_max"] for h in day["per_hour"]]
        assert [float(p[f"{name}Violations"]) for p in points] == [h["violation_rate"] for h in day["per_hour"]]
    policy = page.locator("#day-policy").inner_text()
    assert answer["cold_start_basis"] in policy
    assert f"min_replicas {answer['recommendation']['policy']['min_replicas']}" in policy
    # At a phone's width the panel scrolls nothing sideways.
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)
    no_horizontal_scroll(page, PHONE["width"])
    page.set_viewport_size(VIEWPORT)


def test_a_refused_policy_shows_the_api_s_own_message(page: Page, server: str) -> None:
    page.goto(f"{server}/plan?{PLAN}")
    rendered(page)
    request = run_day(page, delay="-5")
    assert page.locator("#day-panel").get_attribute("data-status") == "error"
    status, data = post(server, "/v1/autoscaling/simulate", request)
    assert status == 422
    problem = json.loads(data)
    shown = page.locator("#day-error").inner_text()
    assert problem["detail"] in shown
    assert all(message in shown for message in problem["errors"]["policy.scale_up_delay_s"])
    assert page.locator("#day-results").is_hidden()

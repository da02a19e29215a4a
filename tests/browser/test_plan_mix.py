"""The planner's mixed-fleet plan kind in a real browser (Debian's Chromium, Playwright,
gunicorn over a freshly seeded SQLite catalog: conftest.py's fixtures).

README's "Mixed fleets" case (Llama 3.1 8B at 5M requests/day over L4, A100 and H100, 95%
100/100-token turns and 5% 120,000-token documents, TTFT 20 s and TPOT 60 ms) is entered from
the keyboard, and every figure the page shows is compared with what POST /v1/fleet answers for
the same inputs, asked directly here: no number of the answer is written in this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from .conftest import VIEWPORT
from .test_plan import ARTIFACTS, PHONE, fleet, form_body, leaving, no_horizontal_scroll, post, rendered, type_into

if TYPE_CHECKING:  # playwright may be missing: the fixtures (conftest.py) skip, or fail in CI
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

GPUS = ("l4", "a100-sxm-80gb", "h100-sxm")
BUCKETS = [(100, 100, 0.95), (120_000, 200, 0.05)]
BUCKETS_PASTE = "Prompt tokens\tOutput tokens\tShare\n" + "\n".join(f"{p}\t{o}\t{s}" for p, o, s in BUCKETS)
WORKLOAD = "model=llama-3.1-8b&requests_per_day=5000000&ttft_slo_ms=20000&tpot_slo_ms=60"
SIX_MONTHS = [(f"2026-0{i}", i * 1_000_000, None) for i in range(1, 7)]


def mix_body(page: Page, forecast: list[tuple[str, float, float | None]] | None = None) -> dict[str, Any]:
    """The request the form makes with the mixed kind, as the test spells it."""
    body = form_body(page, forecast)
    assert page.locator("#topology").input_value() == "mix"
    for name in ("gpu", "mig_profile", "tensor_parallel"):
        body.pop(name, None)
    ticked = page.locator("#gpu-choices input:checked").evaluate_all("(boxes) => boxes.map((b) => b.value)")
    if ticked:
        body["gpus"] = ticked
    body["mix"] = True
    body["length_buckets"] = [{"prompt_tokens": p, "output_tokens": o, "share": s} for p, o, s in BUCKETS]
    return body


def choose_mix(page: Page) -> None:
    """The plan kind, from the keyboard: the last choice of the select."""
    page.focus("#topology")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.locator("#topology").input_value() == "mix"


def tick_from_keyboard(page: Page, slugs: tuple[str, ...]) -> None:
    for slug in slugs:
        page.focus(f"#gpus-{slug}")
        page.keyboard.press("Space")
        assert page.locator(f"#gpus-{slug}").is_checked()


def paste_buckets(page: Page, text: str) -> None:
    page.focus("#length_buckets")
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.insert_text(text)


def mix_points(page: Page) -> list[dict[str, Any]]:
    points: list[dict[str, Any]] = page.locator("#fleet-chart .period-point").evaluate_all(
        """(groups) => groups.map((g) => ({
            period: g.dataset.period,
            gpus_total: Number(g.dataset.gpusTotal),
            pool_gpus_total: g.dataset.poolGpusTotal.split(',').map(Number),
            monthly_cost_usd: Number(g.dataset.monthlyCostUsd),
            circles: g.querySelectorAll('circle').length,
        }))"""
    )
    return points


def test_a_mix_entered_from_the_keyboard_is_shown_as_the_api_plans_it(page: Page, server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server}/plan?{WORKLOAD}")
    rendered(page)
    assert page.locator("#gpus-field").is_hidden() and page.locator("#length-buckets-field").is_hidden()
    choose_mix(page)
    rendered(page)
    assert parse_qs(urlsplit(page.url).query)["mix"] == ["true"]
    assert page.locator("#gpu-field").is_hidden() and page.locator("#tensor-parallel-field").is_hidden()
    assert page.locator("#gpus-field").is_visible() and page.locator("#length-buckets-field").is_visible()
    tick_from_keyboard(page, GPUS)
    paste_buckets(page, BUCKETS_PASTE)
    rendered(page)
    query = parse_qs(urlsplit(page.url).query)
    assert sorted(query["gpus"][0].split(",")) == sorted(GPUS)
    assert query["length_buckets"] == ["100:100:0.95;120000:200:0.05"]
    assert "2 buckets read; line 1 taken as a header" in page.locator("#length_buckets-read").inner_text()
    assert page.locator("#plan").get_attribute("data-topology") == "mix"

    body = mix_body(page)
    answer = fleet(server, body)
    mix = answer["mix"]
    assert mix["savings_usd"] > 0, "the case is built so that the mix must be strictly cheaper"

    # The fleet, the savings and the best single kind, as answered.
    assert page.locator("#gpus_total").get_attribute("data-value") == str(answer["gpus_total"])
    assert float(page.locator("#monthly_cost_usd").get_attribute("data-value") or "nan") == answer["monthly_cost_usd"]
    assert float(page.locator("#savings_usd").get_attribute("data-value") or "nan") == mix["savings_usd"]
    assert float(page.locator("#compare-savings").get_attribute("data-value") or "nan") == mix["savings_usd"]
    single = mix["single_kind"]
    beside = page.locator("#compare-single")
    assert float(beside.get_attribute("data-value") or "nan") == single["monthly_cost_usd"]
    assert beside.get_attribute("data-gpus-total") == str(single["gpus_total"])
    assert beside.get_attribute("data-gpu") == single["gpu"]
    assert beside.get_attribute("data-tensor-parallel") == str(single["tensor_parallel"])
    assert f"× {single['tensor_parallel']}" in beside.inner_text()
    assert float(page.locator("#compare-mix").get_attribute("data-value") or "nan") == mix["monthly_cost_usd"]

    # Each pool: kind, replicas, GPUs, cost and utilization at peak.
    rows = page.locator("#mix-pools-table tbody tr")
    assert rows.count() == len(mix["pools"]) >= 2
    for k, pool in enumerate(mix["pools"]):
        row = rows.nth(k)
        assert row.get_attribute("data-gpu") == pool["gpu"]
        assert row.get_attribute("data-tensor-parallel") == str(pool["tensor_parallel"])
        assert row.get_attribute("data-weight-precision") == pool["weight_precision"]
        assert row.get_attribute("data-replicas-peak") == str(pool["replicas_peak"])
        assert row.get_attribute("data-replicas-total") == str(pool["replicas_total"])
        assert row.get_attribute("data-gpus-total") == str(pool["gpus_total"])
        assert float(row.get_attribute("data-monthly-cost-usd") or "nan") == pool["monthly_cost_usd"]
        assert float(row.get_attribute("data-utilization-peak") or "nan") == pool["utilization_peak"]
    assert {pool["gpu"] for pool in mix["pools"]} <= set(GPUS)

    # Which pool serves which bucket, at what share and capacity.
    served = page.locator("#mix-assign-table tbody tr")
    expected = [(k, b) for k, pool in enumerate(mix["pools"]) for b in pool["buckets"]]
    assert served.count() == len(expected)
    for i, (k, b) in enumerate(expected):
        row = served.nth(i)
        assert row.get_attribute("data-pool") == str(k)
        assert row.get_attribute("data-bucket") == str(b["bucket"])
        assert float(row.get_attribute("data-share") or "nan") == b["share"]
        assert float(row.get_attribute("data-capacity-per-replica") or "nan") == b["capacity_per_replica"]
        assert float(row.get_attribute("data-requests-per-s") or "nan") == b["requests_per_s"]
        assert row.get_attribute("data-meets-slo") == str(b["meets_slo"]).lower()
    buckets = page.locator("#mix-buckets-table tbody tr")
    assert buckets.count() == len(mix["buckets"])
    for b, bucket in enumerate(mix["buckets"]):
        assert float(buckets.nth(b).get_attribute("data-peak-requests-per-s") or "nan") == bucket["peak_requests_per_s"]
        assert buckets.nth(b).get_attribute("data-flag") == "served"
    assert page.locator("#mix-flags li").count() == len(mix["unserved_buckets"]) + len(mix["dropped_buckets"])
    assert page.locator("#mix-solver").get_attribute("data-solver-status") == mix["solver_status"]
    assert mix["solver_status"] in page.locator("#mix-solver").inner_text()

    # One figure of traffic: one chart point, the total and each pool's GPUs.
    points = mix_points(page)
    assert len(points) == 1
    assert points[0]["gpus_total"] == mix["gpus_total"]
    assert points[0]["pool_gpus_total"] == [pool["gpus_total"] for pool in mix["pools"]]
    assert points[0]["circles"] == 1 + len(mix["pools"])
    assert page.locator("#mix-keys .key").count() == len(mix["pools"])

    # No latency curve, no ranking, no KEDA policy: each says why; /v1/latency is not asked.
    assert page.locator("#latency-charts").is_hidden()
    assert page.locator("#latency-pools").is_visible()
    assert page.locator("#plan").get_attribute("data-latency") == "mix"
    assert page.locator("#options-panel").is_hidden() and page.locator("#keda-snippet").is_hidden()
    assert "format=keda" in page.locator("#keda-mix").inner_text()
    # Each pool's vllm serve line, as answered, with its copy button.
    for k, pool in enumerate(mix["pools"]):
        assert page.locator(f"#mix-vllm-command-{k}").inner_text() == pool["vllm_command"]
        assert page.locator(f'#mix-vllm button.copy[data-copy="mix-vllm-command-{k}"]').count() == 1
    status, _ = post(server, "/v1/fleet?format=keda", body, accept="application/yaml")
    assert status == 422
    assert not [url for url in requests if "/v1/latency" in url and "mix" in url]

    # The API's own CSV: a row per pool.
    with page.expect_download() as download:
        page.focus("#download-csv")
        page.keyboard.press("Enter")
    status, csv = post(server, "/v1/fleet", body, accept="text/csv")
    assert status == 200
    assert Path(download.value.path()).read_bytes() == csv
    assert len(csv.decode().splitlines()) == 1 + len(mix["pools"])

    # The link reproduces the mix.
    again = page.context.new_page()
    try:
        again.goto(page.url)
        rendered(again)
        assert again.locator("#topology").input_value() == "mix"
        assert again.locator("#gpu-choices input:checked").count() == len(GPUS)
        assert again.locator("#length_buckets").input_value() == "100\t100\t0.95\n120000\t200\t0.05"
        assert float(again.locator("#savings_usd").get_attribute("data-value") or "nan") == mix["savings_usd"]
    finally:
        again.close()

    # Both widths without horizontal scrolling; screenshots of the mix view.
    ARTIFACTS.mkdir(exist_ok=True)
    no_horizontal_scroll(page, VIEWPORT["width"])
    page.screenshot(path=str(ARTIFACTS / "plan-mix-1280x800.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)  # the chart redraws for the new width
    no_horizontal_scroll(page, PHONE["width"])
    assert page.locator("#fleet-chart .period-point").count() == 1
    page.screenshot(path=str(ARTIFACTS / "plan-mix-390.png"), full_page=True)
    page.set_viewport_size(VIEWPORT)

    # Labels for screen readers on every control, the checkboxes included.
    unlabelled = page.evaluate(
        "[...document.querySelectorAll('input, select, textarea')]"
        ".filter((el) => el.labels.length === 0).map((el) => el.id)"
    )
    assert unlabelled == []

    # Back to one kind of replica: the aggregated view again.
    page.select_option("#topology", "aggregated")
    rendered(page)
    assert "mix" not in parse_qs(urlsplit(page.url).query)
    assert page.locator("#mix-panel").is_hidden() and page.locator("#options-panel").is_visible()
    assert page.locator("#gpu-field").is_visible() and page.locator("#gpus-field").is_hidden()
    assert leaving(requests, server) == [], leaving(requests, server)


def test_a_six_period_forecast_gives_six_points_as_the_api_s_periods(page: Page, server: str) -> None:
    text = ";".join(f"{p}:{r}" for p, r, _ in SIX_MONTHS)
    buckets = "100:100:0.95;120000:200:0.05"
    page.goto(f"{server}/plan?{WORKLOAD}&mix=true&gpus={','.join(GPUS)}&length_buckets={buckets}&forecast={text}")
    rendered(page)
    answer = fleet(server, mix_body(page, SIX_MONTHS))
    periods = answer["mix"]["periods"]
    assert len(periods) == 6
    points = mix_points(page)
    assert len(points) == 6
    for point, period in zip(points, periods, strict=True):
        assert point["period"] == period["period"]
        assert point["gpus_total"] == period["gpus_total"]
        assert point["monthly_cost_usd"] == period["monthly_cost_usd"]
        assert point["pool_gpus_total"] == period["pool_gpus_total"]
        assert point["circles"] == 1 + len(period["pool_gpus_total"])
    assert page.locator("#mix-periods-table tbody tr").count() == 6
    assert page.locator("#periods-table").is_hidden()
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)
    no_horizontal_scroll(page, PHONE["width"])
    assert len(mix_points(page)) == 6
    page.set_viewport_size(VIEWPORT)


def test_shares_not_summing_to_one_show_the_api_s_422_beside_the_buckets(page: Page, server: str) -> None:
    page.goto(f"{server}/plan?{WORKLOAD}&mix=true&gpus={','.join(GPUS)}&length_buckets=100:100:0.95;120000:200:0.05")
    rendered(page)
    type_into(page, "#length_buckets", "100,100,0.9\n120000,200,0.05")
    rendered(page, status="error")
    body = mix_body(page)
    body["length_buckets"][0]["share"] = 0.9
    status, data = post(server, "/v1/fleet", body)
    assert status == 422
    message = json.loads(data)["errors"]["length_buckets"][0]
    beside = page.locator("#length_buckets-error")
    assert beside.is_visible()
    assert message in beside.inner_text()
    assert page.locator("#length_buckets").get_attribute("aria-invalid") == "true"
    assert "422" in page.locator("#error").inner_text()

    # A bad cell is named by its pasted line.
    type_into(page, "#length_buckets", "100,100,0.95\n120000,-2,0.05")
    rendered(page, status="error")
    body["length_buckets"] = [
        {"prompt_tokens": 100, "output_tokens": 100, "share": 0.95},
        {"prompt_tokens": 120000, "output_tokens": -2, "share": 0.05},
    ]
    status, data = post(server, "/v1/fleet", body)
    assert status == 422
    message = json.loads(data)["errors"]["length_buckets.1.output_tokens"][0]
    assert f"Line 2, output_tokens: {message}" in beside.inner_text()

    # Fixing the shares plans again and clears the message.
    type_into(page, "#length_buckets", "100,100,0.95\n120000,200,0.05")
    rendered(page)
    assert beside.is_hidden()
    assert page.locator("#length_buckets").get_attribute("aria-invalid") is None

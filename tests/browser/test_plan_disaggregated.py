"""The planner's disaggregated plan kind in a real browser (Debian's Chromium, Playwright,
gunicorn over a freshly seeded SQLite catalog: conftest.py's fixtures).

The long-prompt workload of README's "Disaggregated prefill and decode" (Llama 3.1 8B on H100,
8,000-token prompts, 200-token answers, TTFT 1 s and TPOT 20 ms) is planned as two pools from
the page's "Plan kind" control, and every figure the page shows is compared with what
/v1/fleet answers for the same inputs, asked directly here: no number is written in this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from .conftest import VIEWPORT
from .test_plan import (
    ARTIFACTS,
    FORECAST,
    PASTE,
    PHONE,
    fleet,
    form_body,
    leaving,
    no_horizontal_scroll,
    paste_forecast,
    post,
    rendered,
    type_into,
)

if TYPE_CHECKING:  # playwright may be missing: the fixtures (conftest.py) skip, or fail in CI
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

# The long-prompt case, as the page's URL holds it (the aggregated kind, the default).
LONG_PROMPTS = (
    "model=llama-3.1-8b&gpu=h100-sxm&requests_per_day=2000000&peak_to_average=2"
    "&prompt_tokens=8000&output_tokens=200&ttft_slo_ms=1000&tpot_slo_ms=20&slo_percentile=95"
)
POOLS = (("prefill", "prefill_pool"), ("decode", "decode_pool"))


def disaggregated_body(page: Page, forecast: list[tuple[str, float, float | None]] | None = None) -> dict[str, Any]:
    """The request the form makes with the disaggregated kind, as the test spells it."""
    body = form_body(page, forecast)
    assert page.locator("#topology").input_value() == "disaggregated"
    body["topology"] = "disaggregated"
    if network := page.locator("#network_gb_per_s").input_value().strip():
        body["network_gb_per_s"] = float(network)
    return body


def choose_disaggregated(page: Page) -> None:
    """The plan kind, from the keyboard: the select's next choice."""
    page.focus("#topology")
    assert page.locator("#topology").input_value() == "aggregated"
    page.keyboard.press("ArrowDown")
    assert page.locator("#topology").input_value() == "disaggregated"


def figure(page: Page, pool: str, field: str) -> str:
    value = page.locator(f"#{pool}-pool dd[data-field={field}]").get_attribute("data-value")
    assert value is not None, (pool, field)
    return value


def pool_points(page: Page) -> list[dict[str, Any]]:
    points: list[dict[str, Any]] = page.locator("#fleet-chart .period-point").evaluate_all(
        """(groups) => groups.map((g) => ({
            period: g.dataset.period,
            gpus_average: Number(g.dataset.gpusAverage),
            gpus_peak: Number(g.dataset.gpusPeak),
            gpus_total: Number(g.dataset.gpusTotal),
            prefill_gpus_total: Number(g.dataset.prefillGpusTotal),
            decode_gpus_total: Number(g.dataset.decodeGpusTotal),
            monthly_cost_usd: Number(g.dataset.monthlyCostUsd),
            circles: g.querySelectorAll('circle').length,
        }))"""
    )
    return points


def test_two_pools_are_shown_as_the_api_plans_them(page: Page, server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server}/plan?{LONG_PROMPTS}")
    rendered(page)
    assert page.locator("#network-field").is_hidden()
    assert page.locator("#pools-panel").is_hidden()
    asked_before = len(requests)
    choose_disaggregated(page)
    rendered(page)
    assert parse_qs(urlsplit(page.url).query)["topology"] == ["disaggregated"]
    assert page.locator("#plan").get_attribute("data-topology") == "disaggregated"
    assert page.locator("#network-field").is_visible()

    body = disaggregated_body(page)
    answer = fleet(server, body)
    assert "replica" not in answer

    # Both pools: shape, size, cost and what bounds them, each as answered.
    for name, field in POOLS:
        pool = answer[field]
        replica = pool["replica"]
        assert figure(page, name, "gpu") == pool["gpu"] == "h100-sxm"
        assert figure(page, name, "tensor_parallel") == str(replica["tensor_parallel"])
        assert figure(page, name, "weight_precision") == replica["weight_precision"]
        assert figure(page, name, "gpus_total") == str(pool["gpus_total"])
        assert float(figure(page, name, "monthly_cost_usd")) == pool["monthly_cost_usd"]
        assert figure(page, name, "bound_by") == replica["bound_by"]
        assert float(figure(page, name, "max_request_rate")) == replica["max_request_rate"]
        assert float(figure(page, name, "utilization_peak")) == replica["utilization_peak"]
        assert figure(page, name, "optimistic") == str(replica["optimistic"]).lower()
        card = page.locator(f"#{name}-pool").inner_text()
        assert f"{pool['gpus_total']}" in card and replica["bound_by"] in card
    assert (
        float(figure(page, "prefill", "predicted_ttft_ms"))
        == answer["prefill_pool"]["replica"]["predicted"]["ttft_ms"]["p95"]
    )
    assert (
        float(figure(page, "decode", "predicted_tpot_ms"))
        == answer["decode_pool"]["replica"]["predicted"]["tpot_ms"]["p95"]
    )

    # The fleet, the P:D ratio, the transfer and TTFT = prefill + transfer against the SLO.
    assert page.locator("#gpus_total").get_attribute("data-value") == str(answer["gpus_total"])
    assert float(page.locator("#monthly_cost_usd").get_attribute("data-value") or "nan") == answer["monthly_cost_usd"]
    assert page.locator("#pd_ratio").get_attribute("data-value") == answer["pd_ratio"]
    assert page.locator("#pd_ratio").inner_text() == answer["pd_ratio"]
    transfer = page.locator("#kv-transfer")
    kv = answer["kv_transfer"]
    assert transfer.get_attribute("data-link") == kv["link"]
    assert float(transfer.get_attribute("data-ms") or "nan") == kv["ms"]
    assert float(transfer.get_attribute("data-gb-per-s-per-gpu") or "nan") == kv["gb_per_s_per_gpu"]
    assert float(transfer.get_attribute("data-ttft-ms") or "nan") == answer["ttft_ms"]
    assert float(page.locator("#ttft_total").get_attribute("data-value") or "nan") == answer["ttft_ms"]
    ttft_line = page.locator("#ttft-line").inner_text()
    assert "prefill" in ttft_line and "KV transfer" in ttft_line and "1,000 ms" in ttft_line

    # Beside it the aggregated plan, which is cheaper, and the API's own sentence why.
    aggregated = answer["aggregated"]
    beside = page.locator("#compare-aggregated")
    assert float(beside.get_attribute("data-value") or "nan") == aggregated["monthly_cost_usd"]
    assert beside.get_attribute("data-gpus-total") == str(aggregated["gpus_total"])
    ours = page.locator("#compare-disaggregated")
    assert float(ours.get_attribute("data-value") or "nan") == answer["monthly_cost_usd"]
    assert page.locator("#cheaper").get_attribute("data-cheaper") == (answer["cheaper"] or "")
    assert page.locator("#comparison").inner_text() == answer["comparison"]
    assert answer["pd_ratio"] in page.locator("#summary").inner_text()

    # One figure of traffic: one chart point, with each pool's GPUs.
    points = pool_points(page)
    assert len(points) == 1
    assert points[0]["circles"] == 5
    assert points[0]["gpus_total"] == answer["gpus_total"]
    assert points[0]["prefill_gpus_total"] == answer["prefill_pool"]["gpus_total"]
    assert points[0]["decode_gpus_total"] == answer["decode_pool"]["gpus_total"]
    assert page.locator("#fleet-chart-desc .key-prefill").is_visible()

    # Each pool's ranked options and its command; no KEDA policy, and why.
    for name, field in POOLS:
        pool = answer[field]
        assert page.locator(f"#{name}-options-table tbody tr").count() == len(pool["options"])
        cheapest = page.locator(f"#{name}-options-table tbody tr.cheapest")
        assert cheapest.get_attribute("data-gpus-total") == str(pool["gpus_total"])
        assert page.locator(f"#{name}-vllm-command").inner_text() == pool["vllm_command"]
        assert page.locator(f"#copy-{name}-vllm").is_visible()
        assert str(pool["autoscaling"]["max_replicas"]) in page.locator(f"#{name}-autoscaling").inner_text()
    assert page.locator("#options-panel").is_hidden()
    assert page.locator("#keda-snippet").is_hidden()
    assert "format=keda" in page.locator("#keda-pools").inner_text()
    status, _ = post(server, "/v1/fleet?format=keda", body, accept="application/yaml")
    assert status == 422

    # The latency panel says why it draws no curve, and the page asked /v1/latency nothing.
    assert page.locator("#latency-charts").is_hidden()
    assert page.locator("#latency-pools").is_visible()
    assert page.locator("#plan").get_attribute("data-latency") == "pools"
    assert not [url for url in requests[asked_before:] if "/v1/latency" in url]

    # Copying a pool's command from the keyboard (or selecting it where the clipboard is refused).
    page.focus("#copy-decode-vllm")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('copy-snippet-status').textContent !== ''")

    # The API's own CSV: one row per pool.
    with page.expect_download() as download:
        page.focus("#download-csv")
        page.keyboard.press("Enter")
    status, csv = post(server, "/v1/fleet", body, accept="text/csv")
    assert status == 200
    assert Path(download.value.path()).read_bytes() == csv
    assert [line.split(",")[0] for line in csv.decode().splitlines()[1:]] == ["prefill", "decode"]

    # The link reproduces the plan kind and the plan.
    again = page.context.new_page()
    try:
        again.goto(page.url)
        rendered(again)
        assert again.locator("#topology").input_value() == "disaggregated"
        assert again.locator("#pd_ratio").get_attribute("data-value") == answer["pd_ratio"]
    finally:
        again.close()

    # Both widths, without horizontal scrolling; screenshots of the disaggregated view.
    ARTIFACTS.mkdir(exist_ok=True)
    no_horizontal_scroll(page, VIEWPORT["width"])
    page.screenshot(path=str(ARTIFACTS / "plan-disaggregated-1280x800.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)  # the chart redraws for the new width
    no_horizontal_scroll(page, PHONE["width"])
    assert page.locator("#fleet-chart .period-point").count() == 1
    page.screenshot(path=str(ARTIFACTS / "plan-disaggregated-390.png"), full_page=True)
    page.set_viewport_size(VIEWPORT)

    # Back to one kind of replica: the aggregated view, its curve and its KEDA policy again.
    page.focus("#topology")
    page.keyboard.press("ArrowUp")
    rendered(page)
    assert parse_qs(urlsplit(page.url).query)["topology"] == ["aggregated"]
    single = fleet(server, form_body(page, None))
    assert page.locator("#pools-panel").is_hidden() and page.locator("#compare").is_hidden()
    assert page.locator("#options-panel").is_visible()
    assert page.locator("#chosen-option").get_attribute("data-gpu") == single["replica"]["gpu"]
    assert page.locator("#gpus_total").get_attribute("data-value") == str(single["gpus_total"])
    assert page.locator("#bound_by").inner_text() == single["replica"]["bound_by"]
    assert page.locator("#plan").get_attribute("data-latency") == "ready"
    assert page.locator("#ttft-chart .rate-point").count() > 5
    assert page.locator("#keda-yaml").inner_text().startswith("apiVersion")
    assert page.locator("#fleet-chart").get_attribute("data-pools") == "false"
    assert page.locator("#fleet-chart .period-point circle").count() == 3

    assert leaving(requests, server) == [], leaving(requests, server)


def test_a_forecast_sizes_both_pools_period_by_period(page: Page, server: str) -> None:
    page.goto(f"{server}/plan?{LONG_PROMPTS}&topology=disaggregated")
    rendered(page)
    paste_forecast(page, PASTE)
    rendered(page)
    answer = fleet(server, disaggregated_body(page, FORECAST))
    assert len(answer["periods"]) == 12
    points = pool_points(page)
    assert len(points) == 12
    assert [p["period"] for p in points] == [period for period, _, _ in FORECAST]
    fields = ("gpus_average", "gpus_peak", "gpus_total", "prefill_gpus_total", "decode_gpus_total", "monthly_cost_usd")
    for point, period in zip(points, answer["periods"], strict=True):
        assert point["circles"] == 5
        for field in fields:
            assert point[field] == period[field], (field, point, period)
    assert len({p["gpus_total"] for p in points}) > 1, "a growing forecast should need more GPUs over the year"
    rows = page.locator("#periods-table tbody tr")
    assert rows.count() == 12
    first = rows.first.locator("td").all_text_contents()  # in a closed <details>
    assert str(answer["periods"][0]["prefill_gpus_total"]) in first
    assert str(answer["periods"][0]["decode_gpus_total"]) in first
    assert page.locator("#periods-table thead .col-pool").first.get_attribute("hidden") is None
    # The pools as the API sized them on the busiest period.
    for name, field in POOLS:
        assert figure(page, name, "gpus_total") == str(answer[field]["gpus_total"])
    assert "busiest period" in page.locator("#gpus_note").inner_text()

    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)
    no_horizontal_scroll(page, PHONE["width"])
    assert len(pool_points(page)) == 12
    page.set_viewport_size(VIEWPORT)


def test_a_network_of_zero_shows_the_api_s_422_beside_its_field(page: Page, server: str) -> None:
    page.goto(f"{server}/plan?{LONG_PROMPTS}&topology=disaggregated")
    rendered(page)
    type_into(page, "#network_gb_per_s", "0")
    rendered(page, status="error")
    assert "network_gb_per_s=0" in page.url

    status, data = post(server, "/v1/fleet", disaggregated_body(page))
    assert status == 422
    problem = json.loads(data)
    message = problem["errors"]["network_gb_per_s"][0]
    beside = page.locator("#network_gb_per_s-error")
    assert beside.is_visible()
    assert message in beside.inner_text()
    assert page.locator("#network_gb_per_s").get_attribute("aria-invalid") == "true"
    assert page.locator("#topology-error").is_hidden()
    assert "422" in page.locator("#error").inner_text()

    # A real bandwidth plans again, with the transfer the API answers for it.
    type_into(page, "#network_gb_per_s", "12.5")
    rendered(page)
    assert beside.is_hidden()
    assert page.locator("#network_gb_per_s").get_attribute("aria-invalid") is None
    answer = fleet(server, disaggregated_body(page))
    assert float(page.locator("#kv-transfer").get_attribute("data-ms") or "nan") == answer["kv_transfer"]["ms"]
    assert page.locator("#kv-transfer").get_attribute("data-link") == answer["kv_transfer"]["link"]

    # The bandwidth is the disaggregated kind's alone: hidden, and not sent, with one kind of replica.
    page.select_option("#topology", "aggregated")
    rendered(page)
    assert page.locator("#network-field").is_hidden()


def test_the_ideal_engine_with_two_pools_shows_the_api_s_422_beside_the_plan_kind(page: Page, server: str) -> None:
    page.goto(f"{server}/plan?{LONG_PROMPTS}&topology=disaggregated")
    rendered(page)
    page.focus("#engine")
    page.select_option("#engine", "ideal")
    rendered(page, status="error")
    assert "engine=ideal" in page.url

    status, data = post(server, "/v1/fleet", disaggregated_body(page))
    assert status == 422
    problem = json.loads(data)
    message = problem["errors"]["topology"][0]
    beside = page.locator("#topology-error")
    assert beside.is_visible()
    assert message in beside.inner_text()
    assert page.locator("#topology").get_attribute("aria-invalid") == "true"
    assert problem["detail"] in page.locator("#error").inner_text()

    # One kind of replica runs on the ideal engine: the message goes.
    page.focus("#topology")
    page.keyboard.press("ArrowUp")
    rendered(page)
    assert beside.is_hidden()
    assert page.locator("#topology").get_attribute("aria-invalid") is None


def test_the_whole_catalog_ranked_per_pool_from_the_keyboard(page: Page, server: str) -> None:
    query = LONG_PROMPTS.replace("gpu=h100-sxm", "gpu=any") + "&topology=disaggregated"
    page.goto(f"{server}/plan?{query}")
    rendered(page)
    unlabelled = page.evaluate(
        "[...document.querySelectorAll('input, select, textarea')]"
        ".filter((el) => el.labels.length === 0).map((el) => el.id)"
    )
    assert unlabelled == []
    unnamed = page.evaluate(
        "[...document.querySelectorAll('button')]"
        ".filter((b) => !(b.getAttribute('aria-label') || b.textContent.trim())).length"
    )
    assert unnamed == 0
    # The bandwidth follows the plan kind in the tab order.
    page.focus("#topology")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "network_gb_per_s"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "model"

    answer = fleet(server, disaggregated_body(page))
    for name, field in POOLS:
        pool = answer[field]
        rows = page.locator(f"#{name}-options-table tbody tr")
        assert rows.count() == len(pool["options"])
        assert str(pool["options_total"]) in page.locator(f"#{name}-options-count").inner_text()
        assert figure(page, name, "gpu") == pool["gpu"]
    assert page.locator("#prefill-options").get_attribute("open") is not None

    # The decode pool's table opens from the keyboard; sorting it leaves the prefill's order alone.
    assert page.locator("#decode-options-table").is_hidden()
    page.focus("#decode-options summary")
    page.keyboard.press("Enter")
    page.wait_for_selector("#decode-options-table", state="visible")
    cost = page.locator("#decode-options-table thead button[data-key=monthly_cost_usd]")
    cost.focus()
    page.keyboard.press("Enter")
    # The sort lands on the next frame: wait for it rather than race it.
    page.wait_for_selector("#decode-options-table thead th[aria-sort=ascending] button[data-key=monthly_cost_usd]")
    assert page.locator("#decode-options-table thead th[aria-sort=ascending] button").get_attribute("data-key") == (
        "monthly_cost_usd"
    )
    assert page.locator("#prefill-options-table thead th[aria-sort=ascending] button").get_attribute("data-key") == (
        "rank"
    )

    # "Plan on it" in a pool's table plans both pools on that GPU.
    prefill = answer["prefill_pool"]
    other = next(o for o in prefill["options"] if o["eligible"] and o["gpu"] != prefill["gpu"] and not o["mig_profile"])
    button = page.locator(f'#prefill-options-table tbody tr[data-gpu="{other["gpu"]}"] button.pick').first
    assert "both pools" in (button.get_attribute("aria-label") or "")
    button.focus()
    page.keyboard.press("Enter")
    rendered(page)
    assert parse_qs(urlsplit(page.url).query)["gpu"] == [other["gpu"]]
    replanned = fleet(server, disaggregated_body(page))
    for name, field in POOLS:
        assert figure(page, name, "gpu") == replanned[field]["gpu"] == other["gpu"]
        assert figure(page, name, "gpus_total") == str(replanned[field]["gpus_total"])


@pytest.mark.parametrize(
    "query",
    [
        f"{LONG_PROMPTS}&topology=disaggregated",
        "model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=200&output_tokens=800&topology=disaggregated",
        "model=llama-3.1-405b&gpu=any&ttft_slo_ms=50&tpot_slo_ms=5&topology=disaggregated",
    ],
    ids=["long-prompts", "chat", "slo-unmet"],
)
def test_no_horizontal_scrolling_with_two_pools(page: Page, server: str, query: str) -> None:
    for viewport in (VIEWPORT, PHONE):
        page.set_viewport_size(viewport)
        page.goto(f"{server}/plan?{query}")
        rendered(page)
        no_horizontal_scroll(page, viewport["width"])
        assert page.locator("#pools-panel").is_visible()
    answer = fleet(server, disaggregated_body(page))
    assert page.locator("#cheaper").get_attribute("data-cheaper") == (answer["cheaper"] or "")
    assert page.locator("#comparison").inner_text() == answer["comparison"]
    page.set_viewport_size(VIEWPORT)

"""The fleet planner in a real browser: Debian's Chromium, driven by Playwright, against
gunicorn serving a freshly migrated and seeded SQLite catalog (the fixtures are conftest.py's).

Every figure the page shows is compared with the API's own answer for the same inputs, asked
directly by the test, never with a number written here: engine profiles are refitted as data
arrives, and the page must follow them.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from .conftest import VIEWPORT

if TYPE_CHECKING:  # playwright may be missing: the fixtures (conftest.py) skip, or fail in CI
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
PHONE = {"width": 390, "height": 844}

# Twelve months as a spreadsheet copies them: a header, tabs, thousands separators, and a peak
# ratio on some rows only.
FORECAST = [
    ("2026-01", 1_200_000, None),
    ("2026-02", 1_350_000, None),
    ("2026-03", 1_500_000, 2.8),
    ("2026-04", 1_700_000, None),
    ("2026-05", 1_900_000, None),
    ("2026-06", 2_200_000, 3.0),
    ("2026-07", 2_400_000, None),
    ("2026-08", 2_600_000, None),
    ("2026-09", 3_000_000, None),
    ("2026-10", 3_400_000, None),
    ("2026-11", 3_900_000, 3.2),
    ("2026-12", 4_500_000, None),
]
PASTE = "Month\tRequests per day\tPeak ratio\n" + "\n".join(
    f"{period}\t{requests:,}" + (f"\t{peak}" if peak is not None else "") for period, requests, peak in FORECAST
)

# The form's fields as /v1/fleet names them; the test builds its own request from what the
# form shows, to ask the API the same question the page asked.
NUMBER_FIELDS = [
    "prompt_tokens",
    "output_tokens",
    "prompt_tokens_cv",
    "output_tokens_cv",
    "ttft_slo_ms",
    "tpot_slo_ms",
    "slo_percentile",
    "burstiness",
    "spare_replicas",
    "zones",
    "headroom",
    "price_per_gpu_hour_usd",
    "peak_to_average",
]


# --- talking to the API directly ---------------------------------------------------------------


def post(server: str, path: str, body: dict[str, Any], accept: str = "application/json") -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"{server}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": accept},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def fleet(server: str, body: dict[str, Any]) -> Any:
    status, data = post(server, "/v1/fleet", body)
    assert status == 200, data
    return json.loads(data)


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def form_body(page: Page, forecast: list[tuple[str, float, float | None]] | None) -> dict[str, Any]:
    """The request the form's values make, as the test spells it."""
    body: dict[str, Any] = {
        "model": page.locator("#model").input_value(),
        "engine": page.locator("#engine").input_value(),
    }
    gpu = page.locator("#gpu").input_value()
    if gpu != "any":
        body["gpu"], _, mig = gpu.partition("|")
        if mig:
            body["mig_profile"] = mig
    for name in ("tensor_parallel", "weight_precision"):
        if value := page.locator(f"#{name}").input_value():
            body[name] = int(value) if name == "tensor_parallel" else value
    for name in NUMBER_FIELDS:
        if value := page.locator(f"#{name}").input_value().strip():
            body[name] = float(value)
    if body.get("burstiness", 1) != 1:
        body["arrival"] = "gamma"
    if forecast is None:
        body["requests_per_day"] = float(page.locator("#requests_per_day").input_value())
    else:
        body["forecast"] = [
            {"period": p, "requests_per_day": r, **({"peak_to_average": k} if k is not None else {})}
            for p, r, k in forecast
        ]
    return body


# --- reading the page ----------------------------------------------------------------------------


def rendered(page: Page, status: str | None = "ready") -> None:
    """Wait until the page shows the answers for the state its URL holds."""
    page.wait_for_function(
        """() => {
            const plan = document.getElementById('plan');
            return ['ready', 'error'].includes(plan.dataset.status)
                && plan.dataset.renderedQuery === location.search.slice(1);
        }"""
    )
    if status is not None:
        assert page.locator("#plan").get_attribute("data-status") == status, page.locator("#error").inner_text()


def chart_points(page: Page) -> list[dict[str, Any]]:
    points: list[dict[str, Any]] = page.locator("#fleet-chart .period-point").evaluate_all(
        """(groups) => groups.map((g) => ({
            period: g.dataset.period,
            gpus_average: Number(g.dataset.gpusAverage),
            gpus_peak: Number(g.dataset.gpusPeak),
            gpus_total: Number(g.dataset.gpusTotal),
            monthly_cost_usd: Number(g.dataset.monthlyCostUsd),
            circles: g.querySelectorAll('circle').length,
        }))"""
    )
    return points


def no_horizontal_scroll(page: Page, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll}px wide in a {width}px viewport"


def type_into(page: Page, selector: str, text: str) -> None:
    page.focus(selector)
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.type(text)


def paste_forecast(page: Page, text: str) -> None:
    """Choose the forecast from the keyboard and paste into its box, as a clipboard would."""
    page.focus("#traffic-one")
    page.keyboard.press("ArrowRight")  # radio group: the next choice, checked
    assert page.locator("#traffic-forecast").is_checked()
    page.locator("#forecast").fill(text)


def leaving(requests: list[str], server: str) -> list[str]:
    host = urlsplit(server).netloc
    return [url for url in requests if not url.startswith(("data:", "blob:")) and urlsplit(url).netloc != host]


# --- the planner ---------------------------------------------------------------------------------


def test_a_pasted_forecast_is_planned_as_the_api_plans_it(page: Page, server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server}/plan")
    rendered(page)
    page.select_option("#gpu", "h100-sxm")
    rendered(page)
    paste_forecast(page, PASTE)
    rendered(page)
    assert "12 periods read" in page.locator("#forecast-read").inner_text()
    assert "line 1 taken as a header" in page.locator("#forecast-read").inner_text()

    # Twelve points, and the same GPUs and costs as /v1/fleet answers for the same inputs.
    body = form_body(page, FORECAST)
    answer = fleet(server, body)
    points = chart_points(page)
    assert len(points) == 12
    assert all(point["circles"] == 3 for point in points)
    assert [p["period"] for p in points] == [period for period, _, _ in FORECAST]
    for point, period in zip(points, answer["periods"], strict=True):
        for field in ("gpus_average", "gpus_peak", "gpus_total", "monthly_cost_usd"):
            assert point[field] == period[field], (point, period)
    assert len({p["gpus_total"] for p in points}) > 1, "a growing forecast should need more GPUs over the year"
    assert page.locator("#periods-table tbody tr").count() == 12

    # The chosen option and why, as answered.
    replica = answer["replica"]
    chosen = page.locator("#chosen-option")
    assert chosen.get_attribute("data-gpu") == replica["gpu"] == "h100-sxm"
    assert chosen.get_attribute("data-tensor-parallel") == str(replica["tensor_parallel"])
    assert page.locator("#bound_by").inner_text() == replica["bound_by"]
    assert page.locator("#gpus_total").get_attribute("data-value") == str(answer["gpus_total"])
    assert page.locator("#why").get_attribute("data-optimistic") == str(replica["optimistic"]).lower()
    assert answer["basis"] in page.locator("#uncertainty").inner_text()
    # The fleet's range: the plan at either end of the engine's throughput spread, as answered.
    spread = page.locator("#uncertainty")
    low, high = answer["uncertainty"]["gpus_total"]
    assert (spread.get_attribute("data-gpus-low"), spread.get_attribute("data-gpus-high")) == (str(low), str(high))
    assert answer["uncertainty_basis"] in spread.inner_text()
    # On a named GPU the table holds its shapes (the answer's alternatives).
    assert page.locator("#options-table tbody tr").count() == len(answer["alternatives"])

    # The latency curve of that replica, from /v1/latency, with the planned operating point.
    latency_urls = [url for url in requests if "/v1/latency?" in url]
    assert latency_urls
    latency = get(latency_urls[-1])
    asked = parse_qs(urlsplit(latency_urls[-1]).query)
    assert asked["gpu"] == [replica["gpu"]] and asked["tensor_parallel"] == [str(replica["tensor_parallel"])]
    assert asked["slo_percentile"] == [str(int(body["slo_percentile"]))]
    percentile = f"p{int(latency['slo_percentile'])}"
    for chart, metric in (("#ttft-chart", "ttft_ms"), ("#tpot-chart", "tpot_ms")):
        stable = [row for row in latency["rates"] if row["stable"] and row[metric]["p50"] is not None]
        assert page.locator(f"{chart} .rate-point").count() == len(stable) > 5
        operating = page.locator(f"{chart} .operating")
        rate = float(operating.get_attribute("data-rate") or "nan")
        assert rate == pytest.approx(replica["predicted"]["request_rate"], rel=1e-4)
        at_rate = next(row for row in latency["rates"] if row["request_rate"] == pytest.approx(rate, rel=1e-9))
        assert float(operating.get_attribute("data-value") or "nan") == pytest.approx(at_rate[metric][percentile])
        assert page.locator(f"{chart} .slo").count() == 1
    assert float(page.locator("#ttft-chart .slo").get_attribute("data-slo-ms") or 0) == body["ttft_slo_ms"]

    # The deployables are the API's own.
    assert page.locator("#vllm-command").inner_text() == answer["vllm_command"]
    status, keda = post(server, "/v1/fleet?format=keda", body, accept="application/yaml")
    assert status == 200
    assert page.locator("#keda-yaml").inner_text().strip() == keda.decode().strip()
    with page.expect_download() as download:
        page.focus("#download-csv")
        page.keyboard.press("Enter")
    status, csv = post(server, "/v1/fleet", body, accept="text/csv")
    assert status == 200
    assert Path(download.value.path()).read_bytes() == csv
    assert csv.decode().count("\n") >= 13  # a header and twelve periods

    # The link holds the forecast, compactly, and reproduces the plan.
    assert "forecast=2026-01:1200000;2026-02:1350000;2026-03:1500000:2.8;" in page.url
    again = page.context.new_page()
    try:
        again.goto(page.url)
        rendered(again)
        assert chart_points(again) == points
    finally:
        again.close()

    no_horizontal_scroll(page, VIEWPORT["width"])
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "plan-1280x800.png"), full_page=True)

    # Any GPU: the ranking's cheapest option is the one chosen and the one highlighted.
    page.select_option("#gpu", "any")
    rendered(page)
    body.pop("gpu")
    ranking = fleet(server, body)
    best = ranking["options"][0]
    eligible = [o for o in ranking["options"] if o["eligible"]]
    bounds = [o["monthly_cost_usd"] if o["sized"] else o["monthly_cost_usd_at_least"] for o in eligible]
    assert best["sized"] and best["monthly_cost_usd"] == min(bounds)
    assert chosen.get_attribute("data-gpu") == ranking["replica"]["gpu"] == best["gpu"]
    assert (chosen.get_attribute("data-mig-profile") or None) == best["mig_profile"]
    assert page.locator("#gpus_total").get_attribute("data-value") == str(ranking["gpus_total"])
    assert float(page.locator("#monthly_cost_usd").get_attribute("data-value") or "nan") == ranking["monthly_cost_usd"]
    rows = page.locator("#options-table tbody tr")
    assert rows.count() == len(ranking["options"])
    cheapest = page.locator("#options-table tbody tr.cheapest")
    assert cheapest.count() == 1
    assert cheapest.get_attribute("data-gpu") == best["gpu"]
    assert (cheapest.get_attribute("data-mig-profile") or None) == best["mig_profile"]
    assert float(cheapest.get_attribute("data-monthly-cost-usd") or "nan") == best["monthly_cost_usd"]
    assert "cheapest" in cheapest.inner_text()
    # A row left at a bound shows its GPUs and cost as lower bounds, not as sized, and says it was
    # not sized where a sized row says whether it meets the SLOs; the reason sits behind a
    # disclosure so that every row stays one line, its dollars formatted.
    unsized = next(o for o in ranking["options"] if o["eligible"] and not o["sized"])
    row = rows.nth(ranking["options"].index(unsized))
    assert row.get_attribute("data-sized") == "false"
    assert row.locator(".col-gpus_total").inner_text() == f"at least {unsized['gpus_total_at_least']:,}"
    assert row.locator(".col-monthly_cost_usd").inner_text().startswith("at least $")
    assert row.locator(".col-meets_slo").inner_text() == "not sized"
    assert cheapest.locator(".col-meets_slo").inner_text() == "yes"
    reason = row.locator(".col-meets_slo details")
    assert reason.locator("summary").inner_text() == "not sized"
    assert not reason.locator("p").is_visible()
    reason.locator("summary").click()
    assert reason.locator("p").inner_text() == unsized["why"] and "$" in unsized["why"]
    reason.locator("summary").click()
    heights = rows.evaluate_all("(rs) => rs.map((r) => r.getBoundingClientRect().height)")
    line = page.locator("#options-table tbody tr th").first.evaluate(
        "(th) => parseFloat(getComputedStyle(th).lineHeight) || 20"
    )
    assert max(heights) < 3 * line, heights
    # A GPU generation the engine has no measured row for is marked a guess, row by row.
    shown = rows.evaluate_all("(rs) => rs.map((r) => r.dataset.measuredGeneration)")
    assert shown == [{True: "true", False: "false", None: "null"}[o["measured_generation"]] for o in ranking["options"]]
    for index, option in enumerate(ranking["options"]):
        assert (rows.nth(index).locator(".badge.guess").count() == 1) is (option["measured_generation"] is False)
    assert [p["gpus_total"] for p in chart_points(page)] == [p["gpus_total"] for p in ranking["periods"]]

    # Sorting from the keyboard: by cost, then the other way.
    cost_button = page.locator("#options-table thead button[data-key=monthly_cost_usd]")
    cost_button.focus()
    page.keyboard.press("Enter")
    costs = [float(c) for c in rows.evaluate_all("(rs) => rs.map((r) => r.dataset.monthlyCostUsd || 'Infinity')")]
    assert costs == sorted(costs)
    sorted_by = page.locator("#options-table thead th[aria-sort=ascending] button")
    assert sorted_by.get_attribute("data-key") == "monthly_cost_usd"
    assert page.evaluate("document.activeElement.dataset.key") == "monthly_cost_usd"
    page.keyboard.press("Enter")
    costs = [float(c) for c in rows.evaluate_all("(rs) => rs.map((r) => r.dataset.monthlyCostUsd || 'Infinity')")]
    assert costs == sorted(costs, reverse=True)

    # A row's button plans again on its GPU.
    other = next(o for o in ranking["options"] if o["eligible"] and o["gpu"] != best["gpu"])
    button = page.locator(f'#options-table tbody tr[data-gpu="{other["gpu"]}"] button.pick').first
    button.focus()
    page.keyboard.press("Enter")
    rendered(page)
    assert parse_qs(urlsplit(page.url).query)["gpu"] == [other["gpu"]]
    assert chosen.get_attribute("data-gpu") == other["gpu"]
    on_other = {**body, "gpu": other["gpu"]}
    if other["mig_profile"]:
        on_other["mig_profile"] = other["mig_profile"]
    replanned = fleet(server, on_other)
    assert page.locator("#gpus_total").get_attribute("data-value") == str(replanned["gpus_total"])

    # Nothing the page asked for left this machine.
    assert requests
    assert leaving(requests, server) == [], leaving(requests, server)


def test_a_bad_forecast_row_shows_the_api_s_own_message_beside_the_box(page: Page, server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server}/plan?gpu=h100-sxm")
    rendered(page)
    bad = [*FORECAST]
    bad[3] = ("2026-04", -1_700_000, None)
    text = "\n".join(f"{p}\t{r}" + (f"\t{k}" if k is not None else "") for p, r, k in bad)  # no header
    paste_forecast(page, text)
    rendered(page, status="error")

    status, data = post(server, "/v1/fleet", form_body(page, bad))
    assert status == 422
    problem = json.loads(data)
    message = problem["errors"]["forecast.3.requests_per_day"][0]
    beside = page.locator("#forecast-error")
    assert beside.is_visible()
    assert message in beside.inner_text()
    assert "Line 4" in beside.inner_text() and "2026-04" in beside.inner_text()
    assert page.locator("#forecast").get_attribute("aria-invalid") == "true"
    assert "422" in page.locator("#error").inner_text()
    assert problem["detail"] in page.locator("#error").inner_text()

    # Fixing the row from the keyboard clears the message.
    page.locator("#forecast").fill(PASTE)
    rendered(page)
    assert beside.is_hidden()
    assert page.locator("#forecast").get_attribute("aria-invalid") is None
    assert leaving(requests, server) == []


CONTROLS_IN_TAB_ORDER = [
    "skip-link",
    "lab-link",
    "topology",
    "model",
    "gpu",
    "tensor_parallel",
    "weight_precision",
    "engine",
    "prompt_tokens",
    "prompt_tokens_cv",
    "output_tokens",
    "output_tokens_cv",
    "ttft_slo_ms",
    "tpot_slo_ms",
    "slo_percentile",
    "burstiness",
    "spare_replicas",
    "zones",
    "headroom",
    "price_per_gpu_hour_usd",
    "traffic-one",
]


def test_keyboard_labels_and_both_widths(page: Page, server: str) -> None:
    query = "gpu=any&forecast=" + ";".join(f"{p}:{r}" + (f":{k}" if k else "") for p, r, k in FORECAST)
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
    visited = []
    for _ in CONTROLS_IN_TAB_ORDER:
        page.keyboard.press("Tab")
        visited.append(
            page.evaluate(
                "(() => { const el = document.activeElement; const style = getComputedStyle(el);"
                " return {id: el.id, outline: style.outlineStyle, width: style.outlineWidth}; })()"
            )
        )
    # In a radio group Tab reaches the checked choice: here the forecast.
    expected = [*CONTROLS_IN_TAB_ORDER[:-1], "traffic-forecast"]
    assert [v["id"] for v in visited] == expected
    for v in visited:
        assert v["outline"] != "none" and v["width"] != "0px", f"no focus ring on #{v['id']}"
    # Requests per day is off while a forecast is given: the peak ratio, then the forecast's box.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "peak_to_average"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "forecast"
    assert page.locator("#options-table button.sort").count() == 7

    # A select moved by the keyboard alone re-plans.
    page.focus("#slo_percentile")
    page.keyboard.press("ArrowDown")  # p95 -> p99
    rendered(page)
    assert "slo_percentile=99" in page.url
    assert page.locator("#key-pslo").inner_text().startswith("p99")

    no_horizontal_scroll(page, VIEWPORT["width"])
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)  # the charts redraw for the new width
    no_horizontal_scroll(page, PHONE["width"])
    assert page.locator("#fleet-chart .period-point").count() == 12
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "plan-390.png"), full_page=True)
    page.set_viewport_size(VIEWPORT)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "model=llama-3.1-70b&gpu=a100-sxm-80gb&zones=3&spare_replicas=2&headroom=0.2&burstiness=0.5",
        "model=qwen3-30b-a3b&gpu=a100-sxm-80gb&mig_profile=3g.40gb&requests_per_day=100000",
        "model=llama-3.1-405b&gpu=any&ttft_slo_ms=50&tpot_slo_ms=5",
    ],
    ids=["defaults", "zones-and-burst", "mig-slice", "slo-unmet"],
)
def test_no_horizontal_scrolling_at_either_width(page: Page, server: str, query: str) -> None:
    for viewport in (VIEWPORT, PHONE):
        page.set_viewport_size(viewport)
        page.goto(f"{server}/plan?{query}")
        rendered(page, status=None)
        no_horizontal_scroll(page, viewport["width"])
    page.set_viewport_size(VIEWPORT)


def post_log(server: str, text: str, query: str) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{server}/v1/traces?{query}", data=text.encode(), headers={"Content-Type": "text/plain"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


# A morning's requests: one every 20 to 40 s, lengths that vary, some prompt tokens cached.
LOG = "timestamp,prompt_tokens,output_tokens,cached_tokens\n" + "\n".join(
    f"{1_796_112_000 + 20 * i + 7 * (i % 3)},{800 + 150 * (i % 7)},{120 + 40 * (i % 5)},{300 * (i % 2)}"
    for i in range(400)
)


def test_a_pasted_request_log_sets_the_traffic_as_v1_traces_reads_it(page: Page, server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server}/plan?gpu=h100-sxm")
    rendered(page)
    page.locator("#log-field summary").click()
    page.locator("#request_log").fill(LOG)
    page.locator("#read-log").click()
    page.wait_for_function("() => document.getElementById('request_log-read').textContent.startsWith('Read ')")
    rendered(page)
    model = page.locator("#model").input_value()
    status, trace = post_log(server, LOG, f"model={model}")
    assert status == 200
    plan = trace["fleet_request"]
    assert page.locator("#requests_per_day").input_value() == str(round(plan["requests_per_day"]))
    assert page.locator("#prompt_tokens").input_value() == str(plan["prompt_tokens"])
    assert page.locator("#output_tokens").input_value() == str(plan["output_tokens"])
    assert float(page.locator("#peak_to_average").input_value()) == pytest.approx(plan["peak_to_average"], abs=0.005)
    assert float(page.locator("#prompt_tokens_cv").input_value()) == pytest.approx(plan["prompt_tokens_cv"], abs=0.005)
    read = page.locator("#request_log-read").inner_text()
    assert f"{trace['requests']} requests" in read
    assert "prefix-cache hits" in read
    assert f"requests_per_day={round(plan['requests_per_day'])}" in page.url

    # A bad row: the API's own message, naming the line, beside the box.
    bad = LOG.replace("\n1796112054,", "\n1796112054x,", 1)
    page.locator("#request_log").fill(bad)
    page.locator("#read-log").click()
    beside = page.locator("#request_log-error")
    beside.wait_for(state="visible")
    status, problem = post_log(server, bad, f"model={model}")
    assert status == 422
    assert problem["detail"] in beside.inner_text()
    assert "line 4, column timestamp" in beside.inner_text()
    assert leaving(requests, server) == []


LABEL_BOXES = """(svg) => [svg.querySelector('.slo-label'), svg.querySelector('.point-label')].map((t) => {
    if (!t) return null;
    const r = t.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
})"""


@pytest.mark.parametrize("width", [VIEWPORT["width"], 390])
@pytest.mark.parametrize(
    "query",
    [
        "gpu=h100-sxm",  # the planned point sits just under the TPOT SLO, beside its label
        "gpu=h100-sxm&tpot_slo_ms=60&ttft_slo_ms=800",
        "gpu=a100-sxm-80gb&model=llama-3.1-70b",
    ],
)
def test_a_latency_chart_s_point_label_never_overlaps_its_slo_label(
    page: Page, server: str, query: str, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
    page.goto(f"{server}/plan?{query}")
    rendered(page)
    for chart in ("#ttft-chart", "#tpot-chart"):
        slo, point = page.locator(chart).evaluate(LABEL_BOXES)
        if slo is None or point is None:
            continue
        apart = slo[2] <= point[0] or point[2] <= slo[0] or slo[3] <= point[1] or point[3] <= slo[1]
        assert apart, f"{chart}: the SLO label {slo} overlaps the point label {point}"

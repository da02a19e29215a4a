"""The inference lab in a real browser: Debian's Chromium, driven by Playwright, against
gunicorn serving a freshly migrated and seeded SQLite catalog (the fixtures are conftest.py's).

Replays the seed lab's batching walk-through (seed 000): Llama 3.1 8B on one H100 with
256-token prompts and 64-token answers, concurrency moved from 1 to 64 by keyboard reads
≈6.9 → ≈7.9 ms per token and the crossover at ≈411; at 2,048/512 the crossover is gone.
The lab starts on the API's default engine (vllm), as /plan and the API answer; the seed's
figures are `engine=ideal` (the seeds' arithmetic); an engine's figures and ranges are checked
against the API's own answer, since engine profiles are refitted as data arrives.

Chromium comes from Debian (`make test` installs it); no browser is ever downloaded. Where
it is missing the tests skip, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import json
import re
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
SEED_TOLERANCE = 0.02  # the seed's figures are rounded; the page must be within 2% of them


# --- reading the page -------------------------------------------------------------------------


def rendered(page: Page, status: str | None = "ready") -> None:
    """Wait until the page shows the answer for the state its URL holds (with `status`,
    unless None)."""
    page.wait_for_function(
        """() => {
            const lab = document.getElementById('lab');
            return ['ready', 'error'].includes(lab.dataset.status)
                && lab.dataset.renderedQuery === location.search.slice(1);
        }"""
    )
    if status is not None:
        assert page.locator("#lab").get_attribute("data-status") == status, page.locator("#error").inner_text()


def number(page: Page, selector: str) -> float:
    """The number shown in an element: "8,120" -> 8120, "$0.211" -> 0.211."""
    text = page.locator(selector).text_content() or ""
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", text)
    assert match, f"{selector} shows no number: {text!r}"
    return float(match.group().replace(",", ""))


def near(value: float, seed: float) -> bool:
    return abs(value - seed) <= SEED_TOLERANCE * seed


def type_into(page: Page, selector: str, text: str) -> None:
    """Replace a field's value from the keyboard."""
    page.focus(selector)
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.type(text)


def no_horizontal_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= VIEWPORT["width"], f"the page is {width}px wide at {VIEWPORT['width']}×{VIEWPORT['height']}"


# --- the seed's walk-through ------------------------------------------------------------------


def test_batching_walkthrough_reads_the_seed_figures(page: Page, server: str) -> None:
    page.goto(f"{server}/lab?engine=ideal")
    rendered(page)
    page.select_option("#model", "llama-3.1-8b")
    page.select_option("#gpu", "h100-sxm")
    type_into(page, "#prompt_tokens", "256")
    type_into(page, "#output_tokens", "64")
    type_into(page, "#price_per_gpu_hour_usd", "3")  # the seed's example rate
    type_into(page, "#concurrency_value", "1")
    rendered(page)

    at_one = number(page, "#time_per_token_ms")
    assert near(at_one, 6.9), f"{at_one} ms per token at 1"
    assert near(number(page, "#tokens_per_s"), 145)
    assert near(number(page, "#cost_per_million_output_tokens_usd"), 5.83)

    page.focus("#concurrency")
    for _ in range(63):
        page.keyboard.press("ArrowRight")
    rendered(page)
    assert page.locator("#concurrency").input_value() == "64"
    assert page.locator("#concurrency_value").input_value() == "64"
    assert "concurrency=64" in page.url

    at_64 = number(page, "#time_per_token_ms")
    assert near(at_64, 7.9), f"{at_64} ms per token at 64"
    assert near(number(page, "#tokens_per_s"), 8100)
    assert near(number(page, "#cost_per_million_output_tokens_usd"), 0.21)
    crossover_label = page.locator("#crossover text").text_content()
    crossover = number(page, "#crossover text")
    assert near(crossover, 411), crossover_label
    assert page.locator("#crossover-line").get_attribute("stroke-dasharray")
    box = page.locator("#crossover-line").bounding_box()  # a vertical line: no width, full height
    assert box is not None and box["height"] > 100, box
    assert "411" in page.locator("#crossover-note").inner_text()
    no_horizontal_scroll(page)

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lab.png"), full_page=True)
    readings = {"ms_per_token_at_1": at_one, "ms_per_token_at_64": at_64, "crossover": crossover_label}

    # The link reproduces the view.
    link = page.url
    again = page.context.new_page()
    try:
        again.goto(link)
        rendered(again)
        assert again.locator("#model").input_value() == "llama-3.1-8b"
        assert again.locator("#gpu").input_value() == "h100-sxm"
        assert again.locator("#prompt_tokens").input_value() == "256"
        assert again.locator("#output_tokens").input_value() == "64"
        assert again.locator("#concurrency").input_value() == "64"
        assert again.locator("#time_per_token_ms").inner_text() == page.locator("#time_per_token_ms").inner_text()
        assert again.locator("#crossover text").text_content() == crossover_label
    finally:
        again.close()

    # Long contexts: KV reads grow with every request, so decode never turns compute-bound.
    type_into(page, "#prompt_tokens", "2048")
    type_into(page, "#output_tokens", "512")
    rendered(page)
    assert page.locator("#crossover-line").count() == 0
    assert page.locator("#crossover-note").get_attribute("data-crossover") == ""
    assert near(number(page, "#time_per_token_ms"), 15.1)
    assert page.locator("#ttft_unit").inner_text() == "s"
    assert near(number(page, "#ttft"), 4.4)
    no_horizontal_scroll(page)
    page.screenshot(path=str(ARTIFACTS / "lab-long-context.png"), full_page=True)
    readings["ms_per_token_at_64_long_context"] = number(page, "#time_per_token_ms")
    (ARTIFACTS / "readings.json").write_text(
        json.dumps(readings, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


# --- keyboard, layout, errors -----------------------------------------------------------------


CONTROLS_IN_TAB_ORDER = [
    "skip-link",
    "plan-link",
    "model",
    "gpu",
    "weight_precision",
    "kv_precision",
    "tensor_parallel",
    "prompt_tokens",
    "output_tokens",
    "concurrency_value",
    "concurrency",
    "engine",
    "memory_efficiency",
    "compute_efficiency",
    "price_per_gpu_hour_usd",
    "copy-link",
    "reset",
]


def test_keyboard_reaches_every_control_in_order_with_a_visible_focus(page: Page, server: str) -> None:
    page.goto(f"{server}/lab")
    rendered(page)
    unlabelled = page.evaluate(
        "[...document.querySelectorAll('input, select, output')]"
        ".filter((el) => el.tagName !== 'OUTPUT' && el.labels.length === 0).map((el) => el.id)"
    )
    assert unlabelled == []
    visited: list[dict[str, Any]] = []
    for _ in CONTROLS_IN_TAB_ORDER:
        page.keyboard.press("Tab")
        visited.append(
            page.evaluate(
                "(() => { const el = document.activeElement; const style = getComputedStyle(el);"
                " return {id: el.id, outline: style.outlineStyle, width: style.outlineWidth}; })()"
            )
        )
    assert [v["id"] for v in visited] == CONTROLS_IN_TAB_ORDER
    for v in visited:
        assert v["outline"] != "none" and v["width"] != "0px", f"no focus ring on #{v['id']}"

    # A select driven from the keyboard alone: the next model, and the page follows.
    before = page.locator("#model").input_value()
    page.focus("#model")
    page.keyboard.press("ArrowDown")
    rendered(page)
    after = page.locator("#model").input_value()
    assert after != before
    assert f"model={after}" in page.url


@pytest.mark.parametrize(
    "query",
    [
        "",
        "model=llama-3.1-70b&tensor_parallel=1&concurrency=600",
        "model=qwen3-30b-a3b&gpu=a100-sxm-80gb&mig_profile=1g.10gb%2Bme&concurrency=32",
        "model=llama-3.1-8b&gpu=h100-sxm&concurrency=100000&prompt_tokens=131072",
        "model=llama-3.1-8b&gpu=h100-sxm&tensor_parallel=3&prompt_tokens=0",
        "model=llama-3.1-8b&gpu=h100-sxm&engine=trtllm&concurrency=64",
    ],
    ids=["defaults", "weights-do-not-fit", "mig-slice", "huge", "errors", "engine"],
)
def test_no_horizontal_scrolling_at_1280x800(page: Page, server: str, query: str) -> None:
    page.goto(f"{server}/lab?{query}")
    rendered(page, status=None)
    no_horizontal_scroll(page)


def test_api_errors_show_their_detail_and_the_valid_gpu_counts(page: Page, server: str) -> None:
    page.goto(f"{server}/lab?model=llama-3.1-8b&gpu=h100-sxm&tensor_parallel=3")
    rendered(page, status="error")
    error = page.locator("#error")
    assert error.is_visible()
    assert "422" in error.inner_text()
    assert "tensor_parallel 3 is not valid" in error.inner_text()
    no_horizontal_scroll(page)
    # The page asks /v1/fit for the valid sizes, so the error can be fixed from the select.
    page.wait_for_function("() => document.querySelectorAll('#tensor_parallel option[value=\"2\"]').length === 1")
    page.select_option("#tensor_parallel", "2")
    rendered(page)
    assert error.is_hidden()
    assert number(page, "#memory-note") == 2  # "2 × 80 GB …"

    page.goto(f"{server}/lab?model=no-such-model")
    rendered(page, status="error")
    assert "404" in page.locator("#error").inner_text()
    assert "no-such-model" in page.locator("#error").inner_text()


# --- serving engines --------------------------------------------------------------------------


SEED_VIEW = "model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=256&output_tokens=64&concurrency=64"
RANGES = ["#time_per_token_ms_range", "#ttft_range", "#tokens_per_s_range", "#kv_capacity_tokens_range"]


def api(server: str, path: str, query: str = "") -> Any:
    """The service's own answer, as the page would get it."""
    with urllib.request.urlopen(f"{server}/v1/{path}?{query}", timeout=30) as response:
        return json.load(response)


def page_query(page: Page) -> str:
    query: str = page.evaluate("location.search.slice(1)")
    return query


def numbers(page: Page, selector: str) -> list[float]:
    """Every number shown in an element: "range 10.8–17.9 ms" -> [10.8, 17.9]."""
    text = page.locator(selector).text_content() or ""
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def shows_share(page: Page, selector: str, share: float) -> bool:
    """An output shows `share` as a percentage (to the tenth of a percent it is written with)."""
    return abs(number(page, selector) - share * 100) <= 0.051


def test_switching_the_engine_changes_the_figures_and_ideal_restores_the_seed(page: Page, server: str) -> None:
    planning: list[str] = []
    page.on("request", lambda r: planning.append(r.url) if re.search(r"/v1/(throughput|fit)\?", r.url) else None)
    page.goto(f"{server}/lab?{SEED_VIEW}")
    rendered(page)
    # The API's default engine by default, as /plan and /v1/throughput answer without one, and it says so.
    engine = page.locator("#engine")
    assert engine.input_value() == "vllm"
    assert parse_qs(page_query(page))["engine"] == ["vllm"]
    assert "the API's default engine" in page.locator("#engine-hint").inner_text()
    assert api(server, "throughput", SEED_VIEW)["engine"] == "vllm"

    # The seeds' arithmetic by name, and the engines the API lists after it.
    page.goto(f"{server}/lab?{SEED_VIEW}&engine=ideal")
    rendered(page)
    assert engine.input_value() == "ideal"
    assert "not a bound" in page.locator("#engine-hint").inner_text()
    assert page.locator("label[for=engine]").inner_text() == "Serving engine"
    listed = [item["name"] for item in api(server, "engines")["items"]]
    assert "vllm" in listed
    assert engine.locator("option").evaluate_all("os => os.map((o) => o.value)") == ["ideal", *listed]
    assert engine.locator("option[value=ideal]").inner_text() == "ideal (seed arithmetic)"
    assert parse_qs(page_query(page))["engine"] == ["ideal"]
    seed_text = page.locator("#time_per_token_ms").inner_text()
    assert near(number(page, "#time_per_token_ms"), 7.9), seed_text
    for selector in RANGES:
        assert page.locator(selector).is_hidden(), selector
    assert "no error bars" in page.locator("#uncertainty-note").inner_text()

    page.select_option("#engine", "vllm")
    rendered(page)
    query = page_query(page)
    params = parse_qs(query)
    assert params["engine"] == ["vllm"]
    # vLLM's fitted efficiencies stand: the seeds' 0.7 and 0.5 are not sent behind its back.
    assert "memory_efficiency" not in params and "compute_efficiency" not in params
    body = api(server, "throughput", query)
    assert body["engine"] == "vllm" and body["uncertainty"], body.get("uncertainty_basis")
    vllm_text = page.locator("#time_per_token_ms").inner_text()
    assert vllm_text != seed_text
    assert near(number(page, "#time_per_token_ms"), body["time_per_token_ms"])

    # Its ranges, beside the figures they bound, and what they are.
    tpot_range = page.locator("#time_per_token_ms_range")
    assert tpot_range.is_visible()
    assert re.fullmatch(r"range [\d.,]+–\s*to\s*[\d.,]+ ms", (tpot_range.inner_text() or "").replace("\n", " "))
    low, high = numbers(page, "#time_per_token_ms_range")
    assert near(low, body["uncertainty"]["time_per_token_ms"][0]), (low, body["uncertainty"])
    assert near(high, body["uncertainty"]["time_per_token_ms"][1]), (high, body["uncertainty"])
    for selector in RANGES:
        assert page.locator(selector).is_visible(), selector
    low, high = numbers(page, "#kv_capacity_tokens_range")
    kv_low, kv_high = body["uncertainty"]["kv_capacity_tokens"]
    assert near(low, kv_low) and near(high, kv_high), (low, high, kv_low, kv_high)
    assert body["uncertainty_basis"] in page.locator("#uncertainty-note").inner_text()
    assert "milliseconds per token (range" in (page.locator("#summary").text_content() or "")

    # The sliders show the efficiencies vLLM answered with, marked as its own.
    for field in ("memory_efficiency", "compute_efficiency"):
        assert shows_share(page, f"#{field}_out", body[field]), (field, body[field])
        assert page.locator(f"#{field}_out").get_attribute("data-source") == "engine"
        assert "fitted" in (page.locator(f"#{field}").get_attribute("aria-valuetext") or "")
    assert "vLLM" in page.locator("#engine-hint").inner_text()
    assert "vLLM" in page.locator("#efficiency-source").inner_text()
    no_horizontal_scroll(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lab-vllm.png"), full_page=True)

    # The link keeps the engine.
    again = page.context.new_page()
    try:
        again.goto(page.url)
        rendered(again)
        assert again.locator("#engine").input_value() == "vllm"
        assert again.locator("#time_per_token_ms").inner_text() == vllm_text
    finally:
        again.close()

    # Back to ideal from the keyboard alone: the seeds' efficiencies and figure return.
    page.focus("#engine")
    for _ in range(listed.index("vllm") + 1):
        page.keyboard.press("ArrowUp")
    rendered(page)
    assert engine.input_value() == "ideal"
    params = parse_qs(page_query(page))
    assert params["engine"] == ["ideal"]
    assert params["memory_efficiency"] == ["0.7"] and params["compute_efficiency"] == ["0.5"]
    assert page.locator("#time_per_token_ms").inner_text() == seed_text
    assert page.locator("#memory_efficiency_out").inner_text() == "70%"
    assert page.locator("#compute_efficiency_out").inner_text() == "50%"
    for selector in RANGES:
        assert page.locator(selector).is_hidden(), selector

    # Every planning request the page made said which engine it meant.
    assert planning
    sent = [parse_qs(urlsplit(url).query).get("engine") for url in planning]
    assert all(value and value[0] in ("ideal", *listed) for value in sent), planning
    assert {"ideal", "vllm"} <= {value[0] for value in sent if value}  # the keyboard passed the others


def test_under_an_engine_an_efficiency_is_sent_only_once_its_slider_moves(page: Page, server: str) -> None:
    page.goto(f"{server}/lab?{SEED_VIEW}&engine=vllm")
    rendered(page)
    fitted = api(server, "throughput", page_query(page))
    fitted_text = page.locator("#time_per_token_ms").inner_text()
    button = page.locator("#efficiency-own")
    assert button.is_hidden()

    page.focus("#memory_efficiency")
    page.keyboard.press("ArrowLeft")
    rendered(page)
    params = parse_qs(page_query(page))
    assert "memory_efficiency" in params and "compute_efficiency" not in params
    body = api(server, "throughput", page_query(page))
    assert body["memory_efficiency"] == float(params["memory_efficiency"][0]) < fitted["memory_efficiency"]
    assert body["compute_efficiency"] == fitted["compute_efficiency"]  # still vLLM's own
    assert page.locator("#memory_efficiency_out").get_attribute("data-source") == "set"
    assert page.locator("#compute_efficiency_out").get_attribute("data-source") == "engine"
    assert page.locator("#time_per_token_ms").inner_text() != fitted_text
    assert button.is_visible() and "vLLM" in button.inner_text()

    # The button gives the engine its values back, and keeps the keyboard where it was.
    page.focus("#efficiency-own")
    page.keyboard.press("Enter")
    rendered(page)
    params = parse_qs(page_query(page))
    assert "memory_efficiency" not in params and params["engine"] == ["vllm"]
    assert page.locator("#time_per_token_ms").inner_text() == fitted_text
    assert button.is_hidden()
    assert page.evaluate("document.activeElement.id") == "memory_efficiency"

    # Another engine does not inherit what was set for the last one.
    page.focus("#memory_efficiency")
    page.keyboard.press("ArrowLeft")
    rendered(page)
    page.select_option("#engine", "sglang")
    rendered(page)
    params = parse_qs(page_query(page))
    assert params["engine"] == ["sglang"] and "memory_efficiency" not in params


def test_the_gpu_count_recovery_asks_fit_under_the_same_engine(page: Page, server: str) -> None:
    fits: list[str] = []
    page.on("request", lambda r: fits.append(r.url) if "/v1/fit?" in r.url else None)
    page.goto(f"{server}/lab?model=llama-3.1-8b&gpu=h100-sxm&tensor_parallel=3&engine=sglang")
    rendered(page, status="error")
    assert page.locator("#engine").input_value() == "sglang"
    page.wait_for_function("() => document.querySelectorAll('#tensor_parallel option[value=\"2\"]').length === 1")
    assert fits and all(parse_qs(urlsplit(url).query).get("engine") == ["sglang"] for url in fits), fits

"""/docs in a real browser with no way out: Debian's Chromium, driven by Playwright, where
every request to the service's origin is answered in-process by the Flask app and every
other request is refused and recorded. Swagger UI must render the operations from
/openapi.yaml, ask nothing of any other host, and trip no Content-Security-Policy rule.

Chromium comes from Debian (`make test` installs it); where it is missing the test skips,
except in CI (CI=true), where it fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

try:
    from playwright.sync_api import Route, sync_playwright
except ImportError:  # reported by the fixture: a skip here, a failure in CI
    sync_playwright = None

from tests.support import CHROMIUM, CHROMIUM_FLAGS, browser_unavailable

pytestmark = pytest.mark.browser

ORIGIN = "http://fleet-sizer.test"
RENDER_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if sync_playwright is None:
        browser_unavailable("playwright is not installed")
    if not CHROMIUM.exists():
        browser_unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


def test_docs_render_offline_from_this_service_alone(app: Flask, browser: Any) -> None:
    client = app.test_client()
    elsewhere: list[str] = []
    served: list[str] = []

    def answer(route: Route) -> None:
        request = route.request
        if not request.url.startswith(ORIGIN + "/"):
            elsewhere.append(request.url)
            route.abort()
            return
        path = request.url[len(ORIGIN) :]
        with client.open(path, method=request.method, headers=request.headers, data=request.post_data_buffer) as r:
            served.append(path)
            route.fulfill(status=r.status_code, headers=dict(r.headers), body=r.get_data())

    context = browser.new_context()
    context.route("**/*", answer)
    page = context.new_page()
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
    try:
        page.goto(f"{ORIGIN}/docs", wait_until="load")
        page.locator(".opblock-summary-path", has_text="/v1/fit").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        title = page.locator(".info .title").inner_text()
    finally:
        context.close()

    assert elsewhere == [], "the page asked other hosts"
    assert "/openapi.yaml" in served
    assert {"/v1/fit", "/v1/fleet", "/readyz", "/docs"} <= {p.strip().replace("\u200b", "") for p in paths}
    assert "Fleet Sizer" in title
    assert not [e for e in console_errors if "Content Security Policy" in e or "Refused" in e], console_errors

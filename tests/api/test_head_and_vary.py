"""HEAD answers like GET without a body on every GET route (spreadsheets' import-by-URL,
`curl -I` and uptime monitors send HEAD first), and every answer whose format the Accept
header chose says `Vary: Accept`, so a shared cache never hands CSV to a JSON client."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

# One URL per GET route of the app (test_every_get_route_is_listed keeps this complete).
GET_URLS = {
    "/healthz": "/healthz",
    "/livez": "/livez",
    "/readyz": "/readyz",
    "/metrics": "/metrics",
    "/v1/fit": "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=2048&output_tokens=512",
    "/v1/throughput": "/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&concurrency=8",
    "/v1/cost": "/v1/cost?price_per_gpu_hour_usd=2.5&tokens_per_s=1000",
    "/v1/roofline": "/v1/roofline?m=4096&n=4096&k=4096&gpu=h100-sxm",
    "/v1/latency": "/v1/latency?model=llama-3.1-8b&gpu=h100-sxm&rates=1,2",
    "/v1/batch": "/v1/batch?model=llama-3.2-1b&gpu=h100-sxm&requests=16",
    "/v1/fleet": "/v1/fleet?model=llama-3.2-1b&gpu=h100-sxm&requests_per_day=1e5",
    # A GET without a forecast (POST only) is a 422: HEAD answers the same 422 without its body.
    "/v1/autoscaling/simulate": "/v1/autoscaling/simulate?model=llama-3.1-8b&gpu=h100-sxm",
    "/v1/models": "/v1/models",
    "/v1/models/<slug>": "/v1/models/llama-3.1-8b",
    "/v1/gpus": "/v1/gpus",
    "/v1/gpus/<slug>": "/v1/gpus/h100-sxm",
    "/v1/engines": "/v1/engines",
    "/v1/engines/<name>": "/v1/engines/vllm",
    "/v1/calibrations": "/v1/calibrations",
    "/v1/calibrations/<int:calibration_id>": "/v1/calibrations/1",
    "/": "/",
    "/lab": "/lab",
    "/plan": "/plan",
    "/openapi.yaml": "/openapi.yaml",
    "/docs": "/docs",
    "/docs/<path:filename>": "/docs/swagger-ui.css",
    "/static/<path:filename>": "/static/common/style.css",
}
# Headers that differ between any two requests.
PER_REQUEST = {"X-Request-ID", "Date"}
# Answers whose body changes from one request to the next (the counters count the first one).
CHANGING = {"/metrics"}
# Every answer rendered by app/api/render.py: JSON, or CSV when Accept asks for it.
BY_ACCEPT = [
    "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm",
    "/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm",
    "/v1/cost?price_per_gpu_hour_usd=2.5&tokens_per_s=1000",
    "/v1/fleet?model=llama-3.2-1b&gpu=h100-sxm&requests_per_day=1e5",
    "/v1/models",
    "/v1/models/llama-3.1-8b",
    "/v1/calibrations",
]


def test_every_get_route_is_listed(app: Flask) -> None:
    routes = {rule.rule for rule in app.url_map.iter_rules() if "GET" in (rule.methods or set())}
    assert routes == set(GET_URLS)


@pytest.mark.parametrize("url", sorted(GET_URLS.values()))
def test_head_answers_like_get_without_a_body(client: FlaskClient, url: str) -> None:
    get = client.get(url)
    body = get.data
    head = client.head(url)
    get.close()  # a static file's answer holds the file open until closed
    head.close()
    assert head.status_code == get.status_code, head.headers
    assert head.data == b""
    ignored = PER_REQUEST | ({"Content-Length"} if url in CHANGING else set())
    assert {k: v for k, v in head.headers.items() if k not in ignored} == {
        k: v for k, v in get.headers.items() if k not in ignored
    }
    if url not in CHANGING:
        assert int(head.headers["Content-Length"]) == len(body)


def test_head_on_a_planning_route_is_not_415(client: FlaskClient) -> None:
    """The planning views read a HEAD's query string as a GET's, not a JSON body."""
    head = client.head(GET_URLS["/v1/fit"] + "&format=csv")
    assert head.status_code == 200
    assert head.mimetype == "text/csv"
    head = client.head("/v1/fit?model=llama-3.1-8b&gpu=no-such-gpu")
    assert head.status_code == 404 and head.mimetype == "application/problem+json"


def test_head_follows_accept(client: FlaskClient) -> None:
    head = client.head(GET_URLS["/v1/fit"], headers={"Accept": "text/csv"})
    assert head.status_code == 200 and head.mimetype == "text/csv"


@pytest.mark.parametrize("url", BY_ACCEPT)
@pytest.mark.parametrize("accept", ["application/json", "text/csv", "*/*"])
def test_an_answer_chosen_by_accept_varies_on_accept(client: FlaskClient, url: str, accept: str) -> None:
    response = client.get(url, headers={"Accept": accept})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert "Accept" in response.vary


@pytest.mark.parametrize("url", BY_ACCEPT)
def test_without_an_accept_header_the_answer_still_varies_on_it(client: FlaskClient, url: str) -> None:
    response = client.get(url)
    assert response.mimetype == "application/json" and "Accept" in response.vary


@pytest.mark.parametrize("url", BY_ACCEPT)
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_an_answer_chosen_by_format_does_not_vary_on_accept(client: FlaskClient, url: str, fmt: str) -> None:
    separator = "&" if "?" in url else "?"
    response = client.get(f"{url}{separator}format={fmt}", headers={"Accept": "text/csv"})
    assert response.status_code == 200
    assert response.mimetype == {"json": "application/json", "csv": "text/csv"}[fmt]
    assert "Accept" not in response.vary


def test_a_remembered_answer_keeps_its_vary(client: FlaskClient) -> None:
    """The planning memo replays stored headers: the second GET comes from it."""
    url = GET_URLS["/v1/throughput"]
    first, second = client.get(url), client.get(url)
    assert first.data == second.data
    assert "Accept" in second.vary

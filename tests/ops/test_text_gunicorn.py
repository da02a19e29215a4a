"""Against real gunicorn, on SQLite and on PostgreSQL: a lone UTF-16 surrogate in a JSON body
(text no driver or CSV writer can encode) is a 422 naming the field, on a CSV planning answer
and on a catalog write, never a 500; a MIG layout no card can hold is
a 422 naming the profile's field, a params_total its shape cannot hold one naming params_total
(item 3)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.server import Server, running_server
from tests.catalog.conftest import drop_everything, postgres_url_or_skip

pytestmark = pytest.mark.slow
TOKEN = "surrogate-test-token-0123456789"
INLINE_GPU = '"memory_gb": 80, "memory_bandwidth_tb_per_s": 3.35, "peak_tflops": {"bf16": 989}'


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"API_TOKENS": TOKEN}
    if request.param == "postgresql":
        url = postgres_url_or_skip()
        drop_everything(url)
        env["DATABASE_URL"] = url
    workdir: Path = tmp_path_factory.mktemp(f"text-{request.param}")
    with running_server(1, workdir=workdir, env=env) as live:
        yield live


def post(server: Server, path: str, raw_body: str, method: str = "POST") -> tuple[int, dict[str, str], dict]:
    request = urllib.request.Request(
        server.base_url + path,
        data=raw_body.encode("ascii"),  # the escape travels as ASCII: the parser makes the surrogate
        method=method,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}", "Connection": "close"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), json.loads(error.read())


@pytest.mark.parametrize(
    ("path", "raw_body", "field"),
    [
        (
            "/v1/fit?format=csv",
            '{"model": "llama-3.1-8b", "gpu": {"name": "card \\ud800", ' + INLINE_GPU + "}}",
            "gpu.name",
        ),
        (
            "/v1/fleet?format=csv",
            '{"model": "llama-3.1-8b", "gpu": "h100-sxm", "requests_per_day": 1e6, '
            '"forecast": [{"period": "\\udc00", "requests_per_day": 1e6}]}',
            "forecast.0.period",
        ),
        ("/v1/gpus", '{"slug": "card-x", "name": "Card \\ud800", ' + INLINE_GPU + "}", "name"),
        ("/v1/models/llama-3.1-8b", '{"notes": "\\udfff"}', "notes"),
    ],
)
def test_a_lone_surrogate_is_a_422_naming_the_field(server: Server, path: str, raw_body: str, field: str) -> None:
    method = "PATCH" if path.startswith("/v1/models/") else "POST"
    status, headers, body = post(server, path, raw_body, method)
    assert status == 422, body
    assert headers["Content-Type"].startswith("application/problem+json")
    assert list(body["errors"]) == [field]
    # Nothing was written, and the service still answers.
    status, _, _ = server.get("/v1/gpus/card-x")
    assert status == 404
    assert server.get("/healthz")[0] == 200


def test_a_mig_layout_the_card_cannot_hold_is_a_422_naming_the_profile(server: Server) -> None:
    # Seven instances of the whole card (8/8 of its memory each) on one H100-sized card.
    profile = '{"name": "7g.80gb", "compute_slices": 7, "memory_slices": 8, "memory_gb": 80, "max_instances": 7}'
    card = (
        '{"slug": "seven-cards", "name": "Seven cards", "vendor": "nvidia", "gpus_per_node": 8, '
        '"source": "test", "memory_gb": 80, "memory_bandwidth_tb_per_s": 3.35, "peak_tflops": {"bf16": 989}, '
        '"mig_profiles": [' + profile + "]}"
    )
    status, _, body = post(server, "/v1/gpus", card)
    assert status == 422, body
    assert list(body["errors"]) == ["mig_profiles.0.max_instances"]
    assert server.get("/v1/gpus/seven-cards")[0] == 404


def test_a_params_total_its_shape_cannot_hold_is_a_422_naming_it(server: Server) -> None:
    # Llama 3.1 8B's shape with params_total 1,000: what the model "fitted" an L4 with.
    shape = (
        '{"slug": "thousand", "name": "Thousand", "family": "llama", "params_total": 1000, "layers": 32, '
        '"hidden_size": 4096, "attention_heads": 32, "kv_heads": 8, "vocab_size": 128256, '
        '"intermediate_size": 14336, "source": "test"}'
    )
    status, _, body = post(server, "/v1/models", shape)
    assert status == 422, body
    assert list(body["errors"]) == ["params_total"]
    assert server.get("/v1/models/thousand")[0] == 404

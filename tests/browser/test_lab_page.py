"""The lab's files as the app serves them, without a browser: the routes, the assets, and
what the page keeps of its own (the precisions, the name of the seeds' arithmetic) against
the sizing core's."""

from __future__ import annotations

import re
from pathlib import Path

from flask.testing import FlaskClient

from app.sizing.engine import DEFAULT_ENGINE, IDEAL
from app.sizing.precision import PRECISIONS

STATIC = Path(__file__).resolve().parents[2] / "app" / "static"
LAB = STATIC / "lab"
COMMON = STATIC / "common"
IMPORT = r'(?:from|import)\s*\(?\s*"([^"]+)"'


def test_the_front_page_redirects_to_the_lab(client: FlaskClient) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/lab")


def test_the_lab_is_html_that_loads_its_module_from_static(client: FlaskClient) -> None:
    with client.get("/lab") as response:
        assert response.status_code == 200
        assert response.mimetype == "text/html"
        html = response.get_data(as_text=True)
        assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    assert '<script type="module" src="static/lab/main.js">' in html
    shared = html.index('<link rel="stylesheet" href="static/common/base.css">')
    assert shared < html.index('<link rel="stylesheet" href="static/lab/lab.css">'), "base.css comes first"
    assert "http://" not in html and "https://" not in html, "no CDN: every asset is served here"


def test_every_lab_asset_is_served_with_its_type(client: FlaskClient) -> None:
    """The lab's own files and the shared ones in static/common/ it loads."""
    types = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
    files = [path for folder in (LAB, COMMON) for path in sorted(folder.iterdir())]
    assert {path.parent.name for path in files} == {"lab", "common"}
    for path in files:
        with client.get(f"/static/{path.parent.name}/{path.name}") as response:
            assert response.status_code == 200, path.name
            assert response.mimetype == types[path.suffix], path.name


def test_module_imports_stay_inside_the_lab_or_common() -> None:
    """The lab imports its own modules (./) and the shared ones (../common/), which import only
    each other; every module imported exists."""
    for path in LAB.glob("*.js"):
        for target in re.findall(IMPORT, path.read_text(encoding="utf-8")):
            inside = target.startswith("./") or re.fullmatch(r"\.\./common/[\w-]+\.js", target)
            assert inside and (LAB / target).exists(), f"{path.name} imports {target}"
    for path in COMMON.glob("*.js"):
        for target in re.findall(IMPORT, path.read_text(encoding="utf-8")):
            assert target.startswith("./") and (COMMON / target).exists(), f"common/{path.name} imports {target}"


def test_the_lab_offers_exactly_the_precisions_the_api_accepts() -> None:
    source = (LAB / "state.js").read_text(encoding="utf-8")
    match = re.search(r"PRECISIONS = Object\.freeze\(\[([^\]]*)\]\)", source)
    assert match, "state.js lost its PRECISIONS list"
    offered = re.findall(r'"([^"]+)"', match.group(1))
    assert sorted(offered) == sorted(PRECISIONS)


def test_the_lab_starts_on_the_api_s_default_engine_and_names_ideal_as_the_core_does() -> None:
    """The lab opens as the API and /plan answer, on the service's default engine; the seeds'
    arithmetic is named as the core names it, and the page offers it before the listed engines
    load."""
    state = (LAB / "state.js").read_text(encoding="utf-8")
    match = re.search(r'export const IDEAL = "([^"]+)"', state)
    assert match, "state.js lost its IDEAL name"
    assert match.group(1) == IDEAL
    default = re.search(r'export const API_DEFAULT_ENGINE = "([^"]+)"', state)
    assert default and default.group(1) == DEFAULT_ENGINE
    assert re.search(r"^\s*engine: API_DEFAULT_ENGINE,$", state, re.MULTILINE), "DEFAULTS.engine is not the API's"
    html = (LAB / "index.html").read_text(encoding="utf-8")
    assert '<label for="engine">' in html
    assert f'<option value="{IDEAL}">' in html


def test_the_lab_s_ideal_view_is_the_seeds_arithmetic(client: FlaskClient) -> None:
    """What the lab sends for its defaults under engine=ideal is the seeds' arithmetic, with no
    error bars."""
    query = (
        "model=llama-3.1-8b&gpu=h100-sxm&kv_precision=bf16&prompt_tokens=2048&output_tokens=512"
        f"&concurrency=1&engine={IDEAL}&memory_efficiency=0.7&compute_efficiency=0.5"
    )
    body = client.get(f"/v1/throughput?{query}").get_json()
    assert body["engine"] == IDEAL
    assert body["uncertainty"] is None
    assert (body["memory_efficiency"], body["compute_efficiency"]) == (0.7, 0.5)

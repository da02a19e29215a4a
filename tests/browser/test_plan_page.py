"""The planner's files as the app serves them, without a browser: the route, the assets, what
the page keeps of its own (the precisions) against the sizing core's, and links both ways."""

from __future__ import annotations

import re
from pathlib import Path

from flask.testing import FlaskClient

from app.sizing.precision import PRECISIONS

STATIC = Path(__file__).resolve().parents[2] / "app" / "static"
PLAN = STATIC / "plan"
COMMON = STATIC / "common"
IMPORT = r'(?:from|import)\s*\(?\s*"([^"]+)"'


def test_the_planner_is_html_that_loads_its_module_from_static(client: FlaskClient) -> None:
    with client.get("/plan") as response:
        assert response.status_code == 200
        assert response.mimetype == "text/html"
        html = response.get_data(as_text=True)
        policy = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "object-src 'none'" in policy
    assert '<script type="module" src="static/plan/main.js">' in html
    assert '<link rel="stylesheet" href="static/plan/plan.css">' in html
    shared = html.index('<link rel="stylesheet" href="static/common/base.css">')
    assert shared < html.index('<link rel="stylesheet" href="static/plan/plan.css">'), "base.css comes first"


def test_every_planner_asset_is_served_with_its_type(client: FlaskClient) -> None:
    """The planner's own files and the shared ones in static/common/ it loads."""
    types = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
    files = [path for folder in (PLAN, COMMON) for path in sorted(folder.iterdir())]
    assert {path.suffix for path in files} <= set(types)
    assert {path.parent.name for path in files} == {"plan", "common"}
    for path in files:
        with client.get(f"/static/{path.parent.name}/{path.name}") as response:
            assert response.status_code == 200, path.name
            assert response.mimetype == types[path.suffix], path.name


def test_nothing_is_loaded_from_elsewhere() -> None:
    """No CDN: the only absolute URL allowed is SVG's namespace, which is a name, not a load."""
    for path in [*PLAN.iterdir(), *COMMON.iterdir()]:
        text = path.read_text(encoding="utf-8").replace("http://www.w3.org/2000/svg", "")
        found = re.findall(r"https?://[^\s\"'`)]+", text)
        # The KEDA default Prometheus address is the API's, never in the page's own files.
        assert found == [], f"{path.parent.name}/{path.name} names {found}"


def test_module_imports_stay_inside_the_planner_or_common() -> None:
    """The planner imports its own modules (./) and the shared ones (../common/), which import
    only each other; every module imported exists."""
    for path in PLAN.glob("*.js"):
        for target in re.findall(IMPORT, path.read_text(encoding="utf-8")):
            inside = target.startswith("./") or re.fullmatch(r"\.\./common/[\w-]+\.js", target)
            assert inside and (PLAN / target).exists(), f"{path.name} imports {target}"
    for path in COMMON.glob("*.js"):
        for target in re.findall(IMPORT, path.read_text(encoding="utf-8")):
            assert target.startswith("./") and (COMMON / target).exists(), f"common/{path.name} imports {target}"


def test_the_planner_offers_exactly_the_precisions_the_api_accepts() -> None:
    source = (PLAN / "state.js").read_text(encoding="utf-8")
    match = re.search(r"PRECISIONS = Object\.freeze\(\[([^\]]*)\]\)", source)
    assert match, "state.js lost its PRECISIONS list"
    assert sorted(re.findall(r'"([^"]+)"', match.group(1))) == sorted(PRECISIONS)


def test_the_lab_and_the_planner_link_to_each_other(client: FlaskClient) -> None:
    with client.get("/plan") as response:
        plan = response.get_data(as_text=True)
    with client.get("/lab") as response:
        lab = response.get_data(as_text=True)
    assert re.search(r'<a [^>]*href="lab"', plan)
    assert re.search(r'<a [^>]*href="plan"', lab)


def test_every_control_has_a_label_and_an_error_slot() -> None:
    """Each field the API can name has a place beside it for the API's message."""
    html = (PLAN / "index.html").read_text(encoding="utf-8")
    controls = re.findall(r'<(?:input|select|textarea) id="([^"]+)"', html)
    assert len(controls) > 15
    for name in controls:
        if name.startswith("traffic-"):
            continue  # radio choices, labelled by wrapping
        assert f'<label for="{name}"' in html, name
        assert f'id="{name}-error"' in html, name

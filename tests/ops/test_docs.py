"""/openapi.yaml serves the contract as written; /docs is Swagger UI from files this service
serves itself, so it works with no way out (no CDN, no online validator)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient

from app import create_app
from app.api import docs

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
# Where pages usually fetch Swagger UI and fonts from; none may appear in what /docs loads.
CDN_HOSTS = ("unpkg.com", "cdn.jsdelivr.net", "cdnjs.cloudflare.com", "fonts.googleapis.com", "fonts.gstatic.com")


def test_openapi_yaml_is_the_file_as_written(client: FlaskClient) -> None:
    with client.get("/openapi.yaml") as response:
        assert response.status_code == 200
        assert response.mimetype == "application/yaml"
        assert response.data == SPEC_PATH.read_bytes()
    assert yaml.safe_load(response.data)["openapi"].startswith("3.1")


def test_openapi_yaml_is_read_once_at_start_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text("openapi: 3.1.0\n", encoding="utf-8")
    monkeypatch.setattr(docs, "SPEC_PATH", spec)
    flask_app = Flask(__name__)
    flask_app.register_blueprint(docs.create_blueprint())
    spec.write_text("openapi: changed\n", encoding="utf-8")
    with flask_app.test_client().get("/openapi.yaml") as response:
        assert response.data == b"openapi: 3.1.0\n"


def docs_page(client: FlaskClient) -> str:
    with client.get("/docs") as response:
        assert response.status_code == 200
        assert response.mimetype == "text/html"
        return response.get_data(as_text=True)


def test_docs_page_loads_only_local_assets(client: FlaskClient) -> None:
    html = docs_page(client)
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(assets) >= 4, "the page's scripts and styles"
    for asset in assets:
        assert asset.startswith("/docs/"), f"{asset}: not served here"
        with client.get(asset) as response:
            assert response.status_code == 200, asset
    assert "http://" not in html and "https://" not in html


def test_docs_page_reads_this_services_spec_and_no_online_validator(client: FlaskClient) -> None:
    html = docs_page(client)
    match = re.search(r"var user_config = (\{.*?\});", html)
    assert match, "Swagger UI's config is no longer where flask-swagger-ui puts it"
    config = json.loads(match.group(1))
    assert config["url"] == "/openapi.yaml"
    # Swagger UI's default badge sends the spec to validator.swagger.io.
    assert config["validatorUrl"] is None


def test_docs_assets_name_no_cdn(client: FlaskClient) -> None:
    html = docs_page(client)
    for asset in re.findall(r'(?:src|href)="(/docs/[^"]+\.(?:js|css))"', html):
        with client.get(asset) as response:
            text = response.get_data(as_text=True)
        for host in CDN_HOSTS:
            assert host not in text, f"{asset} mentions {host}"


def test_docs_page_forbids_loading_from_elsewhere(client: FlaskClient) -> None:
    with client.get("/docs") as response:
        policy = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    for name in ("script-src", "style-src", "img-src", "connect-src"):
        sources = directives[name].split()
        assert all(s == "'self'" or s.startswith(("'sha256-", "'unsafe-inline'", "data:")) for s in sources), name


def test_docs_work_from_any_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec and the assets are found beside the code, not in the current directory."""
    monkeypatch.chdir(tmp_path)
    bare = create_app({"database_url": f"sqlite:///{tmp_path / 'empty.sqlite3'}"})
    client = bare.test_client()
    with client.get("/openapi.yaml") as response:
        assert response.data == SPEC_PATH.read_bytes()
    with client.get("/docs/swagger-ui-bundle.js") as response:
        assert response.status_code == 200
    bare.extensions["fleet_sizer"]["engine"].dispose()

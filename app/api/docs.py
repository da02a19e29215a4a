"""The contract and its reader: `/openapi.yaml` as committed, and Swagger UI at `/docs`.

openapi.yaml is generated from the code (`make spec`, app/openapi) and tests/test_openapi.py
holds the committed file to what the generator writes; serving the file rather than
generating at start-up keeps start-up cheap and what is served exactly what was reviewed.

Swagger UI's files come from the flask-swagger-ui wheel and are served from here, so the
page works on a machine with no way out (no CDN). Both answers are built once at start-up.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from importlib.metadata import version
from pathlib import Path

import flask_swagger_ui
from flask import Blueprint, Flask, Response
from jinja2 import Environment, select_autoescape

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
SWAGGER_UI_DIR = Path(flask_swagger_ui.__file__).resolve().parent
ASSETS_DIR = SWAGGER_UI_DIR / "dist"
PAGE_TEMPLATE = SWAGGER_UI_DIR / "templates" / "index.template.html"
DOCS_URL = "/docs"
SPEC_URL = "/openapi.yaml"

# Swagger UI's own options. `validatorUrl: null` turns off the badge that would send the
# spec to validator.swagger.io: the page makes no request but to this service.
SWAGGER_UI_CONFIG = {
    "dom_id": "#swagger-ui",
    "url": SPEC_URL,
    "layout": "StandaloneLayout",
    "deepLinking": True,
    "validatorUrl": None,
}


def _sha256_base64(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def render_page() -> tuple[str, str]:
    """flask-swagger-ui's page over this service's spec, and a Content-Security-Policy that
    lets it load nothing from elsewhere (its one inline script allowed by hash)."""
    environment = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    template = environment.from_string(PAGE_TEMPLATE.read_text(encoding="utf-8"))
    html = template.render(
        base_url=DOCS_URL,
        app_name="Fleet Sizer API",
        config_json=json.dumps(SWAGGER_UI_CONFIG),
        version=version("flask-swagger-ui"),
    )
    inline_scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.DOTALL)
    hashes = " ".join(f"'sha256-{_sha256_base64(script)}'" for script in inline_scripts)
    # Swagger UI's React components set inline styles and its icons are data: URIs.
    policy = (
        f"default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
    return html, policy


def create_blueprint() -> Blueprint:
    """Reads the spec and renders the page now, so a request only copies bytes."""
    spec = SPEC_PATH.read_bytes()
    page, policy = render_page()
    # Swagger UI's JS, CSS and icons as Flask static files: `/docs/<filename>`.
    bp = Blueprint("docs", __name__, static_folder=str(ASSETS_DIR), static_url_path=DOCS_URL)

    @bp.get(SPEC_URL)
    def openapi_yaml() -> Response:
        """The OpenAPI 3.1 document this service is tested against (openapi.yaml, generated)."""
        return Response(spec, mimetype="application/yaml")

    @bp.get(DOCS_URL)
    def swagger_ui() -> Response:
        """Swagger UI over /openapi.yaml, from files served here."""
        response = Response(page, mimetype="text/html")
        response.headers["Content-Security-Policy"] = policy
        return response

    return bp


def init_app(app: Flask) -> None:
    app.register_blueprint(create_blueprint())

"""The inference lab: a static page (app/static/lab/) over the same /v1 endpoints.

The page computes nothing itself: every figure on it is a field of a /v1/fit or
/v1/throughput answer, so the lab and the API cannot disagree.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, redirect, send_from_directory, url_for
from werkzeug.wrappers import Response as BaseResponse

LAB_DIR = Path(__file__).resolve().parents[1] / "static" / "lab"
# Everything the page loads is this service's own: its modules, its styles, its /v1 answers.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'self'"
)

bp = Blueprint("lab", __name__)


@bp.get("/")
def index() -> BaseResponse:
    """The service's front page is the lab."""
    return redirect(url_for("lab.page"))


@bp.get("/lab")
def page() -> Response:
    """The interactive inference lab (HTML; its scripts and styles are under /static/lab/)."""
    response = send_from_directory(LAB_DIR, "index.html", mimetype="text/html")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response

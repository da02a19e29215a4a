"""The fleet planner: a static page (app/static/plan/) over /v1/fleet and /v1/latency.

Like the lab, the page computes nothing itself: every figure on it is a field of a /v1/fleet
or /v1/latency answer (its CSV is the API's own), so the planner and the API cannot disagree.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory

from .lab import CONTENT_SECURITY_POLICY

PLAN_DIR = Path(__file__).resolve().parents[1] / "static" / "plan"

bp = Blueprint("plan", __name__)


@bp.get("/plan")
def page() -> Response:
    """The fleet planner (HTML; its scripts and styles are under /static/plan/)."""
    response = send_from_directory(PLAN_DIR, "index.html", mimetype="text/html")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response

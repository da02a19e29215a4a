"""/v1/autoscaling/simulate: parse, simulate the day (app/planning/simulated_day.py), render."""

from __future__ import annotations

from flask import Blueprint, Response, request

from app.planning import simulated_day

from .errors import ApiError
from .lookup import context
from .render import respond
from .requests import parse
from .schemas import PLANNING_BY_PATH
from .wire import dump

bp = Blueprint("autoscaling", __name__, url_prefix="/v1/autoscaling")


@bp.route("/simulate", methods=["GET", "POST"])
def simulate() -> Response:
    """A day of the fleet under an autoscaling policy, beside the static peak plan."""
    if request.method == "GET" and "forecast" in request.args:
        raise ApiError(422, "forecast is POST only: a list of hours has no query form", {"forecast": ["POST only"]})
    body = dump(simulated_day.simulate(parse(PLANNING_BY_PATH["/v1/autoscaling/simulate"].schema), context()))
    return respond(body, rows=body["autoscaled"]["per_hour"])

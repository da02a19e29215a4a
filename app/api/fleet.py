"""/v1/fleet: parse, plan (app/planning/fleet/, one planner per layout), render as JSON, CSV,
a KEDA policy or a workbook."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, request

from app.planning import deployment
from app.planning import fleet as planner
from app.planning.answers import FleetRow
from app.planning.fleet.answer import NO_OPTION, PlannedFleet
from app.planning.requests import FleetRequest

from . import keda, workbook
from .errors import ApiError
from .lookup import context
from .render import respond
from .requests import QUERY_METHODS, parse
from .schemas import PLANNING_BY_PATH
from .wire import dump

bp = Blueprint("fleet", __name__, url_prefix="/v1")

YAML = "application/yaml"
XLSX_FORMAT = "xlsx"


@bp.route("/fleet", methods=["GET", "POST"])
def fleet() -> Response:
    """Replicas and GPUs for a traffic forecast with N+1, zones, MIG packing, cost and
    autoscaling; with no `gpu`, every catalog GPU and MIG profile ranked by monthly cost."""
    for name, what in (
        ("forecast", "a list of periods"),
        ("length_buckets", "a list of buckets"),
        ("length_samples", "a list of pairs"),
    ):
        if request.method in QUERY_METHODS and name in request.args:
            raise ApiError(422, f"{name} is POST only: {what} has no query form", {name: ["POST only"]})
    fleet_request = parse(PLANNING_BY_PATH["/v1/fleet"].schema)
    planned = planner.plan(fleet_request, context())
    body = dump(planned.answer)
    if request.args.get("format", "").lower() == XLSX_FORMAT:
        return spreadsheet(planned, body, fleet_request)
    if request.args.get("format", "").lower() == "keda":
        if planned.pools_from is not None:
            message = "a plan of several pools scales each on signals of its own: format=keda is not offered"
            raise ApiError(422, message, {planned.pools_from: [message]})
        if planned.chosen is None:
            raise ApiError(422, NO_OPTION + ": nothing to scale", {"gpu": [NO_OPTION]})
        scaled = deployment.keda_scaled_object(planned.chosen, planned.model_label, fleet_request)
        return current_app.response_class(keda.dump(scaled), mimetype=YAML)
    return respond(body, rows=None if planned.rows is None else [csv_row(row) for row in planned.rows])


def csv_row(row: FleetRow) -> dict[str, Any]:
    """A CSV row of the plan: a typed row's wire form, nested lists left out (the JSON answer
    has them: a mix pool's buckets, a mix period's GPUs per pool)."""
    return {key: value for key, value in dump(row).items() if not isinstance(value, list)}


def spreadsheet(planned: PlannedFleet, body: dict[str, Any], fleet_request: FleetRequest) -> Response:
    """format=xlsx: the plan as a workbook of live formulas over its inputs (app/api/workbook.py)."""
    if body.get("gpus_total") is None:
        raise ApiError(422, NO_OPTION + ": nothing to put in a workbook", {"gpu": [NO_OPTION]})
    response = current_app.response_class(workbook.workbook(planned, body, fleet_request), mimetype=workbook.XLSX)
    response.headers["Content-Disposition"] = 'attachment; filename="fleet.xlsx"'
    return response

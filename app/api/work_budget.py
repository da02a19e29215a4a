"""Every request runs within its work budget (app/sizing/budget.py): TIME_BUDGET_S of wall
time for its computation and WORK_BUDGET_UNITS of simulator work, started before the view
and ended at teardown. A computation past its time stops at its next check and answers 503
with Retry-After (problem+json), counted in fleet_sizer_budget_stops_total; its worker is
free again at once, rather than being killed at gunicorn's timeout."""

from __future__ import annotations

import logging

from flask import Flask, Response, current_app, g

from app.observability import BUDGET_STOPS
from app.sizing import budget

from .errors import problem

log = logging.getLogger(__name__)

# A computation stopped at its time mostly means a loaded machine: try again a little later.
RETRY_AFTER_S = 5


def _start() -> None:
    config = current_app.extensions["fleet_sizer"]["config"]
    g.work_budget_token = budget.start(budget.Budget(config.time_budget_s, config.work_budget_units))


def _stop(_exc: BaseException | None = None) -> None:
    token = g.pop("work_budget_token", None)
    if token is not None:
        budget.stop(token)


def _out_of_time(exc: budget.OutOfTime) -> Response:
    BUDGET_STOPS.inc()
    log.warning("stopped at the time budget", extra={"limit_s": exc.limit_s, "elapsed_s": round(exc.elapsed_s, 3)})
    detail = (
        f"{exc.doing} ran past this request's time budget of {exc.limit_s:g} s (TIME_BUDGET_S) and was stopped: "
        f"the service is loaded, or the request is near its limits; try again in {RETRY_AFTER_S} s, or ask for less "
        "(fewer rates, requests, GPUs or periods)"
    )
    response = problem(503, detail)
    response.headers["Retry-After"] = str(RETRY_AFTER_S)
    return response


def init_app(app: Flask) -> None:
    app.before_request(_start)
    app.teardown_request(_stop)
    app.register_error_handler(budget.OutOfTime, _out_of_time)

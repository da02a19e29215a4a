"""/v1/fit, /v1/throughput, /v1/latency, /v1/batch, /v1/cost, /v1/roofline: parse, plan (app/planning), render."""

from __future__ import annotations

from flask import Blueprint, Response, request

from app.planning import batch as batch_service
from app.planning import latency as latency_service
from app.planning import replica

from .errors import ApiError
from .lookup import context
from .render import respond
from .requests import parse
from .schemas import PLANNING_BY_PATH
from .wire import dump

bp = Blueprint("planning", __name__, url_prefix="/v1")


@bp.route("/fit", methods=["GET", "POST"])
def fit() -> Response:
    """Do the weights and the KV cache fit, and for how many concurrent conversations?"""
    return respond(dump(replica.fit(parse(PLANNING_BY_PATH["/v1/fit"].schema), context())))


@bp.route("/throughput", methods=["GET", "POST"])
def throughput() -> Response:
    """Time per token, TTFT, tokens/s and what bounds them; one row per sweep concurrency."""
    body = dump(replica.throughput(parse(PLANNING_BY_PATH["/v1/throughput"].schema), context()))
    return respond(body, rows=body["sweep"] or None)


@bp.route("/cost", methods=["GET", "POST"])
def cost() -> Response:
    """Cost per million output tokens and per month, from tokens/s or from a throughput plan."""
    return respond(dump(replica.cost(parse(PLANNING_BY_PATH["/v1/cost"].schema), context())))


@bp.route("/roofline", methods=["GET", "POST"])
def roofline() -> Response:
    """Arithmetic intensity, attainable FLOP/s and time of one GEMM (seed 004's roofline)."""
    return respond(dump(replica.roofline(parse(PLANNING_BY_PATH["/v1/roofline"].schema), context())))


@bp.route("/latency", methods=["GET", "POST"])
def latency() -> Response:
    """One replica under random arrivals: percentiles of TTFT, TPOT, ITL and E2E against rate."""
    if request.method == "GET" and "length_samples" in request.args:
        message = "length_samples is POST only: a list of pairs has no query form"
        raise ApiError(422, message, {"length_samples": ["POST only"]})
    body = dump(latency_service.latency(parse(PLANNING_BY_PATH["/v1/latency"].schema), context()))
    return respond(body, rows=body["rates"])


@bp.route("/batch", methods=["GET", "POST"])
def batch() -> Response:
    """An offline batch on one replica: every request queued at once, run to the last completion."""
    return respond(dump(batch_service.batch(parse(PLANNING_BY_PATH["/v1/batch"].schema), context())))

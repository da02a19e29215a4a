"""/v1/fleet: a traffic forecast to replicas, GPUs, monthly cost and autoscaling numbers, in
one of three layouts, each planned by a module of its own: one kind of replica
(aggregated.py), a prefill and a decode pool (disaggregated.py), or a mix of replica kinds over
length buckets (mixed.py). Each answers a typed value of app/planning/answers.py (FleetAnswer,
one type per layout); they share answer.py's pieces."""

from __future__ import annotations

from collections.abc import Callable

from app.sizing.vocabulary import FleetLayout

from ..context import Context
from ..requests import FleetRequest
from . import aggregated, disaggregated, mixed
from .answer import PlannedFleet

PLANNERS: dict[FleetLayout, Callable[[FleetRequest, Context], PlannedFleet]] = {
    FleetLayout.AGGREGATED: aggregated.plan,
    FleetLayout.DISAGGREGATED: disaggregated.plan,
    FleetLayout.MIXED: mixed.plan,
}


def plan(request: FleetRequest, context: Context) -> PlannedFleet:
    """The request's fleet, planned by its layout's planner."""
    return PLANNERS[request.layout](request, context)

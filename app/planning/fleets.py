"""/v1/fleet's three plans: one kind of replica (fleet.py), prefill and decode pools
(disaggregated.py), or a mix of replica kinds (fleet_mix.py)."""

from __future__ import annotations

from app.sizing.disaggregated import DISAGGREGATED

from . import disaggregated, fleet_mix
from . import fleet as aggregated
from .context import Context
from .fleet import FleetAnswer
from .requests import FleetRequest


def fleet(request: FleetRequest, context: Context) -> FleetAnswer:
    if request.mix:
        return fleet_mix.fleet(request, context)
    if request.topology == DISAGGREGATED:
        return disaggregated.fleet(request, context)
    return aggregated.fleet(request, context)

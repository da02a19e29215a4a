"""Energy: what a fleet draws from the grid, per month and per token.

A powered GPU draws its idle power whatever it does, and the rest of its board power in
proportion to how busy it is; the facility adds its overhead (PUE) on top:

    power_per_gpu_w  = idle_w + (board_w - idle_w) x utilization
    energy_kwh_month = gpus x power_per_gpu_w / 1000 x hours_per_month x PUE

Linear in utilization is the simplest model a datasheet's two figures allow; real cards draw
less than board power at full decode load (memory-bound steps leave the tensor cores idle), so
at high utilization it is an upper end.
"""

from __future__ import annotations

from dataclasses import dataclass

WH_PER_KWH = 1_000.0
G_PER_KG = 1_000.0
SECONDS_PER_HOUR = 3_600


@dataclass(frozen=True)
class Energy:
    """One fleet's (or pool's) draw: its GPUs at their average utilization."""

    gpus: int
    utilization: float  # busy share of the fleet's capacity, 0..1, averaged over every GPU
    power_per_gpu_w: float
    pue: float
    hours_per_month: float

    @property
    def power_kw(self) -> float:
        """Facility power of the fleet, PUE included, kW."""
        return self.gpus * self.power_per_gpu_w / WH_PER_KWH * self.pue

    @property
    def kwh_per_month(self) -> float:
        return self.power_kw * self.hours_per_month


def power_per_gpu_w(power_w: float, idle_power_w: float, utilization: float) -> float:
    """Idle power plus the rest of the board power in proportion to utilization (clamped to
    [0, 1]: a fleet past its saturation rate draws no more than full power)."""
    busy = min(1.0, max(0.0, utilization))
    return idle_power_w + (power_w - idle_power_w) * busy


def fleet_energy(
    gpus: int, utilization: float, power_w: float, idle_power_w: float, hours_per_month: float, pue: float
) -> Energy:
    return Energy(
        gpus=gpus,
        utilization=min(1.0, max(0.0, utilization)),
        power_per_gpu_w=power_per_gpu_w(power_w, idle_power_w, utilization),
        pue=pue,
        hours_per_month=hours_per_month,
    )


def wh_per_million_tokens(kwh_per_month: float, tokens_per_s: float, hours_per_month: float) -> float | None:
    """Energy per 10^6 tokens served: the month's kWh over the month's tokens (None when
    nothing is served: the energy per token is unbounded)."""
    tokens = tokens_per_s * SECONDS_PER_HOUR * hours_per_month
    if tokens <= 0:
        return None
    return kwh_per_month * WH_PER_KWH / tokens * 1e6


def co2e_kg(kwh: float, grid_g_co2_per_kwh: float) -> float:
    """Emissions of `kwh` on a grid of the given carbon intensity (gCO2e per kWh), kg."""
    return kwh * grid_g_co2_per_kwh / G_PER_KG

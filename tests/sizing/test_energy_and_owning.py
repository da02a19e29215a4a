"""Energy, owning and a hosted API (app/sizing/energy.py, app/sizing/cost.py): the power model,
the owned monthly cost and its break-even against renting, and the traffic from which
self-hosting stays cheaper, each worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.sizing import cost, energy, fleet


def test_a_gpu_draws_its_idle_power_plus_the_rest_in_proportion_to_its_utilization() -> None:
    """700 W board, 70 W idle, half busy: 70 + 630 x 0.5 = 385 W."""
    assert energy.power_per_gpu_w(700, 70, 0.5) == 385
    assert energy.power_per_gpu_w(700, 70, 0.0) == 70
    assert energy.power_per_gpu_w(700, 70, 1.7) == 700  # past saturation: no more than board power


def test_a_fleets_month_of_energy_is_gpus_times_power_times_hours_times_pue() -> None:
    """8 GPUs at 385 W for 730 h with a PUE of 1.3: 8 x 0.385 kW x 730 h x 1.3 = 2,922.92 kWh;
    on a 400 g/kWh grid 1,169.17 kg CO2e; over 3,000 output tokens/s (7.884e9 tokens in the
    month) 370.74 Wh per million tokens."""
    drawn = energy.fleet_energy(8, 0.5, 700, 70, 730, 1.3)
    assert drawn.power_kw == pytest.approx(8 * 0.385 * 1.3)
    assert drawn.kwh_per_month == pytest.approx(2_922.92)
    assert energy.co2e_kg(drawn.kwh_per_month, 400) == pytest.approx(1_169.168)
    per_million = energy.wh_per_million_tokens(drawn.kwh_per_month, 3_000, 730)
    assert per_million == pytest.approx(2_922.92 * 1_000 / (3_000 * 3_600 * 730) * 1e6)
    assert per_million == pytest.approx(370.74, abs=0.01)
    assert energy.wh_per_million_tokens(100, 0, 730) is None


def _owned(rent: float | None = 17_520.0) -> cost.Ownership:
    """8 H100s at 27,500 USD written off over 36 months, drawing 2,922.92 kWh a month at
    0.12 USD/kWh, in a hall at 150 USD per kW of board power (700 W) a month."""
    return cost.Ownership(8, 27_500, 36, 2_922.92, 0.12, 700, 150, rent)


def test_the_owned_cost_is_purchase_over_months_plus_power_times_hours_times_pue_times_price_plus_hosting() -> None:
    """8 x 27,500 / 36 = 6,111.11; 8 x 385 W x 730 h x 1.3 x 0.12 USD/kWh = 350.75;
    8 x 0.7 kW x 150 = 840.00: 7,301.86 USD a month."""
    owned = _owned()
    assert owned.purchase_usd == 220_000.00
    assert owned.amortization_usd_per_month == round(8 * 27_500 / 36, 2) == 6_111.11
    assert owned.electricity_usd_per_month == round(8 * 385 / 1000 * 730 * 1.3 * 0.12, 2) == 350.75
    assert owned.hosting_usd_per_month == round(8 * 700 / 1000 * 150, 2) == 840.00
    assert owned.owned_monthly_cost_usd == 7_301.86


def test_owning_breaks_even_when_the_rent_saved_has_paid_the_purchase() -> None:
    """Renting the 8 on demand costs 8 x 3.00 x 730 = 17,520 a month; owning runs at
    350.75 + 840.00 = 1,190.75: the purchase of 220,000 is paid back after
    220,000 / (17,520 - 1,190.75) = 13.47 months."""
    owned = _owned()
    assert owned.break_even_months == pytest.approx(220_000 / (17_520 - 1_190.75))
    line = owned.cumulative(36)
    assert line[0] == (0, 220_000.00, 0.0)
    assert line[13][1] > line[13][2] and line[14][1] < line[14][2]  # the lines cross in month 14
    assert line[36] == (36, round(220_000 + 36 * 1_190.75, 2), 36 * 17_520.0)


def test_owning_never_breaks_even_when_renting_costs_no_more_than_running() -> None:
    assert _owned(rent=1_000.0).break_even_months is None
    assert _owned(rent=None).break_even_months is None


def _staircase(capacity_per_replica: float, usd_per_replica: float, spare: int = 1) -> cost.FleetSteps:
    """n replicas carry n x capacity; the fleet holds n + spare of them."""

    def steps(n: int) -> tuple[float, float]:
        return n * capacity_per_replica, (n + spare) * usd_per_replica

    return steps


def test_self_hosting_breaks_even_where_the_api_line_crosses_the_fleets_staircase() -> None:
    """A replica carries 2 requests/s and costs 2,190 a month (3.00 x 730), with one spare:
    C_n = 2,190 x (n + 1) for any rate up to R_n = 2n. An API at 1,000 USD a month per request/s
    costs 2,000 for a replica's worth of traffic, below 2,190: it stays cheaper at any traffic.
    At 1,500 (3,000 a replica's worth) step n is cheaper throughout when
    1,500 x 2(n - 1) >= 2,190(n + 1), from n = 6.41: step 7. In step 6 (up to 12 requests/s,
    2,190 x 7 = 15,330 a month) the API line crosses at 15,330 / 1,500 = 10.22 requests/s."""
    steps = _staircase(2.0, 2_190.0)
    assert cost.break_even_requests_per_s(steps, 1_000.0) is None
    assert cost.break_even_requests_per_s(steps, 1_500.0) == pytest.approx(7 * 2_190 / 1_500)


@given(
    capacity=st.floats(0.1, 50),
    usd=st.floats(10, 10_000),
    ratio=st.floats(1.05, 10),
    spare=st.integers(0, 3),
)
def test_beyond_the_break_even_self_hosting_is_always_cheaper(
    capacity: float, usd: float, ratio: float, spare: int
) -> None:
    """Whatever the staircase, once the API line is steeper there is a break-even, and at any
    traffic above it the fleet costs no more than the API."""
    steps = _staircase(capacity, usd, spare)
    api = usd / capacity * ratio
    even = cost.break_even_requests_per_s(steps, api)
    assert even is not None
    for rate in (even * 1.0001, even * 1.5, even * 4, even * 40):
        replicas = max(1, math.ceil(rate / capacity - 1e-9))
        assert steps(replicas)[1] <= api * rate * (1 + 1e-9)


def test_break_even_on_zones_looks_across_the_zone_staircase() -> None:
    """With 3 zones the fleet grows 3 replicas for every 2 more at peak: the search checks two
    steps at a time. The answer still holds: above it, no step costs more than the API."""
    redundancy = fleet.Redundancy(0, 3)

    def steps(n: int) -> tuple[float, float]:
        sized = fleet.size_fleet(fleet.Demand(n * 2.0, 1.0, 100, 1), 2.0, 1, redundancy)  # n replicas at peak
        return n * 2.0, sized.gpus_total * 2_190.0

    even = cost.break_even_requests_per_s(steps, 2_000.0, period=2)
    assert even is not None
    for n in range(math.ceil(even / 2.0) + 1, 200):
        assert steps(n)[1] <= 2_000.0 * steps(n - 1)[0]


def test_the_hosted_api_bills_prompts_and_answers_at_their_prices() -> None:
    """2 requests/s of 2,000 prompt and 400 output tokens for 730 h: 5,256,000 requests, at
    0.20 and 0.60 USD per million tokens: 5,256,000 x (2,000 x 0.2 + 400 x 0.6) / 10^6 =
    3,363.84 USD."""
    assert cost.hosted_api_monthly_usd(2.0, 2_000, 400, 0.20, 0.60, 730) == 3_363.84

"""Cost (app/sizing/cost.py) at the inputs where mutants of `make mutation` survived:

- the cost per million tokens below one token a second still has a figure (the guard is at zero);
- a fleet's monthly cost per million tokens, and None when it serves no token;
- the owned-against-rented line has one row per month 0..N, and no rent column without a rent;
- a hosted API's bill is to the cent on a bill large enough for a part per million to show;
- the break-even against an API where the fleet's step costs exactly the API's price at its
  left end (a tie is self-hosting's), where it falls in the first step, and against a brute-force
  scan of the staircase.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.sizing import cost

SECONDS_PER_HOUR = 3600
HOURS_PER_MONTH = 730


# --- cost per million tokens ---------------------------------------------------------------


def test_a_replica_making_half_a_token_a_second_still_has_a_cost_per_million() -> None:
    """$2.50 an hour for 0.5 tokens/s: 1,800 tokens an hour, $2.50 / 1,800 x 10^6 = $1,388.89."""
    usd = 2.50 / (0.5 * SECONDS_PER_HOUR) * 1e6
    assert cost.cost_per_million_tokens_usd(2.50, 1, 0.5) == pytest.approx(usd)
    assert usd == pytest.approx(1_388.89, abs=0.005)


def test_a_fleets_monthly_cost_per_million_is_its_bill_over_the_tokens_of_the_month() -> None:
    """$10,000 a month for an average of 1,000 tokens/s over 730 h: 2.628e9 tokens,
    $10,000 / 2,628 = $3.805 per million."""
    usd = 10_000 / (1_000 * SECONDS_PER_HOUR * HOURS_PER_MONTH) * 1e6
    assert cost.monthly_cost_per_million_tokens_usd(10_000, 1_000) == pytest.approx(usd)
    assert usd == pytest.approx(3.805, abs=0.0005)
    # Over 100 h the same bill is spread over 100 / 730 of the tokens.
    assert cost.monthly_cost_per_million_tokens_usd(10_000, 1_000, 100) == pytest.approx(usd * 730 / 100)


def test_a_fleet_serving_no_token_has_no_cost_per_million() -> None:
    assert cost.monthly_cost_per_million_tokens_usd(10_000, 0) is None
    assert cost.monthly_cost_per_million_tokens_usd(10_000, 1_000, 0) is None


def test_a_fleet_serving_a_quarter_of_a_token_a_month_still_has_a_cost_per_million() -> None:
    """0.25 tokens in the month (1 h at 0.25 / 3,600 tokens/s) for $1: $4 per token, $4 x 10^6 a million."""
    assert cost.monthly_cost_per_million_tokens_usd(1.0, 0.25 / SECONDS_PER_HOUR, 1) == pytest.approx(4e6)


# --- owning against renting, month by month ------------------------------------------------


def _owned(rent: float | None) -> cost.Ownership:
    """2 GPUs at $30,000 over 36 months, 1,000 kWh a month at $0.10, 700 W each at $100 per kW:
    running $100 (electricity) + 2 x 0.7 kW x $100 = $140 (hosting), $240 a month on top of the
    $60,000 purchase."""
    return cost.Ownership(2, 30_000, 36, 1_000, 0.10, 700, 100, rent)


def test_the_cumulative_line_has_a_row_for_each_month_from_zero_to_the_last() -> None:
    line = _owned(rent=5_000.0).cumulative(3)
    assert [month for month, _, _ in line] == [0, 1, 2, 3]
    assert line == [(m, 60_000 + m * 240.0, m * 5_000.0) for m in range(4)]


def test_without_a_rent_the_cumulative_line_has_no_rented_column() -> None:
    line = _owned(rent=None).cumulative(2)
    assert line == [(0, 60_000.0, None), (1, 60_240.0, None), (2, 60_480.0, None)]


# --- a hosted API -----------------------------------------------------------------------------


def test_a_hosted_apis_large_bill_is_exact_to_the_cent() -> None:
    """10 requests/s of 1,000 prompt and 1,000 output tokens for 730 h at $1 and $3 per million:
    26,280,000 requests x (1,000 x 1 + 1,000 x 3) / 10^6 = 26,280,000 x $0.004 = $105,120.00
    (a part per million off would be 10 cents)."""
    requests = 10 * SECONDS_PER_HOUR * HOURS_PER_MONTH
    assert requests == 26_280_000
    assert cost.hosted_api_monthly_usd(10, 1_000, 1_000, 1.0, 3.0, HOURS_PER_MONTH) == 105_120.00


# --- break-even against an API ---------------------------------------------------------------


def _staircase(capacity_per_replica: float, usd_per_replica: float, spare: int) -> cost.FleetSteps:
    """n replicas carry n x capacity; the fleet holds n + spare of them."""

    def steps(n: int) -> tuple[float, float]:
        return n * capacity_per_replica, (n + spare) * usd_per_replica

    return steps


def test_a_step_costing_exactly_the_api_at_its_left_end_is_self_hostings() -> None:
    """2 requests/s a replica at $3,000 a month, one spare, against $2,000 a month per request/s:
    step n (rates up to 2n, $3,000 (n + 1)) is no dearer than the API throughout when
    3,000 (n + 1) <= 2,000 x 2 (n - 1), i.e. n >= 7, with equality at n = 7 ($24,000 both).
    So the break-even is in step 6 ($21,000, up to 12 requests/s): 21,000 / 2,000 = 10.5."""
    steps = _staircase(2.0, 3_000.0, 1)
    assert steps(7)[1] == 2_000.0 * steps(6)[0] == 24_000.0
    assert cost.break_even_requests_per_s(steps, 2_000.0) == 21_000 / 2_000 == 10.5


def test_a_break_even_in_the_first_step() -> None:
    """2 requests/s a replica at $1,000 a month, no spare, against $2,000 per request/s: step 2
    ($2,000 from 2 requests/s, where the API costs $4,000) is already cheaper throughout, so the
    break-even is in step 1: $1,000 / $2,000 = 0.5 requests/s."""
    steps = _staircase(2.0, 1_000.0, 0)
    assert cost.break_even_requests_per_s(steps, 2_000.0) == 0.5


def _brute_force_break_even(steps: cost.FleetSteps, api: float) -> float:
    """The first n whose step is no dearer than the API at its left end, scanning one by one."""
    n = 2
    while steps(n)[1] > api * steps(n - 1)[0]:
        n += 1
    rate, monthly = steps(n - 1)
    return min(monthly / api, rate)


@given(
    capacity=st.integers(1, 8),
    usd=st.integers(1, 60).map(lambda k: 100.0 * k),
    spare=st.integers(0, 3),
    api_step=st.integers(1, 40),
)
def test_the_break_even_is_the_one_a_scan_of_the_staircase_finds(
    capacity: int, usd: float, spare: int, api_step: int
) -> None:
    """On whole-number staircases (where ties between a step and the API line happen), the
    search finds the break-even a step-by-step scan does."""
    steps = _staircase(float(capacity), usd, spare)
    # An API line steeper than the staircase's marginal cost (usd / capacity per request/s).
    api = math.floor(usd / capacity) + 25.0 * api_step
    assert cost.break_even_requests_per_s(steps, api) == pytest.approx(_brute_force_break_even(steps, api))


@pytest.mark.parametrize(
    ("fixed_usd", "expected"),
    [
        (400_000, 400_000.5),
        # Past 2^19 replicas the search once gave up: the limit is a million, and it looks there.
        (600_000, 600_000.5),
        (999_998, 999_998.5),  # cheaper from exactly 1,000,000 replicas on
        (999_999, None),  # from 1,000,001: beyond the search
    ],
)
def test_the_break_even_search_looks_as_far_as_its_limit(fixed_usd: int, expected: float | None) -> None:
    # n replicas carry n requests/s and cost n + F a month; the API bills 2 a request/s. Step n
    # is cheaper throughout when n + F <= 2 (n - 1), i.e. from n = F + 2; the break-even is in
    # step F + 1: at its cost over the API price, (2F + 1) / 2 = F + 0.5, below its top rate.
    def steps(n: int) -> tuple[float, float]:
        return float(n), float(n + fixed_usd)

    assert cost.MAX_BREAK_EVEN_REPLICAS == 1_000_000
    assert cost.break_even_requests_per_s(steps, 2.0) == expected

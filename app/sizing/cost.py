"""Cost: a GPU costs the same idle or saturated, so cost per token is a throughput story."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

HOURS_PER_MONTH = 730  # 8,760 h / 12


def cost_per_million_tokens_usd(price_per_gpu_hour_usd: float, gpus: float, tokens_per_s: float) -> float | None:
    """Dollars per 10^6 tokens: price x gpus / 3600 / tokens_per_s x 10^6 (seed 004).
    None when nothing is produced (the cost per token is unbounded)."""
    if tokens_per_s <= 0:
        return None
    return price_per_gpu_hour_usd * gpus / 3600 / tokens_per_s * 1e6


def monthly_cost_per_million_tokens_usd(
    monthly_cost_usd: float, average_tokens_per_s: float, hours_per_month: float = HOURS_PER_MONTH
) -> float | None:
    """Dollars per 10^6 tokens a fleet serves: its monthly bill over the tokens its traffic
    brings in those hours (the average rate, not the peak). Spares, the capacity kept for the
    peak and the quiet hours all sit in the bill, which is why a fleet's figure is above one
    fully loaded replica's. None when no token is served."""
    tokens_per_month = average_tokens_per_s * 3600 * hours_per_month
    if tokens_per_month <= 0:
        return None
    return monthly_cost_usd / tokens_per_month * 1e6


@dataclass(frozen=True)
class CostResult:
    hourly_cost_usd: float
    monthly_cost_usd: float
    cost_per_million_output_tokens_usd: float | None


def cost(
    price_per_gpu_hour_usd: float,
    gpus: float,
    tokens_per_s: float,
    hours_per_month: float = HOURS_PER_MONTH,
    utilization: float = 1.0,
) -> CostResult:
    """Rented GPUs bill every hour; `utilization` is the share of those hours spent producing
    tokens at `tokens_per_s`, so idle time raises the cost per token, not the bill."""
    hourly = price_per_gpu_hour_usd * gpus
    return CostResult(
        hourly_cost_usd=hourly,
        monthly_cost_usd=hourly * hours_per_month,
        cost_per_million_output_tokens_usd=cost_per_million_tokens_usd(
            price_per_gpu_hour_usd, gpus, tokens_per_s * utilization
        ),
    )


def cents(usd: float) -> float:
    """Money as a bill states it: to the cent."""
    return round(usd, 2)


@dataclass(frozen=True)
class Ownership:
    """A fleet bought outright and run in a rented hall :

        owned_month_usd = gpus x purchase_usd / amortization_months          (the capital)
                        + energy_kwh_month x electricity_usd_per_kwh         (PUE is in the kWh)
                        + gpus x board_w / 1000 x hosting_usd_per_kw_month   (space, cooling, staff per kW)

    Against renting the same fleet: the purchase is paid at month 0 and the running costs
    (electricity and hosting) every month, so owning breaks even after
    purchase / (rent - running) months, when renting costs more than running at all."""

    gpus: int
    purchase_usd_per_gpu: float
    amortization_months: int
    energy_kwh_per_month: float
    electricity_usd_per_kwh: float
    power_w: float  # board power per GPU: what hosting is charged on
    hosting_usd_per_kw_month: float
    rented_monthly_cost_usd: float | None

    @property
    def purchase_usd(self) -> float:
        return cents(self.gpus * self.purchase_usd_per_gpu)

    @property
    def amortization_usd_per_month(self) -> float:
        return cents(self.gpus * self.purchase_usd_per_gpu / self.amortization_months)

    @property
    def electricity_usd_per_month(self) -> float:
        return cents(self.energy_kwh_per_month * self.electricity_usd_per_kwh)

    @property
    def hosting_usd_per_month(self) -> float:
        return cents(self.gpus * self.power_w / 1000 * self.hosting_usd_per_kw_month)

    @property
    def running_usd_per_month(self) -> float:
        return cents(self.electricity_usd_per_month + self.hosting_usd_per_month)

    @property
    def owned_monthly_cost_usd(self) -> float:
        return cents(self.amortization_usd_per_month + self.running_usd_per_month)

    @property
    def break_even_months(self) -> float | None:
        """Months until renting has cost more than buying and running; None when renting costs
        no more than running (owning never catches up) or there is no rent to compare."""
        rent = self.rented_monthly_cost_usd
        if rent is None or rent <= self.running_usd_per_month:
            return None
        return self.purchase_usd / (rent - self.running_usd_per_month)

    def cumulative(self, months: int) -> list[tuple[int, float, float | None]]:
        """(month, spent owning, spent renting) at the end of each month 0..`months`: the
        purchase up front then the running costs, against the rent."""
        rent = self.rented_monthly_cost_usd
        return [
            (
                month,
                cents(self.purchase_usd + month * self.running_usd_per_month),
                None if rent is None else cents(month * rent),
            )
            for month in range(months + 1)
        ]


def hosted_api_monthly_usd(
    requests_per_s: float,
    prompt_tokens: float,
    output_tokens: float,
    usd_per_million_input: float,
    usd_per_million_output: float,
    hours_per_month: float,
) -> float:
    """The same traffic on a per-token API for a month: its prompts at the input price, its
    answers at the output price."""
    per_request = (prompt_tokens * usd_per_million_input + output_tokens * usd_per_million_output) / 1e6
    return cents(requests_per_s * 3600 * hours_per_month * per_request)


# A fleet's cost per number of replicas carrying its peak: (the highest average request rate
# those replicas carry, the fleet's monthly cost at that rate, spares and zones included).
FleetSteps = Callable[[int], tuple[float, float]]
# The most replicas a break-even search looks at (a fleet of a million replicas is no plan).
MAX_BREAK_EVEN_REPLICAS = 1_000_000


def break_even_requests_per_s(steps: FleetSteps, api_usd_per_month_per_rps: float, period: int = 1) -> float | None:
    """The average request rate from which self-hosting stays cheaper than the API.

    The fleet's cost is a staircase: C_n for any rate in (R_{n-1}, R_n], where n replicas carry
    the peak; the API's is a line A x rate. Self-hosting is cheaper throughout step n when
    C_n <= A x R_{n-1}. Zones and MIG cards make the staircase repeat every `period` steps, so
    the first n from which that holds for `period` steps in a row holds for good once the line
    is steeper than the staircase; the break-even is in the step before it: at C/A if the line
    crosses that step, else where the next step starts. None when the API is cheaper at any
    rate (its line is no steeper than the fleet's marginal cost) or beyond the search."""
    if api_usd_per_month_per_rps <= 0:
        return None

    def cheaper_throughout(n: int) -> bool:
        return all(
            steps(m)[1] <= api_usd_per_month_per_rps * (steps(m - 1)[0] if m > 1 else 0.0) for m in range(n, n + period)
        )

    high = 2
    while not cheaper_throughout(high):
        if high >= MAX_BREAK_EVEN_REPLICAS:
            return None
        high = min(high * 2, MAX_BREAK_EVEN_REPLICAS)  # the last look is at the limit itself
    low = 1  # cheaper_throughout(1) is never true: one replica costs something at no traffic
    while high - low > 1:
        mid = (low + high) // 2
        if cheaper_throughout(mid):
            high = mid
        else:
            low = mid
    before = high - 1  # the last step the API wins at its left end
    rate, monthly = steps(before)
    return min(monthly / api_usd_per_month_per_rps, rate)

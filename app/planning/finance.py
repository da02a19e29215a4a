"""/v1/fleet's money and energy beyond the on-demand bill: the prices a plan uses, how its
fleet is paid for over the forecast (pricing=optimize: committed, on demand, spot), the energy
it draws, owning it instead of renting it, and a hosted per-token API for the same traffic.

Every figure is computed by app/sizing (procurement, energy, cost) from the chosen plan; this
module picks the prices (the request's, else the catalog card's), refuses a mode whose price
is missing, and lays the answers out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from app.sizing import cost as cost_mod
from app.sizing import energy as energy_mod
from app.sizing import fleet as fleet_mod
from app.sizing.fleet_plan import FleetInputs, FleetPlan, Period
from app.sizing.procurement import (
    FLAT_HORIZON_MONTHS,
    FLAT_PERIOD_MONTHS,
    SPOT,
    TERM_MONTHS,
    Need,
    PeriodSplit,
    Procurement,
    ProcurementProblem,
    Rates,
    committed_hours,
)
from app.sizing.specs import GpuPrices, GpuSpec
from app.sizing.vocabulary import Pricing

from .answers import (
    EnergyDrawn,
    EnergyFigures,
    FleetFinance,
    HostedApi,
    OwnershipAnswer,
    OwnershipMonth,
    PeriodFinance,
    PeriodProcured,
    PoolPower,
    PoolsEnergy,
    PricesUsed,
    ProcurementAnswer,
    ProcurementCommitment,
    ProcurementPeriod,
    ProcurementRates,
)
from .errors import InvalidRequest
from .mix import MixPlan
from .procurement import solve
from .requests import Finance, FleetRequest

# The months an owned-versus-rented line runs to at most.
MAX_OWNERSHIP_MONTHS = 240
# What each commitment term's rate is called in `prices`.
TERM_PRICES = {"1y": "reserved_1y_usd_per_hour", "3y": "reserved_3y_usd_per_hour"}


def _missing(name: str, why: str) -> InvalidRequest:
    message = f"{why}: the GPU has no {name} in the catalog; give prices.{name}"
    return InvalidRequest(message, {f"prices.{name}": [message]})


def card_prices(plan: FleetPlan, overrides: GpuPrices) -> GpuPrices:
    """The plan's card's prices and power with the request's in their place where it gives them."""
    return _with_overrides(plan.fit.target.card.prices, overrides)


def _with_overrides(card: GpuPrices, overrides: GpuPrices) -> GpuPrices:
    return GpuPrices(
        **{
            f.name: getattr(overrides, f.name) if getattr(overrides, f.name) is not None else getattr(card, f.name)
            for f in fields(GpuPrices)
        }
    )


def prices_used(plan: FleetPlan, prices: GpuPrices) -> PricesUsed:
    """The prices the answer is computed with, per whole card (the request's or the catalog's)."""
    return PricesUsed(plan.price_per_gpu_hour_usd, prices)


# --------------------------------------------------------------------------- energy


def utilization(plan: FleetPlan) -> float:
    """How busy the fleet's GPUs are on average: the average traffic over what every replica of
    the fleet (spares included: they are powered too) carries at saturation; without a
    queueing model, at the replica's capacity."""
    size = plan.size
    if plan.queueing is not None:
        full = size.replicas_total * plan.queueing.saturation_rate_per_s
        return plan.demand.requests_per_s / full if full > 0 else 0.0
    full = size.replicas_total * plan.capacity.tokens_per_s
    return plan.demand.average_tokens_per_s / full if full > 0 else 0.0


def energy(plan: FleetPlan, prices: GpuPrices, pue: float, hours_per_month: float) -> energy_mod.Energy | None:
    """The plan's draw, or None when the card's board or idle power is not known."""
    if prices.power_w is None or prices.idle_power_w is None:
        return None
    return energy_mod.fleet_energy(
        plan.size.gpus_total, utilization(plan), prices.power_w, prices.idle_power_w, hours_per_month, pue
    )


def energy_figures(plan: FleetPlan, drawn: energy_mod.Energy | None, finance: Finance) -> EnergyFigures:
    """energy_kwh_per_month, energy_wh_per_million_tokens (output tokens) and, with a grid
    intensity, co2e_kg_per_month; None without the card's power figures."""
    return combined_energy_figures([drawn], plan.demand.average_tokens_per_s, finance)


def combined_energy_figures(
    parts: Sequence[energy_mod.Energy | None], output_tokens_per_s: float, finance: Finance
) -> EnergyFigures:
    """The energy figures of pools serving the same traffic together (None when any pool's
    power is not known)."""
    if not parts or any(part is None for part in parts):
        return EnergyFigures(None, None, None)
    known = [part for part in parts if part is not None]
    kwh = math.fsum(part.kwh_per_month for part in known)
    grid = finance.grid_g_co2_per_kwh
    return EnergyFigures(
        energy_kwh_per_month=kwh,
        energy_wh_per_million_tokens=energy_mod.wh_per_million_tokens(
            kwh, output_tokens_per_s, known[0].hours_per_month
        ),
        co2e_kg_per_month=None if grid is None else energy_mod.co2e_kg(kwh, grid),
    )


def _bases(bases: set[str]) -> str:
    """The energy basis of pools together: the model's, or what each pool's figures lack."""
    return ENERGY_BASIS if bases <= {ENERGY_BASIS} else "; ".join(sorted(bases - {ENERGY_BASIS}))


def pools_energy(plans: Sequence[FleetPlan], request: FleetRequest) -> tuple[PoolsEnergy, list[PoolPower]]:
    """Pools of one plan (disaggregated prefill and decode) serving the same requests: the
    plan's energy figures, and each pool's own (energy_kwh_per_month and its `energy`)."""
    finance, hours = request.finance, request.traffic.hours_per_month
    prices = [card_prices(plan, finance.prices) for plan in plans]
    drawn = [energy(plan, price, finance.pue, hours) for plan, price in zip(plans, prices, strict=True)]
    output = plans[-1].demand.average_tokens_per_s if plans else 0.0
    together = PoolsEnergy(
        combined_energy_figures(drawn, output, finance), _bases({energy_basis(price) for price in prices})
    )
    per_pool = [
        PoolPower(
            energy_kwh_per_month=None if part is None else part.kwh_per_month,
            energy=energy_drawn(part),
            fleet_utilization=utilization(plan),
            prices=prices_used(plan, price),
        )
        for plan, price, part in zip(plans, prices, drawn, strict=True)
    ]
    return together, per_pool


def energy_drawn(drawn: energy_mod.Energy | None) -> EnergyDrawn | None:
    if drawn is None:
        return None
    return EnergyDrawn(
        gpus=drawn.gpus,
        utilization=drawn.utilization,
        power_per_gpu_w=drawn.power_per_gpu_w,
        pue=drawn.pue,
        power_kw=drawn.power_kw,
        hours_per_month=drawn.hours_per_month,
    )


ENERGY_BASIS = (
    "idle power plus the rest of board power in proportion to the fleet's utilization (its average traffic over "
    "what all its replicas, spares included, carry at saturation; a mixed fleet's pools: at their capacity at "
    "the SLO), times PUE"
)


def energy_basis(prices: GpuPrices) -> str:
    """How the energy figures were made, or which power figure they lack."""
    missing = [name for name in ("power_w", "idle_power_w") if getattr(prices, name) is None]
    if not missing:
        return ENERGY_BASIS
    names = " and ".join(f"prices.{name}" for name in missing)
    return f"not known: the GPU's {' and '.join(missing)} is not in the catalog; give {names}"


def mix_energy(
    plan: MixPlan, gpus: Sequence[tuple[str, GpuSpec]], request: FleetRequest
) -> tuple[PoolsEnergy, list[PoolPower]]:
    """A mixed fleet's energy figures and each pool's. A pool's utilization is its average load
    (its peak load without the headroom, over the peak ratio) over all its replicas, in units
    of a replica's capacity at the SLO: above the saturation rate's share, so an upper end."""
    finance, traffic = request.finance, request.traffic
    specs = dict(gpus)
    drawn: list[energy_mod.Energy | None] = []
    bases = set()
    per_pool: list[PoolPower] = []
    for pool in plan.pools:
        spec = specs[pool.kind.gpu_label]
        prices = _with_overrides(spec.prices, finance.prices)
        bases.add(energy_basis(prices))
        busy = pool.size.load / (1 + traffic.redundancy.headroom) / traffic.peak_to_average
        share = busy / pool.size.replicas_total if pool.size.replicas_total else 0.0
        part = None
        if prices.power_w is not None and prices.idle_power_w is not None:
            part = energy_mod.fleet_energy(
                pool.size.gpus, share, prices.power_w, prices.idle_power_w, traffic.hours_per_month, finance.pue
            )
        drawn.append(part)
        per_pool.append(
            PoolPower(
                energy_kwh_per_month=None if part is None else part.kwh_per_month,
                energy=energy_drawn(part),
                fleet_utilization=share,
                prices=PricesUsed(pool.kind.price_per_card_hour_usd, prices),
            )
        )
    buckets = plan.problem.buckets
    output = traffic.requests_per_s * math.fsum(b.share * b.output_tokens for b in buckets)
    return PoolsEnergy(combined_energy_figures(drawn, output, finance), _bases(bases)), per_pool


# --------------------------------------------------------------------------- owning


# What owning is compared with: the same fleet rented, or a forecast's fleets rented as it goes.
RENTED_SAME_FLEET = "the same fleet rented on demand every month"
RENTED_FORECAST = (
    "the forecast's fleet rented on demand as each period needs it: the average of its periods' monthly costs "
    "(the owned fleet is the busiest period's, its electricity at that period's load: an upper end)"
)


def rented_monthly_cost(chosen: FleetPlan, forecast: Sequence[tuple[Period, FleetPlan]]) -> float | None:
    """What renting costs a month beside owning: the plan's on-demand bill, or with a forecast
    the average of its periods' (they last alike), since a rented fleet shrinks when the
    traffic does and an owned one does not. None without an on-demand price."""
    if not forecast:
        return chosen.monthly_cost_usd
    costs = [plan.monthly_cost_usd for _, plan in forecast]
    if any(cost is None for cost in costs):
        return None
    return cost_mod.cents(math.fsum(cost for cost in costs if cost is not None) / len(costs))


def ownership(
    plan: FleetPlan,
    prices: GpuPrices,
    drawn: energy_mod.Energy | None,
    finance: Finance,
    rented_monthly_cost_usd: float | None,
) -> cost_mod.Ownership | None:
    """Owning the plan's fleet (None when not asked) against renting at
    `rented_monthly_cost_usd`. Refuses, naming the price, without a purchase price or the power
    figures the running costs need."""
    asked = finance.ownership
    if asked is None:
        return None
    if prices.purchase_usd is None:
        raise _missing("purchase_usd", "ownership needs a purchase price")
    if drawn is None or prices.power_w is None:
        raise _missing("power_w" if prices.power_w is None else "idle_power_w", "ownership needs the power figures")
    return cost_mod.Ownership(
        gpus=plan.size.gpus_total,
        purchase_usd_per_gpu=prices.purchase_usd,
        amortization_months=asked.amortization_months,
        energy_kwh_per_month=drawn.kwh_per_month,
        electricity_usd_per_kwh=asked.electricity_usd_per_kwh,
        power_w=prices.power_w,
        hosting_usd_per_kw_month=asked.hosting_usd_per_kw_month,
        rented_monthly_cost_usd=rented_monthly_cost_usd,
    )


def ownership_answer(owned: cost_mod.Ownership | None, finance: Finance, rented_basis: str) -> OwnershipAnswer | None:
    if owned is None or finance.ownership is None:
        return None
    even = owned.break_even_months
    months = owned.amortization_months if even is None else max(owned.amortization_months, math.ceil(even))
    rent = owned.rented_monthly_cost_usd
    if rent is None:
        why = "no on-demand price to compare with"
    elif even is None:
        why = "renting costs no more a month than running an owned fleet (electricity and hosting): owning never pays"
    else:
        saved = rent - owned.running_usd_per_month
        why = (
            f"the purchase ({owned.purchase_usd:,.2f} USD) is paid back by the {saved:,.2f} USD a month owning "
            f"saves against renting once it runs: after {even:.1f} months"
        )
    return OwnershipAnswer(
        gpus=owned.gpus,
        purchase_usd=owned.purchase_usd,
        amortization_months=owned.amortization_months,
        electricity_usd_per_kwh=owned.electricity_usd_per_kwh,
        hosting_usd_per_kw_month=owned.hosting_usd_per_kw_month,
        amortization_usd_per_month=owned.amortization_usd_per_month,
        electricity_usd_per_month=owned.electricity_usd_per_month,
        hosting_usd_per_month=owned.hosting_usd_per_month,
        owned_monthly_cost_usd=owned.owned_monthly_cost_usd,
        rented_monthly_cost_usd=rent,
        rented_basis=rented_basis,
        break_even_months=even,
        why=why,
        months=tuple(
            OwnershipMonth(month, owned_usd, rented_usd)
            for month, owned_usd, rented_usd in owned.cumulative(min(months, MAX_OWNERSHIP_MONTHS))
        ),
    )


# --------------------------------------------------------------------------- a hosted API


def hosted_api(plan: FleetPlan, finance: Finance, traffic: FleetInputs) -> HostedApi:
    """The same traffic on a per-token API, and the traffic from which self-hosting on the
    plan's replica (on demand, with the request's peak ratio, spares and zones) stays cheaper."""
    in_price, out_price = finance.api_usd_per_million_input, finance.api_usd_per_million_output
    if in_price is None or out_price is None:
        return HostedApi(None, None, None)
    demand, hours = plan.demand, traffic.hours_per_month
    hosted = cost_mod.hosted_api_monthly_usd(
        demand.requests_per_s, demand.prompt_tokens, demand.output_tokens, in_price, out_price, hours
    )
    per_request = (demand.prompt_tokens * in_price + demand.output_tokens * out_price) / 1e6
    even = _break_even_requests_per_s(plan, traffic.redundancy, per_request * 3600 * hours, hours)
    fleet_cost = plan.monthly_cost_usd
    if fleet_cost is None:
        comparison = "no on-demand price for the fleet to compare with"
    elif hosted < fleet_cost:
        comparison = f"the hosted API costs {fleet_cost - hosted:,.2f} USD a month less at this traffic"
    else:
        comparison = f"self-hosting costs {hosted - fleet_cost:,.2f} USD a month less at this traffic"
    if fleet_cost is not None and even is None:
        comparison += "; the API is cheaper at any traffic (its price per request is below the fleet's)"
    elif even is not None:
        comparison += f"; self-hosting stays cheaper from {even * fleet_mod.SECONDS_PER_DAY:,.0f} requests/day"
    return HostedApi(
        hosted_api_monthly_cost_usd=hosted,
        break_even_requests_per_day=None if even is None else even * fleet_mod.SECONDS_PER_DAY,
        hosted_api_comparison=comparison,
    )


def _break_even_requests_per_s(
    plan: FleetPlan, redundancy: fleet_mod.Redundancy, api_usd_per_month_per_rps: float, hours: float
) -> float | None:
    card = plan.price_per_gpu_hour_usd
    capacity = plan.capacity.tokens_per_s
    if card is None or capacity <= 0:
        return None
    prompt, output = plan.demand.prompt_tokens, plan.demand.output_tokens
    ratio = plan.demand.peak_to_average
    per_card = plan.replicas_per_card

    def steps(replicas: int) -> tuple[float, float]:
        """n replicas carrying the peak: the highest average rate they carry, and the fleet's cost there."""
        rate = replicas * capacity / output / (1 + redundancy.headroom) / ratio
        sized = fleet_mod.size_fleet(
            fleet_mod.Demand(rate, ratio, prompt, output),
            capacity,
            plan.fit.tensor_parallel,
            redundancy,
            per_card,
        )
        return rate, sized.gpus_total * card * hours

    period = max(1, redundancy.zones - 1) * (per_card or 1)
    return cost_mod.break_even_requests_per_s(steps, api_usd_per_month_per_rps, period)


# --------------------------------------------------------------------------- procurement


def procurement(
    periods: Sequence[tuple[str, FleetPlan]], prices: GpuPrices, finance: Finance, period_months: int, hours: float
) -> Procurement:
    """The cheapest split of the periods' fleets into committed, on-demand and spot GPUs, with
    the rates the card has (or the request gives); a mode asked for without its price is
    refused naming it, one not asked is left out and said why."""
    base = periods[0][1]
    on_demand = base.price_per_gpu_hour_usd
    if on_demand is None:
        raise _missing("on_demand_usd_per_hour", "pricing=optimize needs an on-demand price")
    horizon = len(periods) * period_months
    committed: dict[str, float] = {}
    not_offered: dict[str, str] = {}
    for term, months in TERM_MONTHS.items():
        name, what = TERM_PRICES[term], f"{term} commitment"
        rate = getattr(prices, name)
        if finance.commitments is not None and term not in finance.commitments:
            not_offered[what] = "not asked (commitments)"
        elif months > horizon:
            not_offered[what] = f"its {months} months are longer than the {horizon}-month horizon"
        elif rate is None:
            if finance.commitments is not None:
                raise _missing(name, f"a {what} needs its rate")
            not_offered[what] = f"the GPU has no {name} (give prices.{name})"
        else:
            committed[term] = rate
    spot_rate, interruptions = prices.spot_usd_per_hour, prices.spot_interruptions_per_hour
    if finance.spot is False:
        not_offered[SPOT] = "not asked (spot=false)"
        spot_rate = None
    elif spot_rate is None or interruptions is None:
        name = "spot_usd_per_hour" if spot_rate is None else "spot_interruptions_per_hour"
        if finance.spot:
            raise _missing(name, "spot needs its price and its interruption rate")
        not_offered[SPOT] = f"the GPU has no {name} (give prices.{name})"
        spot_rate = None
    rates = Rates(on_demand, committed, spot_rate, interruptions if spot_rate is not None and interruptions else 0.0)
    per_unit = 1 if base.replicas_per_card else base.fit.tensor_parallel
    needs = []
    for label, plan in periods:
        size = plan.size
        floor = fleet_mod.gpus_for(size.min_replicas, plan.fit.tensor_parallel, plan.replicas_per_card)
        units = size.gpus_total // per_unit
        needs.append(
            Need(
                label,
                period_months * hours,
                units,
                min(units, floor // per_unit),
                committed_hours(period_months, hours),
            )
        )
    return solve(ProcurementProblem(tuple(needs), per_unit, rates, period_months, hours, not_offered))


def flat_periods(plan: FleetPlan, horizon_months: int, period_months: int) -> list[tuple[str, FleetPlan]]:
    """A traffic without a forecast, flat over the horizon: one period per `period_months`."""
    return [
        (f"month {start}" if period_months == 1 else f"months {start}-{start + period_months - 1}", plan)
        for start in range(1, horizon_months + 1, period_months)
    ]


def procurement_answer(proc: Procurement) -> ProcurementAnswer:
    problem, rates = proc.problem, proc.problem.rates
    return ProcurementAnswer(
        horizon_months=problem.horizon_months,
        period_months=problem.period_months,
        rates=ProcurementRates(
            on_demand_usd_per_hour=rates.on_demand_usd_per_hour,
            committed_usd_per_hour=dict(rates.committed_usd_per_hour),
            spot_usd_per_hour=rates.spot_usd_per_hour,
            spot_share=rates.spot_share if rates.spot_usd_per_hour is not None else None,
        ),
        commitment=tuple(
            ProcurementCommitment(c.term, c.first_period, c.last_period, c.gpus, c.usd_per_hour, c.months, c.cost_usd)
            for c in proc.commitments
        ),
        committed_gpus=proc.committed_gpus,
        periods=tuple(procurement_period(split) for split in proc.periods),
        cost_usd=proc.cost_usd,
        on_demand_cost_usd=proc.on_demand_cost_usd,
        savings_usd=proc.savings_usd,
        monthly_cost_usd=proc.monthly_cost_usd,
        on_demand_monthly_cost_usd=proc.on_demand_monthly_cost_usd,
        solver_status=proc.status,
        solve_s=proc.solve_s,
        why=tuple(proc.why),
    )


def procurement_period(split: PeriodSplit) -> ProcurementPeriod:
    return ProcurementPeriod(
        period=split.period,
        hours=split.hours,
        committed_hours=split.committed_hours,
        gpus_needed=split.gpus_needed,
        gpus_protected=split.gpus_protected,
        committed_gpus=split.committed_gpus,
        committed_gpus_by_term=dict(split.committed_gpus_by_term),
        on_demand_gpus=split.on_demand_gpus,
        spot_gpus=split.spot_gpus,
        committed_cost_usd=split.committed_cost_usd,
        on_demand_cost_usd=split.on_demand_cost_usd,
        spot_cost_usd=split.spot_cost_usd,
        cost_usd=split.cost_usd,
        monthly_cost_usd=split.monthly_cost_usd,
        on_demand_only_cost_usd=split.on_demand_only_cost_usd,
    )


# --------------------------------------------------------------------------- the answer


@dataclass(frozen=True)
class FinanceAnswer:
    """The finance fields of a fleet answer, those of each forecast period (in order), the
    procurement solved (pricing=optimize) and, for a flat traffic, its periods as CSV rows."""

    fields: FleetFinance
    periods: tuple[PeriodFinance, ...]
    procurement: Procurement | None
    rows: tuple[ProcurementPeriod, ...] | None


def answer(chosen: FleetPlan, forecast: Sequence[tuple[Period, FleetPlan]], request: FleetRequest) -> FinanceAnswer:
    """What the chosen plan (and each forecast period's) costs beyond its on-demand bill, and
    draws: energy on every answer, the rest as the request asks."""
    finance, traffic = request.finance, request.traffic
    prices = card_prices(chosen, finance.prices)
    hours = traffic.hours_per_month
    drawn = energy(chosen, prices, finance.pue, hours)
    # Ownership refuses a missing price before procurement does, as the answer lists them.
    owned = ownership_answer(
        ownership(chosen, prices, drawn, finance, rented_monthly_cost(chosen, forecast)),
        finance,
        RENTED_FORECAST if forecast else RENTED_SAME_FLEET,
    )
    solved: Procurement | None = None
    if finance.pricing == Pricing.OPTIMIZE:
        if forecast:
            months = finance.period_months or 1
            periods = [(period.period, plan) for period, plan in forecast]
        else:
            months = finance.period_months or FLAT_PERIOD_MONTHS
            periods = flat_periods(chosen, finance.horizon_months or FLAT_HORIZON_MONTHS, months)
        solved = procurement(periods, prices, finance, months, hours)
    fields_ = FleetFinance(
        pricing=finance.pricing,
        prices=prices_used(chosen, prices),
        energy_figures=energy_figures(chosen, drawn, finance),
        fleet_utilization=utilization(chosen),
        energy=energy_drawn(drawn),
        energy_basis=energy_basis(prices),
        hosted=hosted_api(chosen, finance, traffic),
        ownership=owned,
        procurement=None if solved is None else procurement_answer(solved),
    )
    splits = () if solved is None else solved.periods
    period_fields = tuple(
        PeriodFinance(
            energy_figures=energy_figures(plan, energy(plan, prices, finance.pue, hours), finance),
            fleet_utilization=utilization(plan),
            hosted_api_monthly_cost_usd=hosted_api(plan, finance, traffic).hosted_api_monthly_cost_usd,
            procured=_procured(splits[index]) if index < len(splits) else None,
        )
        for index, (_, plan) in enumerate(forecast)
    )
    rows = None if forecast or solved is None else tuple(procurement_period(split) for split in solved.periods)
    return FinanceAnswer(fields_, period_fields, solved, rows)


def _procured(split: PeriodSplit) -> PeriodProcured:
    """A forecast period's part of the split."""
    return PeriodProcured(
        committed_gpus=split.committed_gpus,
        on_demand_gpus=split.on_demand_gpus,
        spot_gpus=split.spot_gpus,
        procured_cost_usd=split.cost_usd,
        procured_monthly_cost_usd=split.monthly_cost_usd,
    )

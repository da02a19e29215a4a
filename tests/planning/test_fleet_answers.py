"""The fleet planner's typed answers (app/planning/answers.py's FleetAnswer), one type per
layout, as the planners return them before any HTTP: their figures worked out here by hand
from the request and the catalog card, and which keys their wire form carries (a key only
some requests ask for is left out, not null, when the request does not)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from flask import Flask

from app.api import lookup
from app.api.schemas import PLANNING_BY_PATH
from app.api.wire import dump
from app.planning import deployment, fleet
from app.planning.answers import (
    AggregatedAnswer,
    BoundedOption,
    DisaggregatedAnswer,
    FleetPeriod,
    MixedAnswer,
    PoolRow,
    ProcurementAnswer,
    ProcurementPeriod,
    RankedOption,
    SizedOption,
    UnsizedAnswer,
)
from app.planning.context import Context
from app.sizing.disaggregated import KvTransfer
from app.sizing.procurement import FLAT_HORIZON_MONTHS, FLAT_PERIOD_MONTHS
from app.sizing.vocabulary import FleetLayout, Pricing, Role

HOURS_PER_MONTH = 730
SECONDS_PER_DAY = 86_400
# A measured replica of Llama 3.1 8B on one H100 SXM: 1,000 output tokens/s at 500 tokens an
# answer is 2 requests/s a replica.
MEASURED = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "tensor_parallel": 1,
    "per_replica_tokens_per_s": 1000,
    "prompt_tokens": 1000,
    "output_tokens": 500,
    "engine": "ideal",
}
REQUESTS_PER_REPLICA_S = 1000 / 500


@pytest.fixture(scope="module")
def context(app: Flask) -> Context:
    with app.test_request_context():
        return Context(lookup.context().catalog)


def _plan(context: Context, payload: dict[str, Any]) -> fleet.PlannedFleet:
    return fleet.plan(PLANNING_BY_PATH["/v1/fleet"].schema.load(payload), context)


def _replicas(requests_per_day: float, spares: int = 1) -> int:
    """fleet.size_fleet's rule at a flat day: whole replicas for the rate, plus the spares."""
    return math.ceil(requests_per_day / SECONDS_PER_DAY / REQUESTS_PER_REPLICA_S) + spares


def test_a_measured_replica_on_a_named_gpu_is_sized_and_priced_by_the_card(context: Context) -> None:
    # 1,555,200 requests a day is 18 requests/s: 9 replicas of one GPU, and the spare.
    planned = _plan(context, {**MEASURED, "requests_per_day": 1_555_200})
    answer = planned.answer
    assert isinstance(answer, AggregatedAnswer) and planned.layout == FleetLayout.AGGREGATED
    assert planned.chosen is not None and planned.rows is None
    assert (answer.size.replicas_total, answer.size.gpus_total) == (10, 10)
    assert answer.requests_per_s == pytest.approx(18.0)
    assert answer.average_tokens_per_s == pytest.approx(18.0 * 500)
    price = context.gpu("h100-sxm")[0].hourly_price_usd
    assert answer.size.price_per_gpu_hour_usd == price
    assert answer.size.monthly_cost_usd == pytest.approx(round(10 * price * HOURS_PER_MONTH, 2))
    assert answer.replica.tokens_per_s == 1000
    # A measured capacity has no queueing model: nothing predicted at the peak, no range.
    assert answer.replica.predicted is None and answer.uncertainty is None
    # Neither ranked (a gpu and its TP are named) nor forecast nor procured: those keys are absent.
    assert (answer.ranking, answer.alternatives, answer.periods) == (None, None, None)
    assert answer.finance.pricing == Pricing.ON_DEMAND and answer.finance.procurement is None
    wire = dump(answer)
    assert not {"options", "options_total", "alternatives", "periods"} & set(wire)
    assert wire["procurement"] is None and wire["ownership"] is None
    assert wire["gpus_total"] == 10 and wire["topology"] == "aggregated"


def test_a_forecast_sizes_each_period_and_its_rows_carry_no_procurement_unasked(context: Context) -> None:
    days = [777_600.0, 1_555_200.0, 2_332_800.0]  # 9, 18 and 27 requests/s
    forecast = [{"period": f"2027-{m:02d}", "requests_per_day": r} for m, r in enumerate(days, 1)]
    planned = _plan(context, {**MEASURED, "forecast": forecast})
    answer = planned.answer
    assert isinstance(answer, AggregatedAnswer) and answer.periods is not None
    assert all(isinstance(period, FleetPeriod) for period in answer.periods)
    assert [p.size.gpus_total for p in answer.periods] == [_replicas(r) for r in days] == [6, 10, 15]
    assert planned.rows == answer.periods
    price = context.gpu("h100-sxm")[0].hourly_price_usd
    for period in answer.periods:
        assert period.size.monthly_cost_usd == pytest.approx(round(period.size.gpus_total * price * HOURS_PER_MONTH, 2))
        assert period.finance.procured is None
    rows = dump(answer)["periods"]
    assert [row["period"] for row in rows] == ["2027-01", "2027-02", "2027-03"]
    assert not {"committed_gpus", "spot_gpus", "procured_cost_usd"} & set(rows[0])


def test_optimized_pricing_of_a_flat_traffic_splits_its_horizon_and_holds_the_solve_in_seconds(
    context: Context,
) -> None:
    planned = _plan(context, {**MEASURED, "requests_per_day": 1_555_200, "pricing": "optimize"})
    answer = planned.answer
    assert isinstance(answer, AggregatedAnswer)
    procured = answer.finance.procurement
    assert isinstance(procured, ProcurementAnswer)
    assert procured.horizon_months == FLAT_HORIZON_MONTHS and procured.period_months == FLAT_PERIOD_MONTHS
    assert len(procured.periods) == FLAT_HORIZON_MONTHS // FLAT_PERIOD_MONTHS
    # Every period of a flat traffic needs the plan's 10 GPUs, however they are had.
    assert all(p.gpus_needed == 10 for p in procured.periods)
    assert all(p.committed_gpus + p.on_demand_gpus + p.spot_gpus >= 10 for p in procured.periods)
    assert procured.savings_usd == pytest.approx(procured.on_demand_cost_usd - procured.cost_usd, abs=0.01)
    # The CSV rows are the split, period by period.
    assert planned.rows == procured.periods and all(isinstance(r, ProcurementPeriod) for r in planned.rows)
    wire = dump(answer)["procurement"]
    assert wire["solve_ms"] == procured.solve_s * 1e3 and "solve_s" not in wire


def test_a_catalog_ranking_numbers_its_eligible_options_and_writes_each_row_by_what_is_known(
    context: Context,
) -> None:
    planned = _plan(context, {"model": "llama-3.1-8b", "requests_per_day": 1e6, "tpot_slo_ms": 40, "limit": 500})
    answer = planned.answer
    assert isinstance(answer, AggregatedAnswer) and answer.ranking is not None and answer.alternatives is None
    rows = answer.ranking.options
    assert len(rows) == answer.ranking.options_total and planned.rows == rows
    heads = [row if isinstance(row, RankedOption) else row.option for row in rows]
    ranked = [head.rank for head in heads if head.eligible]
    assert ranked == list(range(1, len(ranked) + 1))
    assert all(head.rank is None for head in heads if not head.eligible)
    # The chosen plan is rank 1's.
    first = next(row for row, head in zip(rows, heads, strict=True) if head.rank == 1)
    assert isinstance(first, SizedOption) and first.size.sizing.gpus_total == answer.size.gpus_total
    wire = dump(answer)
    assert wire["options_total"] == len(rows)
    for row, written in zip(rows, wire["options"], strict=True):
        if isinstance(row, SizedOption):
            assert written["time_per_token_ms"] == (row.time_per_token_s or 0) * 1e3
            assert written["capacity_bound"] is None and "gpus_total_at_least" not in written
        elif isinstance(row, BoundedOption):
            assert written["capacity_exact"] is False and "gpus_total" not in written
        else:
            assert "capacity_exact" not in written and "gpus_total" not in written


def test_nothing_sized_answers_what_was_tried_and_no_fleet(context: Context) -> None:
    # 405B parameters fit no replica of L4s.
    planned = _plan(context, {"model": "llama-3.1-405b", "gpus": "l4", "requests_per_day": 1e5})
    answer = planned.answer
    assert isinstance(answer, UnsizedAnswer) and planned.chosen is None
    assert answer.meets_slo is False and answer.ranking is not None
    wire = dump(answer)
    tried = ["model", "topology", "status", "meets_slo", "basis", "calibration", "options", "options_total"]
    assert list(wire) == tried


def test_a_disaggregated_plan_holds_both_pools_their_sum_and_the_kv_transfer_in_seconds(context: Context) -> None:
    payload = {
        "model": "llama-3.1-8b",
        "gpu": "h100-sxm",
        "topology": "disaggregated",
        "requests_per_day": 2e6,
        "peak_to_average": 2,
        "prompt_tokens": 8000,
        "output_tokens": 200,
        "ttft_slo_ms": 1000,
        "tpot_slo_ms": 20,
    }
    planned = _plan(context, payload)
    answer = planned.answer
    assert isinstance(answer, DisaggregatedAnswer) and planned.chosen is None
    prefill, decode = answer.prefill_pool, answer.decode_pool
    assert prefill is not None and decode is not None
    gpus = (prefill.size.sizing.gpus_total, decode.size.sizing.gpus_total)
    assert answer.gpus_total == sum(gpus) and answer.pd_ratio == f"{gpus[0]}:{gpus[1]}"
    assert answer.totals is not None
    assert answer.totals.gpus_peak == prefill.size.sizing.gpus_peak + decode.size.sizing.gpus_peak
    # A prefill pool's replicas hand back one token a request: its costs are per prompt token.
    assert prefill.size.prompt_cost is not None and prefill.size.sizing.cost_per_million_output_tokens_usd is None
    assert decode.size.prompt_cost is None
    assert isinstance(answer.kv_transfer, KvTransfer)
    wire = dump(answer)
    assert wire["kv_transfer"]["ms"] == answer.kv_transfer.seconds * 1e3
    assert "cost_per_million_prompt_tokens_usd" in wire["prefill_pool"]
    assert "cost_per_million_prompt_tokens_usd" not in wire["decode_pool"]
    assert "periods" not in wire
    assert planned.rows == (PoolRow(Role.PREFILL, prefill.size), PoolRow(Role.DECODE, decode.size))


def test_a_mix_holds_its_pools_whose_gpus_sum_to_the_mix(context: Context) -> None:
    payload = {
        "model": "llama-3.1-8b",
        "mix": True,
        "gpus": ["l4", "a100-sxm-80gb", "h100-sxm"],
        "requests_per_day": 5e6,
        "ttft_slo_ms": 20_000,
        "tpot_slo_ms": 60,
        "length_buckets": [
            {"prompt_tokens": 100, "output_tokens": 100, "share": 0.95},
            {"prompt_tokens": 120_000, "output_tokens": 200, "share": 0.05},
        ],
    }
    planned = _plan(context, payload)
    answer = planned.answer
    assert isinstance(answer, MixedAnswer) and planned.layout == FleetLayout.MIXED
    mix = answer.mix
    assert sum(pool.size.gpus_total for pool in mix.pools) == mix.gpus_total == answer.gpus_total
    assert mix.monthly_cost_usd == pytest.approx(sum(pool.monthly_cost_usd for pool in mix.pools), abs=0.01)
    # Each bucket's requests are all served by the pools that take it.
    for index, bucket in enumerate(mix.buckets):
        shares = [share.share for pool in mix.pools for share in pool.buckets if share.bucket == index]
        assert sum(shares) == pytest.approx(1.0) and bucket.share in (0.95, 0.05)
    assert mix.periods is None and planned.rows == mix.pools
    wire = dump(answer)
    assert "periods" not in wire["mix"] and wire["mix"]["solve_ms"] == mix.solve_s * 1e3


def test_the_keda_scaled_object_is_typed_from_the_plan(context: Context) -> None:
    """format=keda's ScaledObject as the planner returns it: its bounds are the plan's, the
    cooldown is set only on the way to zero, and an empty query reads as zero load only then."""
    payload = {**MEASURED, "requests_per_day": 3 * REQUESTS_PER_REPLICA_S * SECONDS_PER_DAY}
    for to_zero in (False, True):
        request = PLANNING_BY_PATH["/v1/fleet"].schema.load({**payload, "scale_to_zero": to_zero})
        planned = fleet.plan(request, context)
        assert planned.chosen is not None
        scaled = deployment.keda_scaled_object(planned.chosen, planned.model_label, request)
        size = planned.chosen.size
        assert scaled.min_replicas == (0 if to_zero else size.min_replicas)
        assert scaled.max_replicas == scaled.fallback_replicas == size.max_replicas
        assert (scaled.cooldown_period_s is not None) is to_zero
        assert scaled.cooldown_period_s in (None, scaled.scale_down_window_s)
        # HPA's default window (300 s) is the floor of the scale-in delay.
        assert 300 <= scaled.scale_down_window_s <= 3600
        assert scaled.triggers and all(t.ignore_null_values is to_zero for t in scaled.triggers)
        assert all(t.query.startswith("sum(") for t in scaled.triggers)

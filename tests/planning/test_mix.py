"""Mixed fleets solved (app/planning/mix.py): the integer program against a brute force, the
mix against the best single kind on the seeded catalog, a case built so that mixing must
win, and buckets no kind serves."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import replace

import pytest
from flask import Flask

from app.api import lookup
from app.planning.mix import OPTIMAL, MixPlan, plan_mix, solve
from app.sizing import fleet
from app.sizing.fleet_plan import Arrivals, FleetInputs
from app.sizing.mix import KEEP_PER_BUCKET, LengthBucket, MixKind, MixProblem, build_problem
from app.sizing.plan import PlanInputs
from app.sizing.specs import GpuSpec, ModelSpec
from tests.sizing.specs import H100_SXM, L4, LLAMA_31_8B

HOURS = 730.0


def _kind(name: str, card_price: float, per_card: int | None = None) -> MixKind:
    replica_price = card_price / per_card if per_card else card_price
    return MixKind(name, "3g" if per_card else None, 1, "bf16", replica_price, per_card, card_price)


def _cost(kind: MixKind, replicas: int, spare: int) -> float:
    """A pool of `replicas` carrying the peak, priced by hand: spares on top, MIG on cards."""
    if replicas == 0:
        return 0.0
    if kind.replicas_per_card:
        return (math.ceil(replicas / kind.replicas_per_card) + spare) * kind.price_per_card_hour_usd
    return (replicas + spare) * kind.price_per_replica_hour_usd


def _two_kinds_feasible(loads: Sequence[Sequence[float]], x: tuple[int, int]) -> bool:
    """Can kinds 0 and 1 with x replicas carry every bucket? loads[k][b] = replicas of k that all
    of b needs (inf: k cannot serve b). Fractional knapsack: buckets only one kind serves go
    to it; of the rest, kind 0 takes first those saving kind 1 the most per unit of its own."""
    room0, need1 = float(x[0]), 0.0
    either = []
    for a0, a1 in zip(*loads, strict=True):
        if math.isinf(a0) and math.isinf(a1):
            return False
        if math.isinf(a1):
            room0 -= a0
        elif math.isinf(a0):
            need1 += a1
        else:
            either.append((a1 / a0, a0, a1))
    if room0 < -1e-9:
        return False
    for _, a0, a1 in sorted(either, reverse=True):
        taken = min(1.0, max(0.0, room0) / a0)
        room0 -= taken * a0
        need1 += (1 - taken) * a1
    return need1 <= x[1] + 1e-9


def test_the_integer_program_finds_the_optimum_a_brute_force_finds():
    kinds = (_kind("cheap", 1.0), _kind("sliced", 3.3, per_card=3))
    rates = (7.0, 3.0, 2.0)
    # Kind 0 cannot serve the last bucket; the slices are slower on the first.
    capacity = ((2.5, 1.3, None), (1.9, 1.4, 0.9))
    spare = 1
    problem = MixProblem(
        kinds=kinds,
        buckets=(LengthBucket(100, 100, 0.5), LengthBucket(1000, 100, 0.25), LengthBucket(4000, 100, 0.25)),
        capacity=capacity,
        rates=rates,
        redundancy=fleet.Redundancy(spare_replicas=spare),
        hours_per_month=HOURS,
    )
    loads = [[math.inf if c is None else r / c for r, c in zip(rates, row, strict=True)] for row in capacity]
    bound = [math.ceil(sum(v for v in row if math.isfinite(v))) + 1 for row in loads]
    best = min(
        (_cost(kinds[0], x0, spare) + _cost(kinds[1], x1, spare), x0, x1)
        for x0, x1 in itertools.product(range(bound[0] + 1), range(bound[1] + 1))
        if _two_kinds_feasible(loads, (x0, x1))
    )
    answer = solve(problem)
    assert answer.status == OPTIMAL and answer.meets_slo
    assert answer.monthly_cost_usd == pytest.approx(best[0] * HOURS, abs=0.01)
    assert {p.kind.gpu_label: p.size.replicas for p in answer.pools} == {
        kinds[0].gpu_label: best[1],
        kinds[1].gpu_label: best[2],
    }
    # Every bucket is served in full, and the bucket kind 0 cannot serve is all on the slices.
    served = {b: 0.0 for b in range(3)}
    for pool in answer.pools:
        for part in pool.buckets:
            served[part.bucket] += part.share
    assert served == pytest.approx({0: 1.0, 1: 1.0, 2: 1.0})
    assert all(part.bucket != 2 for pool in answer.pools if pool.kind is kinds[0] for part in pool.buckets)


def test_on_one_bucket_splitting_it_over_kinds_pays_for_each_pool_only_when_it_is_cheaper():
    kinds = (_kind("a", 2.0), _kind("b", 3.0), _kind("c", 5.0))
    capacity = ((1.0,), (1.6,), (3.0,))
    rate = 7.5
    for spare, zones in ((0, 1), (1, 1), (2, 1), (1, 3)):
        problem = MixProblem(
            kinds=kinds,
            buckets=(LengthBucket(100, 100, 1.0),),
            capacity=capacity,
            rates=(rate,),
            redundancy=fleet.Redundancy(spare_replicas=spare, zones=zones),
            hours_per_month=HOURS,
        )
        if zones == 1:
            # x replicas carry the bucket when sum_k x_k cap_k >= rate; each used pool adds its spares.
            best = min(
                sum(_cost(kind, n, spare) for kind, n in zip(kinds, x, strict=True))
                for x in itertools.product(range(9), repeat=3)
                if sum(n * c[0] for n, c in zip(x, capacity, strict=True)) >= rate - 1e-9
            )
        else:
            # x per zone: any zones - 1 zones carry the bucket; no spare on top.
            best = min(
                sum(zones * n * kind.price_per_replica_hour_usd for kind, n in zip(kinds, x, strict=True))
                for x in itertools.product(range(9), repeat=3)
                if sum((zones - 1) * n * c[0] for n, c in zip(x, capacity, strict=True)) >= rate - 1e-9
            )
        assert solve(problem).monthly_cost_usd == pytest.approx(best * HOURS, abs=0.01)


@pytest.fixture(scope="module")
def catalog(app: Flask) -> tuple[ModelSpec, PlanInputs, list[tuple[str, GpuSpec]]]:
    with app.test_request_context():
        context = lookup.context()
        model, _ = context.model("llama-3.1-8b")
        return model, PlanInputs(engine=context.engine("vllm")), context.gpu_list()


def _check_pools(answer: MixPlan) -> None:
    """Each pool carries its load, and every served bucket is served in full."""
    served: dict[int, float] = {}
    for pool in answer.pools:
        assert pool.size.replicas >= math.fsum(part.load for part in pool.buckets) - 1e-6
        for part in pool.buckets:
            assert part.load == pytest.approx(part.requests_per_s / part.capacity_per_replica)
            served[part.bucket] = served.get(part.bucket, 0.0) + part.share
    assert served == pytest.approx(dict.fromkeys(answer.problem.served, 1.0))
    assert answer.monthly_cost_usd == pytest.approx(sum(p.monthly_cost_usd for p in answer.pools), abs=0.02)


@pytest.mark.parametrize("requests_per_day", [1e6, 1e7])
def test_a_mix_over_l4_a100_and_h100_costs_no_more_than_the_best_single_kind(catalog, requests_per_day):
    model, plan, gpus = catalog
    chosen = [(label, gpu) for label, gpu in gpus if label in ("l4", "a100-sxm-80gb", "h100-sxm")]
    assert len(chosen) == 3
    inputs = FleetInputs(
        requests_per_day / 86_400, peak_to_average=2.0, ttft_slo_ms=2000, tpot_slo_ms=50, arrivals=Arrivals()
    )
    buckets = [LengthBucket(200, 200, 0.6), LengthBucket(2000, 400, 0.25), LengthBucket(8000, 200, 0.15)]
    answer = plan_mix(model, chosen, plan, inputs, buckets)
    assert answer.status == OPTIMAL and answer.meets_slo
    assert answer.single is not None
    assert answer.monthly_cost_usd <= answer.single.monthly_cost_usd
    assert {p.kind.gpu_label for p in answer.pools} <= {"l4", "a100-sxm-80gb", "h100-sxm"}
    _check_pools(answer)


def test_mixing_wins_when_a_cheap_card_serves_the_short_requests_it_alone_can_hold():
    # Llama 3.1 8B at TP 1 under engine=ideal: an L4 priced at 0.15 USD/h serves short requests;
    # its prefill of 8,000 tokens misses the 1 s TTFT, which an H100 at 3 USD/h meets.
    h100 = replace(H100_SXM, hourly_price_usd=3.0, mig_profiles=())
    l4 = replace(L4, hourly_price_usd=0.15)
    inputs = FleetInputs(1e7 / 86_400, ttft_slo_ms=1000, tpot_slo_ms=100, arrivals=Arrivals())
    buckets = [LengthBucket(200, 200, 0.8), LengthBucket(8000, 200, 0.2)]
    answer = plan_mix(LLAMA_31_8B, [("l4", l4), ("h100", h100)], PlanInputs(tensor_parallel=1), inputs, buckets)
    problem = answer.problem
    by_gpu = {kind.gpu_label: k for k, kind in enumerate(problem.kinds)}
    short_l4, long_l4 = problem.capacity[by_gpu["l4"]]
    short_h100, long_h100 = problem.capacity[by_gpu["h100"]]
    assert long_l4 is None and short_l4 is not None and short_h100 is not None and long_h100 is not None
    # The case: the L4 is cheaper per short request/s than the H100.
    assert 0.15 / short_l4 < 3.0 / short_h100
    short_rate, long_rate = (1e7 / 86_400 * b.share for b in buckets)
    assert problem.rates == pytest.approx((short_rate, long_rate))
    # One kind alone: only the H100 serves both; ceil of its load, + 1 spare, at 3 USD/h.
    single = (math.ceil(short_rate / short_h100 + long_rate / long_h100) + 1) * 3.0 * HOURS
    # One mix (not necessarily the best): the short on L4s and the long on H100s, a spare each.
    split = ((math.ceil(short_rate / short_l4) + 1) * 0.15 + (math.ceil(long_rate / long_h100) + 1) * 3.0) * HOURS
    assert split < single
    assert answer.single is not None and answer.single.kind.gpu_label == "h100"
    assert answer.single.monthly_cost_usd == pytest.approx(single, abs=0.01)
    assert answer.monthly_cost_usd <= split + 0.01
    assert answer.monthly_cost_usd < answer.single.monthly_cost_usd
    assert answer.savings_usd is not None and answer.savings_usd > 0
    assert {p.kind.gpu_label for p in answer.pools} == {"l4", "h100"}
    long_on = [p.kind.gpu_label for p in answer.pools for part in p.buckets if part.bucket == 1]
    assert long_on == ["h100"]
    _check_pools(answer)


def test_a_bucket_no_kind_serves_within_the_slos_is_a_best_effort_and_misses_them():
    # A 60,000-token prompt: the L4 cannot hold one sequence of it, the H100 cannot prefill it in 2 s.
    h100 = replace(H100_SXM, hourly_price_usd=3.0, mig_profiles=())
    l4 = replace(L4, hourly_price_usd=0.8)
    inputs = FleetInputs(1e6 / 86_400, ttft_slo_ms=2000, tpot_slo_ms=100, arrivals=Arrivals())
    buckets = [LengthBucket(200, 200, 0.9), LengthBucket(60_000, 200, 0.1)]
    answer = plan_mix(LLAMA_31_8B, [("l4", l4), ("h100", h100)], PlanInputs(tensor_parallel=1), inputs, buckets)
    assert not answer.meets_slo
    assert answer.unserved == (1,) and answer.dropped == ()
    effort = [part for pool in answer.pools for part in pool.buckets if part.bucket == 1]
    assert [part.meets_slo for part in effort] == [False] and effort[0].share == pytest.approx(1.0)
    assert all(part.meets_slo for pool in answer.pools for part in pool.buckets if part.bucket == 0)
    # On L4s alone the long bucket is not even a best effort: it is left out.
    alone = plan_mix(LLAMA_31_8B, [("l4", l4)], PlanInputs(tensor_parallel=1), inputs, buckets)
    assert not alone.meets_slo and alone.dropped == (1,) and alone.pools


def test_pruning_loses_nothing_on_the_benchmark_workload(catalog):
    model, plan, gpus = catalog
    inputs = FleetInputs(1e6 / 86_400, ttft_slo_ms=2000, tpot_slo_ms=50, arrivals=Arrivals())
    buckets = [LengthBucket(200, 200, 0.5), LengthBucket(2000, 400, 0.3), LengthBucket(8000, 200, 0.2)]
    pruned = build_problem(model, gpus, plan, inputs, buckets)
    everything = build_problem(model, gpus, plan, inputs, buckets, keep=10_000)
    assert len(pruned.kinds) < len(everything.kinds)
    assert len(pruned.kinds) <= len(buckets) * (KEEP_PER_BUCKET + 1) + 1
    assert solve(pruned).monthly_cost_usd == solve(everything).monthly_cost_usd

"""Mixed fleets' formulation (app/sizing/mix.py): length buckets, the N+1 rule per pool, the
capacity matrix against plan_fleet, and the single-kind comparison."""

import math
from dataclasses import replace

import pytest

from app.sizing import fleet
from app.sizing.errors import SizingError
from app.sizing.fleet_plan import Arrivals, FleetInputs, plan_fleet
from app.sizing.mix import (
    LENGTH_BUCKETS,
    LengthBucket,
    MixKind,
    MixProblem,
    best_single_kind,
    bucket_rates,
    buckets_for,
    build_problem,
    derived_buckets,
    given_buckets,
    pool_size,
    single_kind,
)
from app.sizing.plan import PlanInputs

from .specs import H100_SXM, L4, LLAMA_31_8B

H100 = replace(H100_SXM, hourly_price_usd=3.0)
L4_PRICED = replace(L4, hourly_price_usd=0.8)
TRAFFIC = FleetInputs(1_000_000 / 86_400, peak_to_average=2.0, ttft_slo_ms=2000, tpot_slo_ms=100, arrivals=Arrivals())
SHORT_LONG = (LengthBucket(200, 200, 0.7), LengthBucket(4000, 200, 0.3))


def test_shares_that_do_not_sum_to_one_are_refused_naming_length_buckets():
    with pytest.raises(SizingError) as refused:
        given_buckets([LengthBucket(200, 200, 0.5), LengthBucket(2000, 400, 0.4)])
    assert refused.value.field == LENGTH_BUCKETS == "length_buckets"
    assert "sum to 0.9" in refused.value.message


def test_shares_within_a_millionth_of_one_are_taken():
    buckets = [LengthBucket(200, 200, 0.5), LengthBucket(2000, 400, 0.5 - 5e-7)]
    assert given_buckets(buckets) == tuple(buckets)


@pytest.mark.parametrize(
    "buckets",
    [[], [LengthBucket(0, 200, 1.0)], [LengthBucket(200, 200, 1.5), LengthBucket(200, 200, -0.5)]],
)
def test_an_empty_list_a_zero_length_or_a_negative_share_is_refused(buckets):
    with pytest.raises(SizingError) as refused:
        given_buckets(buckets)
    assert refused.value.field == LENGTH_BUCKETS


def test_without_spread_one_bucket_at_the_mean():
    assert derived_buckets(2000, 400, 0.0, 0.0) == (LengthBucket(2000, 400, 1.0),)
    no_arrivals = FleetInputs(1.0)
    assert buckets_for(PlanInputs(prompt_tokens=1500, output_tokens=300), no_arrivals) == (
        LengthBucket(1500, 300, 1.0),
    )


def test_exponential_prompts_split_at_the_quartile_midpoints_rescaled_to_the_mean():
    # cv 1 is the exponential: quantile q is -mean ln(1 - q). The strata's middles are q = 1/4
    # and 3/4; their average is scaled back to the mean.
    low, high = -math.log(1 - 0.25), -math.log(1 - 0.75)
    scale = 2 / (low + high)
    buckets = derived_buckets(1000, 300, 1.0, 0.0)
    assert [b.prompt_tokens for b in buckets] == [round(1000 * low * scale), round(1000 * high * scale)]
    assert [b.output_tokens for b in buckets] == [300, 300]
    assert [b.share for b in buckets] == [0.5, 0.5]


def test_both_lengths_spread_give_two_by_two_equal_buckets_keeping_the_means():
    buckets = buckets_for(
        PlanInputs(prompt_tokens=2000, output_tokens=400), replace(TRAFFIC, arrivals=Arrivals(1.0, 0.6, 0.4))
    )
    assert len(buckets) == 4 and all(b.share == 0.25 for b in buckets)
    assert len({b.prompt_tokens for b in buckets}) == 2 and len({b.output_tokens for b in buckets}) == 2
    # Rounding each stratum to whole tokens moves the mean by at most half a token.
    assert sum(b.prompt_tokens * b.share for b in buckets) == pytest.approx(2000, abs=0.5)
    assert sum(b.output_tokens * b.share for b in buckets) == pytest.approx(400, abs=0.5)


def test_a_bucket_arrives_at_its_share_of_the_peak_with_the_headroom():
    inputs = replace(TRAFFIC, redundancy=fleet.Redundancy(headroom=0.25))
    rates = bucket_rates(SHORT_LONG, inputs)
    assert rates == pytest.approx([1_000_000 / 86_400 * share * 2.0 * 1.25 for share in (0.7, 0.3)])


def _kind(tp: int = 1, per_card: int | None = None, card_price: float = 2.0) -> MixKind:
    replica_price = card_price / per_card if per_card else card_price * tp
    return MixKind("gpu", "slice" if per_card else None, tp, "bf16", replica_price, per_card, card_price)


def test_a_pool_rounds_up_to_whole_replicas_and_adds_its_spares():
    pool = pool_size(_kind(tp=2), 2.3, fleet.Redundancy(spare_replicas=1))
    # ceil(2.3) = 3 replicas carry the peak, + 1 spare = 4 replicas of 2 GPUs at 2 USD each.
    assert (pool.replicas, pool.replicas_total, pool.gpus, pool.hourly_usd) == (3, 4, 8, 16.0)


def test_a_mig_pool_buys_whole_cards_and_a_spare_card():
    pool = pool_size(_kind(per_card=4, card_price=3.0), 5.5, fleet.Redundancy(spare_replicas=1))
    # ceil(5.5) = 6 slices need ceil(6 / 4) = 2 cards, + 1 spare card: 3 cards at 3 USD.
    assert (pool.replicas, pool.cards, pool.gpus, pool.hourly_usd) == (6, 3, 3, 9.0)


def test_with_three_zones_any_two_carry_the_peak_and_no_spare_is_added():
    pool = pool_size(_kind(), 5.0, fleet.Redundancy(spare_replicas=1, zones=3))
    # ceil(5 / (3 - 1)) = 3 replicas a zone, 9 in all.
    assert (pool.replicas_total, pool.gpus) == (9, 9)


def test_an_unused_kind_costs_nothing_not_even_its_spare():
    assert pool_size(_kind(), 0.0, fleet.Redundancy(spare_replicas=1)).hourly_usd == 0.0


def test_the_capacity_matrix_is_plan_fleets_capacity_per_bucket():
    plan = PlanInputs(tensor_parallel=1)
    problem = build_problem(LLAMA_31_8B, [("h100", H100), ("l4", L4_PRICED)], plan, TRAFFIC, SHORT_LONG)
    assert {k.gpu_label for k in problem.kinds} <= {"h100", "l4"}
    for k, kind in enumerate(problem.kinds):
        for b, bucket in enumerate(SHORT_LONG):
            knobs = replace(
                plan,
                mig_profile=kind.mig_profile,
                prompt_tokens=bucket.prompt_tokens,
                output_tokens=bucket.output_tokens,
            )
            gpu = H100 if kind.gpu_label == "h100" else L4_PRICED
            alone = plan_fleet(LLAMA_31_8B, gpu, kind.gpu_label, knobs, TRAFFIC)
            expected = alone.capacity.request_rate_per_s if alone.meets_slo else None
            assert problem.capacity[k][b] == expected


def test_one_bucket_on_one_kind_is_sized_as_the_plain_fleet_sizes_it():
    plan = PlanInputs(tensor_parallel=1, prompt_tokens=2000, output_tokens=400)
    for redundancy in (fleet.Redundancy(), fleet.Redundancy(spare_replicas=2), fleet.Redundancy(zones=3)):
        inputs = replace(TRAFFIC, redundancy=redundancy)
        problem = build_problem(LLAMA_31_8B, [("h100", replace(H100, mig_profiles=()))], plan, inputs)
        single = best_single_kind(problem)
        plain = plan_fleet(LLAMA_31_8B, H100, "h100", plan, inputs)
        assert single is not None
        assert single.pool.gpus == plain.size.gpus_total
        assert single.monthly_cost_usd == plain.monthly_cost_usd


def test_the_best_single_kind_is_the_cheapest_kind_serving_every_bucket_alone():
    problem = MixProblem(
        kinds=(_kind(card_price=1.0), _kind(card_price=3.0), _kind(card_price=2.0)),
        buckets=(LengthBucket(100, 100, 0.5), LengthBucket(1000, 100, 0.5)),
        # Kind 0 is cheapest but cannot serve the long bucket.
        capacity=((10.0, None), (10.0, 5.0), (4.0, 2.0)),
        rates=(10.0, 5.0),
        redundancy=fleet.Redundancy(spare_replicas=1),
        hours_per_month=100.0,
    )
    assert single_kind(problem, 0) is None
    # Kind 1: 10/10 + 5/5 = 2 replicas + 1 spare at 3 USD = 9 USD/h; kind 2: 2.5 + 2.5 = 5, + 1,
    # at 2 USD = 12 USD/h.
    best = best_single_kind(problem)
    assert best is not None and best.kind_index == 1
    assert best.monthly_cost_usd == 3 * 3.0 * 100.0


def test_no_gpus_or_a_measured_throughput_is_refused():
    with pytest.raises(SizingError) as empty:
        build_problem(LLAMA_31_8B, [], PlanInputs(), TRAFFIC)
    assert empty.value.field == "gpus"
    with pytest.raises(SizingError) as measured:
        build_problem(LLAMA_31_8B, [("h100", H100)], PlanInputs(), replace(TRAFFIC, per_replica_tokens_per_s=3000))
    assert measured.value.field == "per_replica_tokens_per_s"

"""Fleet sizing (MODEL.md section 5) against seed 004's fleet example and hand calculations."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.sizing import fleet, timing
from app.sizing.fleet_plan import FleetInputs, Period, forecast, plan_fleet, rank
from app.sizing.plan import PlanInputs
from app.sizing.vocabulary import Binding, CapacityBound

from .specs import H100_SXM, L4, LLAMA_31_8B, LLAMA_31_70B

# Seed 004: 1M requests/day x 500 output tokens, peak x3, 3,000 tokens/s per GPU.
SEED_DEMAND = fleet.Demand.per_day(1_000_000, 3, 2000, 500)


def test_one_million_requests_of_500_tokens_a_day_average_5787_tokens_per_s():
    assert SEED_DEMAND.average_tokens_per_s == pytest.approx(1_000_000 * 500 / 86_400)
    assert SEED_DEMAND.average_tokens_per_s == pytest.approx(5787, abs=1)
    assert SEED_DEMAND.peak_tokens_per_s == pytest.approx(17_361, abs=1)


def test_seed_fleet_is_2_gpus_average_6_at_peak_7_with_n_plus_1():
    size = fleet.size_fleet(SEED_DEMAND, 3000, 1, fleet.Redundancy(spare_replicas=1))
    assert (size.gpus_average, size.gpus_peak, size.gpus_total) == (2, 6, 7)
    assert size.min_replicas == 3 and size.max_replicas == 7


def test_without_a_spare_the_seed_fleet_is_6_gpus():
    assert fleet.size_fleet(SEED_DEMAND, 3000, 1, fleet.Redundancy(spare_replicas=0)).gpus_total == 6


def test_three_zones_each_carry_half_the_peak_so_losing_one_is_survivable():
    size = fleet.size_fleet(SEED_DEMAND, 3000, 1, fleet.Redundancy(spare_replicas=1, zones=3))
    assert size.replicas_per_zone == 3  # ceil(6 / (3 - 1))
    assert size.replicas_total == 9  # the spare is not added on top


def test_headroom_scales_demand_before_rounding():
    size = fleet.size_fleet(SEED_DEMAND, 3000, 1, fleet.Redundancy(spare_replicas=0, headroom=0.2))
    assert size.replicas_peak == 7  # ceil(17,361 x 1.2 / 3,000) = ceil(6.94)


def test_tensor_parallel_replicas_multiply_gpus_and_mig_slices_pack_into_cards():
    assert fleet.size_fleet(SEED_DEMAND, 3000, 4, fleet.Redundancy()).gpus_total == 28
    # Six replicas carry the seed's 17,361 tok/s peak at 3,000 each: one card of seven slices
    # holds them, and N+1 on slices is a second card, each card holding six, so that either
    # card alone carries the peak.
    sliced = fleet.size_fleet(SEED_DEMAND, 3000, 1, fleet.Redundancy(), replicas_per_card=7)
    assert (sliced.replicas_peak, sliced.gpus_total, sliced.replicas_total) == (6, 2, 12)
    assert fleet.size_fleet(SEED_DEMAND, 3000, 1, fleet.Redundancy(0), replicas_per_card=7).gpus_total == 1


def test_no_traffic_on_slices_keeps_one_spare_card_with_one_replica():
    idle = fleet.size_fleet(fleet.Demand(0.0, 3, 2048, 500), 3000, 1, fleet.Redundancy(), replicas_per_card=7)
    assert (idle.replicas_peak, idle.replicas_total, idle.gpus_total) == (0, 1, 1)


def test_mig_slices_of_two_zones_never_share_a_card():
    # Three zones, one of which may be lost: each holds ceil(6 / 2) = 3 replicas, on its own card.
    zoned = fleet.size_fleet(SEED_DEMAND, 3000, 1, fleet.Redundancy(zones=3), replicas_per_card=7)
    assert (zoned.replicas_per_zone, zoned.replicas_total, zoned.gpus_total) == (3, 9, 3)


def test_an_exact_multiple_needs_no_extra_replica():
    assert fleet.replicas_for(6000, 3000) == 2


def test_cold_start_is_weights_over_load_bandwidth_plus_engine_start():
    assert fleet.cold_start_s(16e9, 2.0, 30) == pytest.approx(38)


HW = timing.Hardware(3.35e12, 989e12)
WORK = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 2048, 512)


def test_replica_concurrency_is_the_largest_under_a_10_ms_tpot_slo():
    capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=0.010)
    assert capacity.bound_by == Binding.TPOT_SLO and capacity.meets_slo
    at = timing.continuous_batching(WORK, HW, capacity.concurrency, 2048)
    after = timing.continuous_batching(WORK, HW, capacity.concurrency + 1, 2048)
    assert at.time_per_token_s <= 0.010 < after.time_per_token_s


def test_without_slos_the_kv_cache_bounds_the_replica():
    capacity = fleet.replica_capacity(WORK, HW, 166, 2048)
    assert (capacity.concurrency, capacity.bound_by) == (166, Binding.KV_CAPACITY)


def test_a_ttft_slo_binds_when_it_is_the_tighter_one():
    capacity = fleet.replica_capacity(WORK, HW, 166, 2048, ttft_slo_s=0.080)
    assert capacity.bound_by == Binding.TTFT_SLO
    assert timing.continuous_batching(WORK, HW, capacity.concurrency + 1, 2048).ttft_s > 0.080


def test_an_slo_even_one_sequence_misses_is_reported_not_raised():
    capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=0.001)
    assert capacity.concurrency == 1 and not capacity.meets_slo


def test_plan_fleet_prices_the_whole_fleet_per_month():
    plan = plan_fleet(
        LLAMA_31_8B,
        H100_SXM,
        "h100-sxm",
        PlanInputs(prompt_tokens=2048, output_tokens=500),
        FleetInputs(
            requests_per_s=1_000_000 / 86_400,
            peak_to_average=3,
            per_replica_tokens_per_s=3000,
            hours_per_month=720,
            redundancy=fleet.Redundancy(spare_replicas=0),
        ),
    )
    assert plan.size.gpus_total == 6
    assert plan.monthly_cost_usd == pytest.approx(6 * 3.0 * 720)
    assert plan.capacity.bound_by == Binding.MEASURED


def test_a_forecast_sizes_each_period():
    base = plan_fleet(
        LLAMA_31_8B, H100_SXM, "h100-sxm", PlanInputs(), FleetInputs(requests_per_s=1, per_replica_tokens_per_s=1000)
    )
    periods = [Period(f"2027-{m:02d}", 86_400 * m) for m in range(1, 13)]
    rows = forecast(base, periods, FleetInputs(requests_per_s=1, per_replica_tokens_per_s=1000))
    assert len(rows) == 12
    # m requests/s x 512 tokens over 1,000 tokens/s per replica, plus the spare.
    assert [plan.size.replicas_total for _, plan in rows] == [-(-m * 512 // 1000) + 1 for m in range(1, 13)]


def test_ranking_puts_the_cheapest_option_meeting_the_slo_first():
    options = rank(
        LLAMA_31_70B, [("h100-sxm", H100_SXM), ("l4", L4)], PlanInputs(), FleetInputs(requests_per_s=2, tpot_slo_ms=100)
    )
    eligible = [o for o in options if o.eligible]
    costs = [o.monthly_cost_usd for o in eligible]
    assert costs == sorted(costs)
    assert all(o.gpu == "h100-sxm" for o in eligible)  # a 70B in bf16 fits no single 24 GB L4
    assert any(o.gpu == "l4" and o.ruled_out for o in options)


def test_an_engines_max_num_seqs_caps_the_replica_and_says_so():
    from dataclasses import replace as _replace

    from app.sizing.engine import UTIL_OF_VISIBLE, EngineProfile

    engine = EngineProfile("vllm", "vLLM", "test", UTIL_OF_VISIBLE, 0.9, 2048, 8, 16)
    plan = plan_fleet(
        _replace(LLAMA_31_8B, vocab_size=128_256),
        H100_SXM,
        "h100-sxm",
        PlanInputs(prompt_tokens=256, output_tokens=64, engine=engine),
        FleetInputs(requests_per_s=1),
    )
    assert plan.capacity.concurrency == 8 < plan.fit.result.max_concurrency
    assert plan.capacity.bound_by == "max_num_seqs"


def test_the_minimum_fleet_is_no_larger_than_any_capacity_s_fleet():
    """fleet.minimum_fleet bounds a ranking's options before they are fitted: for any per-replica
    capacity, whole cards or MIG slices, spares or zones, size_fleet gives at least its GPUs."""
    cases = [
        (fleet.Redundancy(spare_replicas=1), None, 1),
        (fleet.Redundancy(spare_replicas=2, headroom=0.2), None, 4),
        (fleet.Redundancy(spare_replicas=1), 7, 1),
        (fleet.Redundancy(spare_replicas=0, zones=3), None, 2),
        (fleet.Redundancy(spare_replicas=1, zones=2), 3, 1),
    ]
    for redundancy, per_card, gpus_per_replica in cases:
        floor = fleet.minimum_fleet(SEED_DEMAND, gpus_per_replica, redundancy, per_card)
        for capacity in (10.0, 3000.0, 17_361.0, 1e6, 1e12):
            sized = fleet.size_fleet(SEED_DEMAND, capacity, gpus_per_replica, redundancy, per_card)
            assert sized.gpus_total >= floor.gpus_total, (redundancy, per_card, capacity)
        # and it is reached: a replica that carries the whole peak alone
        fastest = fleet.size_fleet(SEED_DEMAND, 1e12, gpus_per_replica, redundancy, per_card)
        assert fastest.gpus_total == floor.gpus_total


@pytest.mark.parametrize("percentile", [50.0, 95.0, 99.0])
def test_the_lazy_ranking_finds_the_best_an_exhaustive_one_finds(percentile):
    """Best-first branch and bound over minimum fleets, saturation rates and mean latencies
    must pick what sizing every shape at the SLO percentile picks, at the same cost; and every
    option it never sized exactly costs at least as much as the best by its bound."""
    from dataclasses import replace as _replace

    from app.sizing.fleet_plan import Arrivals
    from app.sizing.plan import plan_fit

    from .specs import A100_80

    gpus = [
        ("h100-sxm", _replace(H100_SXM, hourly_price_usd=3.0)),
        ("a100-80gb", _replace(A100_80, hourly_price_usd=1.8, gpus_per_node=1)),
        ("l4", _replace(L4, hourly_price_usd=0.8)),
    ]
    plan = PlanInputs(prompt_tokens=1000, output_tokens=200)
    arrivals = Arrivals(slo_percentile=percentile)
    inputs = FleetInputs(requests_per_s=20, peak_to_average=2, tpot_slo_ms=40, ttft_slo_ms=1000, arrivals=arrivals)
    options = rank(LLAMA_31_8B, gpus, plan, inputs)
    best = options[0]
    assert best.plan is not None and best.plan.capacity.exact and best.plan.meets_slo
    exhaustive = []
    for label, gpu in gpus:
        fitted = plan_fit(LLAMA_31_8B, gpu, plan)
        for tp in fitted.valid_tensor_parallel:
            if tp >= fitted.tensor_parallel:
                sized = plan_fleet(LLAMA_31_8B, gpu, label, _replace(plan, tensor_parallel=tp), inputs)
                if sized.meets_slo:
                    exhaustive.append(sized.monthly_cost_usd)
    assert best.monthly_cost_usd == min(exhaustive)
    for option in options[1:]:
        if option.eligible and option.bound is not None:
            assert option.monthly_cost_usd >= best.monthly_cost_usd
    assert any(o.floor is not None and o.plan is None for o in options), "no shape was spared its fit"
    # A median is no bound of the means: at p50 no option is left on its mean latencies.
    if percentile < 90:
        assert all(o.bound != CapacityBound.MEAN_LATENCIES for o in options)


def test_the_no_fit_shortcut_rules_out_only_what_the_fit_would():
    """A ranking rules a target out without fitting it when the weights far exceed its whole
    memory; on every model and GPU (and MIG slice) here the fit agrees, and gives that reason."""
    from dataclasses import replace as _replace

    from app.sizing.fleet_plan import WEIGHTS_DO_NOT_FIT, _too_small_for
    from app.sizing.plan import plan_fit

    from . import specs

    models = [v for v in vars(specs).values() if isinstance(v, specs.ModelSpec)]
    gpus = [v for v in vars(specs).values() if isinstance(v, specs.GpuSpec)]
    shortcuts = 0
    for model in models:
        for gpu in gpus:
            for profile in (None, *(p.name for p in gpu.mig_profiles)):
                plan = PlanInputs(mig_profile=profile, weight_precision=None if model.native_precision else "bf16")
                precision = _too_small_for(model, gpu, plan)
                if precision is None:
                    continue
                shortcuts += 1
                fitted = plan_fit(model, gpu, plan)
                assert not fitted.result.fits_weights, (model.name, gpu.name, profile)
                assert fitted.weight_precision == precision
    assert shortcuts > 0
    options = rank(
        LLAMA_31_70B, [("l4", _replace(L4, hourly_price_usd=0.8))], PlanInputs(), FleetInputs(requests_per_s=1)
    )
    assert [o.ruled_out for o in options] == [WEIGHTS_DO_NOT_FIT]


@settings(max_examples=60, deadline=None)
@given(
    requests_per_day=st.floats(1e3, 1e9),
    peak_to_average=st.floats(1, 10),
    per_replica=st.floats(50, 50_000),
    spares=st.integers(0, 3),
    zones=st.integers(1, 4),
    headroom=st.floats(0, 1),
    hours=st.floats(1, 744),
    mig=st.booleans(),
)
def test_a_fleet_never_costs_less_per_token_than_one_loaded_replica(
    requests_per_day, peak_to_average, per_replica, spares, zones, headroom, hours, mig
):
    """The fleet's cost per token is its month over the tokens its average traffic brings in the
    month; it carries at least the average on replicas billed every hour, so it is never below one
    fully loaded replica's price over its capacity."""
    plan = plan_fleet(
        LLAMA_31_8B,
        H100_SXM,
        "h100-sxm",
        PlanInputs(prompt_tokens=512, output_tokens=128, mig_profile="3g.40gb" if mig else None),
        FleetInputs(
            requests_per_s=requests_per_day / 86_400,
            peak_to_average=peak_to_average,
            per_replica_tokens_per_s=per_replica,
            hours_per_month=hours,
            redundancy=fleet.Redundancy(spare_replicas=spares, zones=zones, headroom=headroom),
        ),
    )
    cost = plan.token_cost
    assert plan.monthly_cost_usd is not None and cost.fleet_usd is not None and cost.replica_usd is not None
    tokens = requests_per_day / 86_400 * 128 * 3600 * hours
    assert cost.fleet_usd == pytest.approx(plan.monthly_cost_usd / tokens * 1e6)
    # The month is billed to the cent: allow that much below the unrounded figure.
    assert cost.fleet_usd >= cost.replica_usd * (1 - 1e-9) - 0.005 / tokens * 1e6

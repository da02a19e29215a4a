"""Fleet (app/sizing/fleet.py) at the inputs where mutants of `make mutation` survived:

- a replica's concurrency under the per-step token budget (room for one prompt token beside
  the decodes, k + 1 tokens a decode under speculation), and speculation's steady state behind it;
- an SLO met exactly is met; the SLO one sequence misses is the one reported, with batch 1's figures;
- the bisection when only one sequence, or the whole KV cache of two, meets the SLO;
- the bisection against a scan of every concurrency; the SLO named is the one the next sequence misses;
- headroom on the average, two and three zones' floors, MIG spares as whole cards, cold start exactly;
- the minimum fleet of no traffic is its spares; a daily demand keeps its prompt length.
"""

from __future__ import annotations

import math

import pytest

from app.sizing import fleet, speculation, timing
from app.sizing.vocabulary import Binding

from .specs import LLAMA_31_8B

HW = timing.Hardware(3.35e12, 989e12)
WORK = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 2048, 512)
# EAGLE drafting k = 3 tokens: each decode verifies k + 1 = 4 tokens in the step.
EAGLE_3 = speculation.speculation("eagle", 3, 0.7)


# --- the per-step token budget ----------------------------------------------------------------


@pytest.mark.parametrize(("max_batched_tokens", "concurrency"), [(41, 40), (43, 42)])
def test_without_speculation_the_budget_holds_one_decode_per_token_but_one(max_batched_tokens, concurrency) -> None:
    """A step of 41 tokens holds 40 decodes and the prompt token beside them; 43 holds 42."""
    capacity = fleet.replica_capacity(WORK, HW, 166, max_batched_tokens)
    assert capacity is not None
    assert (capacity.concurrency, capacity.bound_by) == (concurrency, Binding.TOKEN_BUDGET)


@pytest.mark.parametrize("max_batched_tokens", [41, 43])
def test_under_speculation_each_decode_takes_k_plus_one_tokens_of_the_budget(max_batched_tokens) -> None:
    """k = 3: 4 tokens a decode. 41 tokens leave 40 for decodes: 10 sequences; 43 leave 42:
    still 10 (11 x 4 = 44 would not fit)."""
    assert (max_batched_tokens - 1) // (3 + 1) == 10
    capacity = fleet.replica_capacity(WORK, HW, 166, max_batched_tokens, speculative=EAGLE_3)
    assert capacity is not None
    assert (capacity.concurrency, capacity.bound_by, capacity.meets_slo) == (10, Binding.TOKEN_BUDGET, True)
    # Its figures are speculation's steady state at those 10 sequences, not plain decoding's.
    steady, _ = speculation.steady_state(EAGLE_3, WORK, HW, 10, max_batched_tokens)
    assert steady is not None
    assert capacity.tokens_per_s == pytest.approx(steady.tokens_per_s)
    assert capacity.time_per_token_s == pytest.approx(steady.time_per_token_s)
    assert capacity.ttft_s == pytest.approx(steady.ttft_s)
    plain = timing.continuous_batching(WORK, HW, 10, max_batched_tokens)
    assert plain is not None and capacity.time_per_token_s < plain.time_per_token_s


def test_under_speculation_the_concurrency_is_the_largest_under_the_tpot_slo() -> None:
    slo = 0.004
    capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=slo, speculative=EAGLE_3)
    assert capacity is not None and capacity.bound_by == Binding.TPOT_SLO and capacity.meets_slo
    at, _ = speculation.steady_state(EAGLE_3, WORK, HW, capacity.concurrency, 2048)
    after, _ = speculation.steady_state(EAGLE_3, WORK, HW, capacity.concurrency + 1, 2048)
    assert at is not None and after is not None
    assert at.time_per_token_s <= slo < after.time_per_token_s
    assert capacity.time_per_token_s == pytest.approx(at.time_per_token_s)


# --- SLOs at their edges ---------------------------------------------------------------------


def _steady(batch: int) -> timing.SteadyState:
    state = timing.continuous_batching(WORK, HW, batch, 2048)
    assert state is not None
    return state


def test_an_slo_met_exactly_is_met() -> None:
    """SLOs equal to the times at the whole KV cache (166 sequences): all 166 run."""
    full = _steady(166)
    for slos in ({"tpot_slo_s": full.time_per_token_s}, {"ttft_slo_s": full.ttft_s}):
        capacity = fleet.replica_capacity(WORK, HW, 166, 2048, **slos)
        assert capacity is not None
        assert (capacity.concurrency, capacity.bound_by, capacity.meets_slo) == (166, Binding.KV_CAPACITY, True)


def test_one_sequence_missing_the_tpot_slo_reports_batch_ones_figures() -> None:
    one = _steady(1)
    capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=one.time_per_token_s / 2)
    assert capacity == fleet.ReplicaCapacity(
        1, one.tokens_per_s, one.time_per_token_s, one.ttft_s, Binding.TPOT_SLO, False
    )


def test_one_sequence_missing_only_the_ttft_slo_says_ttft() -> None:
    """A TPOT SLO met exactly by one sequence is not the one missed; the TTFT SLO is."""
    one = _steady(1)
    for tpot in (None, one.time_per_token_s):
        capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=tpot, ttft_slo_s=one.ttft_s / 2)
        assert capacity == fleet.ReplicaCapacity(
            1, one.tokens_per_s, one.time_per_token_s, one.ttft_s, Binding.TTFT_SLO, False
        )


def test_when_only_one_sequence_meets_the_slo_the_replica_runs_one() -> None:
    """A TPOT SLO between one sequence's and two's: one sequence, bound by the SLO."""
    one, two = _steady(1), _steady(2)
    assert one.time_per_token_s < two.time_per_token_s
    slo = (one.time_per_token_s + two.time_per_token_s) / 2
    capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=slo)
    assert capacity == fleet.ReplicaCapacity(
        1, one.tokens_per_s, one.time_per_token_s, one.ttft_s, Binding.TPOT_SLO, True
    )


def test_a_kv_cache_of_two_sequences_runs_both_without_slos() -> None:
    two = _steady(2)
    capacity = fleet.replica_capacity(WORK, HW, 2, 2048)
    assert capacity == fleet.ReplicaCapacity(
        2, two.tokens_per_s, two.time_per_token_s, two.ttft_s, Binding.KV_CAPACITY, True
    )


# --- demand and the minimum fleet ------------------------------------------------------------


def test_a_daily_demand_keeps_its_prompt_and_output_lengths() -> None:
    """86,400 requests a day of 2,000 + 500 tokens: 1 request/s, 2,000 input and 500 output tokens/s."""
    demand = fleet.Demand.per_day(86_400, 3, 2000, 500)
    assert (demand.requests_per_s, demand.prompt_tokens, demand.output_tokens) == (1.0, 2000, 500)
    assert (demand.average_input_tokens_per_s, demand.peak_input_tokens_per_s) == (2000.0, 6000.0)


def test_the_minimum_fleet_of_no_traffic_is_its_spares() -> None:
    """No requests: no replica carries traffic, and N+1 keeps one spare (2 GPUs) warm."""
    idle = fleet.minimum_fleet(fleet.Demand(0.0, 3, 2000, 500), 2, fleet.Redundancy(spare_replicas=1))
    assert (idle.replicas_average, idle.replicas_peak, idle.replicas_total) == (0, 0, 1)
    assert (idle.gpus_total, idle.min_replicas, idle.max_replicas) == (2, 1, 1)


def _largest_meeting(tpot_slo_s: float | None, ttft_slo_s: float | None, ceiling: int = 166) -> int:
    """The largest concurrency up to `ceiling` meeting both SLOs, scanning one by one."""
    best = 1
    for batch in range(1, ceiling + 1):
        state = _steady(batch)
        if (tpot_slo_s is None or state.time_per_token_s <= tpot_slo_s) and (
            ttft_slo_s is None or state.ttft_s <= ttft_slo_s
        ):
            best = batch
        else:
            break
    return best


def test_the_bisection_finds_the_concurrency_a_scan_finds() -> None:
    """TPOT SLOs from one sequence's to the whole cache's, and TTFT SLOs likewise: the replica's
    concurrency is the largest a scan of every concurrency finds, bound by the SLO below the cache."""
    low, high = _steady(1), _steady(166)
    for i in range(1, 12):
        share = i / 12
        tpot = low.time_per_token_s + share * (high.time_per_token_s - low.time_per_token_s)
        ttft = low.ttft_s + share * (high.ttft_s - low.ttft_s)
        for slos, bound in (((tpot, None), Binding.TPOT_SLO), ((None, ttft), Binding.TTFT_SLO)):
            expected = _largest_meeting(*slos)
            capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=slos[0], ttft_slo_s=slos[1])
            assert capacity is not None
            assert (capacity.concurrency, capacity.meets_slo) == (expected, True)
            assert capacity.bound_by == (bound if expected < 166 else Binding.KV_CAPACITY)


def test_the_slo_reported_binding_is_the_one_the_next_sequence_misses() -> None:
    """A TTFT SLO holding c sequences, and a TPOT SLO the (c + 1)th still meets (exactly, or with
    room until c + 2): c sequences, bound by the TTFT SLO."""
    ttft = 0.080
    c = _largest_meeting(None, ttft)
    assert c > 1 and c + 2 <= 166  # (161 sequences)
    for tpot in (
        _steady(c + 1).time_per_token_s,
        (_steady(c + 1).time_per_token_s + _steady(c + 2).time_per_token_s) / 2,
    ):
        capacity = fleet.replica_capacity(WORK, HW, 166, 2048, tpot_slo_s=tpot, ttft_slo_s=ttft)
        assert capacity is not None
        assert (capacity.concurrency, capacity.bound_by) == (c, Binding.TTFT_SLO)


# --- size_fleet's branches ---------------------------------------------------------------------


def _demand(average_replicas: float, peak_replicas: float) -> fleet.Demand:
    """Traffic of `average_replicas` x 1,000 output tokens/s on average, `peak_replicas` x 1,000 at peak."""
    return fleet.Demand(average_replicas * 1000 / 500, peak_replicas / average_replicas, 1000, 500)


def test_headroom_scales_the_average_as_well_as_the_peak() -> None:
    """3,000 tokens/s on average with 20% headroom: 3,600, 4 replicas of 1,000 (not 3)."""
    size = fleet.size_fleet(_demand(3, 6), 1000, 1, fleet.Redundancy(spare_replicas=0, headroom=0.2))
    assert (size.replicas_average, size.replicas_peak) == (math.ceil(3 * 1.2), math.ceil(6 * 1.2)) == (4, 8)


def test_two_zones_each_carry_the_whole_peak() -> None:
    """Peak 4, average 3, Z = 2: either zone alone carries 4, 8 in all; the floor ceil(3 / 1) x 2 = 6."""
    size = fleet.size_fleet(_demand(3, 4), 1000, 1, fleet.Redundancy(spare_replicas=1, zones=2))
    assert (size.replicas_per_zone, size.replicas_total, size.min_replicas) == (4, 8, 6)


def test_three_zones_keep_the_average_with_a_zone_lost() -> None:
    """Average 3 over Z = 3: any two zones carry 3, ceil(3 / 2) = 2 each, a floor of 6."""
    size = fleet.size_fleet(_demand(3, 4), 1000, 1, fleet.Redundancy(spare_replicas=1, zones=3))
    assert (size.replicas_per_zone, size.replicas_total, size.min_replicas) == (2, 6, 6)


def test_mig_spares_are_whole_cards_and_the_replicas_spread_over_the_cards() -> None:
    """Peak 10, average 4 slices, 7 to a card, 2 spare cards: the peak needs ceil(10 / 7) = 2 cards,
    5 replicas on each; 4 cards of 5 = 20 replicas, so losing any 2 still leaves 10. The floor is
    the average plus the spare cards' replicas: 4 + 2 x 5 = 14. GPUs are cards: ceil(4 / 7) = 1 on
    average, 2 at peak, 4 in all."""
    size = fleet.size_fleet(_demand(4, 10), 1000, 1, fleet.Redundancy(spare_replicas=2), replicas_per_card=7)
    assert (size.replicas_average, size.replicas_peak, size.replicas_total) == (4, 10, 20)
    assert (size.gpus_average, size.gpus_peak, size.gpus_total) == (1, 2, 4)
    assert size.min_replicas == 14
    assert size.replicas_total - 2 * 5 == size.replicas_peak


def test_cold_start_is_exact_for_whole_gigabytes() -> None:
    """16 GB at 2 GB/s (10^9 bytes, as vendors print) is 8 s, plus 30 s of start-up."""
    assert fleet.cold_start_s(16e9, 2.0, 30) == 38.0

"""Formulas at the inputs where a wrong variant gives another figure, found by `make mutation`
(mutants of app/sizing that no test told apart from the code):

- cost per million tokens of a replica of several GPUs: the bill is every GPU's;
- the KV cache in whole blocks at a context that is not a multiple of the block size;
- N+1 over zones where ceil(p / (Z - 1)) differs from ceil(p / Z) + 1 (p = 4, Z = 3).
"""

from __future__ import annotations

import math

import pytest

from app.sizing import cost, memory
from app.sizing.fleet import Demand, Redundancy, size_fleet
from app.sizing.plan import PlanInputs, plan_throughput

from .specs import H100_SXM, LLAMA_31_8B, LLAMA_31_70B

# Llama 3.1 8B's KV per token in bf16: K and V x 32 layers x 8 KV heads x 128 dims x 2 bytes.
KV_BYTES_PER_TOKEN_8B = 2 * 32 * 8 * 128 * 2
SECONDS_PER_HOUR = 3600


# --- cost per million tokens, replicas of several GPUs ------------------------------------


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_cost_per_million_bills_every_gpu_of_the_replica(gpus: int) -> None:
    # $2.50 per GPU-hour, 1,000 tokens/s: $2.50 x GPUs / 3.6 M tokens an hour.
    usd = 2.50 * gpus / (1000 * SECONDS_PER_HOUR) * 1e6
    assert cost.cost_per_million_tokens_usd(2.50, gpus, 1000) == pytest.approx(usd)
    result = cost.cost(2.50, gpus, 1000)
    assert result.hourly_cost_usd == pytest.approx(2.50 * gpus)
    assert result.cost_per_million_output_tokens_usd == pytest.approx(usd)


@pytest.mark.parametrize("tensor_parallel", [2, 4, 8])
def test_a_tensor_parallel_replicas_cost_per_million_is_its_gpus_bill(tensor_parallel: int) -> None:
    """Llama 3.1 70B on H100s at TP 2, 4, 8: the plan's cost per million output tokens bills
    the replica's TP GPUs for the tokens/s it makes."""
    plan = plan_throughput(
        LLAMA_31_70B, H100_SXM, PlanInputs(tensor_parallel=tensor_parallel, price_per_gpu_hour_usd=3.0, concurrency=16)
    )
    assert plan.work.tp == tensor_parallel
    assert plan.point.steady is not None
    tokens_per_s = plan.point.steady.tokens_per_s
    usd = 3.0 * tensor_parallel / SECONDS_PER_HOUR / tokens_per_s * 1e6
    assert plan.cost_per_million(tokens_per_s) == pytest.approx(usd)
    # The same tokens/s from one GPU would cost 1/TP of it.
    assert plan.cost_per_million(1000.0) == pytest.approx(tensor_parallel * 3.0 / 3.6)


# --- KV in whole blocks ----------------------------------------------------------------------


def test_each_sequence_takes_whole_blocks_at_a_context_off_the_block_size() -> None:
    """2,048 + 500 = 2,548 tokens in blocks of 16 take 160 blocks: 2,560 tokens of KV."""
    per_token = KV_BYTES_PER_TOKEN_8B
    assert memory.kv_bytes_per_token(LLAMA_31_8B, "bf16", 1) == per_token
    # Room for 25,599 tokens of KV: 1,599 whole blocks and 15 tokens over.
    weights = 16e9
    usable = weights + 25_599 * per_token + per_token / 2
    fit = memory.fit_budget(
        LLAMA_31_8B,
        weights=weights,
        usable=usable,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=500,
        concurrency=10,
        block_size=16,
    )
    assert math.ceil(2548 / 16) * 16 == 2560
    assert fit.kv_bytes_per_sequence == 2560 * per_token
    assert fit.kv_capacity_tokens == 1599 * 16 == 25_584
    # 25,584 / 2,560 = 9.99 sequences: 9, where tokens alone (25,599 / 2,548 = 10.05) say 10.
    assert fit.max_concurrency == 9
    assert not fit.fits  # 10 asked for
    unblocked = memory.fit_budget(
        LLAMA_31_8B,
        weights=weights,
        usable=usable,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=500,
        concurrency=10,
        block_size=1,
    )
    assert (unblocked.kv_capacity_tokens, unblocked.max_concurrency) == (25_599, 10)
    assert unblocked.kv_bytes_per_sequence == 2548 * per_token


def test_a_context_on_the_block_size_takes_no_extra_block() -> None:
    per_token = KV_BYTES_PER_TOKEN_8B
    fit = memory.fit_budget(
        LLAMA_31_8B,
        weights=16e9,
        usable=16e9 + 2560 * 10 * per_token,
        gpus=1,
        kv_precision="bf16",
        prompt_tokens=2048,
        output_tokens=512,
        concurrency=10,
        block_size=16,
    )
    assert fit.kv_bytes_per_sequence == 2560 * per_token
    assert (fit.kv_capacity_tokens, fit.max_concurrency, fit.fits) == (25_600, 10, True)


# --- N+1 over zones --------------------------------------------------------------------------


def test_n_plus_one_over_three_zones_carries_a_peak_of_four_with_a_zone_lost() -> None:
    """Peak 4 replicas over Z = 3 zones: any 2 zones must carry 4, so ceil(4 / 2) = 2 per zone,
    6 in all (ceil(4 / 3) + 1 = 3 per zone would be 9)."""
    per_replica = 1000.0
    # 4,000 output tokens/s at peak (x2 over an average of 2,000): 4 replicas at peak, 2 on average.
    output_tokens = 500
    requests_per_s = 2000 / output_tokens
    demand = Demand(requests_per_s, 2.0, 1000, output_tokens)
    assert demand.peak_tokens_per_s == pytest.approx(4000)
    fleet = size_fleet(demand, per_replica, gpus_per_replica=2, redundancy=Redundancy(spare_replicas=1, zones=3))
    assert (fleet.replicas_average, fleet.replicas_peak) == (2, 4)
    assert math.ceil(4 / (3 - 1)) == 2 != math.ceil(4 / 3) + 1
    assert fleet.replicas_per_zone == 2
    assert fleet.replicas_total == 6
    assert fleet.gpus_total == 6 * 2
    # Losing any zone leaves 2 x 2 = 4 replicas: the peak, exactly.
    assert fleet.replicas_total - fleet.replicas_per_zone == fleet.replicas_peak
    # The floor: the average (2) carried with a zone lost, ceil(2 / 2) = 1 per zone, 3 in all.
    assert fleet.min_replicas == 3
    assert fleet.max_replicas == 6

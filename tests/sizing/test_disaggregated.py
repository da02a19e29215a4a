"""Disaggregated serving's parts (app/sizing/disaggregated.py): a decode replica's steps, the KV
transfer and its links, and the pools against a hand-sized fleet."""

from dataclasses import replace

import pytest

from app.sizing import disaggregated, timing
from app.sizing.fleet_plan import Arrivals, FleetInputs, arrival_model
from app.sizing.plan import PlanInputs, plan_fit, prepare_timing
from app.sizing.queueing import ReplicaModel
from app.sizing.vocabulary import Role

from .specs import H100_SXM, L4, LLAMA_31_8B

H100 = timing.Hardware(3.35e12, 989e12, link_gb_per_s=450, link_latency_us=10, step_overhead_s=0.002)
# Llama 3.1 8B: 32 layers x 8 KV heads x 128 dims x K and V x 2 bytes (bf16) per token.
KV_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2


def test_a_decode_replica_s_steps_cost_nothing_for_prompts():
    steps = timing.StepModel.build(timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 2048, 256), H100)
    decode = steps.decode_only()
    decode_step = steps.time_s(16, 16 * 3000)
    assert decode.time_s(16, 16 * 3000, 2048, 0) == pytest.approx(decode_step)
    assert decode.time_s(16, 16 * 3000) == pytest.approx(decode_step)
    # the replica that computes them pays for them: a 2,048-token chunk is compute-bound
    assert steps.time_s(16, 16 * 3000, 2048, 0) > 2 * decode_step


def test_the_transfer_uses_nvlink_inside_one_node_and_the_network_across():
    prompt = 4000
    kv_bytes = prompt * KV_BYTES_PER_TOKEN
    nvlink4 = replace(H100_SXM, interconnect_kind="nvlink4")
    inside = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 2), (nvlink4, 4))
    assert inside.bytes_per_request == kv_bytes
    assert inside.link == disaggregated.NVLINK and inside.parallel_gpus == 2
    assert inside.seconds == pytest.approx(10e-6 + kv_bytes / (450e9 * 2))
    # 4 + 8 GPUs do not fit one 8-GPU node: over the network, whose default for an H100 node
    # (NVLink 4) is one 400 Gb/s NIC per GPU
    across = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 4), (nvlink4, 8))
    assert across.link == disaggregated.NETWORK and across.gb_per_s_per_gpu == 400 / 8
    assert across.seconds == pytest.approx(20e-6 + kv_bytes / (50e9 * 4))
    given = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 4), (nvlink4, 8), 10.0)
    assert given.seconds == pytest.approx(20e-6 + kv_bytes / (10e9 * 4))
    # a GPU with no NVLink of its own never shares it; two kinds of GPU never share a node: the
    # slower node's network
    assert disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (H100_SXM, 1), (H100_SXM, 1)).link == "network"
    mixed = disaggregated.kv_transfer(LLAMA_31_8B, "bf16", prompt, (nvlink4, 1), (L4, 1))
    assert mixed.link == disaggregated.NETWORK
    assert mixed.gb_per_s_per_gpu == disaggregated.PCIE_SERVER_NETWORK_GB_PER_S


def test_each_pool_s_replica_model_serves_its_half_of_a_request():
    plan = replace(PlanInputs(prompt_tokens=8000, output_tokens=200), tensor_parallel=1)
    arrivals = Arrivals(prompt_tokens_cv=0.5, output_tokens_cv=0.5)
    # Prefill: one output token, no spread in it; the step budget is the engine's.
    prefill_fit = plan_fit(LLAMA_31_8B, H100_SXM, replace(plan, output_tokens=1))
    prefill = arrival_model(prefill_fit, prepare_timing(prefill_fit), arrivals, 64, Role.PREFILL)
    assert prefill.traffic.output_tokens == 1 and prefill.traffic.output_tokens_cv == 0
    assert prefill.limits.max_batched_tokens == prefill_fit.inputs.max_batched_tokens
    # Decode: prompts cost its steps nothing, and no step budget binds them.
    decode_fit = plan_fit(LLAMA_31_8B, H100_SXM, plan)
    decode = arrival_model(decode_fit, prepare_timing(decode_fit), arrivals, 64, Role.DECODE)
    assert decode.steps.prefill_cost == 0
    assert decode.limits.max_batched_tokens >= decode_fit.result.kv_capacity_tokens
    aggregated = arrival_model(decode_fit, prepare_timing(decode_fit), arrivals, 64)
    # Without prefill in its steps a replica decodes as fast at any load as at none of it.
    rate = 0.5 * aggregated.saturation_rate_per_s
    assert decode.latency(rate).tpot_s.p99 < aggregated.latency(rate).tpot_s.p99
    assert isinstance(decode, ReplicaModel)


def test_the_plan_needs_arrivals():
    with pytest.raises(AssertionError):
        disaggregated.plan_disaggregated(
            LLAMA_31_8B, [("h100", H100_SXM)], PlanInputs(), FleetInputs(requests_per_s=1), named_gpu=True
        )

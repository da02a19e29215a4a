"""Engine profiles in the sizing core: memory rules checked against the start-up logs they
came from (bench/measurements/memory.csv), checkpoint weights, native compute, and the
continuous-batching rules an engine changes. Figures are written out from those logs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.sizing import engine as eng
from app.sizing import memory, timing
from app.sizing.parallelism import ep_all_to_all_s
from app.sizing.plan import PlanInputs, matmul_params_per_token, plan_fit, plan_throughput
from app.sizing.precision import compute_peak_tflops
from app.sizing.specs import ModelSpec

from .specs import A100_80, H100_SXM, LLAMA_31_8B, QWEN3_30B_A3B

GIB = 2**30
VLLM = eng.EngineProfile(
    name="vllm",
    display_name="vLLM",
    version="test",
    kv_rule=eng.UTIL_OF_VISIBLE,
    gpu_memory_utilization=0.9,
    max_batched_tokens=2048,
    max_num_seqs=256,
    block_size=16,
    step_overhead_ms=2.0,
    layer_overhead_us=20.0,
    ttft_overhead_ms=5.0,
)


def _no_reservations(**overrides: float) -> eng.Reservations:
    values = {"activation_bytes": 0.0, "non_torch_bytes": 0.0, "cuda_graph_bytes": 0.0, "engine_buffers_bytes": 0.0}
    return eng.Reservations(**{**values, **overrides})


def test_vllm_budget_reproduces_the_l40s_log_of_row_m10():
    # 'Free memory on device (43.93/44.42 GiB)... 27.72 GiB for weight, 1.4 GiB for peak activation,
    # 0.21 GiB for non-torch memory'; available KV 10.65 GiB at util 0.90 (CUDA graphs after it).
    reserved = _no_reservations(activation_bytes=1.4 * GIB, non_torch_bytes=0.21 * GIB, cuda_graph_bytes=3.45 * GIB)
    budget = eng.kv_budget_bytes_per_gpu(
        VLLM, visible_bytes=44.42 * GIB, weights_bytes_per_gpu=27.72 * GIB, reserved=reserved, utilization=0.9
    )
    assert budget / GIB == pytest.approx(0.9 * 44.42 - 27.72 - 1.4 - 0.21)
    assert budget / GIB == pytest.approx(10.65, abs=0.01)


def test_sglang_static_fraction_holds_weights_and_kv_together():
    sglang = replace(VLLM, name="sglang", kv_rule=eng.STATIC_FRACTION)
    reserved = _no_reservations(activation_bytes=5 * GIB, non_torch_bytes=1 * GIB)
    budget = eng.kv_budget_bytes_per_gpu(
        sglang, visible_bytes=79.19 * GIB, weights_bytes_per_gpu=55 * GIB, reserved=reserved, utilization=0.93
    )
    # Activations live outside the static fraction; non-torch memory comes off it.
    assert budget / GIB == pytest.approx(0.93 * 79.19 - 55 - 1)


def test_trtllm_takes_a_fraction_of_the_memory_free_after_loading():
    trt = replace(VLLM, name="trtllm", kv_rule=eng.FRACTION_OF_FREE)
    reserved = _no_reservations(engine_buffers_bytes=2 * GIB)
    budget = eng.kv_budget_bytes_per_gpu(
        trt, visible_bytes=22.0 * GIB, weights_bytes_per_gpu=12.0 * GIB, reserved=reserved, utilization=0.9
    )
    assert budget / GIB == pytest.approx(0.9 * (22.0 - 12.0 - 2.0))


def test_kv_capacity_rounds_down_to_whole_blocks():
    assert eng.whole_blocks(31_239.7, 16) == 31_232
    assert eng.whole_blocks(-5, 16) == 0


def test_visible_memory_is_derived_when_the_catalog_has_none():
    assert eng.visible_gib(80, None, "hopper") == pytest.approx(79.2)
    assert eng.visible_gib(48, None, "ada") == pytest.approx(44.16)
    assert eng.visible_gib(80, 79.19, "hopper") == 79.19


GPT_OSS_20B = ModelSpec(
    "gpt-oss-20b",
    20_914_757_184,
    24,
    2880,
    64,
    8,
    64,
    experts=32,
    experts_per_token=4,
    expert_params=24 * 32 * 3 * 2880 * 2880,
    vocab_size=201_088,
    native_precision="mxfp4",
)


def test_mxfp4_quantizes_the_experts_only_and_keeps_the_rest_in_bf16():
    parts = memory.checkpoint_weights_by_component(GPT_OSS_20B, "mxfp4")
    experts = 24 * 32 * 3 * 2880 * 2880
    assert parts["experts"] == pytest.approx(experts * (0.5 + 1 / 32))
    assert parts["embeddings"] == pytest.approx(201_088 * 2880 * 2)
    total_gib = sum(parts.values()) / GIB
    # vLLM on a 3090 (row M23): 'Model loading took 12.8848 GiB'.
    assert total_gib == pytest.approx(12.8848, rel=0.03)


def test_fp8_keeps_embeddings_and_lm_head_in_bf16():
    model = replace(LLAMA_31_8B, vocab_size=128_256)
    parts = memory.checkpoint_weights_by_component(model, "fp8")
    assert parts["embeddings"] == 128_256 * 4096 * 2
    assert parts["lm_head"] == 128_256 * 4096 * 2
    assert parts["attention"] == pytest.approx(32 * 4096 * (2 * 4096 + 2 * 1024) * (1 + 4 / 16384))


def test_a_checkpoints_own_ignore_list_overrides_the_convention():
    model = replace(LLAMA_31_8B, vocab_size=128_256, native_precision="fp8", quantized_components=("dense_mlp",))
    fitted = plan_fit(model, H100_SXM, PlanInputs(engine=VLLM))
    assert fitted.weights_by_component is not None
    assert fitted.weights_by_component["attention"] == 32 * 4096 * (2 * 4096 + 2 * 1024) * 2


def test_native_compute_runs_fp8_weights_at_the_fp8_peak_and_int4_at_bf16():
    assert compute_peak_tflops(H100_SXM, "native", "fp8") == ("fp8", H100_SXM.peak_tflops["fp8"])
    assert compute_peak_tflops(A100_80, "native", "int4")[0] == "bf16"
    assert compute_peak_tflops(A100_80, "native", "fp8")[0] == "bf16"


def test_engine_fit_subtracts_its_reservations_from_the_visible_memory():
    engine = replace(VLLM, activation_bytes_per_token_hidden=25.0, non_torch_gib=0.3)
    real = plan_fit(LLAMA_31_8B, replace(H100_SXM, memory_visible_gib=79.19), PlanInputs(engine=engine))
    assert real.reservations is not None
    activation = 2048 * 25.0 * 4096
    assert real.reservations.activation_bytes == pytest.approx(activation)
    # No vocabulary in this spec: every parameter is a (bf16) linear weight.
    budget = 0.9 * 79.19 * GIB - 8_030_261_248 * 2 - activation - 0.3 * GIB
    assert real.result.kv_capacity_tokens == int(budget / 131_072) // 16 * 16


def test_ideal_is_the_seed_arithmetic():
    fitted = plan_fit(LLAMA_31_8B, H100_SXM, PlanInputs())
    assert fitted.result.max_concurrency == 166
    assert fitted.inputs.gpu_memory_utilization == 0.9 and fitted.inputs.max_batched_tokens == 2048


def test_a_single_request_sees_no_prefill_but_its_own_in_ttft():
    plan = plan_throughput(LLAMA_31_8B, H100_SXM, PlanInputs(engine=VLLM, concurrency=1))
    steady = plan.point.steady
    assert steady is not None
    # B - 1 = 0 other prompts: TPOT is the decode step, which carries the engine's overhead.
    assert steady.time_per_token_s == pytest.approx(plan.point.decode.time_s)
    assert plan.point.decode.overhead_s == pytest.approx(2e-3 + 32 * 20e-6)
    assert steady.ttft_s == pytest.approx(steady.chunks_per_prompt * steady.mixed_step_s + 5e-3)


def test_expert_parallel_adds_two_all_to_alls_per_moe_layer():
    assert ep_all_to_all_s(64, 2048, 48, 8, 1, 450, 10) == 0.0
    payload = 64 / 4 * 8 * 2048 * 2 * 3 / 4
    assert ep_all_to_all_s(64, 2048, 48, 8, 4, 450, 10) == pytest.approx(2 * 48 * (10e-6 + payload / 450e9))


def test_expert_weights_stream_at_a_constant_share_and_each_expert_gemm_costs_its_overhead():
    hw = timing.Hardware(3.35e12, 989e12, memory_efficiency=0.8, moe_memory_efficiency=0.6, expert_overhead_s=2e-6)
    work = timing.Workload(QWEN3_30B_A3B, "bf16", "bf16", 1, 128, 128)
    read = timing.weights_read(work, 128)
    # The experts' bytes at 0.6 of the dense bandwidth, whatever the tokens per expert.
    expected = read.shared_bytes / (3.35e12 * 0.8) + read.expert_bytes / (3.35e12 * 0.8 * 0.6)
    assert timing.weights_memory_s(hw, read, 1) == pytest.approx(expected)
    # One token touches 8 of 128 experts in each of 48 layers: 384 expert GEMMs; 128 tokens
    # touch 1 - (1 - 8/128)^128 of them, all but 0.03%.
    assert timing.expert_gemms_per_gpu(QWEN3_30B_A3B, 1, 1) == pytest.approx(48 * 8)
    assert timing.expert_gemms_per_gpu(QWEN3_30B_A3B, 128, 1) == pytest.approx(48 * 128 * (1 - (120 / 128) ** 128))
    # Expert parallel over 4 GPUs: each runs a quarter of them.
    assert timing.expert_gemms_per_gpu(QWEN3_30B_A3B, 128, 4) == pytest.approx(
        timing.expert_gemms_per_gpu(QWEN3_30B_A3B, 128, 1) / 4
    )
    step = timing.forward_step(work, hw, 1, 100.0)
    assert step.overhead_s == pytest.approx(48 * 8 * 2e-6)
    assert timing.expert_gemms_per_gpu(LLAMA_31_8B, 128, 1) == 0.0


def test_uncertainty_is_widened_for_what_the_training_rows_lack():
    spread = eng.Uncertainty(time_per_token=(0.8, 1.25), rows={"moe": 0}, unseen_widening=2.0)
    engine = replace(VLLM, uncertainty=spread, efficiencies=(eng.KernelEfficiency("hopper", 0.8, 0.6),))
    ranges, notes = eng.uncertainty_ranges(engine, {"time_per_token_ms": 10.0}, moe=False, architecture="hopper")
    assert ranges["time_per_token_ms"] == pytest.approx([8.0, 12.5]) and notes == []
    ranges, notes = eng.uncertainty_ranges(engine, {"time_per_token_ms": 10.0}, moe=True, architecture="ampere")
    assert ranges["time_per_token_ms"] == pytest.approx([10 * 0.8**2, 10 * 1.25**2])
    assert len(notes) == 2 and ranges["ttft_ms"] is None


def test_a_prompt_waits_behind_the_others_prefills_as_in_m_d_1():
    # Half the time a prefill is running (rho 0.5), each 0.4 s: W = 0.5 x 0.4 / (2 x 0.5) = 0.2 s.
    assert timing.prefill_wait_s(1.25, 0.4) == pytest.approx(0.2)
    assert timing.prefill_wait_s(0.0, 0.4) == 0.0
    # Saturated, the wait is held where the steady state still means something.
    assert timing.prefill_wait_s(10.0, 0.4) == pytest.approx(0.95 * 0.4 / (2 * 0.05))
    # A closed loop of 4 has at most 3 prompts ahead: 3 x 0.4 = 1.2 s, under M/D/1's 3.8 s;
    # where M/D/1 waits less (0.2 s) it stands.
    assert timing.prefill_wait_s(10.0, 0.4, others=3) == pytest.approx(1.2)
    assert timing.prefill_wait_s(1.25, 0.4, others=3) == pytest.approx(0.2)


def test_engines_multiply_no_embedding_lookup_and_prefill_no_lm_head_but_the_last_token():
    model = replace(LLAMA_31_8B, vocab_size=128_256)
    table = 128_256 * 4096
    decode, prefill = matmul_params_per_token(model)
    assert decode == model.active_params - table
    assert prefill == model.active_params - 2 * table
    tied = replace(model, tie_word_embeddings=True, params_total=model.params_total - table)
    decode, prefill = matmul_params_per_token(tied)
    assert decode == tied.active_params  # the one table is the head
    assert prefill == tied.active_params - table


def test_a_calibration_s_ranges_are_its_mean_absolute_error_either_side() -> None:
    predicted = {"ttft_ms": 200.0, "tokens_per_s": 1000.0, "time_per_token_ms": None}
    ranges = eng.residual_ranges(predicted, 10.0)
    assert ranges["ttft_ms"] == pytest.approx([180.0, 220.0])
    assert ranges["tokens_per_s"] == pytest.approx([900.0, 1100.0])
    # Not predicted, not given: no range.
    assert ranges["time_per_token_ms"] is None and ranges["kv_capacity_tokens"] is None
    assert set(ranges) == set(eng.UNCERTAIN_FIELDS)
    # An error over 100% cannot take a figure below zero.
    assert eng.residual_ranges({"ttft_ms": 50.0}, 150.0)["ttft_ms"] == pytest.approx([0.0, 125.0])


def test_trtllm_fp8_and_nvfp4_weights_with_a_16_bit_cache_say_the_checkpoint_may_carry_fp8_kv():
    trt = replace(VLLM, name="trtllm", kv_rule=eng.FRACTION_OF_FREE)
    for weights in ("fp8", "nvfp4"):
        note = eng.kv_format_note(trt, weights, "bf16")
        assert note is not None and f"an {weights.upper()} checkpoint" in note and "kv_precision=fp8" in note
    # Said only where it would change the answer: an FP8 cache asked, 16-bit weights, other engines.
    assert eng.kv_format_note(trt, "fp8", "fp8") is None
    assert eng.kv_format_note(trt, "bf16", "bf16") is None
    assert eng.kv_format_note(VLLM, "fp8", "bf16") is None
    inputs = PlanInputs(prompt_tokens=1000, output_tokens=100, engine=trt, weight_precision="fp8")
    assert any("kv_precision=fp8" in w for w in plan_fit(LLAMA_31_8B, H100_SXM, inputs).warnings)
    fp8_cache = replace(inputs, kv_precision="fp8")
    assert not any("kv_precision=fp8" in w for w in plan_fit(LLAMA_31_8B, H100_SXM, fp8_cache).warnings)

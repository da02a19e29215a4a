"""Time (MODEL.md section 2) against the seed figures: decode, prefill, MoE, crossover,
continuous batching, tensor-parallel communication, roofline."""

import pytest

from app.sizing import timing
from app.sizing.parallelism import tp_communication_s
from app.sizing.specs import ModelSpec
from app.sizing.vocabulary import RooflineBound

from .specs import LLAMA_31_8B, QWEN3_30B_A3B

H100 = timing.Hardware(3.35e12, 989e12)
L4 = timing.Hardware(300e9, 121e12)
approx = lambda v: pytest.approx(v, rel=0.02)  # noqa: E731


def work(model=LLAMA_31_8B, prompt=2048, output=512, weights="bf16", tp=1):
    return timing.Workload(model, weights, "bf16", tp, prompt, output)


def decode_ms(w, hw, batch):
    return timing.decode_step(w, hw, batch, w.prompt_tokens + w.output_tokens / 2).time_s * 1e3


def test_llama_3_1_8b_decodes_in_7_ms_memory_bound_with_0_03_ms_of_compute():
    step = timing.decode_step(work(), H100, 1, 2048 + 256)
    assert step.time_s * 1e3 == approx(7.0)
    assert step.bound == RooflineBound.MEMORY
    assert round(step.compute_s * 1e3, 2) == 0.03


def test_l4_has_a_tenth_of_the_bandwidth_and_takes_78_ms():
    assert decode_ms(work(), L4, 1) == approx(78)


def test_int4_weights_take_1_84_ms():
    assert decode_ms(work(weights="int4"), H100, 1) == approx(1.84)


def test_batching_256_64_from_1_to_64_costs_only_a_millisecond():
    w = work(prompt=256, output=64)
    assert decode_ms(w, H100, 1) == approx(6.86)
    assert decode_ms(w, H100, 64) == approx(7.88)
    assert 64 / (decode_ms(w, H100, 64) / 1e3) == approx(8120)


def test_long_contexts_double_the_step_at_batch_64_reading_19_3_gb_of_kv():
    step = timing.decode_step(work(), H100, 64, 2304)
    assert step.time_s * 1e3 == approx(15.1)
    assert step.kv_bytes == approx(19.3e9)


def test_prefill_of_2048_tokens_is_compute_bound_68_7_ms_and_64_prompts_take_4_4_s():
    one = timing.prefill(work(), H100, 1)
    assert one.compute_s * 1e3 == approx(68.7)
    assert one.memory_s * 1e3 == approx(7.0)
    assert one.bound == RooflineBound.COMPUTE
    assert timing.prefill(work(), H100, 64).time_s == approx(4.4)


def test_crossover_is_411_at_256_64_and_none_at_2048_512():
    assert timing.crossover_concurrency(work(prompt=256, output=64), H100, 288) == 411
    assert timing.crossover_concurrency(work(), H100, 2304) is None


def test_crossover_is_the_first_batch_where_compute_outlasts_memory():
    w = work(prompt=256, output=64)
    before, at = (timing.decode_step(w, H100, b, 288) for b in (410, 411))
    assert before.compute_s < before.memory_s
    assert at.compute_s >= at.memory_s


def test_qwen3_moe_decodes_in_2_95_ms_alone_and_26_ms_at_32():
    w = work(model=QWEN3_30B_A3B)
    assert decode_ms(w, H100, 1) == approx(2.95)
    assert decode_ms(w, H100, 32) == approx(26.0)


def test_expert_fraction_at_32_tokens_of_8_of_128_is_0_873():
    assert timing.expert_fraction(QWEN3_30B_A3B, 32) == pytest.approx(1 - (120 / 128) ** 32)
    assert timing.expert_fraction(QWEN3_30B_A3B, 32) == pytest.approx(0.873, abs=5e-4)
    assert timing.expert_fraction(LLAMA_31_8B, 1) == 1.0


def test_moe_active_parameters_are_3_35_billion():
    assert QWEN3_30B_A3B.active_params == pytest.approx(3_353_032_704)


def test_moe_crossover_search_agrees_with_a_linear_scan():
    w = work(model=QWEN3_30B_A3B, prompt=64, output=16)
    found = timing.crossover_concurrency(w, H100, 72)
    assert found is not None
    first = next(b for b in range(1, found + 1) if (s := timing.decode_step(w, H100, b, 72)).compute_s >= s.memory_s)
    assert first == found


@pytest.mark.parametrize(
    ("link_gb_per_s", "latency_us", "batch", "ms"),
    [
        (450, 10, 1, 0.64),
        (450, 10, 64, 0.75),
        (450, 10, 512, 1.53),
        (25, 20, 1, 1.31),
        (25, 20, 64, 3.29),
        (25, 20, 512, 17.39),
    ],
)
def test_tp4_communication_matches_seed_004(link_gb_per_s, latency_us, batch, ms):
    assert tp_communication_s(batch, 4096, 32, 4, link_gb_per_s, latency_us) * 1e3 == approx(ms)


def test_one_gpu_communicates_nothing():
    assert tp_communication_s(64, 4096, 32, 1, 450, 10) == 0


def test_continuous_batching_at_batch_1_is_one_prefill_and_plain_decode():
    w = work(prompt=2000, output=500)
    steady = timing.continuous_batching(w, H100, 1, 2048)
    assert steady.chunks_per_prompt == 1
    assert steady.ttft_s == pytest.approx(timing.prefill(w, H100, 1).time_s, rel=0.01)


@pytest.mark.parametrize(("batch", "ms", "tokens_per_s"), [(64, 20.2, 3160), (128, 30.7, 4180)])
def test_continuous_batching_matches_model_md_cross_check(batch, ms, tokens_per_s):
    steady = timing.continuous_batching(work(prompt=2000, output=500), H100, batch, 2048)
    assert steady.time_per_token_s * 1e3 == approx(ms)
    assert steady.tokens_per_s == approx(tokens_per_s)


def test_continuous_batching_refuses_when_decodes_fill_the_token_budget():
    assert timing.continuous_batching(work(), H100, 2048, 2048) is None


def test_prompts_longer_than_the_budget_are_chunked():
    steady = timing.continuous_batching(work(prompt=8000, output=100), H100, 48, 2048)
    assert steady.chunks_per_prompt == 4  # ceil(8000 / (2048 - 48))
    assert steady.chunk_tokens == 2000


def test_ridge_point_of_300_tflops_over_2_tb_per_s_is_150():
    assert timing.Hardware(2.0e12, 300e12).ridge_flops_per_byte == 150


@pytest.mark.parametrize(
    ("m", "intensity", "time_us", "bound"),
    [
        (1, 1.0, 67.1, "memory"),
        (8, 8.0, 67.2, "memory"),
        (64, 63.0, 68.2, "memory"),
        (256, 240.9, 114.5, "compute"),
        (512, 455.1, 229.1, "compute"),
        (4096, 2048.0, 1832.5, "compute"),
    ],
)
def test_roofline_py_table(m, intensity, time_us, bound):
    gemm = timing.gemm_roofline(m, 8192, 8192, 300e12, 2.0e12)
    assert gemm.arithmetic_intensity == pytest.approx(intensity, abs=0.05)
    assert gemm.time_s * 1e6 == pytest.approx(time_us, abs=0.05)
    assert gemm.bound == bound


def test_int8_weights_halve_a_batch_1_gemm():
    fp16 = timing.gemm_roofline(1, 8192, 8192, 300e12, 2.0e12)
    int8 = timing.gemm_roofline(1, 8192, 8192, 300e12, 2.0e12, weight_bytes=1)
    assert round(fp16.bytes_moved / 1e6) == 134
    assert round(int8.bytes_moved / 1e6) == 67
    assert int8.time_s * 1e6 == pytest.approx(33.6, abs=0.05)


def test_sliding_windows_cap_attention_flops():
    windowed = ModelSpec("w", 10**9, 2, 1024, 8, 8, 128, sliding_window=100, sliding_window_layers=2)
    full = ModelSpec("f", 10**9, 2, 1024, 8, 8, 128)
    w = timing.Workload(windowed, "bf16", "bf16", 1, 1000, 10)
    f = timing.Workload(full, "bf16", "bf16", 1, 1000, 10)
    attention = lambda s: s.flops - 2 * 10**9  # noqa: E731
    assert attention(timing.decode_step(w, H100, 1, 1000)) * 10 == pytest.approx(
        attention(timing.decode_step(f, H100, 1, 1000))
    )

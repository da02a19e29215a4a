"""Every figure of the seed documents (../shared/seeds, listed in design/MODEL.md), asked of
the service through HTTP. Continuous figures within 2%, counts exact.

Seed 000 is the interactive lab (H100 SXM 3.35 TB/s, 989 TFLOP/s bf16; memory efficiency 0.7,
compute 0.5; 90% of memory for the engine). Seed 002 is "four numbers". Seed 004 is the
hardware-budgeting page with roofline.py and vram.py on an illustrative accelerator.

Every request here says `engine=ideal`: the seeds' own arithmetic (datasheet memory, no engine
reservations or per-step overheads). The default engine (vllm) answers what a real engine does.
"""

from __future__ import annotations

import pytest

from .helpers import GIB, get_ok, post_ok

REL = 0.02
approx = lambda value: pytest.approx(value, rel=REL)  # noqa: E731


IDEAL = {"engine": "ideal"}


def fit(client, **params):
    return get_ok(client, "/v1/fit", **IDEAL, **params)


def throughput(client, **params):
    return get_ok(client, "/v1/throughput", **IDEAL, **params)


def post_ideal(client, path, body):
    return post_ok(client, path, {**IDEAL, **body})


L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
SHORT = {"prompt_tokens": 256, "output_tokens": 64}


# --- Seed 000 and 002: memory ---------------------------------------------------------------


def test_llama_3_1_8b_weights_are_16_06_gb_in_bf16(client):
    assert fit(client, **L8_H100)["weights_bytes"] == approx(16.06e9)


def test_llama_3_1_8b_caches_128_kib_per_token(client):
    assert fit(client, **L8_H100)["kv_bytes_per_token"] == 131_072


def test_a_32k_token_conversation_on_llama_3_1_8b_holds_4_gib(client):
    body = fit(client, **L8_H100, prompt_tokens=32_768 - 512, output_tokens=512)
    assert body["kv_bytes_per_sequence"] == 4 * GIB


def test_llama_2_7b_caches_512_kib_per_token_without_gqa(client):
    assert fit(client, model="llama-2-7b", gpu="h100-sxm")["kv_bytes_per_token"] == 524_288


def test_llama_3_1_8b_holds_166_conversations_of_2048_plus_512_on_one_h100(client):
    body = fit(client, **L8_H100, prompt_tokens=2048, output_tokens=512)
    assert body["max_concurrency"] == 166


def test_llama_3_1_8b_holds_12_conversations_of_32k_on_one_h100(client):
    assert fit(client, **L8_H100, prompt_tokens=32_768, output_tokens=512)["max_concurrency"] == 12


def test_llama_2_7b_holds_3_conversations_of_32k_on_one_h100(client):
    body = fit(client, model="llama-2-7b", gpu="h100-sxm", prompt_tokens=32_768, output_tokens=512)
    assert body["max_concurrency"] == 3


def test_llama_3_1_70b_bf16_weights_141_gb_do_not_fit_one_h100(client):
    body = fit(client, model="llama-3.1-70b", gpu="h100-sxm", tensor_parallel=1)
    assert body["weights_bytes"] == approx(141e9)
    assert body["fits_weights"] is False
    assert body["max_concurrency"] == 0


def test_llama_3_1_70b_bf16_fits_on_two_h100s(client):
    body = fit(client, model="llama-3.1-70b", gpu="h100-sxm", tensor_parallel=2)
    assert body["fits_weights"] is True
    assert body["gpus"] == 2


def test_llama_3_1_70b_fits_one_h100_in_int4(client):
    body = fit(client, model="llama-3.1-70b", gpu="h100-sxm", tensor_parallel=1, weight_precision="int4")
    assert body["fits_weights"] is True


LLAMA_3_70B = {  # Llama 3 70B's geometry as seed 002 states it: 80 layers, 8 KV heads, head_dim 128
    "name": "Llama 3 70B",
    "params_total": 70_553_706_496,
    "layers": 80,
    "hidden_size": 8192,
    "attention_heads": 64,
    "kv_heads": 8,
    "head_dim": 128,
}


def test_llama_3_70b_caches_320_kib_per_token_and_16_users_at_8k_need_42_9_gb(client):
    body = post_ideal(
        client,
        "/v1/fit",
        {"model": LLAMA_3_70B, "gpu": "h100-sxm", "prompt_tokens": 8192 - 512, "output_tokens": 512, "concurrency": 16},
    )
    assert body["kv_bytes_per_token"] == 327_680
    assert body["kv_bytes_at_concurrency"] == approx(42.9e9)


def test_rough_rule_puts_70b_bf16_on_3_h100s(client):
    assert fit(client, model="llama-3.1-70b", gpu="h100-sxm")["rough_gpus"] == 3


def test_a_seventh_of_an_h100_gets_2_of_the_cards_14_host_cores(client):
    whole = fit(client, model="llama-3.2-1b", gpu="h100-sxm")
    slice_ = fit(client, model="llama-3.2-1b", gpu="h100-sxm", mig_profile="1g.10gb")
    assert whole["host_cpu_cores"] == 14
    assert slice_["host_cpu_cores"] == pytest.approx(2)


# --- Seed 000: decode, prefill, batching, cost ------------------------------------------------


def test_llama_3_1_8b_decodes_in_7_ms_memory_bound_on_h100(client):
    body = throughput(client, **L8_H100, prompt_tokens=2048, output_tokens=512)
    assert body["time_per_token_ms"] == approx(7.0)
    assert body["decode_bound"] == "memory"
    # "about 0.03 ms" of compute: the seed gives one significant figure.
    assert round(body["decode_compute_ms"], 2) == 0.03


def test_llama_3_1_8b_decodes_in_78_ms_on_l4(client):
    body = throughput(client, model="llama-3.1-8b", gpu="l4", prompt_tokens=2048, output_tokens=512)
    assert body["time_per_token_ms"] == approx(78)


def test_int4_weights_cut_llama_3_1_8b_decode_to_1_84_ms(client):
    body = throughput(client, **L8_H100, weight_precision="int4")
    assert body["time_per_token_ms"] == approx(1.84)


def test_batch_1_at_256_64_is_6_86_ms_and_146_tokens_per_s(client):
    body = throughput(client, **L8_H100, **SHORT, concurrency=1)
    assert body["time_per_token_ms"] == approx(6.86)
    assert body["tokens_per_s"] == approx(146)


def test_batch_64_at_256_64_is_7_88_ms_and_8120_tokens_per_s(client):
    body = throughput(client, **L8_H100, **SHORT, concurrency=64)
    assert body["time_per_token_ms"] == approx(7.88)
    assert body["tokens_per_s"] == approx(8120)


def test_sweep_from_1_to_64_reads_6_9_to_7_9_ms(client):
    body = throughput(client, **L8_H100, **SHORT, sweep=[1, 64])
    assert [row["time_per_token_ms"] for row in body["sweep"]] == [approx(6.9), approx(7.9)]


def test_cost_at_3_usd_per_hour_prefill_included_is_5_83_then_0_21_per_million(client):
    one = throughput(client, **L8_H100, **SHORT, concurrency=1, price_per_gpu_hour_usd=3)
    many = throughput(client, **L8_H100, **SHORT, concurrency=64, price_per_gpu_hour_usd=3)
    assert one["cost_per_million_output_tokens_usd"] == approx(5.83)
    assert many["cost_per_million_output_tokens_usd"] == approx(0.21)


def test_crossover_at_256_64_is_411_concurrent_requests(client):
    assert throughput(client, **L8_H100, **SHORT)["crossover_concurrency"] == 411


def test_no_crossover_at_2048_512(client):
    assert throughput(client, **L8_H100, prompt_tokens=2048, output_tokens=512)["crossover_concurrency"] is None


def test_batch_64_at_2048_512_takes_15_1_ms_reading_19_3_gb_of_kv(client):
    body = throughput(client, **L8_H100, prompt_tokens=2048, output_tokens=512, concurrency=64)
    assert body["time_per_token_ms"] == approx(15.1)
    assert body["kv_bytes_per_step"] == approx(19.3e9)


def test_prefill_of_2048_tokens_is_68_7_ms_compute_against_7_ms_memory(client):
    body = throughput(client, **L8_H100, prompt_tokens=2048, output_tokens=512)
    assert body["prefill_compute_ms"] == approx(68.7)
    assert body["prefill_memory_ms"] == approx(7.0)
    assert body["prefill_bound"] == "compute"
    assert body["ttft_ms"] == approx(68.7)


def test_64_prompts_of_2048_prefilled_together_take_4_4_s(client):
    body = throughput(client, **L8_H100, prompt_tokens=2048, output_tokens=512, concurrency=64)
    assert body["ttft_ms"] == approx(4400)


QWEN_H100 = {"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "prompt_tokens": 2048, "output_tokens": 512}


def test_qwen3_30b_a3b_weighs_61_gb_with_3_35b_active(client):
    assert fit(client, **QWEN_H100)["weights_bytes"] == approx(61e9)
    assert get_ok(client, "/v1/models/qwen3-30b-a3b")["params_active"] == approx(3.35e9)


def test_qwen3_30b_a3b_decodes_in_2_95_ms_at_batch_1(client):
    assert throughput(client, **QWEN_H100, concurrency=1)["time_per_token_ms"] == approx(2.95)


def test_qwen3_30b_a3b_at_batch_32_reads_87_percent_of_experts_in_26_ms(client):
    body = throughput(client, **QWEN_H100, concurrency=32)
    assert body["time_per_token_ms"] == approx(26.0)
    assert body["expert_fraction"] == pytest.approx(0.873, abs=0.001)


def test_70b_fp8_on_one_h100_at_full_bandwidth_gives_about_48_tokens_per_s(client):
    # Seed 002 divides 3.35 TB/s by the ~70 GB of weights alone: a short context keeps the
    # KV read negligible, as it is in that figure.
    body = throughput(
        client,
        model="llama-3.1-70b",
        gpu="h100-sxm",
        tensor_parallel=1,
        weight_precision="fp8",
        memory_efficiency=1.0,
        prompt_tokens=128,
        output_tokens=32,
    )
    assert body["tokens_per_s_per_user"] == approx(48)


# --- Seed 004: tensor-parallel communication, roofline, vram.py ------------------------------

SEED_004_MODEL = {  # "TP=4, 32 layers, d_model 4096"
    "name": "seed 004 7B",
    "params_total": 7_000_000_000,
    "layers": 32,
    "hidden_size": 4096,
    "attention_heads": 32,
    "kv_heads": 8,
    "head_dim": 128,
}


def _link_gpu(bandwidth_gb_per_s, latency_us):
    return {
        "name": "illustrative",
        "memory_gb": 80,
        "memory_bandwidth_tb_per_s": 2.0,
        "peak_tflops": {"bf16": 300},
        "interconnect": {"bandwidth_gb_per_s": bandwidth_gb_per_s, "latency_us": latency_us},
    }


@pytest.mark.parametrize(
    ("link", "batch", "expected_ms"),
    [
        ((450, 10), 1, 0.64),
        ((450, 10), 64, 0.75),
        ((450, 10), 512, 1.53),
        ((25, 20), 1, 1.31),
        ((25, 20), 64, 3.29),
        ((25, 20), 512, 17.39),
    ],
)
def test_tp4_communication_per_decode_step_matches_seed_004_table(client, link, batch, expected_ms):
    body = post_ideal(
        client,
        "/v1/throughput",
        {"model": SEED_004_MODEL, "gpu": _link_gpu(*link), "tensor_parallel": 4, "concurrency": batch},
    )
    assert body["communication_ms"] == approx(expected_ms)


def test_ridge_point_of_300_tflops_and_2_tb_per_s_is_150(client):
    body = post_ideal(client, "/v1/throughput", {"model": SEED_004_MODEL, "gpu": _link_gpu(450, 10)})
    assert body["ridge_flops_per_byte"] == approx(150)


@pytest.mark.parametrize(
    ("m", "weight_precision", "intensity", "time_us", "bound"),
    [
        (1, "bf16", 1.0, 67.1, "memory"),
        (256, "bf16", 240.9, None, "compute"),
        (4096, "bf16", 2048.0, 1832.5, "compute"),
        (1, "int8", None, 33.6, "memory"),
    ],
)
def test_roofline_of_an_8192_square_gemm_matches_seed_004(client, m, weight_precision, intensity, time_us, bound):
    body = get_ok(
        client,
        "/v1/roofline",
        m=m,
        k=8192,
        n=8192,
        peak_tflops=300,
        memory_bandwidth_tb_per_s=2.0,
        weight_precision=weight_precision,
    )
    assert body["ridge_flops_per_byte"] == approx(150)
    assert body["bound"] == bound
    if intensity is not None:
        assert body["arithmetic_intensity"] == approx(intensity)
    if time_us is not None:
        assert body["time_us"] == approx(time_us)


def test_int8_weights_halve_the_bytes_of_a_batch_1_gemm_from_134_to_67_mb(client):
    common = {"m": 1, "k": 8192, "n": 8192, "peak_tflops": 300, "memory_bandwidth_tb_per_s": 2.0}
    fp16 = get_ok(client, "/v1/roofline", **common, weight_precision="bf16")
    int8 = get_ok(client, "/v1/roofline", **common, weight_precision="int8")
    assert fp16["bytes_moved"] == approx(134e6)
    assert int8["bytes_moved"] == approx(67e6)


VRAM_GPU = {  # vram.py: "80 GB" treated as 80 GiB, 2.0 TB/s, $2.50 per hour
    "name": "vram.py accelerator",
    "memory_gb": 80 * GIB / 1e9,
    "memory_bandwidth_tb_per_s": 2.0,
    "peak_tflops": {"bf16": 300},
    "hourly_price_usd": 2.50,
}


def _vram_model(kv_heads):
    return {
        "name": "vram.py 7B",
        "params_total": 7_000_000_000,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "kv_heads": kv_heads,
        "head_dim": 128,
    }


@pytest.mark.parametrize(
    ("kv_heads", "weight_precision", "kv_precision", "seqs", "tokens_per_s", "usd_per_million"),
    [
        (8, "fp16", "fp16", 113, 3027, 0.23),
        (32, "fp16", "fp16", 28, 755, 0.92),
        (8, "int8", "fp16", 126, 3376, 0.21),
        (8, "int4", "fp16", 133, 3551, 0.20),
        (8, "int4", "int8", 266, 7102, 0.10),
    ],
)
def test_vram_py_table_of_seed_004(
    client, kv_heads, weight_precision, kv_precision, seqs, tokens_per_s, usd_per_million
):
    # 10% reserve = utilisation 0.9; 2 GiB of activations per GPU; 4,096-token sequences read
    # whole at every step; 100% of bandwidth; decode-only throughput.
    common = {
        "model": _vram_model(kv_heads),
        "gpu": VRAM_GPU,
        "weight_precision": weight_precision,
        "kv_precision": kv_precision,
        "prompt_tokens": 4096 - 64,
        "output_tokens": 64,
        "gpu_memory_utilization": 0.9,
        "reserved_gb": 2 * GIB / 1e9,
    }
    fitted = post_ideal(client, "/v1/fit", common)
    assert fitted["max_concurrency"] == seqs
    timed = post_ideal(
        client,
        "/v1/throughput",
        {**common, "concurrency": seqs, "memory_efficiency": 1.0, "compute_efficiency": 1.0, "kv_read_context": "full"},
    )
    assert timed["tokens_per_s"] == approx(tokens_per_s)
    assert timed["cost_per_million_output_tokens_decode_only_usd"] == pytest.approx(usd_per_million, abs=0.005)


# --- Seed 004: cost ---------------------------------------------------------------------------


@pytest.mark.parametrize(("tokens_per_s", "usd"), [(750, 0.93), (3000, 0.23)])
def test_cost_per_million_at_2_50_per_hour(client, tokens_per_s, usd):
    body = get_ok(client, "/v1/cost", price_per_gpu_hour_usd=2.50, tokens_per_s=tokens_per_s)
    assert body["cost_per_million_output_tokens_usd"] == pytest.approx(usd, abs=0.005)


def test_six_gpus_at_2_50_for_720_hours_cost_10800_a_month(client):
    body = get_ok(client, "/v1/cost", price_per_gpu_hour_usd=2.50, gpus=6, hours_per_month=720)
    assert body["monthly_cost_usd"] == approx(10_800)

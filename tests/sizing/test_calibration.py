"""Fitting efficiencies to benchmark points and memory overhead to a start-up log."""

from dataclasses import replace

import pytest

from app.planning.calibration.startup_log import LogParseError, parse_startup_log
from app.sizing import memory, timing
from app.sizing.calibration import BenchmarkPoint, fit_efficiencies, fit_memory_overhead
from app.sizing.errors import SizingError

from .specs import LLAMA_31_8B

TRUE_HW = timing.Hardware(3.35e12, 989e12, memory_efficiency=0.62, compute_efficiency=0.5)
WORK = timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, 1024, 256)


def generated(hw, concurrencies, **metrics):
    """Points the model itself produces at `hw`: what a fit must recover."""
    points = []
    for batch in concurrencies:
        steady = timing.continuous_batching(WORK, hw, batch, 2048)
        points.append(
            BenchmarkPoint(
                batch,
                WORK.prompt_tokens,
                WORK.output_tokens,
                tpot_ms=steady.time_per_token_s * 1e3 if "tpot" in metrics else None,
                ttft_ms=steady.ttft_s * 1e3 if "ttft" in metrics else None,
                output_tokens_per_s=steady.tokens_per_s if "rate" in metrics else None,
            )
        )
    return points


def test_five_tpot_points_at_memory_efficiency_0_62_recover_0_62():
    fit = fit_efficiencies(
        WORK, replace(TRUE_HW, memory_efficiency=0.7), generated(TRUE_HW, (1, 8, 32, 64, 128), tpot=1)
    )
    assert fit.memory_efficiency == pytest.approx(0.62, abs=0.01)
    assert fit.mape_percent < 0.5


def test_ttft_points_determine_compute_efficiency():
    fit = fit_efficiencies(WORK, TRUE_HW, generated(TRUE_HW, (1, 4, 16), ttft=1, tpot=1))
    assert fit.compute_efficiency == pytest.approx(0.5, abs=0.02)


def test_a_point_faster_than_the_roofline_at_full_efficiency_is_refused_by_name():
    ideal = generated(replace(TRUE_HW, memory_efficiency=1.0, compute_efficiency=1.0), (1, 8), tpot=1)
    impossible = [ideal[0], replace(ideal[1], tpot_ms=ideal[1].tpot_ms / 2)]
    with pytest.raises(SizingError) as error:
        fit_efficiencies(WORK, TRUE_HW, impossible)
    assert error.value.field == "points.1.tpot_ms"


def test_points_without_measurements_are_refused():
    with pytest.raises(SizingError):
        fit_efficiencies(WORK, TRUE_HW, [BenchmarkPoint(1, 100, 10)])


def test_memory_overhead_reproduces_the_logged_kv_capacity():
    weights = memory.weights_bytes(LLAMA_31_8B, "bf16")
    per_token = memory.kv_bytes_per_token(LLAMA_31_8B, "bf16")
    fitted = fit_memory_overhead(80, 1, 0.9, weights, per_token, 400_000)
    result = memory.fit(
        LLAMA_31_8B,
        memory_gb=80,
        gpus=1,
        weight_precision="bf16",
        kv_precision="bf16",
        prompt_tokens=1,
        output_tokens=1,
        reserved_gb=fitted.memory_overhead_gb,
    )
    assert result.kv_capacity_tokens == pytest.approx(400_000, abs=1)


# vLLM V1 as printed by PR #13596 (kv_cache_utils.py) and PR #12569, quoted in the tests as data.
V1_LOG = """\
INFO 01-30 03:18:12 gpu_model_runner.py:848] Loading model weights took 67.7229 GB
INFO 02-19 23:56:55 kv_cache_utils.py:524] GPU KV cache size: 2,042,016 tokens
INFO 02-19 23:56:55 kv_cache_utils.py:527] Maximum concurrency for 2,048 tokens per request: 997.08x
"""


def test_vllm_v1_lines_are_read():
    log = parse_startup_log(V1_LOG)
    assert log.weights_bytes == pytest.approx(67.7229e9)
    assert log.kv_capacity_tokens == 2_042_016
    assert (log.max_concurrency_tokens, log.max_concurrency) == (2048, 997.08)


def test_vllm_v0_blocks_become_tokens_at_the_default_block_size():
    log = parse_startup_log("INFO worker.py] # GPU blocks: 1381, # CPU blocks: 2048")
    assert log.kv_capacity_tokens == 1381 * 16


def test_sglang_kv_allocation_is_read():
    log = parse_startup_log("KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB")
    assert log.engine == "sglang"
    assert log.kv_capacity_tokens == 367_404
    assert log.kv_cache_bytes == pytest.approx(16.46e9)


def test_text_without_memory_lines_says_which_lines_it_expected():
    with pytest.raises(LogParseError, match="GPU KV cache size"):
        parse_startup_log("hello\nworld")

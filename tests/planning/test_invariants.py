"""Physics no fitted constant may break, over the seed catalog's GPUs, models and engines:
a GPU at least as fast as another at everything is never slower, a longer prompt never starts
sooner, a larger batch never decodes each token faster, and every uncertainty range holds its
estimate and widens where the training rows are missing."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bench.fit_engines import Catalog, in_process, load_catalog

ENGINES = ("vllm", "sglang", "trtllm")
# Models that fit one 80 GB GPU in bf16 with room for KV: the dominance checks run at TP 1.
MODELS = ("llama-3.1-8b", "qwen3-8b", "qwen3-14b", "qwen3-32b", "qwen3-30b-a3b", "mistral-7b")
# The same settings on both GPUs (engines pick their batch budget by the card's memory), and
# one replica of one GPU (a request without tensor_parallel takes the fewest GPUs that hold its
# batch: a larger batch may then run on two GPUs, a different replica).
SETTINGS = {"max_batched_tokens": 2048, "max_num_seqs": 256, "tensor_parallel": 1}
# Beyond this, "slower" is a finding; below it, rounding and a KV-block boundary.
TOLERANCE = 1.05
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# What the properties draw from.
ANY_MODEL = st.sampled_from(MODELS)
ANY_ENGINE = st.sampled_from(ENGINES)
OUTPUTS = st.integers(2, 2_000)


@cache
def catalog() -> Catalog:
    return load_catalog()


@cache
def asker():
    return in_process(catalog())


def _peaks(slug: str) -> dict[str, float]:
    return {k: v for k, v in catalog().gpus[slug].peak_tflops.items() if v}


def dominates(fast: str, slow: str) -> bool:
    """At least the other's bandwidth, memory and peak at every precision the other has."""
    a, b = catalog().gpus[fast], catalog().gpus[slow]
    if not a.memory_bandwidth_tb_per_s or not b.memory_bandwidth_tb_per_s:
        return False
    fast_peaks, slow_peaks = _peaks(fast), _peaks(slow)
    return (
        fast != slow
        and a.memory_bandwidth_tb_per_s >= b.memory_bandwidth_tb_per_s
        and a.memory_gb >= b.memory_gb
        and bool(slow_peaks)
        and all(fast_peaks.get(k, 0.0) >= v for k, v in slow_peaks.items())
    )


@cache
def dominance_pairs() -> tuple[tuple[str, str], ...]:
    # Within a vendor: across vendors the measured kernels differ (vLLM on MI300X streams 77% of
    # its 5.3 TB/s, on Hopper 87% of an H200 NVL's 4.8: the H200 NVL decodes faster, as measured).
    # Within a memory technology too: GDDR cards (Ada, the *-gddr generations) have their own
    # measured rows (vLLM's prefill on an RTX 4090 reaches 59% of its peak, on the A100s 91%), so
    # an RTX 4090 may prefill a little slower than an A30 whose datasheet it matches.
    slugs = sorted(catalog().gpus)
    gpus = catalog().gpus

    def kind(slug: str) -> tuple[bool, bool]:
        architecture = gpus[slug].architecture or ""
        return architecture.startswith("cdna"), architecture == "ada" or architecture.endswith("-gddr")

    return tuple((f, s) for f in slugs for s in slugs if dominates(f, s) and kind(f) == kind(s))


@cache
def kernel_pairs(engine: str) -> tuple[tuple[str, str], ...]:
    """The dominance pairs on which the engine's kernels reach the same shares of the peaks.
    Across generations those are fitted apart (an H100 PCIe's measured share of its bandwidth
    under TensorRT-LLM is below the prior an unmeasured A100 keeps, with the two cards'
    bandwidths 3% apart): the issue's pairs above are where that is checked."""
    profile, gpus = catalog().engines[engine], catalog().gpus

    def shares(slug: str) -> tuple[float, ...]:
        row = profile.efficiency(gpus[slug].architecture)
        return row.memory, row.compute, row.moe_memory

    return tuple((fast, slow) for fast, slow in dominance_pairs() if shares(fast) == shares(slow))


def throughput(**params: Any) -> dict[str, Any]:
    try:
        return asker()("/v1/throughput", {**SETTINGS, **params})
    except LookupError:
        # A shape that cannot hold the weights is refused (422): no figures to compare.
        assume(False)
        raise


def figures(answer: dict[str, Any]) -> dict[str, float]:
    steady = answer["continuous_batching"]
    return {
        "tpot": steady["time_per_token_ms"],
        "ttft": steady["ttft_ms"],
        "tokens_per_s": steady["tokens_per_s"],
        "lab_tpot": answer["time_per_token_ms"],
        "lab_ttft": answer["ttft_ms"],
    }


def test_the_issue_pairs_are_dominance_pairs():
    for fast, slow in (("b200", "h100-sxm"), ("b200", "h200-sxm"), ("mi300x", "a100-sxm-80gb")):
        assert dominates(fast, slow), (fast, slow)


def one_chunk_a_step(prompt: int, output: int, batch: int) -> None:
    """MODEL.md's continuous-batching steady state prices a share B x chunks / output of the
    steps as mixed, one chunk each: it means what it says while that share is at most 1.
    Past it (long prompts, short answers) the prefill stream is saturated, a regime the formula
    overcounts (more mixed steps than steps), and its figures are not compared."""
    chunks = -(-prompt // (SETTINGS["max_batched_tokens"] - batch))
    assume(batch * chunks <= output)


def _same_settings(fast: str, slow: str, model: str, engine: str, prompt: int, output: int, batch: int):
    one_chunk_a_step(prompt, output, batch)
    params = {"model": model, "engine": engine, "prompt_tokens": prompt, "output_tokens": output}
    a = throughput(gpu=fast, concurrency=batch, **params)
    b = throughput(gpu=slow, concurrency=batch, **params)
    # Both must hold the batch: past a KV cap the answers are of different batches.
    assume(a["fits"] and b["fits"] and batch <= min(a["max_concurrency"], b["max_concurrency"]))
    assume(a["continuous_batching"] is not None and b["continuous_batching"] is not None)
    return figures(a), figures(b)


def _check_not_slower(fast_figures: dict[str, float], slow_figures: dict[str, float], label: str) -> None:
    # Not the closed loop's steady TTFT: at the same concurrency a faster card cycles more
    # prompts through the same batch, so more of them queue for the prefill stream (bounded by
    # B - 1 ahead); a faster card's lab TTFT, prompt alone, is what must not be longer.
    for name in ("tpot", "lab_tpot", "lab_ttft"):
        assert fast_figures[name] <= slow_figures[name] * TOLERANCE, (label, name, fast_figures, slow_figures)
    assert fast_figures["tokens_per_s"] * TOLERANCE >= slow_figures["tokens_per_s"], (label, fast_figures, slow_figures)


@PROPERTY
@given(
    pair=st.sampled_from(sorted({("b200", "h100-sxm"), ("b200", "h200-sxm"), ("mi300x", "a100-sxm-80gb")})),
    model=ANY_MODEL,
    engine=ANY_ENGINE,
    prompt=st.integers(16, 16_000),
    output=OUTPUTS,
    batch=st.integers(1, 64),
)
def test_b200_is_never_slower_than_h100_or_h200_nor_mi300x_than_a100(pair, model, engine, prompt, output, batch):
    fast, slow = pair
    a, b = _same_settings(fast, slow, model, engine, prompt, output, batch)
    _check_not_slower(a, b, f"{fast} vs {slow} {model} {engine} {prompt}/{output} x{batch}")


@PROPERTY
@given(
    data=st.data(),
    model=ANY_MODEL,
    engine=ANY_ENGINE,
    prompt=st.integers(16, 16_000),
    output=OUTPUTS,
    batch=st.integers(1, 64),
)
def test_a_gpu_at_least_as_fast_at_everything_is_never_slower(data, model, engine, prompt, output, batch):
    fast, slow = data.draw(st.sampled_from(kernel_pairs(engine)))
    a, b = _same_settings(fast, slow, model, engine, prompt, output, batch)
    _check_not_slower(a, b, f"{fast} vs {slow} {model} {engine} {prompt}/{output} x{batch}")


GPUS = ("h100-sxm", "h200-sxm", "b200", "a100-sxm-80gb", "l40s", "l4", "mi300x", "mi355x")


@PROPERTY
@given(
    gpu=st.sampled_from(GPUS),
    model=ANY_MODEL,
    engine=ANY_ENGINE,
    prompt=st.integers(16, 16_000),
    more=st.integers(1, 8_000),
    output=OUTPUTS,
    batch=st.integers(1, 32),
)
def test_ttft_does_not_fall_as_the_prompt_grows(gpu, model, engine, prompt, more, output, batch):
    one_chunk_a_step(prompt + more, output, batch)
    params = {"gpu": gpu, "model": model, "engine": engine, "output_tokens": output, "concurrency": batch}
    short = throughput(prompt_tokens=prompt, **params)
    long = throughput(prompt_tokens=prompt + more, **params)
    assume(long["fits"] and batch <= long["max_concurrency"] and long["continuous_batching"] is not None)
    assume(short["continuous_batching"] is not None)
    # Within 0.1%: where a longer prompt is cut into one more chunk, its chunks' mixed steps
    # share the running decodes differently (seen at 3e-5 of a 339 ms TTFT).
    assert long["ttft_ms"] >= short["ttft_ms"] / 1.001
    assert long["continuous_batching"]["ttft_ms"] >= short["continuous_batching"]["ttft_ms"] / 1.001


@PROPERTY
@given(
    gpu=st.sampled_from(GPUS),
    model=ANY_MODEL,
    engine=ANY_ENGINE,
    prompt=st.integers(16, 8_000),
    output=OUTPUTS,
    batch=st.integers(1, 128),
    more=st.integers(1, 128),
)
def test_a_larger_batch_never_decodes_faster_per_token_nor_serves_fewer_tokens(
    gpu, model, engine, prompt, output, batch, more
):
    params = {"gpu": gpu, "model": model, "engine": engine, "prompt_tokens": prompt, "output_tokens": output}
    small = throughput(concurrency=batch, **params)
    large = throughput(concurrency=batch + more, **params)
    assume(large["fits"] and batch + more <= large["max_concurrency"])
    assert large["time_per_token_ms"] >= small["time_per_token_ms"] / 1.000001
    assert large["tokens_per_s"] >= small["tokens_per_s"] / 1.000001


def test_a_batch_past_the_kv_cache_says_it_is_capped():
    answer = throughput(model="llama-3.1-8b", gpu="l40s", engine="vllm", prompt_tokens=8000, output_tokens=500,
                        concurrency=4096)  # fmt: skip
    assert answer["max_concurrency"] < 4096 and not answer["fits"]
    assert any(f"max_concurrency is {answer['max_concurrency']}" in w for w in answer["warnings"])


@PROPERTY
@given(
    gpu=st.sampled_from((*GPUS, "b300", "mi325x")),
    model=ANY_MODEL,
    engine=ANY_ENGINE,
    prompt=st.integers(16, 8_000),
    output=OUTPUTS,
    batch=st.integers(1, 32),
)
def test_every_uncertainty_range_holds_its_estimate(gpu, model, engine, prompt, output, batch):
    answer = throughput(gpu=gpu, model=model, engine=engine, prompt_tokens=prompt, output_tokens=output,
                        concurrency=batch)  # fmt: skip
    assume(answer["continuous_batching"] is not None)
    estimates = {
        "time_per_token_ms": answer["continuous_batching"]["time_per_token_ms"],
        "ttft_ms": answer["continuous_batching"]["ttft_ms"],
        "tokens_per_s": answer["continuous_batching"]["tokens_per_s"],
        "kv_capacity_tokens": answer["kv_capacity_tokens"],
    }
    for name, (low, high) in answer["uncertainty"].items():
        assert low <= estimates[name] * 1.000001 and high >= estimates[name] / 1.000001, (name, low, high)


@pytest.mark.parametrize("engine", ENGINES)
def test_ranges_widen_never_narrow_on_a_generation_without_rows(engine):
    # CDNA4 (MI355X) has no training row of any engine: its range, relative to its estimate,
    # is at least as wide as on Hopper, which every engine has rows on.
    def relative(gpu: str) -> dict[str, float]:
        answer = throughput(gpu=gpu, model="llama-3.1-8b", engine=engine, prompt_tokens=1000, output_tokens=200,
                            concurrency=8)  # fmt: skip
        steady = answer["continuous_batching"]
        estimates = {"time_per_token_ms": steady["time_per_token_ms"], "ttft_ms": steady["ttft_ms"]}
        return {k: answer["uncertainty"][k][1] / answer["uncertainty"][k][0] for k in estimates}

    hopper, cdna4 = relative("h100-sxm"), relative("mi355x")
    for name in hopper:
        assert cdna4[name] >= hopper[name] * 0.999, (name, hopper, cdna4)

"""The planning endpoints' behaviour through HTTP (API.md, MODEL.md): GET and POST agree,
inline specs stand in for catalog entries, the defaults and the precision policy, MIG slices,
KV-cache geometry (replicated heads, MLA, sliding windows), continuous batching, and planning
never writing the catalog. Expected figures are computed here from the catalog's fields, not
read back from the service's own helpers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event, text

from .helpers import get_ok, post_ok

L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
GB = 1e9
BF16 = 2  # bytes per value


def fit(client: FlaskClient, **params: Any) -> dict[str, Any]:
    return get_ok(client, "/v1/fit", **params)


def throughput(client: FlaskClient, **params: Any) -> dict[str, Any]:
    return get_ok(client, "/v1/throughput", **params)


def model_fields(client: FlaskClient, slug: str) -> dict[str, Any]:
    return get_ok(client, f"/v1/models/{slug}")


def gpu_fields(client: FlaskClient, slug: str) -> dict[str, Any]:
    return get_ok(client, f"/v1/gpus/{slug}")


# --- GET and POST are one API --------------------------------------------------------------

SAME_INPUTS = [
    ("/v1/fit", {**L8_H100, "prompt_tokens": 1000, "output_tokens": 200, "concurrency": 8}),
    ("/v1/fit", {"model": "llama-3.1-70b", "gpu": "h100-sxm", "weight_precision": "auto", "reserved_gb": 1.5}),
    (
        "/v1/throughput",
        {
            **L8_H100,
            "prompt_tokens": 1000,
            "output_tokens": 200,
            "concurrency": 8,
            "memory_efficiency": 0.8,
            "sweep": [1, 4, 16],
            "include_communication": False,
        },
    ),
    ("/v1/throughput", {"model": "qwen3-30b-a3b", "gpu": "h200-sxm", "tensor_parallel": 2, "kv_read_context": "full"}),
    ("/v1/cost", {"price_per_gpu_hour_usd": 2.5, "tokens_per_s": 750, "gpus": 2, "utilization": 0.5}),
    ("/v1/cost", {**L8_H100, "concurrency": 64, "hours_per_month": 720}),
]


@pytest.mark.parametrize(("path", "inputs"), SAME_INPUTS)
def test_get_and_post_with_the_same_inputs_give_identical_json(
    client: FlaskClient, path: str, inputs: dict[str, Any]
) -> None:
    assert get_ok(client, path, **inputs) == post_ok(client, path, inputs)


# --- Inline specs --------------------------------------------------------------------------

INLINE_H100_QUERY = {"gpu.memory_gb": 80, "gpu.memory_bandwidth_tb_per_s": 3.35, "gpu.peak_tflops.bf16": 989.5}
MEMORY_FIGURES = [
    "weights_bytes",
    "kv_bytes_per_token",
    "kv_bytes_per_sequence",
    "usable_bytes",
    "kv_budget_bytes",
    "kv_capacity_tokens",
    "max_concurrency",
    "fits",
    "fits_weights",
    "tensor_parallel",
    "weight_precision",
]


# What an engine reads of a GPU beyond the datasheet arithmetic: the memory the driver shows
# and the generation its kernel efficiencies are fitted for.
INLINE_H100_ENGINE_QUERY = {**INLINE_H100_QUERY, "gpu.memory_visible_gib": 79.19, "gpu.architecture": "hopper"}
TIMING_FIGURES = ("time_per_token_ms", "ttft_ms", "tokens_per_s", "decode_bound", "crossover_concurrency")


def test_an_inline_gpu_in_dotted_query_parameters_answers_as_the_catalog_h100(client: FlaskClient) -> None:
    inline = fit(client, model="llama-3.1-8b", **INLINE_H100_QUERY, engine="ideal")
    catalog = fit(client, **L8_H100, engine="ideal")
    assert inline["max_concurrency"] == 166
    assert {k: inline[k] for k in MEMORY_FIGURES} == {k: catalog[k] for k in MEMORY_FIGURES}


def test_an_inline_gpu_in_dotted_query_parameters_times_decode_as_the_catalog_h100(client: FlaskClient) -> None:
    inline = throughput(client, model="llama-3.1-8b", **INLINE_H100_QUERY, engine="ideal")
    catalog = throughput(client, **L8_H100, engine="ideal")
    for name in TIMING_FIGURES:
        assert inline[name] == catalog[name], name


def test_an_inline_gpu_with_visible_memory_and_architecture_plans_as_the_catalog_h100_under_vllm(
    client: FlaskClient,
) -> None:
    inline = throughput(client, model="llama-3.1-8b", **INLINE_H100_ENGINE_QUERY)
    catalog = throughput(client, **L8_H100)
    assert inline["engine"] == catalog["engine"] == "vllm"
    for name in (*MEMORY_FIGURES, *TIMING_FIGURES, "memory_visible_gib", "max_batched_tokens", "max_num_seqs"):
        assert inline[name] == catalog[name], name


def test_an_inline_gpu_in_a_post_body_equals_the_dotted_query_form(client: FlaskClient) -> None:
    body = {
        "model": "llama-3.1-8b",
        "gpu": {"memory_gb": 80, "memory_bandwidth_tb_per_s": 3.35, "peak_tflops": {"bf16": 989.5}},
    }
    assert post_ok(client, "/v1/fit", body) == fit(client, model="llama-3.1-8b", **INLINE_H100_QUERY)


# --- Tensor-parallel default -----------------------------------------------------------------


def test_default_tensor_parallel_is_1_when_one_gpu_fits(client: FlaskClient) -> None:
    assert fit(client, **L8_H100)["tensor_parallel"] == 1


def test_default_tensor_parallel_for_llama_3_1_70b_on_h100_is_2(client: FlaskClient) -> None:
    body = fit(client, model="llama-3.1-70b", gpu="h100-sxm")
    assert body["tensor_parallel"] == body["gpus"] == 2
    assert body["fits"] is True
    assert body["min_gpus_to_fit"] == 2


def test_default_tensor_parallel_grows_until_the_requested_concurrency_fits(client: FlaskClient) -> None:
    two = fit(client, model="llama-3.1-70b", gpu="h100-sxm", tensor_parallel=2)
    wanted = two["max_concurrency"] + 1  # one more conversation than two GPUs hold
    body = fit(client, model="llama-3.1-70b", gpu="h100-sxm", concurrency=wanted)
    assert body["tensor_parallel"] == 4
    assert body["fits"] is True
    assert body["max_concurrency"] >= wanted


def test_llama_3_1_405b_in_bf16_takes_the_largest_group_of_8_h100s_and_still_does_not_fit(
    client: FlaskClient,
) -> None:
    params = model_fields(client, "llama-3.1-405b")["params_total"]
    assert params == pytest.approx(405.85e9, rel=1e-3)
    weights = params * BF16  # ~811.7 GB
    usable_on_8 = 8 * 80 * GB * 0.9  # 576 GB
    expected_fits_weights = weights < usable_on_8  # False: no valid group holds it
    body = fit(client, model="llama-3.1-405b", gpu="h100-sxm", weight_precision="bf16", engine="ideal")
    assert body["tensor_parallel"] == 8
    assert body["weights_bytes"] == round(weights)
    assert body["usable_bytes"] == round(usable_on_8)
    assert body["fits_weights"] is expected_fits_weights is False
    assert body["max_concurrency"] == 0
    assert body["min_gpus_to_fit"] is None
    assert any("do not fit" in w for w in body["warnings"])


# --- Precision policy ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [
        ("h100-sxm", "fp8"),  # Hopper: fp8 is the smallest native format
        ("a100-sxm-80gb", "int8"),  # Ampere: no fp8; MODEL.md section 3 lists bf16/fp16/int8
        ("b200", "nvfp4"),  # Blackwell: 4-bit float, preferred over int4 at equal size
    ],
)
def test_weight_precision_auto_picks_the_smallest_native_format(client: FlaskClient, gpu: str, expected: str) -> None:
    body = fit(client, model="llama-3.1-8b", gpu=gpu, weight_precision="auto")
    assert body["weight_precision"] == expected
    assert body["precision_native"] is True


def test_fp8_on_an_a100_is_allowed_with_a_not_native_warning(client: FlaskClient) -> None:
    body = fit(client, model="llama-3.1-8b", gpu="a100-sxm-80gb", weight_precision="fp8", engine="ideal")
    assert body["weight_precision"] == "fp8"
    assert body["precision_native"] is False
    assert body["weights_bytes"] == round(model_fields(client, "llama-3.1-8b")["params_total"] * 1)
    assert any("not native" in w for w in body["warnings"]), body["warnings"]


def test_fp8_on_an_h100_is_native_and_not_warned(client: FlaskClient) -> None:
    body = fit(client, **L8_H100, weight_precision="fp8")
    assert body["precision_native"] is True
    assert not any("not native" in w for w in body["warnings"])


# --- MIG slices ------------------------------------------------------------------------------


def test_h100_lists_mig_profiles_including_1g_10gb_seven_times(client: FlaskClient) -> None:
    listing = get_ok(client, "/v1/gpus")
    assert listing["total"] == len(listing["items"]) >= 15
    h100 = next(g for g in listing["items"] if g["slug"] == "h100-sxm")
    profiles = {p["name"]: p for p in h100["mig_profiles"]}
    assert profiles["1g.10gb"]["max_instances"] == 7
    assert profiles["1g.10gb"]["memory_gb"] == 10
    assert gpu_fields(client, "h100-sxm")["mig_profiles"] == h100["mig_profiles"]


def test_a_1g_10gb_slice_plans_llama_3_2_1b_in_10_gb(client: FlaskClient) -> None:
    body = fit(client, model="llama-3.2-1b", gpu="h100-sxm", mig_profile="1g.10gb", engine="ideal")
    assert body["memory_gb_per_gpu"] == 10
    assert body["mig_profile"] == "1g.10gb"
    assert body["usable_bytes"] == round(10 * GB * 0.9)
    assert body["tensor_parallel"] == 1
    assert body["valid_tensor_parallel"] == [1]  # slices do not form tensor-parallel groups


def _decode_ms(weights: float, kv_per_token: float, context: float, bandwidth_tb_per_s: float) -> float:
    """Memory-bound batch-1 decode: read the weights and one sequence's KV at 70% of bandwidth."""
    return (weights + kv_per_token * context) / (bandwidth_tb_per_s * 1e12 * 0.7) * 1e3


def test_a_1g_10gb_slice_decodes_with_an_eighth_of_the_bandwidth(client: FlaskClient) -> None:
    m = model_fields(client, "llama-3.2-1b")
    card = gpu_fields(client, "h100-sxm")
    profile = next(p for p in card["mig_profiles"] if p["name"] == "1g.10gb")
    assert profile["memory_slices"] == 1  # of 8
    weights = m["params_total"] * BF16
    kv_per_token = 2 * m["layers"] * m["kv_heads"] * m["head_dim"] * BF16
    context = 2048 + 512 / 2  # prompt + output / 2
    whole_ms = _decode_ms(weights, kv_per_token, context, card["memory_bandwidth_tb_per_s"])
    slice_ms = _decode_ms(weights, kv_per_token, context, card["memory_bandwidth_tb_per_s"] / 8)

    whole = throughput(client, model="llama-3.2-1b", gpu="h100-sxm", engine="ideal")
    sliced = throughput(client, model="llama-3.2-1b", gpu="h100-sxm", mig_profile="1g.10gb", engine="ideal")
    assert whole["decode_bound"] == sliced["decode_bound"] == "memory"
    assert whole["time_per_token_ms"] == pytest.approx(whole_ms, rel=1e-6)
    assert sliced["time_per_token_ms"] == pytest.approx(slice_ms, rel=1e-6)
    assert sliced["time_per_token_ms"] == pytest.approx(8 * whole["time_per_token_ms"], rel=1e-6)
    assert sliced["memory_bandwidth_tb_per_s"] == pytest.approx(card["memory_bandwidth_tb_per_s"] / 8)


# --- KV-cache geometry -----------------------------------------------------------------------

SMALL_GQA = {  # 16 query heads sharing 2 KV heads, head_dim 2048 / 16 = 128
    "name": "small gqa",
    "params_total": 1_000_000_000,
    "layers": 16,
    "hidden_size": 2048,
    "attention_heads": 16,
    "kv_heads": 2,
}


def test_kv_heads_replicate_when_tensor_parallel_exceeds_them(client: FlaskClient) -> None:
    layers, head_dim = SMALL_GQA["layers"], SMALL_GQA["hidden_size"] // SMALL_GQA["attention_heads"]
    body = post_ok(client, "/v1/fit", {"model": SMALL_GQA, "gpu": "h100-sxm", "tensor_parallel": 4})
    # 4 GPUs each hold ceil(2 / 4) = 1 whole KV head: K and V, every layer, bf16.
    assert body["kv_bytes_per_token"] == 4 * 1 * 2 * layers * head_dim * 2 == 32_768


def test_kv_heads_are_split_not_replicated_while_tensor_parallel_divides_them(client: FlaskClient) -> None:
    layers, head_dim = SMALL_GQA["layers"], SMALL_GQA["hidden_size"] // SMALL_GQA["attention_heads"]
    for tp in (1, 2):
        body = post_ok(client, "/v1/fit", {"model": SMALL_GQA, "gpu": "h100-sxm", "tensor_parallel": tp})
        assert body["kv_bytes_per_token"] == 2 * 2 * layers * head_dim * 2 == 16_384, tp


def test_deepseek_v3_caches_a_70272_byte_latent_per_token(client: FlaskClient) -> None:
    m = model_fields(client, "deepseek-v3")
    assert m["attention"] == "mla"
    per_token = m["layers"] * (m["kv_lora_rank"] + m["qk_rope_head_dim"]) * BF16
    assert per_token == 61 * (512 + 64) * 2 == 70_272
    body = fit(client, model="deepseek-v3", gpu="h100-sxm", tensor_parallel=1)
    assert body["kv_bytes_per_token"] == 70_272


def test_deepseek_v3_at_tp_8_on_h200_holds_the_whole_latent_on_every_gpu(client: FlaskClient) -> None:
    body = fit(client, model="deepseek-v3", gpu="h200-sxm", tensor_parallel=8)
    assert body["memory_gb_per_gpu"] == 141
    assert body["kv_bytes_per_token"] == 8 * 70_272
    assert body["kv_bytes_per_sequence"] == 8 * 70_272 * (2048 + 512)


def test_gpt_oss_20b_windowed_layers_stop_caching_at_the_window(client: FlaskClient) -> None:
    m = model_fields(client, "gpt-oss-20b")
    window, windowed = m["sliding_window"], m["sliding_window_layers"]
    assert window and 0 < windowed < m["layers"]
    per_layer = 2 * m["kv_heads"] * m["head_dim"] * BF16
    full = m["layers"] - windowed
    context = 8192
    expected = (full * context + windowed * min(context, window)) * per_layer
    body = fit(client, model="gpt-oss-20b", gpu="h100-sxm", prompt_tokens=context - 512, output_tokens=512)
    assert body["kv_bytes_per_token"] == m["layers"] * per_layer
    assert body["kv_bytes_per_sequence"] == expected
    assert expected < m["layers"] * per_layer * context  # the window saves memory


# --- Continuous batching (MODEL.md cross-check, within 2%) ----------------------------------


@pytest.mark.parametrize(("batch", "ms_per_token", "tokens_per_s"), [(64, 20.2, 3160), (128, 30.7, 4180)])
def test_continuous_batching_of_llama_3_1_8b_on_h100_matches_model_md(
    client: FlaskClient, batch: int, ms_per_token: float, tokens_per_s: float
) -> None:
    body = throughput(client, **L8_H100, prompt_tokens=2000, output_tokens=500, concurrency=batch, engine="ideal")
    steady = body["continuous_batching"]
    assert steady["max_batched_tokens"] == 2048
    assert steady["time_per_token_ms"] == pytest.approx(ms_per_token, rel=0.02)
    assert steady["tokens_per_s"] == pytest.approx(tokens_per_s, rel=0.02)
    assert steady["requests_per_s"] == pytest.approx(steady["tokens_per_s"] / 500)
    # Prefill chunks steal time from decode: slower per token than the pure decode step.
    assert steady["time_per_token_ms"] > body["time_per_token_ms"]


# --- Serving engines (MODEL.md section 6) ----------------------------------------------------

ECHOING_REQUESTS = [
    ("/v1/fit", L8_H100),
    ("/v1/throughput", L8_H100),
    ("/v1/fleet", {**L8_H100, "requests_per_day": 100_000}),
]
PLANNING_REQUESTS = [*ECHOING_REQUESTS, ("/v1/cost", L8_H100)]


def problem_fields(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    errors: dict[str, list[str]] = response.get_json()["errors"]
    return errors


@pytest.mark.parametrize(("path", "inputs"), ECHOING_REQUESTS)
def test_the_engine_is_echoed_and_defaults_to_vllm(client: FlaskClient, path: str, inputs: dict[str, Any]) -> None:
    assert get_ok(client, path, **inputs)["engine"] == "vllm"
    assert post_ok(client, path, inputs)["engine"] == "vllm"
    for engine in ("ideal", "vllm", "sglang", "trtllm"):
        assert get_ok(client, path, **inputs, engine=engine)["engine"] == engine
        assert post_ok(client, path, {**inputs, "engine": engine})["engine"] == engine


def test_a_planned_cost_rests_on_the_default_engine_s_throughput(client: FlaskClient) -> None:
    # /v1/cost does not echo the engine; its rate is the throughput plan's under it.
    for engine in ("vllm", "ideal"):
        rate = throughput(client, **L8_H100, engine=engine)["effective_tokens_per_s"]
        assert get_ok(client, "/v1/cost", **L8_H100, engine=engine)["tokens_per_s"] == rate
    assert (
        get_ok(client, "/v1/cost", **L8_H100)["tokens_per_s"] == throughput(client, **L8_H100)["effective_tokens_per_s"]
    )


def test_the_default_engine_fills_its_own_settings(client: FlaskClient) -> None:
    default, ideal = throughput(client, **L8_H100), throughput(client, **L8_H100, engine="ideal")
    assert (ideal["gpu_memory_utilization"], ideal["max_batched_tokens"]) == (0.9, 2048)
    assert (ideal["memory_efficiency"], ideal["compute_efficiency"]) == (0.7, 0.5)
    engine = get_ok(client, "/v1/engines/vllm")
    assert default["gpu_memory_utilization"] == engine["gpu_memory_utilization"]
    # vLLM takes its larger defaults on an 80 GB card (79.19 GiB visible >= large_gpu_gib).
    assert default["memory_visible_gib"] == 79.19 >= engine["large_gpu_gib"]
    assert default["max_batched_tokens"] == engine["max_batched_tokens_large_gpu"]
    assert default["max_num_seqs"] == engine["max_num_seqs_large_gpu"]
    hopper = next(e for e in engine["efficiencies"] if e["architecture"] == "hopper")
    assert (default["memory_efficiency"], default["compute_efficiency"]) == (hopper["memory"], hopper["compute"])
    # A knob the request gives wins over the engine's.
    given = throughput(client, **L8_H100, max_batched_tokens=2048, memory_efficiency=0.6)
    assert (given["engine"], given["max_batched_tokens"], given["memory_efficiency"]) == ("vllm", 2048, 0.6)


@pytest.mark.parametrize(("path", "inputs"), PLANNING_REQUESTS)
def test_an_unknown_engine_is_422_naming_engine(client: FlaskClient, path: str, inputs: dict[str, Any]) -> None:
    for engine in ("vllm-turbo", "VLLM"):
        errors = problem_fields(client.get(path, query_string={**inputs, "engine": engine}))
        assert list(errors) == ["engine"], errors
        assert "ideal" in errors["engine"][0]  # the message lists the known names
        assert list(problem_fields(client.post(path, json={**inputs, "engine": engine}))) == ["engine"]
    assert "engine" in problem_fields(client.post(path, json={**inputs, "engine": ""}))


QWEN3_MOE = {"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "tensor_parallel": 4}


def test_expert_parallel_must_divide_the_experts(client: FlaskClient) -> None:
    assert model_fields(client, "qwen3-30b-a3b")["experts"] == 128
    for path in ("/v1/fit", "/v1/throughput"):
        errors = problem_fields(client.get(path, query_string={**QWEN3_MOE, "expert_parallel": 3}))
        assert list(errors) == ["expert_parallel"], errors
        assert "128 experts" in errors["expert_parallel"][0]
    assert fit(client, **QWEN3_MOE, expert_parallel=4)["expert_parallel"] == 4


def test_expert_parallel_may_not_exceed_the_replica_s_gpus(client: FlaskClient) -> None:
    errors = problem_fields(client.get("/v1/fit", query_string={**QWEN3_MOE, "expert_parallel": 8}))
    assert list(errors) == ["expert_parallel"], errors
    assert "4 GPUs" in errors["expert_parallel"][0]
    assert problem_fields(client.post("/v1/throughput", json={**QWEN3_MOE, "expert_parallel": 8}))["expert_parallel"]


def test_expert_parallel_on_a_dense_model_is_422_naming_it(client: FlaskClient) -> None:
    errors = problem_fields(client.get("/v1/fit", query_string={**L8_H100, "expert_parallel": 2}))
    assert list(errors) == ["expert_parallel"], errors


@pytest.mark.parametrize("weights_bytes", [0, -1, -1e9])
@pytest.mark.parametrize("path", ["/v1/fit", "/v1/throughput"])
def test_weights_bytes_must_be_positive(client: FlaskClient, path: str, weights_bytes: float) -> None:
    assert list(problem_fields(client.get(path, query_string={**L8_H100, "weights_bytes": weights_bytes}))) == [
        "weights_bytes"
    ]
    assert list(problem_fields(client.post(path, json={**L8_H100, "weights_bytes": weights_bytes}))) == [
        "weights_bytes"
    ]


def test_given_weights_bytes_replace_the_checkpoint_s(client: FlaskClient) -> None:
    for engine in ("ideal", "vllm"):
        body = fit(client, **L8_H100, engine=engine, weights_bytes=15e9)
        assert body["weights_bytes"] == 15_000_000_000, engine


def test_vllm_subtracts_its_reservations_from_the_visible_memory(client: FlaskClient) -> None:
    ideal = fit(client, **L8_H100, engine="ideal")
    vllm = fit(client, **L8_H100)
    assert vllm["kv_capacity_tokens"] != ideal["kv_capacity_tokens"]
    # vLLM's rule: utilisation x the memory the driver shows, less the weights, the activation
    # peak of a profiling pass over max_batched_tokens, and what lives outside torch.
    assert vllm["activation_peak_gib_per_gpu"] > 0 and vllm["non_torch_gib_per_gpu"] > 0
    budget = (
        vllm["gpu_memory_utilization"] * vllm["memory_visible_gib"]
        - vllm["weights_bytes_per_gpu"] / 2**30
        - vllm["activation_peak_gib_per_gpu"]
        - vllm["non_torch_gib_per_gpu"]
    )
    assert vllm["kv_budget_gib_per_gpu"] == pytest.approx(budget, rel=1e-9)
    # Paged in whole blocks: fewer tokens than the budget holds unrounded, by less than a block.
    unrounded = budget * 2**30 / vllm["kv_bytes_per_token"]
    assert vllm["kv_capacity_tokens"] % vllm["block_size"] == 0
    assert unrounded - vllm["block_size"] < vllm["kv_capacity_tokens"] <= unrounded
    # Without its reservations (ideal's arithmetic on the same visible GiB) more would fit.
    assert (
        vllm["kv_capacity_tokens"]
        < (vllm["gpu_memory_utilization"] * vllm["memory_visible_gib"] * 2**30 - vllm["weights_bytes"])
        / vllm["kv_bytes_per_token"]
    )
    # A larger step budget profiles a larger activation peak: less room for the KV cache.
    larger = fit(client, **L8_H100, max_batched_tokens=32_768)
    assert larger["activation_peak_gib_per_gpu"] > vllm["activation_peak_gib_per_gpu"]
    assert larger["kv_capacity_tokens"] < vllm["kv_capacity_tokens"]
    # A reserved_gb of the request's own replaces the reservations with the datasheet arithmetic.
    reserved = fit(client, **L8_H100, reserved_gb=0)
    assert reserved["kv_capacity_tokens"] == ideal["kv_capacity_tokens"] // 16 * 16


def test_a_vllm_fit_brackets_its_kv_capacity(client: FlaskClient) -> None:
    body = fit(client, **L8_H100)
    low, high = body["uncertainty"]["kv_capacity_tokens"]
    assert low <= body["kv_capacity_tokens"] <= high
    assert low < high
    assert "vllm" in body["uncertainty_basis"]
    ideal = fit(client, **L8_H100, engine="ideal")
    assert ideal["uncertainty"] is None  # a lower bound, no error bars


@pytest.mark.parametrize("concurrency", [1, 8])
def test_vllm_decodes_slower_than_the_roofline_alone(client: FlaskClient, concurrency: int) -> None:
    inputs = {**L8_H100, "concurrency": concurrency}
    vllm, ideal = throughput(client, **inputs), throughput(client, **inputs, engine="ideal")
    vllm_ms = vllm["continuous_batching"]["time_per_token_ms"]
    assert vllm_ms > ideal["continuous_batching"]["time_per_token_ms"]
    low, high = vllm["uncertainty"]["time_per_token_ms"]
    assert low <= vllm_ms <= high and low < high
    assert "vllm" in vllm["uncertainty_basis"] and ideal["uncertainty"] is None
    # A decode step streams the checkpoint's weights less its embedding table (a lookup, not
    # a GEMM) and the KV cache, then pays the engine's fixed, per-layer and per-sequence costs.
    assert vllm["decode_bound"] == "memory"
    components = vllm["weights_by_component_bytes"]
    assert vllm["weight_bytes_per_step"] == pytest.approx(sum(components.values()) - components["embeddings"])
    engine = get_ok(client, "/v1/engines/vllm")
    layers = model_fields(client, "llama-3.1-8b")["layers"]
    # ... and the per-sequence part for each of the batch's sequences.
    batch = vllm["concurrency"]
    overhead_ms = (
        engine["step_overhead_ms"]
        + layers * engine["layer_overhead_us"] / 1e3
        + batch * engine["sequence_overhead_us"] / 1e3
    )
    bandwidth = vllm["memory_bandwidth_tb_per_s"] * 1e12 * vllm["memory_efficiency"]
    roofline_ms = (vllm["weight_bytes_per_step"] + vllm["kv_bytes_per_step"]) / bandwidth * 1e3
    assert vllm["time_per_token_ms"] == pytest.approx(roofline_ms + overhead_ms, rel=1e-6)


# --- Planning never writes the catalog ---------------------------------------------------------

CATALOG_TABLES = ("models", "gpus", "mig_profiles", "precisions", "alembic_version")
WRITES = ("insert", "update", "delete", "replace", "create", "drop", "alter")


def _snapshot(app: Flask) -> dict[str, list[tuple[Any, ...]]]:
    engine = app.extensions["fleet_sizer"]["engine"]
    with engine.connect() as conn:
        return {t: [tuple(r) for r in conn.execute(text(f"SELECT * FROM {t} ORDER BY 1"))] for t in CATALOG_TABLES}


@contextmanager
def _statements(app: Flask) -> Iterator[list[str]]:
    engine = app.extensions["fleet_sizer"]["engine"]
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_a_burst_of_planning_calls_never_writes_the_catalog(app: Flask, client: FlaskClient) -> None:
    before = _snapshot(app)
    assert before["models"] and before["gpus"]
    with _statements(app) as statements:
        for _ in range(5):
            post_ok(client, "/v1/fit", {**L8_H100, "concurrency": 4})
            post_ok(client, "/v1/throughput", {"model": "llama-3.1-70b", "gpu": "h100-sxm", "sweep": [1, 8]})
            post_ok(client, "/v1/cost", {**L8_H100, "concurrency": 16})
            post_ok(client, "/v1/fit", {"model": SMALL_GQA, "gpu": {"memory_gb": 24}})
            assert client.post("/v1/fit", json={"model": "nope", "gpu": "h100-sxm"}).status_code == 404
            get_ok(client, "/v1/throughput", model="llama-3.2-1b", gpu="h100-sxm", mig_profile="1g.10gb")
    assert statements, "the burst read nothing: is the listener on the right engine?"
    writes = [s for s in statements if s.lstrip().split(None, 1)[0].lower() in WRITES]
    assert writes == []
    assert _snapshot(app) == before


# --- Operations ------------------------------------------------------------------------------


def test_healthz_answers_200(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json()["status"] == "ok"


def test_readyz_answers_200_with_the_catalog_counts(client: FlaskClient) -> None:
    body = get_ok(client, "/readyz")
    counts = body["catalog"]
    assert counts["models"] == get_ok(client, "/v1/models")["total"] > 0
    assert counts["gpus"] == get_ok(client, "/v1/gpus")["total"] >= 15
    assert counts["mig_profiles"] > 0
    assert counts["precisions"] > 0

"""An inline GPU's architecture over HTTP: told from the name when omitted (and said), refused
by name when the service does not know it, and what it changes: the memory the driver shows
(a "24 GB" RTX 4090 shows about 23.6 GiB, an L4's ECC-on 24 GB 22.03) and so the KV cache.
Also: a native format whose peak the card's figures lack plans at bf16, warned, not refused."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.api.helpers import GIB, get_ok, post_ok

# RTX 4090 datasheet figures (Ada whitepaper): 24 GB GDDR6X at 1,008 GB/s, 165.2 dense BF16
# TFLOP/s with FP32 accumulate; one card per host.
RTX_4090: dict[str, Any] = {
    "name": "NVIDIA GeForce RTX 4090",
    "memory_gb": 24,
    "memory_bandwidth_tb_per_s": 1.008,
    "peak_tflops": {"bf16": 165.2},
    "native_precisions": ["bf16", "fp16", "fp8", "int8"],
    "gpus_per_node": 1,
}


def problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    return body


KNOWN = ("ampere", "ampere-gddr", "ada", "hopper", "blackwell", "blackwell-gddr", "cdna3", "cdna4")


def fit(client: FlaskClient, gpu: dict[str, Any], **body: Any) -> dict[str, Any]:
    return post_ok(client, "/v1/fit", {"model": "llama-3.1-8b", "gpu": gpu, "engine": "vllm", **body})


def test_an_omitted_architecture_is_told_from_the_name_and_said(client: FlaskClient):
    answer = fit(client, RTX_4090)
    assert "architecture ada told from the name 'NVIDIA GeForce RTX 4090'" in answer["warnings"]
    # vLLM's training rows hold one Ada row (an RTX 4090): the range is not widened for it.
    assert "hold no ada GPU" not in answer["uncertainty_basis"]
    given = fit(client, {**RTX_4090, "architecture": "ada"})
    assert not any("told from the name" in w for w in given["warnings"])
    assert given["kv_capacity_tokens"] == answer["kv_capacity_tokens"]


def test_a_name_that_tells_nothing_says_efficiencies_fall_back(client: FlaskClient):
    answer = fit(client, {**RTX_4090, "name": "lab card 7"})
    notes = [w for w in answer["warnings"] if "engine efficiencies fall back to the default" in w]
    assert notes == [
        "lab card 7: no architecture given and none told from the name: engine efficiencies fall back to the "
        "default (give gpu.architecture)"
    ]
    # engine=ideal reads no architecture: nothing to say.
    ideal = fit(client, {**RTX_4090, "name": "lab card 7"}, engine="ideal")
    assert not any("architecture" in w for w in ideal["warnings"])


def test_an_rtx_4090_shows_about_23_6_gib_and_its_kv_follows(client: FlaskClient):
    answer = fit(client, RTX_4090)
    # PyTorch on an RTX 4090: "GPU 0 has a total capacity of 23.64 GiB" (nvidia-smi: 24564 MiB).
    assert answer["memory_visible_gib"] == pytest.approx(23.64, abs=0.01)
    assert any("assumed 23.64 GiB (0.985 of 24 GB, GDDR without ECC)" in w for w in answer["warnings"])
    # vLLM's budget: util x visible - weights - activation peak - non-torch, in 16-token blocks.
    budget_gib = (
        answer["gpu_memory_utilization"] * 24 * 0.985
        - answer["weights_bytes_per_gpu"] / GIB
        - answer["activation_peak_gib_per_gpu"]
        - answer["non_torch_gib_per_gpu"]
    )
    assert answer["kv_budget_gib_per_gpu"] == pytest.approx(budget_gib)
    tokens = int(budget_gib * GIB / answer["kv_bytes_per_token"]) // 16 * 16
    assert answer["kv_capacity_tokens"] == tokens
    # The same 24 GB on a data-centre Ada card (an L4, ECC on): 0.92 of it, so less KV by the difference.
    l4_like = fit(client, {**RTX_4090, "name": "NVIDIA L4"})
    assert l4_like["memory_visible_gib"] == pytest.approx(24 * 0.92)
    extra_tokens = 0.9 * 24 * (0.985 - 0.92) * GIB / answer["kv_bytes_per_token"]
    assert answer["kv_capacity_tokens"] - l4_like["kv_capacity_tokens"] == pytest.approx(extra_tokens, abs=16)


@pytest.mark.parametrize("architecture", ["turing", "Hopper", "", "h100"])
def test_an_architecture_the_service_does_not_know_is_422_naming_the_field(client: FlaskClient, architecture: str):
    response = client.post("/v1/fit", json={"model": "llama-3.1-8b", "gpu": {**RTX_4090, "architecture": architecture}})
    body = problem(response, 422)
    assert list(body["errors"]) == ["gpu.architecture"]
    (message,) = body["errors"]["gpu.architecture"]
    assert repr(architecture) in message
    assert message.endswith("the service knows " + ", ".join(KNOWN))


def test_the_query_string_takes_and_checks_the_architecture_too(client: FlaskClient):
    query = {
        "model": "llama-3.1-8b",
        "engine": "vllm",
        "gpu.name": "mystery card",
        "gpu.memory_gb": 24,
        "gpu.memory_bandwidth_tb_per_s": 1.008,
        "gpu.peak_tflops.bf16": 165.2,
    }
    answer = get_ok(client, "/v1/fit", **query, **{"gpu.architecture": "ada"})
    assert not any("architecture" in w for w in answer["warnings"])
    # ada given, no consumer brand in the name: taken as a data-centre card, ECC on.
    assert answer["memory_visible_gib"] == pytest.approx(24 * 0.92)
    body = problem(client.get("/v1/fit", query_string={**query, "gpu.architecture": "volta"}), 422)
    assert list(body["errors"]) == ["gpu.architecture"]


def test_fp8_weights_without_an_fp8_peak_plan_at_the_bf16_peak_and_say_so(client: FlaskClient):
    body = {"model": "llama-3.1-8b", "gpu": RTX_4090, "engine": "vllm", "weight_precision": "fp8"}
    answer = post_ok(client, "/v1/throughput", body)
    assert answer["compute_precision"] == "bf16"
    assert answer["peak_tflops"] == 165.2
    assert (
        "NVIDIA GeForce RTX 4090 runs fp8 natively but its fp8 peak is not known: fp8 math planned at its bf16 "
        "peak (165.2 TFLOP/s); give gpu.peak_tflops.fp8 for the native rate"
    ) in answer["warnings"]
    # Given the figure (330.3 dense FP8 TFLOP/s, FP16 accumulate), the native rate and no warning.
    with_fp8 = {**RTX_4090, "peak_tflops": {"bf16": 165.2, "fp8": 330.3}}
    native = post_ok(client, "/v1/throughput", {**body, "gpu": with_fp8})
    assert native["compute_precision"] == "fp8"
    assert native["peak_tflops"] == 330.3
    assert not any("planned at its bf16 peak" in w for w in native["warnings"])


def test_a_catalog_card_without_its_native_int8_peak_plans_at_bf16(client: FlaskClient):
    # catalog_seed: MI325X runs int8 natively, but its int8 peak is not in the facts (null).
    answer = get_ok(client, "/v1/throughput", model="llama-3.1-8b", gpu="mi325x", weight_precision="int8")
    assert answer["compute_precision"] == "bf16"
    assert answer["peak_tflops"] == 1307.4
    assert any("its int8 peak is not known" in w for w in answer["warnings"])
    # A format asked for by name still needs its own figure, and the answer names it.
    asked = problem(
        client.get("/v1/throughput?model=llama-3.1-8b&gpu=mi325x&weight_precision=int8&compute_precision=int8"),
        422,
    )
    assert list(asked["errors"]) == ["gpu.peak_tflops.int8"]

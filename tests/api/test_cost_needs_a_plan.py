"""No price without a plan: /v1/cost derived from a model and a GPU refuses
a shape whose weights /v1/fit says do not fit, naming the shape's fields and the smallest
tensor-parallel size that holds them; no answer gives negative usable or budget bytes."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from .helpers import get_ok


def fit(client: FlaskClient, **query: Any) -> dict[str, Any]:
    return get_ok(client, "/v1/fit", **query)


def test_405b_on_eight_l4s_is_refused_as_fit_says_it_does_not_fit(client: FlaskClient) -> None:
    shape = {"model": "llama-3.1-405b", "gpu": "l4", "tensor_parallel": 8}
    memory = fit(client, **shape)
    assert memory["fits_weights"] is False and max(memory["valid_tensor_parallel"]) == 8
    response = client.get("/v1/cost", query_string=shape)
    body = response.get_json()
    assert response.status_code == 422, body
    assert "cost_per_million_output_tokens_usd" not in body
    assert set(body["errors"]) == {"gpu", "tensor_parallel"}
    weights_gb, usable_gb = memory["weights_bytes"] / 1e9, memory["usable_bytes"] / 1e9
    assert (
        f"the weights ({weights_gb:.1f} GB at bf16) do not fit the {usable_gb:.1f} GB usable on 8 x" in body["detail"]
    )
    assert "no tensor-parallel size of this GPU (up to 8) holds them" in body["detail"]


def test_without_a_tensor_parallel_size_the_refusal_says_what_would_help(client: FlaskClient) -> None:
    response = client.get("/v1/cost", query_string={"model": "llama-3.1-405b", "gpu": "l4"})
    assert response.status_code == 422
    assert set(response.get_json()["errors"]) == {"gpu", "weight_precision"}


def test_a_shape_too_small_is_told_the_smallest_that_holds_the_weights(client: FlaskClient) -> None:
    shape = {"model": "llama-3.1-70b", "gpu": "l4"}
    holding = [t for t in (2, 4, 8) if fit(client, **shape, tensor_parallel=t)["fits_weights"]]
    assert holding  # 141 GB of bf16 weights: eight 24 GB cards hold them
    response = client.get("/v1/cost", query_string={**shape, "tensor_parallel": 2})
    body = response.get_json()
    assert response.status_code == 422, body
    assert f"tensor_parallel={holding[0]} is the smallest that holds them" in body["detail"]
    priced = get_ok(client, "/v1/cost", **shape, tensor_parallel=holding[0])
    assert priced["gpus"] == holding[0] and priced["cost_per_million_output_tokens_usd"] > 0


def test_a_shape_that_does_not_fit_answers_no_negative_bytes(client: FlaskClient) -> None:
    body = fit(client, model="llama-3.1-405b", gpu="l4", tensor_parallel=8)
    assert body["fits_weights"] is False and body["weights_bytes"] > body["usable_bytes"] > 0
    # The shortfall is fits_weights false, not a negative room for the KV cache.
    assert body["kv_budget_bytes"] == 0 and body["kv_budget_gib_per_gpu"] == 0 and body["kv_capacity_tokens"] == 0


def test_a_reservation_past_the_card_is_refused_naming_it_rather_than_answered_negative(client: FlaskClient) -> None:
    response = client.get("/v1/fit", query_string={"model": "llama-3.1-8b", "gpu": "l4", "reserved_gb": 30})
    assert response.status_code == 422 and set(response.get_json()["errors"]) == {"reserved_gb"}

"""Edges found by reading the contract against the app: each once answered wrongly."""

import pytest


def problem(response, status):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    return response.get_json()


@pytest.mark.parametrize(
    "query",
    ["model.layers=3&model=llama-3.1-8b&gpu=h100-sxm", "model=llama-3.1-8b&model.layers=3&gpu=h100-sxm"],
)
def test_a_slug_and_dotted_fields_for_the_same_object_are_refused_in_either_order(client, query):
    assert "model" in problem(client.get(f"/v1/fit?{query}"), 422)["errors"]


def test_a_forecast_by_get_says_it_is_post_only(client):
    body = problem(client.get("/v1/fleet?model=llama-3.1-8b&gpu=h100-sxm&forecast=x"), 422)
    assert body["errors"] == {"forecast": ["POST only"]}


def test_keda_format_is_case_insensitive_like_json_and_csv(client):
    query = "model=llama-3.1-8b&gpu=h100-sxm&requests_per_day=1000&format=KEDA"
    assert client.get(f"/v1/fleet?{query}").mimetype == "application/yaml"


def test_a_reserve_larger_than_the_card_is_named(client):
    body = problem(client.get("/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&reserved_gb=100"), 422)
    assert "reserved_gb" in body["errors"]


def test_a_catalog_model_with_an_unknown_checkpoint_format_needs_a_weight_precision(client):
    body = problem(client.get("/v1/fit?model=llama-3.2-3b&gpu=l4"), 422)
    assert "weight_precision" in body["errors"]
    assert client.get("/v1/fit?model=llama-3.2-3b&gpu=l4&weight_precision=bf16").status_code == 200


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_a_catalog_answer_pasted_back_inline_plans_the_same(client, engine):
    stored = client.get("/v1/models/llama-3.1-8b").get_json()
    inline = client.post("/v1/fit", json={"model": stored, "gpu": "h100-sxm", "engine": engine}).get_json()
    by_slug = client.post("/v1/fit", json={"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": engine}).get_json()
    for name in ("max_concurrency", "kv_capacity_tokens", "weights_bytes", "usable_bytes"):
        assert inline[name] == by_slug[name], name
    if engine == "ideal":
        assert inline["max_concurrency"] == 166


def test_compute_precision_is_limited_to_formats_with_a_datasheet_peak(client):
    body = problem(client.get("/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&compute_precision=fp32"), 422)
    assert "compute_precision" in body["errors"]


def test_a_missing_fp4_peak_names_the_fp4_column(client):
    body = problem(client.get("/v1/throughput?model=llama-3.1-8b&gpu=h100-sxm&compute_precision=nvfp4"), 422)
    assert list(body["errors"]) == ["gpu.peak_tflops.fp4"]


def test_seed_on_start_off_leaves_an_empty_catalog_empty(tmp_path):
    from app import create_app

    app = create_app({"database_url": f"sqlite:///{tmp_path / 'empty.sqlite3'}", "seed_on_start": False})
    runner = app.test_cli_runner()
    assert runner.invoke(args=["migrate"]).exit_code == 0
    result = runner.invoke(args=["seed"])
    assert "not seeding" in result.output
    assert app.test_client().get("/v1/models").get_json()["total"] == 0
    assert runner.invoke(args=["seed", "--force"]).exit_code == 0
    assert app.test_client().get("/v1/models").get_json()["total"] >= 20
    app.extensions["fleet_sizer"]["engine"].dispose()


def test_the_fuzzers_vanishing_spread_and_demand_plan_a_fleet_instead_of_a_500(client):
    # schemathesis found it: an output CV of 5e-324 (its square is 0) on a ranking of the catalog.
    body = {"requests_per_day": 5e-324, "pue": 3.29, "output_tokens_cv": 5e-324, "spare_replicas": 790}
    response = client.post("/v1/fleet", json={**body, "model": "gemma-3-27b", "gpu": None})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["options"]

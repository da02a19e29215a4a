"""/v1/fleet through HTTP: the seed's fleet example, SLO-bound replicas, MIG in the ranking,
forecasts as JSON and CSV, the KEDA policy and the vLLM command line."""

import csv
import io
import math

import pytest
import yaml

from .helpers import get_ok, post_ok

SEED = {  # seed 004: 1M requests/day x 500 output tokens, peak x3, 3,000 tok/s per GPU, $2.50/h, 720 h
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "requests_per_day": 1_000_000,
    "output_tokens": 500,
    "peak_to_average": 3,
    "per_replica_tokens_per_s": 3000,
    "price_per_gpu_hour_usd": 2.50,
    "hours_per_month": 720,
}


def test_seed_fleet_is_5787_tokens_per_s_2_gpus_average_6_at_peak_7_with_n_plus_1(client):
    body = get_ok(client, "/v1/fleet", **SEED)
    assert body["average_tokens_per_s"] == pytest.approx(5787, abs=1)
    assert body["peak_tokens_per_s"] == pytest.approx(17_361, abs=1)
    assert (body["gpus_average"], body["gpus_peak"], body["gpus_total"]) == (2, 6, 7)
    assert body["replica"]["bound_by"] == "measured"


def test_seed_fleet_without_a_spare_costs_10800_a_month(client):
    body = get_ok(client, "/v1/fleet", **SEED, spare_replicas=0)
    assert body["gpus_total"] == 6
    assert body["monthly_cost_usd"] == pytest.approx(10_800)


def test_a_10_ms_tpot_slo_bounds_llama_3_1_8b_on_h100(client):
    shape = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt_tokens": 2048, "output_tokens": 512}
    body = get_ok(client, "/v1/fleet", **shape, requests_per_day=100_000, tpot_slo_ms=10)
    replica = body["replica"]
    assert replica["bound_by"] == "tpot_slo" and replica["meets_slo"]
    # The capacity is the highest arrival rate whose 95th-percentile TPOT meets the SLO...
    rate = replica["max_request_rate"]
    assert replica["time_per_token_ms"] <= 10
    assert replica["tokens_per_s"] == pytest.approx(rate * 512)
    # ...which /v1/latency, the same model, confirms, and 5% more arrivals break.
    at, above = get_ok(client, "/v1/latency", **shape, sweep_rates=[rate, rate * 1.05], tpot_slo_ms=10)["rates"]
    assert at["tpot_ms"]["p95"] <= 10 < above["tpot_ms"]["p95"]
    assert replica["concurrency"] < replica["max_concurrency"]


def test_the_replica_says_how_loaded_it_runs_and_what_it_predicts_at_the_planned_peak(client):
    body = get_ok(
        client, "/v1/fleet", model="llama-3.1-8b", gpu="h100-sxm", requests_per_day=2e6, peak_to_average=2,
        tpot_slo_ms=40, ttft_slo_ms=1500, slo_percentile=99,
    )  # fmt: skip
    replica = body["replica"]
    peak_per_replica = body["requests_per_s"] * 2 / body["replicas_peak"]
    predicted = replica["predicted"]
    assert predicted["request_rate"] == pytest.approx(peak_per_replica)
    # At most the capacity rate arrives at a replica at peak, so the SLOs hold at p99 there.
    assert peak_per_replica <= replica["max_request_rate"] * (1 + 1e-9)
    assert predicted["tpot_ms"]["p99"] <= 40 and predicted["ttft_ms"]["p99"] <= 1500
    assert 0 < replica["utilization_average"] <= replica["utilization_peak"] < 1
    assert replica["optimistic"] is (replica["utilization_peak"] > 0.8)
    # A measured per-replica rate has no queueing model behind it.
    measured = get_ok(client, "/v1/fleet", **SEED)["replica"]
    assert measured["max_request_rate"] is None and measured["predicted"] is None


def test_ranking_for_llama_3_2_1b_includes_mig_slices_each_with_its_spare_card(client):
    body = get_ok(client, "/v1/fleet", model="llama-3.2-1b", requests_per_day=1_000_000, tpot_slo_ms=50, limit=500)
    eligible = [o for o in body["options"] if o["eligible"]]
    assert [o["rank"] for o in eligible] == list(range(1, len(eligible) + 1))
    at_least = [o["monthly_cost_usd"] if o["sized"] else o["monthly_cost_usd_at_least"] for o in eligible]
    assert eligible[0]["sized"] and eligible[0]["monthly_cost_usd"] == min(at_least)
    sliced = [o for o in eligible if o["mig_profile"]]
    assert sliced
    for option in sliced:
        # Slices share their card's fate: N+1 is a whole spare card, and losing any one card
        # leaves the peak carried (cards - 1 of them, each holding replicas_total / cards); an
        # unsized slice's lower bounds are counted the same way.
        suffix = "" if option["sized"] else "_at_least"
        cards, replicas = option[f"gpus_total{suffix}"], option[f"replicas_total{suffix}"]
        assert replicas % cards == 0
        if option["sized"]:
            assert (cards - 1) * (replicas // cards) >= option["replicas_peak"]
        monthly = option[f"monthly_cost_usd{suffix}"]
        assert monthly == pytest.approx(cards * option["price_per_gpu_hour_usd"] * 730, abs=0.01)


def test_ranking_explains_what_was_ruled_out(client):
    body = get_ok(client, "/v1/fleet", model="llama-3.1-70b", requests_per_day=10_000, limit=500)
    ruled_out = [o for o in body["options"] if not o["eligible"]]
    assert ruled_out and all(o["why"].startswith("ruled out") for o in ruled_out)


def test_an_slo_nothing_can_meet_answers_200_with_the_best_it_could_do(client):
    body = get_ok(client, "/v1/fleet", model="llama-3.1-70b", requests_per_day=10_000, tpot_slo_ms=0.01)
    assert body["status"] == "no option meets the SLO"
    assert body["meets_slo"] is False
    assert body["replica"]["concurrency"] == 1


TWELVE = [{"period": f"2027-{m:02d}", "requests_per_day": 100_000 * m} for m in range(1, 13)]


def test_a_12_period_forecast_returns_12_rows_as_json(client):
    body = post_ok(client, "/v1/fleet", {"model": "llama-3.1-8b", "gpu": "h100-sxm", "forecast": TWELVE})
    assert [p["period"] for p in body["periods"]] == [p["period"] for p in TWELVE]
    totals = [p["gpus_total"] for p in body["periods"]]
    assert totals == sorted(totals)


def test_a_12_period_forecast_returns_12_rows_as_csv(client):
    response = client.post(
        "/v1/fleet?format=csv", json={"model": "llama-3.1-8b", "gpu": "h100-sxm", "forecast": TWELVE}
    )
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    # The period label stays text in a spreadsheet (app/api/render.py TEXT_MARK), not a date.
    assert len(rows) == 12 and rows[0]["period"] == "\u20602027-01"


def test_forecasts_are_capped(client):
    periods = [{"period": str(i), "requests_per_day": 1} for i in range(121)]
    response = client.post("/v1/fleet", json={"model": "llama-3.1-8b", "gpu": "h100-sxm", "forecast": periods})
    assert response.status_code == 422
    assert "forecast" in response.get_json()["errors"]


@pytest.mark.parametrize("bad", [{"requests_per_day": -1}, {"requests_per_day": 10, "requests_per_second": 1}, {}])
def test_traffic_must_be_one_non_negative_figure(client, bad):
    response = client.get("/v1/fleet", query_string={"model": "llama-3.1-8b", "gpu": "h100-sxm", **bad})
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert set(response.get_json()["errors"]) & {"requests_per_day", "requests_per_second"}


def test_autoscaling_carries_the_kv_limited_in_flight_and_cold_start(client):
    body = get_ok(client, "/v1/fleet", **{**SEED, "load_gb_per_s": 2, "engine_startup_s": 30})
    scaling = body["autoscaling"]
    assert scaling["max_in_flight_per_replica"] == body["replica"]["max_concurrency"]
    assert scaling["min_replicas"] == 3 and scaling["max_replicas"] == 7
    assert scaling["cold_start_s"] == pytest.approx(8_030_261_248 * 2 / 2e9 + 30)


def test_vllm_command_takes_its_sizes_from_the_plan(client):
    body = get_ok(
        client, "/v1/fleet", model="llama-3.1-70b", gpu="h100-sxm", requests_per_day=10_000, kv_precision="fp8"
    )
    command = body["vllm_command"]
    # vLLM downloads what it serves: the instruct release of the checkpoint (catalog_seed instruct_repo),
    # which people deploy, not the base repo nor the catalog slug.
    assert command.startswith("vllm serve meta-llama/Llama-3.1-70B-Instruct ")
    assert f"--tensor-parallel-size {body['replica']['tensor_parallel']}" in command
    # The engine's running-batch cap the capacity assumed (here the KV cache's, under vLLM's 256).
    assert f"--max-num-seqs {body['replica']['max_num_seqs']}" in command
    assert body["replica"]["max_num_seqs"] == min(256, body["replica"]["max_concurrency"])
    assert "--max-model-len 2560" in command and "--kv-cache-dtype fp8" in command


def test_keda_scaled_object_is_valid_yaml_with_the_plans_bounds(client):
    response = client.get("/v1/fleet", query_string={**SEED, "format": "keda"})
    assert response.status_code == 200 and response.mimetype == "application/yaml"
    scaled = yaml.safe_load(response.get_data(as_text=True))
    assert scaled["apiVersion"] == "keda.sh/v1alpha1" and scaled["kind"] == "ScaledObject"
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (3, 7)
    queries = [t["metadata"]["query"] for t in scaled["spec"]["triggers"]]
    assert any("vllm:num_requests_waiting" in q for q in queries)
    # vLLM labels its metrics with the name it serves (the Hugging Face repo).
    assert all('model_name="meta-llama/Llama-3.1-8B-Instruct"' in q for q in queries)
    assert all(isinstance(t["metadata"]["threshold"], str) for t in scaled["spec"]["triggers"])
    name = scaled["metadata"]["name"]
    assert len(name) <= 63 and name.replace("-", "").isalnum() and name == name.lower()


def test_mig_fleet_counts_whole_cards_and_a_seventh_of_the_host_cpu(client):
    body = get_ok(
        client, "/v1/fleet", model="llama-3.2-1b", gpu="h100-sxm", mig_profile="1g.10gb", requests_per_day=200_000
    )
    assert body["replicas_per_card"] == 7
    peak, total, cards = body["replicas_peak"], body["replicas_total"], body["gpus_total"]
    # The cards that hold the peak's slices, plus one whole spare card (N+1 on slices), the
    # replicas spread evenly so that any one card may fail with the peak still carried.
    assert cards == -(-peak // 7) + 1
    per_card = -(-peak // (cards - 1))
    assert total == per_card * cards and per_card <= 7
    assert body["host_cpu_cores"] == pytest.approx(2 * total)


# The planning benchmark's 70B example: 2M requests/day of 2,000/400 tokens, 40 ms TPOT, 1.5 s TTFT, peak x2.5.
LLAMA_70B_AT_2M = {
    "model": "llama-3.1-70b",
    "prompt_tokens": 2000,
    "output_tokens": 400,
    "tpot_slo_ms": 40,
    "ttft_slo_ms": 1500,
    "requests_per_day": 2_000_000,
    "peak_to_average": 2.5,
}


def test_a_named_gpu_gets_its_cheapest_tensor_parallel_size_not_the_smallest(client):
    named = post_ok(client, "/v1/fleet", {**LLAMA_70B_AT_2M, "gpu": "h100-sxm"})
    ranked = post_ok(client, "/v1/fleet", LLAMA_70B_AT_2M)
    h100 = [o for o in ranked["options"] if o["gpu"] == "h100-sxm" and o["mig_profile"] is None and o["rank"]]
    assert named["replica"]["tensor_parallel"] in (4, 8)
    # No sized H100 row of the ranking is cheaper; a row left at a bound bounds the named plan
    # of its size from below.
    sized = [o["monthly_cost_usd"] for o in h100 if o["sized"]]
    if sized:
        assert named["monthly_cost_usd"] <= 1.05 * min(sized)
    for o in h100:
        if not o["sized"] and o["tensor_parallel"] == named["replica"]["tensor_parallel"]:
            assert o["monthly_cost_usd_at_least"] <= named["monthly_cost_usd"]
    # Every valid size that holds the 70B's 141 GB of bf16 weights on 80 GB cards was sized.
    alternatives = named["alternatives"]
    assert sorted(a["tensor_parallel"] for a in alternatives) == [2, 4, 8]
    assert alternatives[0]["tensor_parallel"] == named["replica"]["tensor_parallel"]
    assert alternatives[0]["why"].startswith("cheapest per month")
    for lost in alternatives[1:]:
        if lost["sized"]:
            extra = lost["monthly_cost_usd"] - named["monthly_cost_usd"]
            assert lost["why"] == f"meets the SLOs but costs ${extra:,.2f} a month more than the best"
            assert lost["meets_slo"] is True and lost["capacity_exact"]
        else:
            # A size whose bound already costs more is not sized at the percentile: its cost is a
            # lower bound, and it says which.
            extra = lost["monthly_cost_usd_at_least"] - named["monthly_cost_usd"]
            assert lost["why"] == (
                f"not sized: on its {lost['capacity_bound']} alone it already costs at least "
                f"${extra:,.2f} a month more than the best"
            )
            assert lost["meets_slo"] is None and "gpus_total" not in lost and "monthly_cost_usd" not in lost
    # The smallest size that holds the weights (TP2) is KV-bound: it needs more GPUs.
    tp2 = next(a for a in alternatives if a["tensor_parallel"] == 2)
    assert (tp2["gpus_total"] if tp2["sized"] else tp2["gpus_total_at_least"]) > named["gpus_total"]


def test_a_given_tensor_parallel_size_is_planned_as_given(client):
    body = post_ok(client, "/v1/fleet", {**LLAMA_70B_AT_2M, "gpu": "h100-sxm", "tensor_parallel": 2})
    assert body["replica"]["tensor_parallel"] == 2 and "alternatives" not in body


def test_mode_simulate_checks_the_chosen_replica_at_the_planned_peak(client):
    plan = {**LLAMA_70B_AT_2M, "gpu": "h100-sxm"}
    analytic = post_ok(client, "/v1/fleet", plan)["replica"]
    assert analytic["simulated"] is None
    replica = post_ok(client, "/v1/fleet", {**plan, "mode": "simulate", "seed": 3, "requests": 4000})["replica"]
    simulated = replica["simulated"]
    assert simulated["request_rate"] == pytest.approx(replica["predicted"]["request_rate"])
    assert simulated["stable"] and simulated["measured_requests"] == 3600
    # The simulator agrees with the analytic prediction at the planned peak (within the grid's
    # tolerances for the median: 25%), and says whether the SLOs hold there.
    for metric in ("ttft_ms", "tpot_ms"):
        assert simulated[metric]["p50"] == pytest.approx(replica["predicted"][metric]["p50"], rel=0.25)
    assert simulated["meets_slo"] in (True, False)


def test_the_keda_queue_trigger_is_the_modelled_queue_at_capacity(client):
    query = {**LLAMA_70B_AT_2M, "gpu": "h100-sxm"}
    body = get_ok(client, "/v1/fleet", **query)
    response = client.get("/v1/fleet", query_string={**query, "format": "keda"})
    triggers = yaml.safe_load(response.get_data(as_text=True))["spec"]["triggers"]
    waiting = next(t for t in triggers if "num_requests_running" not in t["metadata"]["query"])
    scaling = body["autoscaling"]
    assert waiting["metadata"]["threshold"] == str(scaling["target_queue_per_replica"])
    in_flight = next(t for t in triggers if "num_requests_running" in t["metadata"]["query"])
    assert in_flight["metadata"]["threshold"] == str(scaling["target_in_flight_per_replica"])


def test_the_ranking_sizes_at_the_percentile_every_option_that_could_still_win(client):
    body = get_ok(client, "/v1/fleet", model="llama-3.2-1b", requests_per_day=100_000, tpot_slo_ms=50, limit=500)
    ranked = [o for o in body["options"] if o["rank"]]
    best = ranked[0]
    assert best["capacity_exact"] and best["gpu"] == body["gpu"]
    assert best["monthly_cost_usd"] == body["monthly_cost_usd"]
    # An option left at its mean-latency bound has a lower bound on its cost no cheaper than the
    # best's exact cost: sized at the percentile it could only cost more.
    for option in ranked[1:]:
        assert option["sized"] is option["capacity_exact"]
        assert option["sized"] or option["monthly_cost_usd_at_least"] >= best["monthly_cost_usd"]
    assert any(not o["sized"] for o in ranked)  # the bound spared the work


def test_weight_formats_change_only_when_the_request_lists_them(client):
    named = {**LLAMA_70B_AT_2M, "gpu": "h100-sxm"}
    native = post_ok(client, "/v1/fleet", named)
    assert native["replica"]["weight_precision"] == "bf16"  # the checkpoint's own: quality is the caller's call
    either = post_ok(client, "/v1/fleet", {**named, "weight_precision": ["bf16", "fp8"]})
    # fp8 halves the weights' bytes on a card that runs it natively: a cheaper fleet, chosen.
    assert either["replica"]["weight_precision"] == "fp8"
    assert either["monthly_cost_usd"] < native["monthly_cost_usd"]
    tried = {(a["weight_precision"], a["tensor_parallel"]) for a in either["alternatives"]}
    assert {("bf16", 8), ("fp8", 8)} <= tried
    # The GET form spells the list comma-separated; one format in a list is that format.
    by_get = get_ok(client, "/v1/fleet", **named, weight_precision="bf16,fp8")
    assert by_get["replica"]["weight_precision"] == "fp8" and by_get["gpus_total"] == either["gpus_total"]
    one = post_ok(client, "/v1/fleet", {**named, "weight_precision": ["fp8"]})
    assert one["replica"]["weight_precision"] == "fp8" and one["gpus_total"] == either["gpus_total"]
    refused = client.post("/v1/fleet", json={**named, "weight_precision": ["bf16", "fp9"]})
    assert refused.status_code == 422 and "weight_precision.1" in refused.get_json()["errors"]


def test_a_forecast_alone_is_sized_on_its_busiest_period(client):
    """With no single traffic figure the plan is the one that carries the forecast at its height:
    the period of the highest requests/day x peak ratio (here the third: 300k x 3 beats 400k x
    the default 2), and the answer's own figures are that period's."""
    forecast = [
        {"period": "2027-01", "requests_per_day": 100_000},
        {"period": "2027-02", "requests_per_day": 200_000},
        {"period": "2027-03", "requests_per_day": 300_000, "peak_to_average": 3},
        {"period": "2027-04", "requests_per_day": 400_000},
    ]
    query = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "peak_to_average": 2, "tpot_slo_ms": 40}
    body = post_ok(client, "/v1/fleet", {**query, "forecast": forecast})
    assert body["requests_per_s"] == pytest.approx(300_000 / 86_400)
    busiest = body["periods"][2]
    assert busiest["peak_tokens_per_s"] == max(p["peak_tokens_per_s"] for p in body["periods"])
    for name in ("gpus_total", "gpus_peak", "monthly_cost_usd", "peak_tokens_per_s"):
        assert body[name] == busiest[name], name
    # and it is what the single figure of that period plans
    alone = post_ok(client, "/v1/fleet", {**query, "requests_per_day": 300_000, "peak_to_average": 3})
    assert alone["gpus_total"] == body["gpus_total"] and alone["replica"] == body["replica"]


def test_a_replica_whose_kv_cache_holds_fewer_sequences_than_the_engine_cap_is_kv_bound(client):
    """2,400-token sequences of Llama 3.1 8B on one H100: the KV cache holds fewer of them than
    vLLM's max_num_seqs on an 80 GB card (1,024), so the seats, and the capacity they bound,
    are the KV cache's."""
    body = get_ok(
        client,
        "/v1/fleet",
        model="llama-3.1-8b",
        gpu="h100-sxm",
        requests_per_day=1_200_000,
        prompt_tokens=2000,
        output_tokens=400,
        # A TPOT SLO loose enough that the running batch's per-sequence cost does not bind first.
        tpot_slo_ms=80,
        ttft_slo_ms=1500,
        peak_to_average=2.5,
    )
    replica = body["replica"]
    assert replica["max_concurrency"] < body["max_num_seqs"] == 1024
    assert replica["max_num_seqs"] == replica["max_concurrency"]
    assert replica["bound_by"] == "kv_capacity"


def test_the_fleet_s_range_is_the_replica_at_either_end_of_the_engine_s_spread(client):
    body = post_ok(client, "/v1/fleet", {**LLAMA_70B_AT_2M, "gpu": "h100-sxm"})
    replica, spread = body["replica"], body["uncertainty"]
    slow, fast = spread["max_request_rate"]
    assert slow < replica["max_request_rate"] < fast
    peak = LLAMA_70B_AT_2M["requests_per_day"] / 86_400 * LLAMA_70B_AT_2M["peak_to_average"]
    tp = replica["tensor_parallel"]
    # the faster replica needs the fewer GPUs: replicas for the peak, plus the spare, times TP
    expected = [(math.ceil(peak / rate - 1e-9) + 1) * tp for rate in (fast, slow)]
    assert spread["gpus_total"] == expected
    assert spread["gpus_total"][0] <= body["gpus_total"] <= spread["gpus_total"][1]
    price = body["price_per_gpu_hour_usd"]
    assert spread["monthly_cost_usd"] == pytest.approx([g * price * 730 for g in expected])
    assert "training rows" in body["uncertainty_basis"]


def test_a_measured_or_ideal_fleet_has_no_range(client):
    assert get_ok(client, "/v1/fleet", **SEED)["uncertainty"] is None
    ideal = get_ok(client, "/v1/fleet", model="llama-3.1-8b", gpu="h100-sxm", requests_per_day=100_000, engine="ideal")
    assert ideal["uncertainty"] is None and ideal["uncertainty_basis"].startswith("engine=ideal")


def test_a_served_model_name_is_what_every_trigger_filters_on_and_vllm_serves_as(client):
    query = {**LLAMA_70B_AT_2M, "gpu": "h100-sxm", "served_model_name": "llama-70b-instruct"}
    body = get_ok(client, "/v1/fleet", **query)
    scaling = body["autoscaling"]
    assert scaling["served_model_name"] == "llama-70b-instruct"
    assert all('model_name="llama-70b-instruct"' in t["query"] for t in scaling["triggers"])
    assert "--served-model-name llama-70b-instruct" in body["vllm_command"]
    # By default the checkpoint's repository, which vLLM downloads and labels its metrics with.
    default = get_ok(client, "/v1/fleet", **LLAMA_70B_AT_2M, gpu="h100-sxm")["autoscaling"]
    assert default["served_model_name"] == "meta-llama/Llama-3.1-70B-Instruct"
    assert [t["signal"] for t in default["triggers"]] == ["in_flight", "waiting", "kv_usage"]
    response = client.get("/v1/fleet", query_string={**query, "served_model_name": 'x"} or vector(1)'})
    assert response.status_code == 422 and "served_model_name" in response.get_json()["errors"]


def test_each_engines_triggers_carry_its_own_metric_names(client):
    for engine, waiting in (("vllm", "vllm:"), ("sglang", "sglang:"), ("trtllm", "trtllm_")):
        scaling = get_ok(client, "/v1/fleet", **LLAMA_70B_AT_2M, gpu="h100-sxm", engine=engine)["autoscaling"]
        assert scaling["queue_metric"].startswith(waiting)
        assert all(m.startswith(waiting) for t in scaling["triggers"] for m in t["metrics"])

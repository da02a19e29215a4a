"""Answers a planner can take at face value, each through a real gunicorn over a
freshly migrated and seeded catalog, with the expected figure worked out here from the request
and the catalog's seeds."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from bench.server import Server, running_server

pytestmark = pytest.mark.slow

HOURS_PER_MONTH = 730
SECONDS_PER_DAY = 86_400
# README's example: Llama 3.1 70B on H100 at 2M requests/day, 2,000/400 tokens, TPOT 40 ms and
# TTFT 1.5 s at p95, peak x2.5.
README_70B = {
    "model": "llama-3.1-70b",
    "gpu": "h100-sxm",
    "requests_per_day": 2e6,
    "peak_to_average": 2.5,
    "prompt_tokens": 2000,
    "output_tokens": 400,
    "tpot_slo_ms": 40,
    "ttft_slo_ms": 1500,
}
# catalog_seed/gpus.yaml: each GPU's hourly_price_usd
H100_PRICE_USD = 3.0
SEED_PRICES_USD = {"l4": 0.80, "a100-sxm-80gb": 1.80, "h100-sxm": H100_PRICE_USD}
# README's disaggregated example: Llama 3.1 8B on H100, 8,000-token prompts, 200-token answers.
README_DISAGGREGATED = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "requests_per_day": 2e6,
    "peak_to_average": 2,
    "prompt_tokens": 8000,
    "output_tokens": 200,
    "ttft_slo_ms": 1000,
    "tpot_slo_ms": 20,
    "topology": "disaggregated",
}
# README's mix: 95% 100/100-token turns, 5% 120,000-token documents over L4, A100 and H100.
README_MIX = {
    "model": "llama-3.1-8b",
    "mix": True,
    "gpus": "l4,a100-sxm-80gb,h100-sxm",
    "requests_per_day": 5e6,
    "ttft_slo_ms": 20_000,
    "tpot_slo_ms": 60,
    "length_buckets": [
        {"prompt_tokens": 100, "output_tokens": 100, "share": 0.95},
        {"prompt_tokens": 120_000, "output_tokens": 200, "share": 0.05},
    ],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(1, workdir=tmp_path_factory.mktemp("answers-server")) as live:
        yield live


def get(server: Server, path: str, **params: Any) -> tuple[int, Any]:
    query = {k: ",".join(map(str, v)) if isinstance(v, list | tuple) else v for k, v in params.items()}
    status, _, body = server.get(f"{path}?{urlencode(query)}", timeout=120)
    return status, json.loads(body)


def get_ok(server: Server, path: str, **params: Any) -> dict[str, Any]:
    status, body = get(server, path, **params)
    assert status == 200, body
    return body  # type: ignore[no-any-return]


def post_ok(server: Server, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        server.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Connection": "close"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as error:
        with error:
            raise AssertionError(f"{error.code}: {error.read()[:2000]!r}") from None


def tokens_per_month(requests_per_day: float, output_tokens: int) -> float:
    return requests_per_day / SECONDS_PER_DAY * output_tokens * 3600 * HOURS_PER_MONTH


# --- item 1: the fleet's cost per million output tokens ---------------------------------------


def test_the_readme_70b_fleet_costs_9_36_per_million_output_tokens(server: Server) -> None:
    body = get_ok(server, "/v1/fleet", **README_70B)
    # 104 H100s at $3.00 for 730 hours: $227,760 a month...
    assert body["gpus_total"] == 104
    assert body["monthly_cost_usd"] == pytest.approx(104 * H100_PRICE_USD * HOURS_PER_MONTH)
    # ...for 2M x 400 tokens a day over 730/24 days: 24.33 billion tokens, $9.36 per million.
    tokens = tokens_per_month(2e6, 400)
    assert tokens == pytest.approx(24.333e9, rel=1e-4)
    assert body["cost_per_million_output_tokens_usd"] == pytest.approx(227_760 / tokens * 1e6)
    assert round(body["cost_per_million_output_tokens_usd"], 2) == 9.36
    # One fully loaded TP8 replica's figure stays, named as such: 8 x $3.00 an hour over its capacity.
    replica = body["replica"]
    replica_usd = 8 * H100_PRICE_USD / 3600 / replica["tokens_per_s"] * 1e6
    assert body["replica_cost_per_million_output_tokens_usd"] == pytest.approx(replica_usd)
    assert body["replica_cost_per_million_output_tokens_usd"] < body["cost_per_million_output_tokens_usd"]


def test_each_forecast_period_has_its_own_cost_per_million_output_tokens(server: Server) -> None:
    shape = {k: v for k, v in README_70B.items() if k not in ("requests_per_day", "peak_to_average")}
    body = post_ok(
        server,
        "/v1/fleet",
        {
            **shape,
            "peak_to_average": 2.5,
            "forecast": [
                {"period": "2027-01", "requests_per_day": 5e5},
                {"period": "2027-06", "requests_per_day": 2e6},
            ],
        },
    )
    quiet, busy = body["periods"]
    for row, requests_per_day in ((quiet, 5e5), (busy, 2e6)):
        assert row["monthly_cost_usd"] == pytest.approx(row["gpus_total"] * H100_PRICE_USD * HOURS_PER_MONTH)
        expected = row["monthly_cost_usd"] / tokens_per_month(requests_per_day, 400) * 1e6
        assert row["cost_per_million_output_tokens_usd"] == pytest.approx(expected)
    # A quarter of the traffic keeps a spare and rounds up replicas of the same size: dearer per token.
    assert quiet["cost_per_million_output_tokens_usd"] > busy["cost_per_million_output_tokens_usd"]


def test_a_disaggregated_plan_costs_both_pools_over_the_output_tokens(server: Server) -> None:
    body = get_ok(server, "/v1/fleet", **README_DISAGGREGATED)
    prefill, decode = body["prefill_pool"], body["decode_pool"]
    monthly = (prefill["gpus_total"] + decode["gpus_total"]) * H100_PRICE_USD * HOURS_PER_MONTH
    assert body["monthly_cost_usd"] == pytest.approx(monthly)
    # Both pools' bill over the 2M x 200 output tokens a day bring in 730 hours (12.17 billion).
    output_tokens = tokens_per_month(2e6, 200)
    assert body["cost_per_million_output_tokens_usd"] == pytest.approx(monthly / output_tokens * 1e6)
    # The decode pool's own bill over the same tokens, and its loaded replica's floor.
    decode_monthly = decode["gpus_total"] * H100_PRICE_USD * HOURS_PER_MONTH
    assert decode["cost_per_million_output_tokens_usd"] == pytest.approx(decode_monthly / output_tokens * 1e6)
    replica = decode["replica"]
    floor = replica["gpus"] * H100_PRICE_USD / 3600 / replica["tokens_per_s"] * 1e6
    assert decode["replica_cost_per_million_output_tokens_usd"] == pytest.approx(floor)
    # The prefill pool hands back one token a request: its figures come per million prompt tokens,
    # 2M x 8,000 a day, and a loaded prefill replica takes max_request_rate prompts of 8,000 a second.
    assert prefill["cost_per_million_output_tokens_usd"] is None
    assert prefill["replica_cost_per_million_output_tokens_usd"] is None
    prefill_monthly = prefill["gpus_total"] * H100_PRICE_USD * HOURS_PER_MONTH
    prompt_tokens = tokens_per_month(2e6, 8000)
    assert prefill["cost_per_million_prompt_tokens_usd"] == pytest.approx(prefill_monthly / prompt_tokens * 1e6)
    replica = prefill["replica"]
    floor = replica["gpus"] * H100_PRICE_USD / 3600 / (replica["max_request_rate"] * 8000) * 1e6
    assert prefill["replica_cost_per_million_prompt_tokens_usd"] == pytest.approx(floor)


def test_a_mix_costs_every_pool_over_the_output_tokens_it_serves(server: Server) -> None:
    forecast = [{"period": "2027-01", "requests_per_day": 1e6}, {"period": "2027-02", "requests_per_day": 5e6}]
    body = post_ok(server, "/v1/fleet", {**README_MIX, "forecast": forecast})
    mix = body["mix"]
    # A request brings 0.95 x 100 + 0.05 x 200 = 105 output tokens on average.
    per_request = 0.95 * 100 + 0.05 * 200
    monthly = sum(p["gpus_total"] * SEED_PRICES_USD[p["gpu"]] for p in mix["pools"]) * HOURS_PER_MONTH
    assert body["monthly_cost_usd"] == pytest.approx(monthly)
    expected = monthly / (5e6 / SECONDS_PER_DAY * per_request * 3600 * HOURS_PER_MONTH) * 1e6
    assert body["cost_per_million_output_tokens_usd"] == pytest.approx(expected)
    for row, asked in zip(mix["periods"], forecast, strict=True):
        month = sum(
            gpus * SEED_PRICES_USD[pool["gpu"]] for gpus, pool in zip(row["pool_gpus_total"], mix["pools"], strict=True)
        )
        tokens = asked["requests_per_day"] / SECONDS_PER_DAY * per_request * 3600 * HOURS_PER_MONTH
        assert row["cost_per_million_output_tokens_usd"] == pytest.approx(month * HOURS_PER_MONTH / tokens * 1e6)
    quiet, busy = mix["periods"]
    assert quiet["cost_per_million_output_tokens_usd"] > busy["cost_per_million_output_tokens_usd"]


# --- item 2: honest ranking rows ---------------------------------------------------------------

QWEN_30B_RANKED = {
    "model": "qwen3-30b-a3b",
    "requests_per_day": 2e6,
    "peak_to_average": 2,
    "prompt_tokens": 2000,
    "output_tokens": 400,
    "tpot_slo_ms": 40,
    "ttft_slo_ms": 1500,
    "limit": 200,
}


def test_a_ranking_row_left_at_a_bound_gives_lower_bounds_and_no_verdict(server: Server) -> None:
    body = get_ok(server, "/v1/fleet", **QWEN_30B_RANKED)
    options = body["options"]
    best = options[0]
    # The first option is sized, meets the SLOs and is the plan.
    assert best["sized"] is True and best["meets_slo"] is True
    assert (best["gpu"], best["gpus_total"], best["monthly_cost_usd"]) == (
        body["gpu"],
        body["gpus_total"],
        body["monthly_cost_usd"],
    )
    unsized = [o for o in options if o["eligible"] and not o["sized"]]
    assert unsized
    for row in unsized:
        # Nobody checked it against the SLOs, and its size is only what its bound gives.
        assert row["meets_slo"] is None
        assert "gpus_total" not in row and "monthly_cost_usd" not in row
        assert row["monthly_cost_usd_at_least"] == pytest.approx(
            row["gpus_total_at_least"] * row["price_per_gpu_hour_usd"] * HOURS_PER_MONTH, abs=0.01
        )
        extra = row["monthly_cost_usd_at_least"] - best["monthly_cost_usd"]
        more = f"${extra:,.2f} a month more than" if extra >= 0.005 else "as much as"
        assert (
            row["why"] == f"not sized: on its {row['capacity_bound']} alone it already costs at least {more} the best"
        )
    # Sized on its own, an L40S shape needs at least the GPUs its row gave as a bound (TP4: 28 at
    # least in the ranking, 68 sized), and its sized plan meets the SLOs the row left open.
    l40s = [o for o in unsized if o["gpu"] == "l40s" and o["mig_profile"] is None and o["tensor_parallel"]]
    assert l40s
    shape = {k: v for k, v in QWEN_30B_RANKED.items() if k != "limit"}
    more_than_bound = []
    for row in l40s:
        sized = get_ok(server, "/v1/fleet", **shape, gpu="l40s", tensor_parallel=row["tensor_parallel"])
        assert sized["gpus_total"] >= row["gpus_total_at_least"]
        assert sized["monthly_cost_usd"] >= row["monthly_cost_usd_at_least"]
        more_than_bound.append(sized["gpus_total"] > row["gpus_total_at_least"])
    assert any(more_than_bound)  # a bound is no size to plan on


# --- item 4: a flat day is said, with what a typical peak costs ---------------------------------


def test_a_fleet_without_peak_to_average_says_it_sized_a_flat_day_and_what_x2_and_x3_need(server: Server) -> None:
    flat = {k: v for k, v in README_70B.items() if k != "peak_to_average"}
    body = get_ok(server, "/v1/fleet", **flat)
    tp = body["replica"]["tensor_parallel"]
    # The same replicas at a x2 and a x3 peak, asked for outright.
    peaks = [get_ok(server, "/v1/fleet", **flat, tensor_parallel=tp, peak_to_average=k) for k in (2, 3)]
    x2, x3 = (p["gpus_total"] for p in peaks)
    assert body["gpus_total"] < x2 < x3
    (warning,) = [w for w in body["warnings"] if w.startswith("peak_to_average not given")]
    assert warning == (
        f"peak_to_average not given: sized for a flat day (x1, the default), {body['gpus_total']:,} GPUs; "
        f"traffic peaking at a typical x2-3 its daily average: x2 needs {x2:,} GPUs "
        f"(${x2 * H100_PRICE_USD * HOURS_PER_MONTH:,.0f} a month), x3 needs {x3:,} GPUs "
        f"(${x3 * H100_PRICE_USD * HOURS_PER_MONTH:,.0f} a month). Give peak_to_average to size for your peak"
    )
    # Stated, even as 1, or given per period by a forecast: no warning.
    for stated in (get_ok(server, "/v1/fleet", **flat, peak_to_average=1), *peaks):
        assert not [w for w in stated["warnings"] if w.startswith("peak_to_average")]
    disaggregated = get_ok(
        server, "/v1/fleet", **{k: v for k, v in README_DISAGGREGATED.items() if k != "peak_to_average"}
    )
    assert any(w.startswith("peak_to_average not given") for w in disaggregated["warnings"])


# --- item 5: a serve line whose context holds the lengths' tail ----------------------------------


def max_model_len(command: str) -> int:
    words = command.split()
    return int(words[words.index("--max-model-len") + 1])


def test_the_serve_line_holds_the_p99_9_of_the_request_lengths_capped_by_the_context(server: Server) -> None:
    shape = {
        "model": "llama-3.1-8b",
        "gpu": "h100-sxm",
        "requests_per_day": 2e6,
        "peak_to_average": 2,
        "prompt_tokens": 2000,
        "output_tokens": 400,
        "tpot_slo_ms": 40,
        "ttft_slo_ms": 1500,
    }
    # Fixed lengths: the mean request is every request.
    assert max_model_len(get_ok(server, "/v1/fleet", **shape)["vllm_command"]) == 2000 + 400
    # Prompts of CV 1 are exponential: 1 in 1,000 is longer than 2,000 x ln(1000) = 13,815.5
    # tokens, plus its 400 of output; the mean sum (2,400) would reject a prompt of 2,001.
    spread = get_ok(server, "/v1/fleet", **shape, prompt_tokens_cv=1)
    assert max_model_len(spread["vllm_command"]) == math.ceil(2000 * math.log(1000) + 400) == 14_216
    # Llama 2 7B holds 4,096 tokens (its config's max_position_embeddings): the line stops there.
    short = get_ok(server, "/v1/fleet", **{**shape, "model": "llama-2-7b"}, prompt_tokens_cv=1)
    assert max_model_len(short["vllm_command"]) == 4096


# --- no price without a plan -----------------------------------------------------------------


def test_cost_on_a_shape_that_cannot_hold_the_weights_is_a_422_not_a_price(server: Server) -> None:
    status, memory = get(server, "/v1/fit", model="llama-3.1-405b", gpu="l4", tensor_parallel=8)
    assert status == 200 and memory["fits_weights"] is False and memory["kv_budget_bytes"] == 0
    status, body = get(server, "/v1/cost", model="llama-3.1-405b", gpu="l4", tensor_parallel=8)
    assert status == 422, body
    assert "cost_per_million_output_tokens_usd" not in body and {"gpu", "tensor_parallel"} == set(body["errors"])


# --- item 6: forgiving lookups ---------------------------------------------------------------------


def test_a_model_is_found_by_its_slug_in_any_case_its_repository_and_its_instruct_variant(server: Server) -> None:
    shape = {"gpu": "h100-sxm", "concurrency": 8}
    reference = get_ok(server, "/v1/throughput", model="llama-3.1-8b", **shape)
    # catalog_seed/models.yaml: llama-3.1-8b's hf_repo is meta-llama/Llama-3.1-8B; the instruct
    # release is the same architecture, planned alike and named by the catalog's slug.
    for name in ("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"):
        body = get_ok(server, "/v1/throughput", model=name, **{**shape, "gpu": "H100-SXM"})
        assert body["model"] == "llama-3.1-8b" and body["gpu"] == "h100-sxm"
        assert body["tokens_per_s"] == reference["tokens_per_s"]
    # An instruct-only family is found by its repository too: Qwen/Qwen2.5-7B-Instruct is qwen2.5-7b.
    assert get_ok(server, "/v1/throughput", model="Qwen/Qwen2.5-7B-Instruct", **shape)["model"] == "qwen2.5-7b"


def test_an_unknown_model_s_404_names_the_three_nearest_slugs(server: Server) -> None:
    status, body = get(server, "/v1/throughput", model="llama-3.8b", gpu="h100-sxm", concurrency=8)
    assert status == 404
    assert body["errors"] == {"model": ["unknown model 'llama-3.8b'"]}
    nearest = body["detail"].split("nearest: ", 1)[1].split(" (see", 1)[0].split(", ")
    assert len(nearest) == 3 and "llama-3.1-8b" in nearest
    status, body = get(server, "/v1/throughput", model="llama-3.1-8b", gpu="h100-sxn", concurrency=8)
    assert status == 404 and "nearest: h100-sxm" in body["detail"]


# --- item 8: pool figures in their own units, flagged like a replica -------------------------------


def test_a_prefill_pool_counts_prompt_tokens_and_every_pool_says_whether_it_is_optimistic(server: Server) -> None:
    body = get_ok(server, "/v1/fleet", **README_DISAGGREGATED)
    prefill, decode = body["prefill_pool"], body["decode_pool"]
    # A prefill replica hands back one token a request: its throughput is the prompts it takes,
    # max_request_rate of 8,000 tokens a second; requests/s stay under max_request_rate.
    replica = prefill["replica"]
    assert replica["tokens_per_s"] is None
    assert replica["prompt_tokens_per_s"] == pytest.approx(replica["max_request_rate"] * 8000)
    assert decode["replica"]["tokens_per_s"] > 0
    assert decode["replica"]["prompt_tokens_per_s"] == pytest.approx(decode["replica"]["max_request_rate"] * 8000)
    for pool in (prefill, decode):
        assert pool["utilization_peak"] == pool["replica"]["utilization_peak"]
        assert pool["optimistic"] is (pool["utilization_peak"] > 0.8)
    # A mix's pools: the busy share at SLO capacity, and at saturation as a replica counts it, which
    # is what the optimistic flag follows (a replica above 0.8 of its saturation rate).
    mix = post_ok(server, "/v1/fleet", README_MIX)["mix"]
    for pool in mix["pools"]:
        load = sum(part["requests_per_s"] / part["capacity_per_replica"] for part in pool["buckets"])
        assert pool["utilization_peak"] == pytest.approx(load / pool["replicas_peak"])
        assert 0 < pool["saturation_utilization_peak"] <= pool["utilization_peak"]
        assert pool["optimistic"] is (pool["saturation_utilization_peak"] > 0.8)


# --- item 3: guesses labelled ----------------------------------------------------------------------

# /plan's default question (app/static/plan/state.js) on the whole catalog.
PLAN_DEFAULT = {
    "model": "llama-3.1-8b",
    "engine": "vllm",
    "requests_per_day": 2e6,
    "peak_to_average": 2.5,
    "prompt_tokens": 2000,
    "output_tokens": 400,
    "tpot_slo_ms": 40,
    "ttft_slo_ms": 1500,
}


def test_a_ranking_won_on_an_unmeasured_generation_says_so_and_what_the_best_measured_option_costs(
    server: Server,
) -> None:
    rows = get_ok(server, "/v1/engines/vllm")["uncertainty"]["rows"]
    measured = {key.split(":", 1)[1] for key, count in rows.items() if key.startswith("gpu:") and count}
    gpus = get_ok(server, "/v1/gpus", limit=100)["items"]
    covered = sorted(g["slug"] for g in gpus if g["architecture"] in measured)
    body = get_ok(server, "/v1/fleet", **PLAN_DEFAULT, limit=200)
    architecture = {g["slug"]: g["architecture"] for g in gpus}
    for row in body["options"]:
        assert row["measured_generation"] is (architecture[row["gpu"]] in measured)
    best = body["options"][0]
    if best["measured_generation"]:
        pytest.skip(f"rank 1 ({best['gpu']}) is on a measured generation now")
    # The answer says its figures are a guess, and widens the range.
    name = next(g["name"] for g in gpus if g["slug"] == best["gpu"])
    assert any(
        w.startswith(
            f"vllm has no measured row on the {architecture[best['gpu']]} GPU generation: {name}'s figures are a guess"
        )
        for w in body["warnings"]
    )
    assert "range widened" in body["uncertainty_basis"]
    # ...and what the cheapest option on a measured generation costs, sized: the ranking over those GPUs.
    alone = get_ok(server, "/v1/fleet", **PLAN_DEFAULT, gpus=covered)
    extra = alone["monthly_cost_usd"] - body["monthly_cost_usd"]
    runner = alone["options"][0]
    label = " ".join(
        [
            runner["gpu"],
            *([f"MIG {runner['mig_profile']}"] if runner["mig_profile"] else []),
            f"TP{runner['tensor_parallel']}",
        ]
    )
    tp = f" TP{best['tensor_parallel']}" if best["tensor_parallel"] else ""
    assert body["warnings"][-1] == (
        f"rank 1 ({best['gpu']}{tp}) is on a GPU generation vllm has no measured row for: its figures are a guess; "
        f"the cheapest option on a measured generation is {label}: {alone['gpus_total']:,} GPUs, "
        f"${alone['monthly_cost_usd']:,.2f} a month (${extra:,.2f}, {extra / body['monthly_cost_usd']:.0%} more)"
    )


def test_the_serve_line_serves_the_instruct_release_and_aliases_find_their_model(server: Server) -> None:
    models = {m["slug"]: m for m in get_ok(server, "/v1/models", limit=100)["items"]}
    # catalog_seed/models.yaml: Llama 3.1 8B's hf_repo is the base release; its instruct_repo is
    # what people deploy, and what vllm serve downloads.
    assert models["llama-3.1-8b"]["instruct_repo"] == "meta-llama/Llama-3.1-8B-Instruct"
    body = get_ok(server, "/v1/fleet", model="llama-3.1-8b", gpu="h100-sxm", requests_per_day=1e5, peak_to_average=2)
    assert body["vllm_command"].startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct ")
    # An instruct-only release keeps its own repository.
    qwen = get_ok(server, "/v1/fleet", model="qwen2.5-7b", gpu="h100-sxm", requests_per_day=1e5, peak_to_average=2)
    assert qwen["vllm_command"].startswith(f"vllm serve {models['qwen2.5-7b']['hf_repo']} ")
    # DeepSeek-R1 is the V3 architecture: the alias plans as deepseek-v3, by its slug.
    assert "deepseek-r1" in models["deepseek-v3"]["aliases"]
    for name in ("deepseek-r1", "deepseek-ai/DeepSeek-R1"):
        assert get_ok(server, "/v1/fit", model=name, gpu="h200-sxm", tensor_parallel=8)["model"] == "deepseek-v3"
    assert get_ok(server, "/v1/fit", model="Llama-3.3-70B", gpu="h100-sxm")["model"] == "llama-3.3-70b"


def test_the_rtx_4090_5090_and_the_l40_are_in_the_catalog_and_plannable(server: Server) -> None:
    gpus = {g["slug"]: g for g in get_ok(server, "/v1/gpus", limit=100)["items"]}
    # Datasheet figures (catalog_seed/gpus.yaml, sources there): the 4090's peaks with FP32
    # accumulate (GeForce halves them), the L40's dense half of its sparse ones.
    rtx, l40 = gpus["rtx-4090"], gpus["l40"]
    assert (rtx["architecture"], rtx["memory_gb"], rtx["memory_bandwidth_tb_per_s"]) == ("ada", 24, 1.008)
    assert rtx["peak_tflops"]["bf16"] == 165.15 and rtx["peak_tflops"]["fp8"] == 330.3
    assert (l40["architecture"], l40["memory_gb"], l40["memory_bandwidth_tb_per_s"]) == ("ada", 48, 0.864)
    assert l40["peak_tflops"]["bf16"] == pytest.approx(362.1 / 2) and l40["peak_tflops"]["fp8"] == 724 / 2
    # The 5090: dense halves of its sparse figures, bf16 and fp8 at the FP32-accumulate rate.
    rtx5 = gpus["rtx-5090"]
    assert (rtx5["architecture"], rtx5["memory_gb"], rtx5["memory_bandwidth_tb_per_s"]) == ("blackwell-gddr", 32, 1.792)
    assert rtx5["peak_tflops"]["bf16"] == pytest.approx(838.4 / 2 / 2) and rtx5["peak_tflops"]["fp4"] == 3352 / 2
    # vLLM's profile has a measured Ada row (an RTX 4090's, catalog_seed/engines.yaml); SGLang's
    # has none, and says its Ada figures are its prior's.
    for slug in ("rtx-4090", "l40"):
        for engine, unmeasured in (("vllm", False), ("sglang", True)):
            body = get_ok(
                server, "/v1/fleet", **{**README_70B, "model": "llama-3.1-8b", "gpu": slug},
                engine=engine, price_per_gpu_hour_usd=1,
            )  # fmt: skip
            assert body["gpus_total"] > 0 and body["monthly_cost_usd"] == pytest.approx(
                body["gpus_total"] * HOURS_PER_MONTH
            )
            said = any("no measured row on the ada GPU generation" in w for w in body["warnings"])
            assert said == unmeasured, (slug, engine, body["warnings"])


def test_catalog_reads_forgive_the_case_and_a_miss_names_the_nearest(server: Server) -> None:
    model = get_ok(server, "/v1/models/Llama-3.1-8B")
    assert model["slug"] == "llama-3.1-8b"
    assert get_ok(server, "/v1/gpus/H100-SXM")["slug"] == "h100-sxm"
    status, body = get(server, "/v1/gpus/h100-sxn")
    assert status == 404 and body["detail"].startswith("unknown GPU 'h100-sxn'; nearest: h100-sxm, ")
    assert body["errors"] == {"slug": ["unknown GPU 'h100-sxn'"]}

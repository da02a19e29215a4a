"""/v1/fleet's money and energy through HTTP: pricing=optimize on a forecast, worked
out by hand on a measured replica (2 requests/s each, so every fleet size is arithmetic),
energy on every answer, owning, a hosted API beside it, GET and CSV, and every bad input a
422 naming the field or the price a mode lacks."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.api.helpers import post_ok

HOURS = 730
# A measured replica of Llama 3.1 8B on one H100 SXM: 1,000 output tokens/s, 500 per answer:
# 2 requests/s a replica. 1,555,200 requests/day is 18 requests/s: 9 replicas, 10 GPUs with N+1.
BASE = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "tensor_parallel": 1,
    "per_replica_tokens_per_s": 1000,
    "prompt_tokens": 1000,
    "output_tokens": 500,
    "engine": "ideal",
}
DAY = 1_555_200.0
# A card given inline with its on-demand price only.
INLINE_PRICED = {
    "memory_gb": 80,
    "memory_bandwidth_tb_per_s": 3.35,
    "peak_tflops": {"bf16": 989},
    "hourly_price_usd": 2.5,
}


def _forecast(per_day: list[float], peak: float = 1.0) -> list[dict[str, Any]]:
    return [
        {"period": f"2027-{m:02d}", "requests_per_day": r, "peak_to_average": peak} for m, r in enumerate(per_day, 1)
    ]


def _fleet(client: FlaskClient, **fields: Any) -> dict[str, Any]:
    return post_ok(client, "/v1/fleet", {**BASE, **fields})


def _problem(client: FlaskClient, body: dict[str, Any], *, get: bool = False) -> dict[str, list[str]]:
    response = client.get("/v1/fleet", query_string=body) if get else client.post("/v1/fleet", json=body)
    assert response.status_code == 422, response.get_data(as_text=True)
    errors: dict[str, list[str]] = response.get_json()["errors"]
    return errors


def test_the_default_answer_is_todays_on_demand_bill(client: FlaskClient) -> None:
    answer = _fleet(client, requests_per_day=DAY)
    assert answer["pricing"] == "on_demand" and answer["procurement"] is None
    assert answer["gpus_total"] == 10
    assert answer["monthly_cost_usd"] == 10 * 3.00 * HOURS == 21_900.00
    assert _fleet(client, requests_per_day=DAY, pricing="on_demand") == answer


def test_a_flat_forecast_commits_every_gpu_for_the_year(client: FlaskClient) -> None:
    """10 GPUs every month: 10 x 2.16 x 730 x 12 = 189,216.00 committed, against
    10 x 3.00 x 730 x 12 = 262,800.00 on demand."""
    answer = _fleet(client, forecast=_forecast([DAY] * 12), pricing="optimize")
    procurement = answer["procurement"]
    assert [(c["term"], c["gpus"]) for c in procurement["commitment"]] == [("1y", 10)]
    assert procurement["committed_gpus"] == 10
    assert procurement["cost_usd"] == 189_216.00
    assert procurement["on_demand_cost_usd"] == 262_800.00
    assert procurement["monthly_cost_usd"] == 15_768.00
    assert procurement["on_demand_monthly_cost_usd"] == 21_900.00
    assert any("3y commitment: its 36 months are longer than the 12-month horizon" in w for w in procurement["why"])
    assert all(p["committed_gpus"] == 10 and p["on_demand_gpus"] == 0 for p in answer["periods"])


def test_one_busy_month_is_rented_on_top_of_the_committed_base(client: FlaskClient) -> None:
    """July doubles: 36 requests/s, 18 replicas, 19 GPUs. The base 10 are committed, July's 9
    more rented: 10 x 2.16 x 8,760 + 9 x 3.00 x 730 = 189,216 + 19,710 = 208,926.00."""
    per_day = [DAY] * 12
    per_day[6] = 2 * DAY
    answer = _fleet(client, forecast=_forecast(per_day), pricing="optimize")
    procurement = answer["procurement"]
    july = procurement["periods"][6]
    assert (july["gpus_needed"], july["committed_gpus"], july["on_demand_gpus"]) == (19, 10, 9)
    assert july["cost_usd"] == round((10 * 2.16 + 9 * 3.00) * HOURS, 2) == 35_478.00
    assert procurement["cost_usd"] == 208_926.00
    assert answer["periods"][6]["on_demand_gpus"] == 9 and answer["periods"][6]["procured_cost_usd"] == 35_478.00


def test_spot_carries_only_the_load_above_the_protected_n_plus_1(client: FlaskClient) -> None:
    """A ×2 day: 9 requests/s on average (5 replicas, 6 with the spare: the protected N+1), 18
    at peak (10 GPUs). Spot at 1.50 with a 5% chance an hour is lost counts as 0.95 of a GPU:
    the 4 above the protected take ceil(4 / 0.95) = 5 spot GPUs (7.50 an hour, against 8.64
    committing 4 more). (6 x 2.16 + 5 x 1.50) x 730 = 14,935.80 a month."""
    answer = _fleet(
        client,
        forecast=_forecast([DAY / 2] * 12, peak=2.0),
        pricing="optimize",
        prices={"spot_interruptions_per_hour": 0.05},
    )
    for period in answer["procurement"]["periods"]:
        assert (period["gpus_needed"], period["gpus_protected"]) == (10, 6)
        assert (period["committed_gpus"], period["on_demand_gpus"], period["spot_gpus"]) == (6, 0, 5)
        assert period["cost_usd"] == 14_935.80
    assert answer["procurement"]["rates"]["spot_share"] == 0.95


def test_a_flat_traffic_without_a_forecast_is_planned_over_three_years(client: FlaskClient) -> None:
    """36 months in three yearly periods; the 3-year rate wins: 10 x 1.62 x 730 x 36 = 425,736.00.
    The CSV is the split, period by period."""
    answer = _fleet(client, requests_per_day=DAY, pricing="optimize")
    procurement = answer["procurement"]
    assert (procurement["horizon_months"], procurement["period_months"]) == (36, 12)
    assert [p["period"] for p in procurement["periods"]] == ["months 1-12", "months 13-24", "months 25-36"]
    assert [(c["term"], c["gpus"], c["first_period"], c["last_period"]) for c in procurement["commitment"]] == [
        ("3y", 10, "months 1-12", "months 25-36")
    ]
    assert procurement["cost_usd"] == round(10 * 1.62 * HOURS * 36, 2) == 425_736.00
    text = client.post("/v1/fleet?format=csv", json={**BASE, "requests_per_day": DAY, "pricing": "optimize"})
    rows = list(csv.DictReader(io.StringIO(text.get_data(as_text=True))))
    assert [row["committed_gpus_by_term_3y"] for row in rows] == ["10", "10", "10"]
    assert [row["cost_usd"] for row in rows] == ["141912.0"] * 3


def test_a_fleet_billed_part_of_the_day_still_pays_a_commitment_every_hour(client: FlaskClient) -> None:
    """Billed 365 hours a month (half the day): renting 10 GPUs for the year costs
    10 x 3.00 x 365 x 12 = 131,400.00, committing them 10 x 2.16 x 730 x 12 = 189,216.00
    (a commitment bills every hour), so nothing is committed; at 600 hours renting costs
    216,000.00 and all 10 are committed at the same 189,216.00."""
    asked = {"requests_per_day": DAY, "pricing": "optimize", "horizon_months": 12, "commitments": "1y"}
    part_time = _fleet(client, hours_per_month=365, **asked)["procurement"]
    ((period),) = part_time["periods"]
    assert (period["hours"], period["committed_hours"]) == (12 * 365, 12 * 730)
    assert part_time["commitment"] == []
    assert part_time["cost_usd"] == round(10 * 3.00 * 365 * 12, 2) == 131_400.00
    busier = _fleet(client, hours_per_month=600, **asked)["procurement"]
    assert [(c["gpus"], c["cost_usd"]) for c in busier["commitment"]] == [(10, 189_216.00)]
    assert busier["cost_usd"] == round(10 * 2.16 * 730 * 12, 2) == 189_216.00
    assert busier["on_demand_cost_usd"] == round(10 * 3.00 * 600 * 12, 2) == 216_000.00


def test_pricing_is_asked_by_get_too_with_dotted_prices(client: FlaskClient) -> None:
    query = {
        **BASE,
        "requests_per_day": DAY,
        "pricing": "optimize",
        "commitments": "1y",
        "horizon_months": 12,
        "period_months": 1,
        "prices.reserved_1y_usd_per_hour": 2.0,
    }
    answer = client.get("/v1/fleet", query_string=query).get_json()
    assert answer["procurement"]["cost_usd"] == round(10 * 2.0 * HOURS * 12, 2)
    assert answer["prices"]["reserved_1y_usd_per_hour"] == 2.0
    errors = _problem(client, {**query, "prices.rebate": 1}, get=True)
    assert "prices.rebate" in errors


def test_the_forecast_csv_carries_the_split_per_period(client: FlaskClient) -> None:
    body = {**BASE, "forecast": _forecast([DAY] * 11 + [2 * DAY]), "pricing": "optimize"}
    rows = list(csv.DictReader(io.StringIO(client.post("/v1/fleet?format=csv", json=body).get_data(as_text=True))))
    assert [row["on_demand_gpus"] for row in rows] == ["0"] * 11 + ["9"]
    assert rows[-1]["committed_gpus"] == "10" and rows[-1]["procured_cost_usd"] == "35478.0"


def test_every_fleet_answer_gives_its_energy(client: FlaskClient) -> None:
    """On an A100 SXM 80GB (400 W board, 62.12 W idle measured): 10 GPUs whose average
    utilization the answer states draw 10 x (62.12 + 337.88 x u) W for 730 h."""
    answer = _fleet(client, gpu="a100-sxm-80gb", requests_per_day=DAY, grid_g_co2_per_kwh=400, pue=1.2)
    drawn = answer["energy"]
    u = drawn["utilization"]
    assert drawn["power_per_gpu_w"] == pytest.approx(62.12 + (400 - 62.12) * u)
    expected = 10 * drawn["power_per_gpu_w"] / 1000 * HOURS * 1.2
    assert answer["energy_kwh_per_month"] == pytest.approx(expected)
    tokens = 18 * 500 * 3600 * HOURS  # the month's output tokens
    assert answer["energy_wh_per_million_tokens"] == pytest.approx(expected * 1000 / tokens * 1e6)
    assert answer["co2e_kg_per_month"] == pytest.approx(expected * 0.4)
    # Flat traffic on measured replicas: 18 requests/s over 10 replicas carrying 2 each.
    assert u == pytest.approx(18 / (10 * 2))


def test_energy_is_null_and_says_why_when_the_gpu_has_no_idle_power(client: FlaskClient) -> None:
    answer = _fleet(client, requests_per_day=DAY)
    assert answer["energy_kwh_per_month"] is None and answer["energy"] is None
    assert "idle_power_w" in answer["energy_basis"] and "prices.idle_power_w" in answer["energy_basis"]
    given = _fleet(client, requests_per_day=DAY, prices={"idle_power_w": 70})
    assert given["energy_kwh_per_month"] == pytest.approx(10 * (70 + 630 * 0.9) / 1000 * HOURS)


def test_pools_give_their_energy_too(client: FlaskClient) -> None:
    disaggregated = post_ok(
        client,
        "/v1/fleet",
        {
            "model": "llama-3.1-8b",
            "gpu": "h200-sxm",
            "requests_per_day": 2e6,
            "peak_to_average": 2,
            "prompt_tokens": 8000,
            "output_tokens": 200,
            "ttft_slo_ms": 1000,
            "tpot_slo_ms": 20,
            "topology": "disaggregated",
        },
    )
    pools = [disaggregated["prefill_pool"], disaggregated["decode_pool"]]
    assert disaggregated["energy_kwh_per_month"] == pytest.approx(sum(p["energy_kwh_per_month"] for p in pools))
    for pool in pools:
        assert pool["energy"]["gpus"] == pool["gpus_total"]
        assert pool["energy_kwh_per_month"] == pytest.approx(
            pool["gpus_total"] * (80.3 + (700 - 80.3) * pool["energy"]["utilization"]) / 1000 * HOURS
        )


def test_owning_costs_the_purchase_over_its_months_plus_power_and_hosting(client: FlaskClient) -> None:
    """10 H100s at 27,500 over 36 months: 7,638.89 a month; electricity is the answer's kWh at
    0.10 USD; hosting 10 x 0.7 kW x 150 = 1,050.00."""
    answer = _fleet(
        client,
        requests_per_day=DAY,
        prices={"idle_power_w": 70},
        ownership={
            "amortization_months": 36,
            "pue": 1.3,
            "electricity_usd_per_kwh": 0.10,
            "hosting_usd_per_kw_month": 150,
        },
    )
    owned, kwh = answer["ownership"], answer["energy_kwh_per_month"]
    assert kwh == pytest.approx(10 * (70 + 630 * 0.9) / 1000 * HOURS * 1.3)
    assert owned["amortization_usd_per_month"] == round(10 * 27_500 / 36, 2) == 7_638.89
    assert owned["electricity_usd_per_month"] == round(kwh * 0.10, 2)
    assert owned["hosting_usd_per_month"] == 1_050.00
    assert owned["owned_monthly_cost_usd"] == round(7_638.89 + round(kwh * 0.10, 2) + 1_050.00, 2)
    running = owned["electricity_usd_per_month"] + owned["hosting_usd_per_month"]
    assert owned["break_even_months"] == pytest.approx(275_000 / (21_900 - running))
    assert owned["months"][0] == {"month": 0, "owned_usd": 275_000.0, "rented_usd": 0.0}


# Each price and power figure a request may give, per whole card, with what it must drive
# (10 H100 SXM GPUs at DAY: 9 replicas and the spare; 90% busy on average).
OWNING = {"amortization_months": 36, "electricity_usd_per_kwh": 0.10, "hosting_usd_per_kw_month": 150}


@pytest.mark.parametrize(
    ("name", "figure", "changes", "check"),
    [
        ("on_demand_usd_per_hour", 4.0, {}, lambda a: a["monthly_cost_usd"] == 10 * 4.0 * HOURS),
        (
            "reserved_1y_usd_per_hour",
            2.0,
            {"pricing": "optimize", "horizon_months": 12, "commitments": "1y"},
            lambda a: a["procurement"]["cost_usd"] == round(10 * 2.0 * HOURS * 12, 2),
        ),
        (
            "reserved_3y_usd_per_hour",
            1.0,
            {"pricing": "optimize", "commitments": "3y"},
            lambda a: a["procurement"]["cost_usd"] == round(10 * 1.0 * HOURS * 36, 2),
        ),
        (
            "spot_usd_per_hour",
            0.5,
            {
                "pricing": "optimize",
                "horizon_months": 12,
                "commitments": "none",
                "prices": {"spot_interruptions_per_hour": 0.1},
            },
            lambda a: a["procurement"]["rates"]["spot_usd_per_hour"] == 0.5,
        ),
        (
            "spot_interruptions_per_hour",
            0.2,
            {"pricing": "optimize", "horizon_months": 12, "spot": True},
            lambda a: a["procurement"]["rates"]["spot_share"] == pytest.approx(0.8),
        ),
        (
            "purchase_usd",
            20_000.0,
            {"ownership": OWNING, "prices": {"idle_power_w": 70}},
            lambda a: a["ownership"]["purchase_usd"] == 10 * 20_000.0,
        ),
        (
            "power_w",
            600.0,
            {"prices": {"idle_power_w": 70}},
            lambda a: a["energy"]["power_per_gpu_w"] == pytest.approx(70 + (600 - 70) * 0.9),
        ),
        (
            "idle_power_w",
            50.0,
            {},
            lambda a: a["energy_kwh_per_month"] == pytest.approx(10 * (50 + (700 - 50) * 0.9) / 1000 * HOURS),
        ),
    ],
)
def test_every_price_a_request_gives_replaces_the_catalogs(
    client: FlaskClient, name: str, figure: float, changes: dict[str, Any], check: Any
) -> None:
    """Issue 25: "a request may override any of them": each is answered in `prices` and is
    the figure the cost or energy it drives is computed with."""
    prices = {**changes.get("prices", {}), name: figure}
    answer = _fleet(client, requests_per_day=DAY, **{**changes, "prices": prices})
    assert answer["prices"][name] == figure
    assert check(answer), answer


def test_a_mig_fleet_is_committed_owned_and_powered_by_the_whole_card(client: FlaskClient) -> None:
    """Slices of 3g.40gb on an A100 SXM 80GB: two to a card (its max_instances), so the fleet
    is counted, committed, bought and powered in cards, at the card's rates (the request's
    per whole card): 1.00 USD/h committed for a year, 10,000 USD a card, the card's 400 W
    board and 62.12 W idle power; hosting on each card's 0.4 kW."""
    card = client.get("/v1/gpus/a100-sxm-80gb").get_json()
    answer = _fleet(
        client,
        gpu="a100-sxm-80gb",
        mig_profile="3g.40gb",
        requests_per_day=DAY,
        pricing="optimize",
        horizon_months=12,
        commitments="1y",
        prices={"reserved_1y_usd_per_hour": 1.0, "purchase_usd": 10_000},
        ownership=OWNING,
    )
    cards = answer["gpus_total"]
    assert answer["replicas_per_card"] == 2 and answer["replicas_total"] == 2 * cards
    assert answer["price_per_gpu_hour_usd"] == card["prices"]["on_demand_usd_per_hour"]
    assert answer["monthly_cost_usd"] == round(cards * card["prices"]["on_demand_usd_per_hour"] * HOURS, 2)
    (commitment,) = answer["procurement"]["commitment"]
    assert commitment["gpus"] == cards
    assert answer["procurement"]["cost_usd"] == commitment["cost_usd"] == round(cards * 1.0 * HOURS * 12, 2)
    drawn = answer["energy"]
    assert drawn["gpus"] == cards
    # 18 requests/s over the replicas' 2 each: the cards' busy share.
    assert drawn["utilization"] == pytest.approx(18 / (answer["replicas_total"] * 2))
    assert drawn["power_per_gpu_w"] == pytest.approx(62.12 + (400 - 62.12) * drawn["utilization"])
    owned = answer["ownership"]
    assert owned["purchase_usd"] == cards * 10_000
    assert owned["hosting_usd_per_month"] == round(cards * 0.4 * 150, 2)


def test_owning_a_forecasts_busiest_fleet_is_weighed_against_renting_each_periods(client: FlaskClient) -> None:
    """Eleven months of 10 GPUs (21,900 a month on demand) and one of 19 (41,610): owned, the
    fleet must hold the busy month's 19 all year; rented, it shrinks back. So renting costs
    (11 x 21,900 + 41,610) / 12 = 23,542.50 a month beside owning 19 GPUs, not 41,610."""
    answer = _fleet(
        client,
        forecast=_forecast([DAY] * 5 + [2 * DAY] + [DAY] * 6),
        prices={"idle_power_w": 70},
        ownership=OWNING,
    )
    owned = answer["ownership"]
    assert [p["monthly_cost_usd"] for p in answer["periods"]] == [21_900.0] * 5 + [41_610.0] + [21_900.0] * 6
    assert owned["gpus"] == 19 and owned["purchase_usd"] == 19 * 27_500
    assert owned["rented_monthly_cost_usd"] == round((11 * 21_900 + 41_610) / 12, 2) == 23_542.50
    assert "as each period needs it" in owned["rented_basis"]
    running = owned["electricity_usd_per_month"] + owned["hosting_usd_per_month"]
    assert owned["break_even_months"] == pytest.approx(19 * 27_500 / (23_542.50 - running))
    assert owned["months"][12]["rented_usd"] == round(12 * 23_542.50, 2)
    # Without a forecast it is the same fleet, rented every month.
    flat = _fleet(client, requests_per_day=DAY, prices={"idle_power_w": 70}, ownership=OWNING)["ownership"]
    assert flat["rented_monthly_cost_usd"] == 21_900.0 and "same fleet" in flat["rented_basis"]


def test_a_hosted_api_is_priced_beside_the_fleet_with_the_traffic_it_breaks_even_at(client: FlaskClient) -> None:
    """18 requests/s of 1,000 + 500 tokens at 0.20 and 0.60 USD per million: 47,304,000 a month
    x 0.0005 = 23,652.00 USD, above the fleet's 21,900. Self-hosting (2,190 a replica, one
    spare; the API 0.0005 x 2,628,000 = 1,314 per request/s a month, 2,628 a replica's worth)
    stays cheaper from step n with 2,628(n - 1) >= 2,190(n + 1): n = 11; in step 10 (20
    requests/s, 11 x 2,190 = 24,090) the API crosses at 24,090 / 1,314 = 18.33 requests/s."""
    answer = _fleet(
        client,
        requests_per_day=DAY,
        api_price_per_million_input_tokens_usd=0.20,
        api_price_per_million_output_tokens_usd=0.60,
    )
    assert answer["hosted_api_monthly_cost_usd"] == 23_652.00
    assert answer["break_even_requests_per_day"] == pytest.approx(24_090 / 1_314 * 86_400)
    assert "self-hosting costs 1,752.00 USD a month less" in answer["hosted_api_comparison"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"prices": {"spot_usd_per_hour": -1}}, "prices.spot_usd_per_hour"),
        ({"prices": {"reserved_1y_usd_per_hour": -0.5}}, "prices.reserved_1y_usd_per_hour"),
        ({"prices": {"purchase_usd": -1}}, "prices.purchase_usd"),
        ({"prices": {"power_w": -700}}, "prices.power_w"),
        ({"prices": {"idle_power_w": -1}}, "prices.idle_power_w"),
        ({"prices": {"power_w": 300, "idle_power_w": 400}}, "prices.idle_power_w"),
        ({"prices": {"spot_interruptions_per_hour": 1}}, "prices.spot_interruptions_per_hour"),
        ({"prices": {"spot_interruptions_per_hour": -0.01}}, "prices.spot_interruptions_per_hour"),
        ({"price_per_gpu_hour_usd": -3}, "price_per_gpu_hour_usd"),
        ({"pue": 0.9}, "pue"),
        (
            {
                "ownership": {
                    "amortization_months": 36,
                    "pue": 0.95,
                    "electricity_usd_per_kwh": 0.1,
                    "hosting_usd_per_kw_month": 0,
                }
            },
            "ownership.pue",
        ),
        (
            {"ownership": {"amortization_months": 36, "electricity_usd_per_kwh": -0.1, "hosting_usd_per_kw_month": 0}},
            "ownership.electricity_usd_per_kwh",
        ),
        (
            {"ownership": {"electricity_usd_per_kwh": 0.1, "hosting_usd_per_kw_month": 0}},
            "ownership.amortization_months",
        ),
        ({"pricing": "optimize", "forecast": _forecast([DAY] * 12), "commitments": "3y"}, "commitments"),
        ({"pricing": "optimize", "horizon_months": 6, "period_months": 1, "commitments": "1y"}, "commitments"),
        ({"pricing": "optimize", "horizon_months": 18}, "horizon_months"),
        ({"pricing": "optimize", "forecast": _forecast([DAY] * 12), "horizon_months": 12}, "horizon_months"),
        ({"commitments": "1y"}, "commitments"),
        ({"spot": True}, "spot"),
        ({"pricing": "cheapest"}, "pricing"),
        ({"pricing": "optimize", "period_months": 5}, "period_months"),
        ({"api_price_per_million_input_tokens_usd": 0.2}, "api_price_per_million_output_tokens_usd"),
        (
            {"api_price_per_million_input_tokens_usd": -0.2, "api_price_per_million_output_tokens_usd": 1},
            "api_price_per_million_input_tokens_usd",
        ),
        ({"grid_g_co2_per_kwh": -1}, "grid_g_co2_per_kwh"),
        ({"price_per_gpu_hour_usd": 3, "prices": {"on_demand_usd_per_hour": 4}}, "prices.on_demand_usd_per_hour"),
    ],
)
def test_bad_input_is_422_naming_the_field(client: FlaskClient, changes: dict[str, Any], field: str) -> None:
    assert field in _problem(client, {**BASE, "requests_per_day": DAY, **changes})


@pytest.mark.parametrize(
    ("changes", "price"),
    [
        # An inline card with no price at all: optimizing needs its on-demand rate.
        (
            {
                "gpu": {"memory_gb": 80, "memory_bandwidth_tb_per_s": 3.35, "peak_tflops": {"bf16": 989}},
                "pricing": "optimize",
            },
            "prices.on_demand_usd_per_hour",
        ),
        # Asked for by name, a term or spot without its rate is refused, not guessed.
        ({"pricing": "optimize", "commitments": "1y", "gpu": INLINE_PRICED}, "prices.reserved_1y_usd_per_hour"),
        ({"pricing": "optimize", "spot": True}, "prices.spot_interruptions_per_hour"),
        (
            {
                "ownership": {"amortization_months": 36, "electricity_usd_per_kwh": 0.1, "hosting_usd_per_kw_month": 0},
                "gpu": "h100-pcie",
            },
            "prices.purchase_usd",
        ),
        (
            {"ownership": {"amortization_months": 36, "electricity_usd_per_kwh": 0.1, "hosting_usd_per_kw_month": 0}},
            "prices.idle_power_w",
        ),
    ],
)
def test_a_gpu_without_the_price_a_mode_needs_is_422_naming_the_price(
    client: FlaskClient, changes: dict[str, Any], price: str
) -> None:
    body = {**BASE, "requests_per_day": DAY, **changes}
    if isinstance(body["gpu"], dict):
        body.pop("tensor_parallel")
    errors = _problem(client, body)
    assert price in errors, errors
    assert "give " + price in errors[price][0]


def test_pools_refuse_what_they_do_not_offer_yet(client: FlaskClient) -> None:
    body = {**BASE, "requests_per_day": DAY, "topology": "disaggregated", "ttft_slo_ms": 1000, "tpot_slo_ms": 40}
    body.pop("per_replica_tokens_per_s")
    body["engine"] = "vllm"
    assert "pricing" in _problem(client, {**body, "pricing": "optimize"})

"""`python -m bench.autoscaling`: how fast a simulated day of autoscaling runs, against a /healthz.

One day of Llama 3.1 8B on an H100 (the seeds' figures, tests/sizing/specs.py) at 1,000/300
tokens, 500 ms TTFT and 20 ms TPOT, about a million requests whose busiest hour brings 3x its
quietest's, under the policy format=keda would emit (app/sizing/fleet_day.py), and the static
peak plan on the same day. Prints each day's violations and replica-hours, the simulated
requests per second of wall time (the issue's aim: at least 100,000) and a /healthz round trip
through the Flask test client, each as a ratio to the other: the ratio says how the day
compares to the cheapest answer on the same machine, whatever its load.

    python -m bench.autoscaling [--requests 1000000] [--seed 0]
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import tempfile
import time
from pathlib import Path

from app import create_app
from app.sizing import fleet_day, triggers
from app.sizing.fleet_plan import Arrivals, FleetInputs, plan_fleet
from app.sizing.plan import PlanInputs
from tests.sizing.specs import H100_SXM, LLAMA_31_8B

AIM_REQUESTS_PER_S = 100_000
HEALTHZ_ROUNDS = 200
TTFT_SLO_S, TPOT_SLO_S = 0.5, 0.02


def healthz_s() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"database_url": f"sqlite:///{Path(tmp) / 'fleet.sqlite3'}"})
        logging.disable(logging.INFO)
        client = app.test_client()
        times = []
        for _ in range(HEALTHZ_ROUNDS):
            start = time.perf_counter()
            assert client.get("/healthz").status_code == 200
            times.append(time.perf_counter() - start)
        app.extensions["fleet_sizer"]["engine"].dispose()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=float, default=1e6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    shape = [2 - math.cos(2 * math.pi * (h - 3) / 24) for h in range(24)]  # 1 at 03:00 to 3 at 15:00
    hourly = tuple(args.requests * x / math.fsum(shape) for x in shape)
    average = args.requests / 24
    inputs = FleetInputs(
        requests_per_s=average / 3600,
        peak_to_average=max(hourly) / average,
        ttft_slo_ms=TTFT_SLO_S * 1e3,
        tpot_slo_ms=TPOT_SLO_S * 1e3,
        arrivals=Arrivals(),
    )
    plan = plan_fleet(LLAMA_31_8B, H100_SXM, "h100-sxm", PlanInputs(prompt_tokens=1000, output_tokens=300), inputs)
    model = plan.queueing
    assert model is not None and plan.capacity.request_rate_per_s
    found = triggers.triggers("vllm", plan.capacity, model, TTFT_SLO_S, 95.0)
    policy = fleet_day.Policy(
        tuple((t.signal, t.threshold) for t in found), 180 + plan.cold_start_s, 600.0, 1, plan.size.max_replicas
    )
    day = fleet_day.DayTraffic(hourly, model.traffic)
    slos = fleet_day.Slos(TTFT_SLO_S, TPOT_SLO_S)
    first = math.ceil(hourly[0] / 3600 / plan.capacity.request_rate_per_s)
    held = plan.size.replicas_total
    print(
        f"Llama 3.1 8B on H100, 1,000/300 tokens, {plan.capacity.request_rate_per_s:.2f} requests/s a replica; "
        f"{args.requests:,.0f} requests over 24 h, busiest hour 3x the quietest"
    )
    total_requests = 0
    total_s = 0.0
    for name, chosen, initial in (
        ("autoscaled", policy, first),
        (f"static x{held}", fleet_day.static_policy(held), held),
    ):
        start = time.perf_counter()
        result = fleet_day.simulate_day(
            model.steps, model.limits, day, chosen, slos, initial_replicas=initial, seed=args.seed
        )
        seconds = time.perf_counter() - start
        total_requests += result.arrived
        total_s += seconds
        print(
            f"  {name:<12} {result.arrived:>9,} requests in {seconds:6.2f} s = "
            f"{result.arrived / seconds:9,.0f} simulated requests/s; violations {result.violation_rate:.2%}, "
            f"{result.replica_hours:.1f} replica-hours, "
            f"{result.scale_ups} scale-ups, {result.work:,} units of work"
        )
    rate = total_requests / total_s
    health = healthz_s()
    print(f"/healthz round trip (test client, median of {HEALTHZ_ROUNDS}): {health * 1e3:.3f} ms")
    print(
        f"simulated requests/s: {rate:,.0f} ({rate / AIM_REQUESTS_PER_S:.0%} of the aim of {AIM_REQUESTS_PER_S:,}); "
        f"one simulated request takes {1 / rate / health:.4f}x a /healthz round trip"
    )


if __name__ == "__main__":
    main()

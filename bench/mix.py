"""`python -m bench.mix`: how long a whole-catalog mixed fleet takes, against a /healthz.

Seeds a fresh SQLite catalog as `make serve` does, then plans Llama 3.1 8B over every
catalog GPU and MIG profile for WORKLOAD (three length buckets, TTFT 2,000 ms, TPOT 50 ms,
1M requests/day) and prints the median of ROUNDS runs of each part: the capacity matrix and
its pruning (app/sizing/mix.py build_problem), the integer program (app/planning/mix.py
solve), and a /healthz round trip through the Flask test client; then each as a ratio to
/healthz, and the whole mix against the issue's "well under a second".

    python -m bench.mix [--rounds 7]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from app import create_app
from app.api import lookup
from app.planning.mix import solve
from app.sizing.fleet_plan import Arrivals, FleetInputs
from app.sizing.mix import LengthBucket, build_problem
from app.sizing.plan import PlanInputs

T = TypeVar("T")
ROUNDS = 7
HEALTHZ_ROUNDS = 200
MODEL = "llama-3.1-8b"
BUCKETS = (LengthBucket(200, 200, 0.5), LengthBucket(2000, 400, 0.3), LengthBucket(8000, 200, 0.2))
WORKLOAD = FleetInputs(1_000_000 / 86_400, ttft_slo_ms=2000, tpot_slo_ms=50, arrivals=Arrivals())
BUDGET_S = 1.0


def _median(run: Callable[[], T], rounds: int) -> tuple[float, T]:
    """The median wall time of `rounds` runs, and the last run's result."""
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    assert result is not None
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"database_url": f"sqlite:///{Path(tmp) / 'fleet.sqlite3'}"})
        logging.disable(logging.INFO)  # the access log of every /healthz timed is not the benchmark's output
        runner = app.test_cli_runner()
        for command in (["migrate"], ["seed"]):
            result = runner.invoke(args=command)
            if result.exit_code != 0:
                raise SystemExit(result.output)
        with app.test_request_context():
            context = lookup.context()
            model, _ = context.model(MODEL)
            plan = PlanInputs(engine=context.engine("vllm"))
            gpus = context.gpu_list()
        client = app.test_client()
        healthz_s, response = _median(lambda: client.get("/healthz"), HEALTHZ_ROUNDS)
        assert response.status_code == 200
        app.extensions["fleet_sizer"]["engine"].dispose()

    build_problem(model, gpus, plan, WORKLOAD, BUCKETS)  # warm: imports, first-call caches
    matrix_s, problem = _median(lambda: build_problem(model, gpus, plan, WORKLOAD, BUCKETS), args.rounds)
    solve_s, answer = _median(lambda: solve(problem), args.rounds)
    total_s = matrix_s + solve_s

    print(
        f"whole-catalog mix: {MODEL}, {len(gpus)} GPUs, buckets "
        + ", ".join(f"{b.prompt_tokens}/{b.output_tokens} x {b.share}" for b in BUCKETS)
    )
    print(
        f"  {problem.considered} kinds looked at, {len(problem.kinds)} candidates after pruning, "
        f"{problem.evaluations} percentile evaluations"
    )
    for pool in answer.pools:
        served = ", ".join(f"bucket {p.bucket} x {p.share:.2f}" for p in pool.buckets)
        print(f"  {pool.kind.name}: {pool.size.replicas_total} replicas, {pool.size.gpus} GPUs ({served})")
    single = answer.single
    print(
        f"  mix {answer.monthly_cost_usd:,.2f} USD/month, status {answer.status}; best single kind "
        + ("none" if single is None else f"{single.kind.name} {single.monthly_cost_usd:,.2f} USD/month")
    )
    print(f"/healthz round trip (test client, median of {HEALTHZ_ROUNDS}): {healthz_s * 1e3:8.3f} ms")
    for name, seconds in (("capacity matrix", matrix_s), ("solver", solve_s), ("whole mix", total_s)):
        print(f"{name:<16} (median of {args.rounds}): {seconds * 1e3:8.1f} ms = {seconds / healthz_s:8.0f}x /healthz")
    print(f"whole mix is {total_s / BUDGET_S:.1%} of the issue's {BUDGET_S:.0f} s")


if __name__ == "__main__":
    main()

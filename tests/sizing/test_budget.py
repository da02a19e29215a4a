"""The request's work budget in the simulator: the clock checked as it runs, the work of an
answer's runs charged to one budget, and the prediction made before a run starts."""

from __future__ import annotations

import itertools

import pytest

from app.sizing import budget, timing
from app.sizing.budget import Budget, OutOfTime
from app.sizing.simulate import (
    Limits,
    Traffic,
    WorkLimitExceeded,
    burst,
    predicted_work,
    saturation_rate,
    seats_admitted_and_held,
    simulate,
)

from .specs import LLAMA_31_8B
from .test_burst import H100_ENGINE

# Llama 3.1 8B on one H100 under vLLM: its KV cache at 0.9 of memory, 8,192 tokens a step.
KV_TOKENS = 448_000
LIMITS = Limits(8192, 1024, KV_TOKENS)


def steps_for(prompt: int, output: int) -> timing.StepModel:
    return timing.StepModel.build(timing.Workload(LLAMA_31_8B, "bf16", "bf16", 1, prompt, output), H100_ENGINE)


def ticking(step_s: float) -> itertools.count[float]:
    """A clock that moves `step_s` each time it is read."""
    return itertools.count(0.0, step_s)


def test_a_budget_is_spent_when_its_clock_passes_its_time() -> None:
    times = iter([0.0, 4.0, 5.5])
    spent = Budget(time_s=5, clock=lambda: next(times))
    spent.check("the test")  # 4 s in
    with pytest.raises(OutOfTime) as stopped:
        spent.check("the test")
    assert stopped.value.limit_s == 5 and stopped.value.elapsed_s == 5.5
    assert "the test ran past the time budget of 5 s" in str(stopped.value)


def test_outside_a_request_nothing_is_bounded() -> None:
    # Unbounded whatever earlier work in this process counted against the default budget.
    assert budget.current().work_units == budget.UNBOUNDED_WORK and budget.current().time_s == float("inf")
    budget.check("anything")  # no budget running: never raises


def test_a_simulation_stops_at_its_time_budget_between_scheduler_passes() -> None:
    # 5,000 requests take some 10,000 scheduler passes; the clock is read every 1,024 of them
    # and moves a second each time, so the fifth check (5 s) passes a 4.5 s budget.
    clock = ticking(1.0)
    steps = steps_for(1000, 300)
    traffic = Traffic(5.0, 1000, 300)
    with budget.running(Budget(time_s=4.5, clock=lambda: next(clock))), pytest.raises(OutOfTime) as stopped:
        simulate(steps, traffic, LIMITS, requests=5000, saturation_rate_per_s=40.0)
    assert stopped.value.doing == "the simulation"
    free = simulate(steps, traffic, LIMITS, requests=5000, saturation_rate_per_s=40.0)
    assert free.events > 5 * 1024


def test_the_runs_of_an_answer_share_one_work_budget() -> None:
    steps = steps_for(1000, 300)
    traffic = Traffic(1.0, 1000, 300)
    first = burst(steps, traffic, LIMITS, requests=2000)
    second = burst(steps, traffic, LIMITS, requests=1000, seed=1)
    with budget.running(Budget(work_units=first.work + second.work)) as shared:
        assert burst(steps, traffic, LIMITS, requests=2000) == first
        assert shared.work_left() == second.work
        assert burst(steps, traffic, LIMITS, requests=1000, seed=1) == second
        assert shared.work_left() == 0
        # Nothing left: the next run is refused before it starts (each request is admitted once).
        with pytest.raises(WorkLimitExceeded) as refused:
            saturation_rate(steps, traffic, LIMITS, requests=1000)
        assert refused.value.max_work == 0


@pytest.mark.parametrize(
    ("requests", "prompt", "output", "kv_tokens"),
    [
        (200, 1000, 20_000, KV_TOKENS),  # 21 held at full length, 448 admitted: a storm
        (1000, 1000, 512, KV_TOKENS),
        (2000, 1000, 10_000, KV_TOKENS),
        (500, 1000, 2000, 100_000),
        (300, 20_000, 500, KV_TOKENS),  # prompts of three chunks each
    ],
)
def test_the_prediction_made_before_a_run_is_below_what_the_run_counts(requests, prompt, output, kv_tokens) -> None:
    # A refusal on the prediction is then a refusal the run would have earned anyway.
    limits = Limits(8192, 1024, kv_tokens)
    traffic = Traffic(1.0, prompt, output)
    ran = burst(steps_for(prompt, output), traffic, limits, requests=requests)
    predicted = predicted_work(traffic, limits, requests)
    # Each request admitted once, the prompts in chunks of the step's 8,192 tokens.
    assert predicted >= requests + requests * prompt // 8192
    assert predicted <= ran.work


def test_the_storm_is_predicted_where_the_engine_admits_more_than_the_cache_holds_whole() -> None:
    # 1,000-token prompts: 448 first chunks fit the cache; at 1,000 + 20,000 tokens each it holds 21.
    assert seats_admitted_and_held(Traffic(1.0, 1000, 20_000), LIMITS) == (448, 21)
    # The hostile answer length is cut to the cache: one request at a time at full length.
    assert seats_admitted_and_held(Traffic(1.0, 1000, 1_000_000), LIMITS) == (448, 1)
    calm = predicted_work(Traffic(1.0, 1000, 200), Limits(8192, 256, KV_TOKENS), 1000)
    assert calm == 1000 + -(-1000 * 1000 // 8192)  # 256 seats, 373 held: no storm


def test_a_solver_s_time_limit_is_its_own_or_what_the_request_has_left_at_least_a_tenth() -> None:
    # Outside a request: the solver's own limit.
    assert budget.solver_time_limit_s(2.0) == 2.0
    times = iter([0.0, 3.5, 4.95])
    token = budget.start(Budget(time_s=5, clock=lambda: next(times)))
    try:
        assert budget.solver_time_limit_s(2.0) == pytest.approx(1.5)  # 3.5 s in: 1.5 s left
        assert budget.solver_time_limit_s(2.0) == 0.1  # 4.95 s in: 0.05 left, a tenth at least
    finally:
        budget.stop(token)

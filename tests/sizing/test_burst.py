"""An offline batch in the simulator (`simulate.burst`): every request queued at t = 0 and run
to the last completion. Against the lab's prefill and decode steps (timing.prefill,
timing.decode_step, timing.forward_step: the step-time model by another path) where the
schedule can be written out; as properties where it cannot: more requests never finish
sooner, decode tokens never come faster than a full batch decodes them, spread answers drain
at a small batch, and the work limit stops a run without changing one it lets through."""

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.sizing import timing
from app.sizing.simulate import MAX_REQUESTS, Limits, Traffic, WorkLimitExceeded, burst

from .specs import LLAMA_31_8B, QWEN3_30B_A3B

# An H100 under an engine: a fixed cost per forward step, and per request before its first
# step (the API server); burst adds the latter once to every figure measured from t = 0.
H100_ENGINE = timing.Hardware(
    3.35e12,
    989e12,
    step_overhead_s=0.003,
    moe_memory_efficiency=0.5,
    tpot_excludes_own_prefill=True,
    request_overhead_s=0.02,
)
H100 = timing.Hardware(3.35e12, 989e12)
# For the properties: expert weights at the dense bandwidth (the engine case streams them at
# half of it; both are constant shares, so a step's time never falls as its tokens grow).
H100_ENGINE_FLAT_MOE = replace(H100_ENGINE, moe_memory_efficiency=1.0)
ROOMY_KV = 10_000_000
WINDOWED = replace(LLAMA_31_8B, name="windowed 8B", sliding_window=512, sliding_window_layers=16)
MODELS = {"dense": LLAMA_31_8B, "moe": QWEN3_30B_A3B, "windowed": WINDOWED}
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def workload(prompt: int, output: int, model=LLAMA_31_8B) -> timing.Workload:
    return timing.Workload(model, "bf16", "bf16", 1, prompt, output)


def run(work: timing.Workload, hw: timing.Hardware, limits: Limits, requests: int, **traffic: float):
    steps = timing.StepModel.build(work, hw)
    return burst(steps, Traffic(1.0, work.prompt_tokens, work.output_tokens, **traffic), limits, requests=requests)


@pytest.mark.parametrize("model", [LLAMA_31_8B, QWEN3_30B_A3B], ids=["dense", "moe"])
def test_a_batch_that_fits_one_step_is_one_prefill_then_its_decode_steps(model):
    # 24 prompts of 300 tokens fit one step's budget (7,200 of 8,192 tokens) and 24 seats:
    # the first step prefills them all (the lab's prefill of a batch of 24 in one pass) and
    # yields every first token; then 199 decode steps of batch 24, the j-th at a context of
    # 300 + j tokens each. Nothing waits, so every request ends with the last step.
    n, prompt, output = 24, 300, 200
    work = workload(prompt, output, model)
    result = run(work, H100_ENGINE, Limits(8192, 256, ROOMY_KV), n)
    prefill_s = timing.prefill(work, H100_ENGINE, n).time_s
    decode_s = sum(timing.decode_step(work, H100_ENGINE, n, prompt + j).time_s for j in range(output - 1))
    overhead_s = H100_ENGINE.request_overhead_s
    assert result.makespan_s == pytest.approx(prefill_s + decode_s + overhead_s, rel=1e-9)
    assert result.ttft_s.p50 == result.ttft_s.p99 == pytest.approx(prefill_s + overhead_s, rel=1e-9)
    assert result.e2e_s.mean == pytest.approx(result.makespan_s, rel=1e-12)
    assert result.output_tokens == n * output and result.prompt_tokens == n * prompt
    assert result.output_tokens_per_s == pytest.approx(n * output / result.makespan_s, rel=1e-12)
    assert result.preemptions == 0 and result.cut_requests == 0


def test_a_prompt_longer_than_the_budget_is_prefilled_in_budget_sized_chunks():
    # One 7,000-token prompt under a 2,048-token budget: chunks of 2,048, 2,048, 2,048 and
    # 856 tokens, each attending to the prompt so far (prefill_flops to its end less that to
    # its start), then 99 decode steps of one sequence at contexts 7,000 .. 7,098.
    prompt, output, budget = 7000, 100, 2048
    work = workload(prompt, output)
    result = run(work, H100_ENGINE, Limits(budget, 256, ROOMY_KV), 1)
    chunks_s = 0.0
    for start in range(0, prompt, budget):
        chunk = min(budget, prompt - start)
        params = work.prefill_params
        flops = timing.prefill_flops(work.model, 1, start + chunk, params) - timing.prefill_flops(
            work.model, 1, start, params
        )
        chunks_s += timing.forward_step(work, H100_ENGINE, 0, 0.0, chunk, flops).time_s
    decode_s = sum(timing.decode_step(work, H100_ENGINE, 1, prompt + j).time_s for j in range(output - 1))
    assert result.steps == 4 + 99
    assert result.makespan_s == pytest.approx(chunks_s + decode_s + H100_ENGINE.request_overhead_s, rel=1e-9)


def test_requests_beyond_the_seats_wait_for_one():
    # max_num_seqs 8, 16 requests of 100 + 50 tokens: the first 8 run as one wave, the next
    # 8 take their seats when it ends; the second wave's TTFT holds the whole first wave.
    work = workload(100, 50)
    one_wave = run(work, H100, Limits(8192, 8, ROOMY_KV), 8)
    two_waves = run(work, H100, Limits(8192, 8, ROOMY_KV), 16)
    assert two_waves.makespan_s == pytest.approx(2 * one_wave.makespan_s, rel=1e-9)
    # Half the TTFTs are the first wave's prefill, half the first wave and then their own.
    first_ttft = one_wave.ttft_s.mean
    assert two_waves.ttft_s.mean == pytest.approx(first_ttft + one_wave.makespan_s / 2, rel=1e-9)
    assert two_waves.e2e_s.mean == pytest.approx(1.5 * one_wave.makespan_s, rel=1e-9)


lengths = st.tuples(st.integers(1, 4000), st.integers(1, 400))
shapes = st.fixed_dictionaries(
    {
        "model": st.sampled_from(sorted(MODELS)),
        "budget": st.sampled_from([128, 512, 2048, 8192, 16384]),
        "seats": st.integers(1, 512),
        # KV for this many whole sequences at the lengths (and part of one more).
        "kv_sequences": st.floats(1.0, 400.0),
        "engine": st.booleans(),
    }
)


def _setup(shape, prompt, output):
    work = workload(prompt, output, MODELS[shape["model"]])
    hw = H100_ENGINE_FLAT_MOE if shape["engine"] else H100
    kv = max(2, int(shape["kv_sequences"] * (prompt + output)))
    return work, hw, Limits(shape["budget"], shape["seats"], kv)


@PROPERTY
@given(shape=shapes, lengths=lengths, requests=st.integers(1, 100), more=st.integers(1, 50))
def test_more_requests_never_finish_sooner(shape, lengths, requests, more):
    # Fixed lengths: a request added at the back of the queue only takes budget, seats and
    # KV from the others (and is the first preempted, being the newest).
    work, hw, limits = _setup(shape, *lengths)
    fewer = run(work, hw, limits, requests)
    more_requests = run(work, hw, limits, requests + more)
    assert more_requests.makespan_s >= fewer.makespan_s * (1 - 1e-12)


@PROPERTY
@given(shape=shapes, lengths=st.tuples(st.integers(1, 4000), st.integers(2, 400)), requests=st.integers(1, 150))
def test_decode_tokens_come_no_faster_than_a_full_batch_decodes_them(shape, lengths, requests):
    # Every output token but each request's first (its prefill's last step yields that one)
    # comes from a decode step carrying at most c = min(requests, max_num_seqs, budget) of
    # them, each step no faster than its decodes alone. A step's time is the larger of two
    # sums linear in its decodes and their contexts (plus terms per step and per token), so
    # over the run the steps take at least n (O - 1) / c decode steps of batch c at the mean
    # decode context P + (O - 2) / 2 (contexts run P .. P + O - 2). With the KV cache holding
    # c whole sequences nothing is preempted. Sliding-window layers cap the context they
    # read (not linear): left out.
    shape = {**shape, "model": "dense" if shape["model"] == "windowed" else shape["model"]}
    prompt, output = lengths
    c = min(requests, shape["seats"], shape["budget"])
    work, hw, limits = _setup(shape, prompt, output)
    limits = replace(limits, kv_capacity_tokens=c * (prompt + output))
    result = run(work, hw, limits, requests)
    assert result.preemptions == 0
    decode_tokens_per_s = (result.output_tokens - requests) / result.makespan_s
    full_batch = c / timing.decode_step(work, hw, c, prompt + (output - 2) / 2).time_s
    assert decode_tokens_per_s <= full_batch * (1 + 1e-9)


@PROPERTY
@given(
    seed=st.integers(0, 2**31 - 1),
    requests=st.integers(64, 256),
    lengths=st.tuples(st.integers(1, 64), st.integers(64, 800)),
    model=st.sampled_from(["dense", "moe"]),
)
def test_spread_answers_drain_at_a_small_batch(seed, requests, lengths, model):
    # One wave, every prompt prefilled in the first step (at most 256 x 64 tokens of a
    # 16,384-token budget): at fixed lengths all decode as one batch to the end; with
    # exponential output lengths (cv 1) the batch empties as answers end, and the longest
    # (some 4-6 x the mean among 64-256) finish alone at a small batch, each step costing
    # nearly what a full one does. (Where prompts dominate the work, the drain is a small
    # share of the makespan and the two come close.)
    prompt, output = lengths
    work = workload(prompt, output, MODELS[model])
    limits = Limits(16384, 256, ROOMY_KV)
    steps = timing.StepModel.build(work, H100_ENGINE)
    fixed = burst(steps, Traffic(1.0, prompt, output), limits, requests=requests, seed=seed)
    spread = burst(steps, Traffic(1.0, prompt, output, output_tokens_cv=1.0), limits, requests=requests, seed=seed)
    assert spread.output_tokens_per_s < 0.7 * fixed.output_tokens_per_s
    assert spread.e2e_s.p99 > fixed.e2e_s.p99


def test_spread_answers_lower_a_few_waves_throughput_too():
    # 2,000-token prompts, 400-token answers, 256 seats, 1,024 requests (four waves): the
    # drain at the end still costs some 15% of a fixed-length batch's throughput. (Over
    # many waves it fades: fixed lengths run in lockstep waves whose prompts are prefilled
    # with nothing decoding, while spread ones keep the batch full, and can come out ahead.)
    work = workload(2000, 400)
    limits = Limits(8192, 256, ROOMY_KV)
    fixed = run(work, H100_ENGINE, limits, 1024)
    spread = run(work, H100_ENGINE, limits, 1024, output_tokens_cv=1.0)
    assert spread.output_tokens_per_s < 0.9 * fixed.output_tokens_per_s


@PROPERTY
@given(
    shape=shapes,
    lengths=lengths,
    requests=st.integers(1, 150),
    cv=st.sampled_from([0.0, 0.5, 2.0]),
    seed=st.integers(0, 1000),
)
def test_the_work_floor_never_exceeds_the_work_and_the_limit_changes_nothing_it_lets_through(
    shape, lengths, requests, cv, seed
):
    work, hw, limits = _setup(shape, *lengths)
    steps = timing.StepModel.build(work, hw)
    traffic = Traffic(1.0, *lengths, prompt_tokens_cv=cv, output_tokens_cv=cv)
    free = burst(steps, traffic, limits, requests=requests, seed=seed)
    assert burst(steps, traffic, limits, requests=requests, seed=seed, max_work=free.work) == free
    with pytest.raises(WorkLimitExceeded) as stopped:
        burst(steps, traffic, limits, requests=requests, seed=seed, max_work=free.work - 1)
    # Refused before the run (floor given) or stopped in it; either way over the limit.
    floor = stopped.value.floor
    assert floor is None or requests <= floor <= free.work


def test_a_batch_whose_lengths_alone_are_over_the_limit_is_refused_before_it_runs():
    # 50,000 prompts of 4,000 tokens under a 2,048-token budget: at least 2e8 / 2,048 =
    # 97,657 prefill steps and 50,000 admissions, 147,657 units, whatever the schedule.
    work = workload(4000, 10)
    steps = timing.StepModel.build(work, H100)
    with pytest.raises(WorkLimitExceeded) as refused:
        burst(steps, Traffic(1.0, 4000, 10), Limits(2048, 256, ROOMY_KV), requests=MAX_REQUESTS, max_work=100_000)
    assert refused.value.floor == 50_000 + 97_657
    assert refused.value.simulated_s == 0.0


def test_a_thrashing_kv_cache_is_stopped_at_the_limit():
    # 256 seats and a KV cache of 20,000 tokens for answers of 2,000: running requests
    # outgrow the cache again and again; each preemption recomputes. The limit stops it.
    work = workload(1000, 2000)
    steps = timing.StepModel.build(work, H100)
    traffic = Traffic(1.0, 1000, 2000, 0.0, 1.0)
    with pytest.raises(WorkLimitExceeded) as stopped:
        burst(steps, traffic, Limits(2048, 256, 20_000), requests=5000, max_work=50_000)
    assert stopped.value.floor is None and stopped.value.preemptions > 5000
    assert stopped.value.simulated_s > 0


def test_lengths_longer_than_the_kv_cache_are_cut_and_counted():
    # Exponential answers (cv 1) of mean 2,000 after 1,000-token prompts, in a 6,000-token
    # cache: P(O > 5,000) = e^-2.5, some 8% of 1,000 requests are cut to fit (one seat: one
    # request at a time, so none is preempted).
    work = workload(1000, 2000)
    result = run(work, H100, Limits(8192, 1, 6000), 1000, output_tokens_cv=1.0)
    assert result.preemptions == 0
    assert 40 < result.cut_requests < 130
    assert result.output_tokens <= 1000 * 2000 * 1.2

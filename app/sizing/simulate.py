"""Precise mode: a discrete-event simulation of one replica under random arrivals.

A vLLM-v1-like scheduler over sampled arrivals and lengths, timed by the step-time model
every other figure uses (`timing.StepModel`):

- each step has a token budget (`max_batched_tokens`); running decodes take one token each
  first, then chunks of prefills in arrival order (requests part-way through their prompt
  first, then waiting ones), as far as the budget and the free KV allow;
- a waiting request is admitted while fewer than `max_num_seqs` run and the KV cache holds
  its first chunk (first come, first served: the queue stops at the first that does not fit);
- when the decodes need more KV than is free, the newest running request is preempted: its
  KV freed, it returns to the head of the queue and later recomputes its prompt and the
  tokens it had generated (vLLM's recompute), keeping its first-token time;
- the step that computes a prompt's last chunk yields its first token; each decode step one
  more. KV is counted in tokens (block rounding left out: at most a block per request).

Stretches of decode-only steps (nothing to prefill, or the queue blocked by `max_num_seqs`
or KV) are walked in one go: the decodes' contexts grow by one token per step, so step times
form an arithmetic series (two, where memory and compute trade places); the stretch ends at
the next event: an arrival, a completion, or the KV limit.

Entry points
------------
`simulate(steps, traffic, limits, seed=0, requests=5000, ...) -> SimulationResult`
    one replica at `traffic.rate_per_s`; deterministic for a seed (`random.Random`, one
    stream each for arrivals, prompt and output lengths, so common random numbers across
    rates). The first `warmup_fraction` (10%) of requests by arrival are simulated but not
    measured; arrivals go on after the last measured one until every measured request
    finished (so the last ones see a loaded replica); utilization, in-flight, ITL and
    throughput are measured from the first to the last measured arrival.
    `utilization` is rate / λ_sat (`saturation_rate_per_s` if given, else computed on
    min(requests, 2000) requests: pass it when sweeping rates); `stable` is utilization < 1
    and at least 95% as many completions as arrivals in the window. Past capacity the
    figures are those of the finite run (the API should report them null). Requests at most
    MAX_REQUESTS (50,000); a request longer than the KV cache is cut to fit it. About 60 ms
    for 5,000 requests, 0.7 s for 50,000 here (bench/latency.py).
`burst(steps, traffic, limits, seed=0, requests=1000, max_work=...) -> BurstResult`
    an offline batch: `requests` requests all queued at t = 0 (a benchmark's infinite
    request rate), run to the last completion; the makespan, output tokens/s over it, and
    TTFT and E2E from t = 0. The arrival rate of `traffic` is not used. Its cost is not
    the request count alone (a KV cache that thrashes preempts without end; a sliding-window
    model walks every decode step), so it counts its work (scheduler passes, prefill chunks,
    preemptions, steps walked one by one: 2 to 6 µs each here) and raises
    WorkLimitExceeded past `max_work`: before it starts when a lower bound on the work
    (from the sampled lengths) is already over it, else as soon as the count passes it.
`saturation_rate(steps, traffic, limits, seed=0, requests=2000) -> float`
    λ_sat, requests/s: the throughput with every request queued at once (completions
    between the 20% and 80% marks over the time between them).

`steps` is `timing.StepModel.build(work, hw)`; `Traffic` says what arrives, `Limits` what the
engine holds (`kv_capacity_tokens` from the fit, `max_num_seqs` and `max_batched_tokens` from
the engine defaults). Times are seconds; `request_overhead_s` of the hardware is added to
TTFT and E2E (API server work before the first step).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import budget as request_budget
from .budget import UNBOUNDED_WORK
from .timing import StepModel
from .vocabulary import LengthDistribution

DEFAULT_REQUESTS = 5_000
DEFAULT_BURST_REQUESTS = 1_000
MAX_REQUESTS = 50_000
# The saturation rate's burst, when simulate() computes it: at most this many requests.
SATURATION_REQUESTS = 2_000
DEFAULT_WARMUP_FRACTION = 0.1
CI_BATCHES = 20
# Student t, 97.5% quantile at CI_BATCHES - 1 = 19 degrees of freedom.
T_975_19 = 2.093
PERCENTILES = (50.0, 90.0, 95.0, 99.0)
# ITL histogram: log-spaced bins 0.2% wide.
_ITL_BIN_RATIO = 1.002
_ITL_LOG_BIN = math.log(_ITL_BIN_RATIO)
# The time budget is checked every this many scheduler passes (a few milliseconds of them),
# and every this many steps a sliding-window stretch walks one by one.
_CHECK_EVERY_PASSES = 1 << 10
_CHECK_EVERY_STEPS = 1 << 16


class WorkLimitExceeded(ValueError):
    """A run over its work limit (`max_work` units: scheduler passes, prefill chunks,
    preemptions, the decode steps of a sliding-window model, walked one by one, and the ITL
    histogram bins of a rate-driven run's walked stretches): refused
    before it started when `floor` (a lower bound on its work) is over it, else stopped
    `simulated_s` into the simulated time after `preemptions`."""

    def __init__(self, max_work: int, simulated_s: float, preemptions: int, floor: int | None = None) -> None:
        super().__init__(f"the simulation takes more than {max_work} units of work")
        self.max_work = max_work
        self.simulated_s = simulated_s
        self.preemptions = preemptions
        self.floor = floor


@dataclass(frozen=True)
class Traffic:
    """What arrives at one replica: `rate_per_s` requests/s, gamma inter-arrival times of
    shape `burstiness` (1: Poisson; < 1 burstier; squared CV 1/burstiness), prompt and
    output lengths of the given means and coefficients of variation (gamma or lognormal,
    integers >= 1)."""

    rate_per_s: float
    prompt_tokens: float
    output_tokens: float
    prompt_tokens_cv: float = 0.0
    output_tokens_cv: float = 0.0
    burstiness: float = 1.0
    length_distribution: LengthDistribution = LengthDistribution.GAMMA
    # Prefix caching: the share of each prompt found in the cache, and a prefix every prompt
    # shares, held once in the KV cache (whole blocks, as the fit holds it).
    prefix_cache_hit_rate: float = 0.0
    shared_prefix_tokens: int = 0
    # (prompt, output) pairs drawn with replacement instead of the gamma lengths (a request
    # log's empirical distribution); empty: the gamma (or lognormal) of the means and cvs.
    length_samples: tuple[tuple[int, int], ...] = ()

    def cached_tokens(self, prompt: int) -> int:
        """Tokens of a `prompt`-token prompt found in the cache (never its last token)."""
        if not self.prefix_cache_hit_rate and not self.shared_prefix_tokens:
            return 0
        return max(0, min(prompt - 1, max(int(self.prefix_cache_hit_rate * prompt), self.shared_prefix_tokens)))

    @property
    def arrival_scv(self) -> float:
        """Squared coefficient of variation of the inter-arrival times."""
        return 1.0 / self.burstiness


@dataclass(frozen=True)
class Limits:
    """What one replica's engine holds: the step token budget, the running-batch cap, and
    the KV cache in tokens."""

    max_batched_tokens: int
    max_num_seqs: int
    kv_capacity_tokens: int


@dataclass(frozen=True)
class Percentiles:
    mean: float
    p50: float
    p90: float
    p95: float
    p99: float

    def at(self, percentile: float) -> float:
        return {50.0: self.p50, 90.0: self.p90, 95.0: self.p95, 99.0: self.p99}[float(percentile)]


@dataclass(frozen=True)
class SimulationResult:
    """Per-request figures over the measured requests, in seconds: queue wait (arrival to
    the first scheduled chunk), TTFT (to the first token), TPOT (mean gap after the first
    token), E2E; ITL over the window's decode tokens (each one's gap is its step's
    duration). `*_ci` are the 95% half-widths from batch means (20 batches in arrival order)
    of the same statistics."""

    rate_per_s: float
    saturation_rate_per_s: float
    utilization: float  # rate / saturation rate
    stable: bool
    in_flight_mean: float  # time-average of requests arrived and not finished
    running_mean: float  # time-average of requests decoding
    queue_wait_s: Percentiles
    ttft_s: Percentiles
    tpot_s: Percentiles
    itl_s: Percentiles
    e2e_s: Percentiles
    queue_wait_ci: Percentiles
    ttft_ci: Percentiles
    tpot_ci: Percentiles
    e2e_ci: Percentiles
    output_tokens_per_s: float
    busy_fraction: float  # share of the window the engine spent stepping
    measured_requests: int
    simulated_requests: int
    preemptions: int
    steps: int  # engine steps simulated (a walked stretch counts each of its steps)
    events: int  # scheduler passes (a walked stretch counts once)
    window_s: float
    measured_arrival_rate_per_s: float
    mixed_step_share: float  # of the window's steps, those carrying prefill


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    n = len(sorted_values)
    if n == 0:
        return math.nan
    pos = (n - 1) * q
    low = int(pos)
    high = min(low + 1, n - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def summarize(values: Sequence[float]) -> Percentiles:
    ordered = sorted(values)
    mean = math.fsum(ordered) / len(ordered) if ordered else math.nan
    p50, p90, p95, p99 = (quantile(ordered, p / 100) for p in PERCENTILES)
    return Percentiles(mean, p50, p90, p95, p99)


def batch_means_ci(values: Sequence[float], batches: int = CI_BATCHES) -> Percentiles:
    """95% half-widths of the mean and each percentile from batch means: the statistic in
    each of `batches` consecutive batches, t x sd / sqrt(batches)."""
    size = len(values) // batches
    if size < 2:
        return Percentiles(math.nan, math.nan, math.nan, math.nan, math.nan)
    per = [summarize(values[b * size : (b + 1) * size]) for b in range(batches)]

    def half(get: str) -> float:
        xs = [getattr(s, get) for s in per]
        mean = math.fsum(xs) / batches
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (batches - 1))
        return T_975_19 * sd / math.sqrt(batches)

    return Percentiles(half("mean"), half("p50"), half("p90"), half("p95"), half("p99"))


def pair_sampler(samples: Sequence[tuple[int, int]], rng: random.Random) -> tuple[Callable[[], int], Callable[[], int]]:
    """A request's prompt and output drawn together from `samples` (with replacement): the
    prompt call draws the pair, the output call that follows returns its output."""
    drawn = [samples[0]]

    def prompt() -> int:
        drawn[0] = samples[rng.randrange(len(samples))]
        return max(1, drawn[0][0])

    return prompt, lambda: max(1, drawn[0][1])


# Below this coefficient of variation a length is fixed: it moves no length of under a million
# tokens by a token, and 1 / cv² (the gamma's shape) would overflow long before cv reaches 0.
FIXED_LENGTH_CV = 1e-6


def length_sampler(mean: float, cv: float, distribution: str, rng: random.Random) -> Callable[[], int]:
    """Integer lengths >= 1 of the given mean and coefficient of variation: gamma (shape
    1 / cv²) or lognormal, rounded; constant below FIXED_LENGTH_CV."""
    if mean < 1:
        raise ValueError("mean length must be at least 1 token")
    if cv < 0:
        raise ValueError("cv must be >= 0")
    if cv < FIXED_LENGTH_CV:
        fixed = max(1, round(mean))
        return lambda: fixed
    if distribution == LengthDistribution.LOGNORMAL:
        sigma2 = math.log1p(cv * cv)
        mu, sigma = math.log(mean) - sigma2 / 2, math.sqrt(sigma2)
        return lambda: max(1, round(rng.lognormvariate(mu, sigma)))
    if distribution != LengthDistribution.GAMMA:
        raise ValueError(f"unknown length distribution {distribution!r}")
    shape = 1.0 / (cv * cv)
    scale = mean / shape
    return lambda: max(1, round(rng.gammavariate(shape, scale)))


def _streams(seed: int) -> tuple[random.Random, random.Random, random.Random]:
    root = random.Random(seed)
    return random.Random(root.getrandbits(64)), random.Random(root.getrandbits(64)), random.Random(root.getrandbits(64))


_WAITING, _PREFILLING, _DECODING, _DONE = 0, 1, 2, 3


class _Engine:
    """One run of the scheduler. Requests 0..requests-1 arrive by the traffic's process (all
    at t = 0 when `at_once`), then up to `extra_arrivals` more until the first `requests`
    finished. ITL, busy time and tokens are measured over steps starting between the
    arrivals of `measured_from` and of `requests - 1`."""

    def __init__(
        self,
        steps: StepModel,
        traffic: Traffic,
        limits: Limits,
        seed: int,
        requests: int,
        measured_from: int,
        at_once: bool,
        walk_stretches: bool,
        extra_arrivals: int,
        max_work: int = UNBOUNDED_WORK,
    ) -> None:
        if limits.kv_capacity_tokens < 2:
            raise ValueError("the KV cache must hold at least two tokens")
        if limits.max_batched_tokens < 1 or limits.max_num_seqs < 1:
            raise ValueError("max_batched_tokens and max_num_seqs must be positive")
        if traffic.rate_per_s <= 0 or traffic.burstiness <= 0:
            raise ValueError("rate and burstiness must be positive")
        self.steps = steps
        self.traffic = traffic
        # The shared prefix is held once: what is left is the sequences' own.
        self.shared = min(traffic.shared_prefix_tokens, limits.kv_capacity_tokens - 2)
        self.kv_cap = limits.kv_capacity_tokens - self.shared
        self.budget = limits.max_batched_tokens
        self.max_seqs = min(limits.max_num_seqs, steps.max_decodes(limits.max_batched_tokens))
        self.requests = requests
        self.measured_from = measured_from
        self.at_once = at_once
        self.walk_stretches = walk_stretches
        self.total_arrivals = requests + extra_arrivals
        gap_rng, prompt_rng, output_rng = _streams(seed)
        self.gap_rng = gap_rng
        self.sample_prompt = length_sampler(
            traffic.prompt_tokens, traffic.prompt_tokens_cv, traffic.length_distribution, prompt_rng
        )
        self.sample_output = length_sampler(
            traffic.output_tokens, traffic.output_tokens_cv, traffic.length_distribution, output_rng
        )
        if traffic.length_samples:
            self.sample_prompt, self.sample_output = pair_sampler(traffic.length_samples, prompt_rng)
        self.arrival: list[float] = []
        self.prompt: list[int] = []
        self.output: list[int] = []
        self.scheduled: list[float] = []
        self.first_token: list[float] = []
        self.finished: list[float] = []
        self.state: list[int] = []
        self.target: list[int] = []  # tokens to prefill: the prompt; after preemption + generated
        self.computed: list[int] = []  # of target, in the cache
        self.cached: list[int] = []  # of the prompt, found in the prefix cache on admission
        self.held: list[int] = []  # of those, the shared prefix's: KV this request does not hold
        self.generated: list[int] = []  # tokens generated (decoding: as of decode start)
        self.g_start: list[int] = []  # decode counter at decode start
        self.ctx_start: list[int] = []  # tokens in the cache at decode start
        self.epoch: list[int] = []
        self.waiting: deque[int] = deque()
        self.running: dict[int, None] = {}  # admission order: the last is the newest
        self.prefilling: list[int] = []
        self.heap: list[tuple[int, int, int]] = []  # (decode counter at finish, id, epoch)
        self.decodes = 0
        self.decode_ctx = 0  # sum of the decoding requests' contexts
        self.kv_used = 0
        self.g = 0  # decode steps so far
        self.now = 0.0
        self.n_arrived = 0
        self.next_arrival = 0.0 if at_once else self._gap()
        self.unfinished = requests
        self.preemptions = 0
        self.cut_requests = 0  # requests whose sampled lengths were cut to fit the KV cache
        self.n_steps = 0
        self.events = 0
        self.max_work = max_work
        # Scheduler passes, prefill chunks, preemptions, decode steps walked one by one, and
        # the ITL histogram bins a walked stretch spreads its tokens over (a rate-driven run).
        self.work = 0
        self.window_lo = math.inf
        self.window_hi = math.inf
        self.busy = 0.0
        self.itl_bins: dict[int, float] = {}
        self.itl_sum = 0.0  # sum over decode tokens in the window of their step's duration
        self.itl_tokens = 0.0
        self.first_tokens_in_window = 0
        self.window_steps = 0
        self.window_mixed_steps = 0
        self.window_mixed_s = 0.0
        self.until = math.inf
        # A decode-only stretch's step terms that depend on the decodes alone, per count
        # (_series_terms): a replica walks many stretches at few distinct batch sizes.
        self.series_terms: dict[int, tuple[float, float, float, float, float]] = {}
        # Windowed attention and speculation's drafter break the series: walked step by step.
        self.step_by_step = steps.windowed or steps.speculative

    def queue_all(self) -> None:
        """Every request arrives now (an offline batch: `at_once`, no extra arrivals)."""
        while self.n_arrived < self.total_arrivals:
            self._arrive()

    def work_floor(self) -> int:
        """A lower bound on the work of running the requests arrived so far to completion:
        each is admitted at least once; a step carries at most the token budget of prompt
        and at most `max_num_seqs` decode tokens (the first token of each comes with its
        prompt's last chunk), and on a sliding-window model every step is walked one by
        one, so it takes at least as many units as steps."""
        passes = -(-sum(self.prompt) // self.budget)
        if self.steps.windowed:
            passes = max(passes, -(-sum(o - 1 for o in self.output) // self.max_seqs))
        return self.n_arrived + passes

    def _gap(self) -> float:
        k = self.traffic.burstiness
        if k == 1.0:
            return self.gap_rng.expovariate(self.traffic.rate_per_s)
        return self.gap_rng.gammavariate(k, 1.0 / (k * self.traffic.rate_per_s))

    def _lengths(self) -> tuple[int, int]:
        """A request's sampled prompt and output. One longer than the whole cache could never
        finish (the engine would refuse it): it is cut to fit, and counted."""
        sampled_prompt, sampled_output = self.sample_prompt(), self.sample_output()
        p = min(sampled_prompt, self.kv_cap - 1)
        o = min(sampled_output, self.kv_cap - p)
        if p < sampled_prompt or o < sampled_output:
            self.cut_requests += 1
        return p, o

    def _new_request(self, t: float, p: int, o: int) -> int:
        """A new request's row, waiting, none of it computed but what the prefix cache holds."""
        rid = len(self.arrival)
        self.arrival.append(t)
        self.prompt.append(p)
        self.output.append(o)
        self.scheduled.append(math.inf)
        self.first_token.append(math.inf)
        self.finished.append(math.inf)
        self.state.append(_WAITING)
        self.target.append(p)
        cached = self.traffic.cached_tokens(p)
        self.computed.append(cached)
        self.cached.append(cached)
        self.held.append(min(self.shared, cached))
        self.generated.append(0)
        self.g_start.append(0)
        self.ctx_start.append(0)
        self.epoch.append(0)
        return rid

    def _arrive(self) -> None:
        t = self.next_arrival
        self.n_arrived += 1
        if not self.at_once:
            self.next_arrival = t + self._gap()
        p, o = self._lengths()
        rid = self._new_request(t, p, o)
        self.waiting.append(rid)
        if rid == self.measured_from:
            self.window_lo = t
        if rid == self.requests - 1:
            self.window_hi = t

    def _preempt_newest(self) -> None:
        rid = next(reversed(self.running))
        del self.running[rid]
        if self.state[rid] == _DECODING:
            done = self.g - self.g_start[rid]
            ctx = self.ctx_start[rid] + done
            self.generated[rid] += done
            self.decodes -= 1
            self.decode_ctx -= ctx
            self.kv_used -= ctx - self.held[rid]
            self.epoch[rid] += 1
            self.target[rid] = self.prompt[rid] + self.generated[rid]
        else:
            self.kv_used -= self.computed[rid] - self.held[rid]
            self.prefilling.remove(rid)
        # Its cached prefix stays in the cache (freed, not evicted): found again on readmission.
        self.computed[rid] = self.cached[rid]
        self.state[rid] = _WAITING
        self.waiting.appendleft(rid)
        self.preemptions += 1
        self.work += 1

    def _prefill_done(self, rid: int, step_start: float) -> None:
        """The step that computed the last chunk yields a token (the first, or after a
        recompute the next)."""
        now = self.now
        if self.first_token[rid] == math.inf:
            self.first_token[rid] = now
            if self.window_lo <= step_start < self.window_hi:
                self.first_tokens_in_window += 1
        self.generated[rid] += 1
        if self.generated[rid] >= self.output[rid]:
            self._finish(rid, self.computed[rid])
            return
        self.state[rid] = _DECODING
        self.g_start[rid] = self.g
        ctx = self.computed[rid]
        self.ctx_start[rid] = ctx
        self.decodes += 1
        self.decode_ctx += ctx
        heapq.heappush(self.heap, (self.g + self.output[rid] - self.generated[rid], rid, self.epoch[rid]))

    def _finish(self, rid: int, kv_tokens: int) -> None:
        self.finished[rid] = self.now
        self.state[rid] = _DONE
        del self.running[rid]
        self.kv_used -= kv_tokens - self.held[rid]
        if rid < self.requests:
            self.unfinished -= 1

    def _complete(self) -> None:
        heap = self.heap
        while heap and heap[0][0] <= self.g:
            _, rid, ep = heapq.heappop(heap)
            if ep != self.epoch[rid]:
                continue
            ctx = self.ctx_start[rid] + self.g - self.g_start[rid]
            self.decodes -= 1
            self.decode_ctx -= ctx
            self._finish(rid, ctx)

    def _itl_add(self, duration: float, tokens: float) -> None:
        b = int(math.log(duration) / _ITL_LOG_BIN)
        self.itl_bins[b] = self.itl_bins.get(b, 0.0) + tokens

    def _itl_add_range(self, first: float, last: float, tokens: float) -> None:
        """`tokens` decode tokens over steps whose durations run evenly from first to last."""
        lo = int(math.log(min(first, last)) / _ITL_LOG_BIN)
        hi = int(math.log(max(first, last)) / _ITL_LOG_BIN)
        share = tokens / (hi - lo + 1)
        self.work += hi - lo + 1  # a long stretch's durations spread over many bins
        bins = self.itl_bins
        for b in range(lo, hi + 1):
            bins[b] = bins.get(b, 0.0) + share

    def run(self, until: float = math.inf) -> _Engine:
        """Steps until the first `requests` finished, or (a fed replica) until the clock
        reaches `until`: a step that starts before it may end after it; idle, the clock
        stops at it."""
        self.until = until
        steps = self.steps
        layers = steps.layers
        windowed = steps.windowed
        half_att_layers = steps.attention_flops_per_layer_token / 2 * layers
        speculative = steps.speculative
        budget_total = self.budget
        kv_cap = self.kv_cap
        max_seqs = self.max_seqs
        computed, target, held = self.computed, self.target, self.held
        waiting, running, heap = self.waiting, self.running, self.heap
        total_arrivals = self.total_arrivals

        def chunk_cost(c0: int, chunk: int) -> tuple[float, float]:
            """A chunk's causal attention FLOPs and the layer-tokens of KV it writes."""
            if windowed:
                return steps.chunk_attention_flops(chunk, c0), steps.attended(chunk)
            end = c0 + chunk
            return half_att_layers * (end * end - c0 * c0), float(layers * chunk)

        while self.unfinished > 0 and self.now < until:
            while self.n_arrived < total_arrivals and self.next_arrival <= self.now:
                self._arrive()
            if not running and not waiting:
                if self.n_arrived >= total_arrivals:
                    break
                if self.next_arrival > until:
                    self.now = until
                    break
                self.now = self.next_arrival
                continue
            self.events += 1
            self.work += 1
            if self.work > self.max_work:
                raise WorkLimitExceeded(self.max_work, self.now, self.preemptions)
            if not self.events % _CHECK_EVERY_PASSES:
                request_budget.check("the simulation")
            # Decodes first: each needs a token of KV; preempt the newest while they do not fit.
            while self.decodes and self.kv_used + self.decodes > kv_cap:
                self._preempt_newest()
            decodes = self.decodes
            # Under speculation a step of one token carries an E-th of a verification's room.
            budget = int(steps.prefill_room(budget_total, decodes)) if speculative else budget_total - decodes
            kv_used = self.kv_used + decodes
            p_tokens = 0
            p_flops = 0.0
            p_written = 0.0
            done: list[int] = []
            # Prefill chunks: prompts part-way through first, then the queue in order.
            if self.prefilling:
                self.work += len(self.prefilling)
                still: list[int] = []
                for rid in self.prefilling:
                    c0 = computed[rid]
                    chunk = min(target[rid] - c0, budget, kv_cap - kv_used)
                    if chunk <= 0:
                        still.append(rid)
                        continue
                    end = c0 + chunk
                    flops, written = chunk_cost(c0, chunk)
                    p_flops += flops
                    p_written += written
                    p_tokens += chunk
                    budget -= chunk
                    kv_used += chunk
                    computed[rid] = end
                    if end == target[rid]:
                        done.append(rid)
                    else:
                        still.append(rid)
                self.prefilling = still
            while waiting and budget > 0 and len(running) < max_seqs:
                rid = waiting[0]
                c0 = computed[rid]
                chunk = min(target[rid] - c0, budget)
                # Admitted, it holds its cached tokens' KV too (the shared prefix's is held once).
                reused = c0 - held[rid]
                if chunk + reused > kv_cap - kv_used:
                    break
                waiting.popleft()
                running[rid] = None
                self.work += 1
                if self.scheduled[rid] == math.inf:
                    self.scheduled[rid] = self.now
                end = c0 + chunk
                flops, written = chunk_cost(c0, chunk)
                p_flops += flops
                p_written += written
                p_tokens += chunk
                budget -= chunk
                kv_used += chunk + reused
                computed[rid] = end
                if end == target[rid]:
                    done.append(rid)
                else:
                    self.state[rid] = _PREFILLING
                    self.prefilling.append(rid)
            if decodes == 0 and p_tokens == 0:
                # Nothing fits: part-done prompts hold the cache. Free the newest.
                self._preempt_newest()
                continue
            self.kv_used = kv_used
            if self.walk_stretches and p_tokens == 0 and not self.prefilling:
                self._walk()
                continue
            start = self.now
            dt = self._step_s(decodes, p_tokens, p_flops, p_written)
            self.now = start + dt
            self.n_steps += 1
            if self.window_lo <= start < self.window_hi:
                self.busy += dt
                self.window_steps += 1
                if p_tokens:
                    self.window_mixed_steps += 1
                    self.window_mixed_s += dt
                if decodes:
                    self._itl_add(dt, decodes)
                    self.itl_sum += dt * decodes
                    self.itl_tokens += decodes
            if decodes:
                self.g += 1
                self.decode_ctx += decodes
            for rid in done:
                self._prefill_done(rid, start)
            if heap and heap[0][0] <= self.g:
                self._complete()
        return self

    def _step_s(self, decodes: int, p_tokens: int, p_flops: float, p_written: float) -> float:
        steps = self.steps
        if steps.windowed:
            attended = decodes * steps.attended(self.decode_ctx / decodes) if decodes else 0.0
        else:
            attended = steps.layers * self.decode_ctx
        return steps.time_parts_s(decodes, attended, p_tokens, p_flops, p_written)

    def _walk(self) -> None:
        """Decode-only steps from now to the next event: the first completion, the last
        step the KV holds, or (when the queue is empty) the step that starts after the next
        arrival. The current step's KV is already charged."""
        decodes = self.decodes
        heap, epoch = self.heap, self.epoch
        while heap[0][2] != epoch[heap[0][1]]:  # stale entries of preempted requests
            heapq.heappop(heap)
        n_max = heap[0][0] - self.g
        kv_room = (self.kv_cap - self.kv_used) // decodes + 1
        if kv_room < n_max:
            n_max = kv_room
        start = self.now
        # A fed replica stops at `until`, where the fleet reads its gauges and feeds it more.
        horizon = self.until - start
        if not self.waiting and self.n_arrived < self.total_arrivals:
            to_arrival = self.next_arrival - start
            if to_arrival < horizon:
                horizon = to_arrival
        # A blocked queue (max_num_seqs or KV) stays blocked until a completion: arrivals
        # just join it.
        in_window = self.window_lo <= start < self.window_hi
        if self.step_by_step:
            n, total = self._walk_loop(n_max, horizon, in_window)
        else:
            n, total = self._walk_series(n_max, horizon, in_window)
        self.kv_used += decodes * (n - 1)
        self.decode_ctx += decodes * n
        self.g += n
        self.n_steps += n
        self.now = start + total
        if in_window:
            self.busy += total
            self.window_steps += n
            self.itl_sum += total * decodes
            self.itl_tokens += decodes * n
        self._complete()

    def _walk_loop(self, n_max: int, horizon: float, in_window: bool) -> tuple[int, float]:
        """Sliding-window models (attended tokens are not linear) and speculation (the
        drafter's step has its own roofline): step by step, but with no scheduling between."""
        steps, decodes = self.steps, self.decodes
        total = 0.0
        n = 0
        ctx = self.decode_ctx
        # Past the work limit by one step at most: the next scheduler pass stops the run.
        n_max = min(n_max, self.max_work - self.work + 1)
        while n < n_max and total < horizon:
            attended = decodes * steps.attended(ctx / decodes)
            dt = steps.time_parts_s(decodes, attended, 0, 0.0, 0.0)
            if in_window:
                self._itl_add(dt, decodes)
            total += dt
            ctx += decodes
            n += 1
            if not n % _CHECK_EVERY_STEPS:
                request_budget.check("the simulation")
        self.work += n
        return n, total

    def _series_terms(self, decodes: int) -> tuple[float, float, float, float, float]:
        """What a decode-only step of `decodes` sequences costs apart from their contexts: its
        weights' time, its linear layers' time, its fixed costs, and the growth a step of
        its memory and compute times (each step adds `decodes` tokens of context)."""
        steps = self.steps
        d_attended = steps.layers * decodes
        fixed = (
            steps.communication_fixed_s
            + steps.communication_per_token_s * decodes
            + steps.overhead_s
            + steps.sequence_overhead_s * decodes
            + steps.expert_overhead_s(decodes)
        )
        terms = (
            steps.weights_s(decodes),
            decodes * steps.decode_flops_per_token,
            fixed,
            steps.kv_s_per_layer_token * d_attended,
            steps.s_per_flop * steps.attention_flops_per_layer_token * d_attended,
        )
        self.series_terms[decodes] = terms
        return terms

    def _walk_series(self, n_max: int, horizon: float, in_window: bool) -> tuple[int, float]:
        """Step j of the stretch reads contexts summing to S0 + D j: its memory and compute
        times are linear in j, the step is the larger, so durations form an arithmetic
        series on each side of the one index where the two cross."""
        steps, decodes = self.steps, self.decodes
        terms = self.series_terms.get(decodes) or self._series_terms(decodes)
        weights_s, linear_flops, fixed, m1, c1 = terms
        attended0 = steps.layers * self.decode_ctx
        m0 = weights_s + steps.kv_s_per_layer_token * attended0
        c0 = steps.s_per_flop * (linear_flops + steps.attention_flops_per_layer_token * attended0)
        # Split [0, n_max) where the larger of memory and compute changes.
        memory_first = m0 >= c0
        cross = n_max
        if memory_first and c1 > m1:
            cross = min(n_max, math.floor((m0 - c0) / (c1 - m1)) + 1)
        elif not memory_first and m1 > c1:
            cross = min(n_max, math.floor((c0 - m0) / (m1 - c1)) + 1)
        if cross < 1:
            cross = 1
        if memory_first:
            a, b, a2, b2 = m0 + fixed, m1, c0 + fixed, c1
        else:
            a, b, a2, b2 = c0 + fixed, c1, m0 + fixed, m1
        # The first piece: steps [0, cross), its first step `a` long, growing `b` a step.
        if horizon <= 0:
            return 0, 0.0
        q = _steps_to_reach(a, b, horizon)
        if q > cross:
            q = cross
        total = q * a + b * q * (q - 1) / 2
        if in_window and q:
            self._itl_add_range(a, a + b * (q - 1), decodes * q)
        if q < cross or cross >= n_max:
            return q, total
        # The second: steps [cross, n_max).
        count = n_max - cross
        base = a2 + b2 * cross
        if horizon - total <= 0:
            return q, total
        q2 = _steps_to_reach(base, b2, horizon - total)
        if q2 > count:
            q2 = count
        if in_window and q2:
            self._itl_add_range(base, base + b2 * (q2 - 1), decodes * q2)
        return q + q2, total + (q2 * base + b2 * q2 * (q2 - 1) / 2)


# A fed replica never runs out of requests to wait for: the fleet says when to stop.
_ENDLESS = 1 << 62


class Outcomes:
    """Finished requests counted by the hour they arrived in: how many, and how many missed
    each SLO (TTFT, TPOT, E2E, any of them), against the objectives in seconds (None: not
    held)."""

    def __init__(self, hours: int, ttft_s: float | None, tpot_s: float | None, e2e_s: float | None) -> None:
        self.ttft_s = math.inf if ttft_s is None else ttft_s
        self.tpot_s = math.inf if tpot_s is None else tpot_s
        self.e2e_s = math.inf if e2e_s is None else e2e_s
        self.finished = [0] * hours
        self.missed_ttft = [0] * hours
        self.missed_tpot = [0] * hours
        self.missed_e2e = [0] * hours
        self.missed_any = [0] * hours

    def add(self, arrival: float, ttft: float, tpot: float, e2e: float) -> None:
        hour = min(int(arrival // 3600.0), len(self.finished) - 1)
        self.finished[hour] += 1
        late = False
        if ttft > self.ttft_s:
            self.missed_ttft[hour] += 1
            late = True
        if tpot > self.tpot_s:
            self.missed_tpot[hour] += 1
            late = True
        if e2e > self.e2e_s:
            self.missed_e2e[hour] += 1
            late = True
        if late:
            self.missed_any[hour] += 1


class FedReplica(_Engine):
    """One replica of a fleet: the fleet hands it each request's arrival time (`push`, in
    order), runs it to a time (`run(until)`), and reads its gauges (`waiting`, `running`,
    `kv_usage`) between runs. It samples each request's lengths from its own streams, and
    counts every finished request in `outcomes`. A finished request's slot is reused, so its
    memory is that of the requests in it at once, not of the day."""

    def __init__(
        self, steps: StepModel, traffic: Traffic, limits: Limits, seed: int, outcomes: Outcomes, started_s: float
    ) -> None:
        super().__init__(steps, traffic, limits, seed, _ENDLESS, _ENDLESS, False, True, 0)
        self.feed: deque[float] = deque()
        self.next_arrival = math.inf
        self.now = started_s
        self.free: list[int] = []
        self.outcomes = outcomes
        self.overhead_s = steps.hw.request_overhead_s

    def push(self, t: float) -> None:
        if not self.feed:
            self.next_arrival = t
        self.feed.append(t)

    @property
    def idle(self) -> bool:
        return not self.running and not self.waiting and not self.feed

    @property
    def in_flight(self) -> int:
        return len(self.running) + len(self.waiting) + len(self.feed)

    def gauges(self) -> tuple[int, int, float]:
        """What the engine exports now: requests waiting (the fleet's not yet arrived at its
        clock count too), requests running, and the share of the KV cache held."""
        return len(self.waiting) + len(self.feed), len(self.running), self.kv_used / self.kv_cap

    def _arrive(self) -> None:
        feed = self.feed
        t = feed.popleft()
        self.next_arrival = feed[0] if feed else math.inf
        self.n_arrived += 1
        p, o = self._lengths()
        if self.free:
            rid = self.free.pop()
            self.arrival[rid] = t
            self.prompt[rid] = p
            self.output[rid] = o
            self.scheduled[rid] = math.inf
            self.first_token[rid] = math.inf
            self.finished[rid] = math.inf
            self.state[rid] = _WAITING
            self.target[rid] = p
            cached = self.traffic.cached_tokens(p)
            self.computed[rid] = self.cached[rid] = cached
            self.held[rid] = min(self.shared, cached)
            self.generated[rid] = 0
            self.g_start[rid] = 0
            self.ctx_start[rid] = 0
            self.epoch[rid] += 1  # a stale heap entry of the slot's last request stays stale
        else:
            rid = self._new_request(t, p, o)
        self.waiting.append(rid)

    def _finish(self, rid: int, kv_tokens: int) -> None:
        super()._finish(rid, kv_tokens)
        arrival, first, output = self.arrival[rid], self.first_token[rid], self.output[rid]
        now = self.now
        tpot = (now - first) / (output - 1) if output > 1 else 0.0
        self.outcomes.add(arrival, first - arrival + self.overhead_s, tpot, now - arrival + self.overhead_s)
        self.free.append(rid)


def _steps_to_reach(first_s: float, slope_s: float, horizon_s: float) -> int:
    """The fewest steps of durations first, first + slope, ... whose sum reaches horizon
    (the step that starts at or after it is not taken); a large number if none is given.
    The sum of q steps is q first + slope q (q - 1) / 2: the root of its quadratic, then
    whole steps either side of it (rounding)."""
    if horizon_s == math.inf:
        return 1 << 62
    if abs(slope_s) < 1e-300:
        q = math.ceil(horizon_s / first_s)
    else:
        b = first_s - slope_s / 2
        disc = b * b + 2 * slope_s * horizon_s
        q = math.ceil((-b + math.sqrt(disc if disc > 0.0 else 0.0)) / slope_s)
    if q < 1:
        q = 1
    while q > 1 and (q - 1) * first_s + slope_s * (q - 1) * (q - 2) / 2 >= horizon_s:
        q -= 1
    while q * first_s + slope_s * q * (q - 1) / 2 < horizon_s:
        q += 1
    return q


def _max_work(max_work: int) -> int:
    """A run's work limit: its own, or what the request's work budget has left when less."""
    return min(max_work, request_budget.current().work_left())


def _within_budget(e: _Engine) -> _Engine:
    """Run `e`, charging its work to the request's budget (also when it stops early)."""
    try:
        return e.run()
    finally:
        request_budget.current().spend(e.work)


def seats_admitted_and_held(traffic: Traffic, limits: Limits) -> tuple[int, int]:
    """How many requests of the traffic's mean lengths the scheduler admits at most (their
    first chunk fits the free KV) and how many the KV cache holds at their full length: where
    the first is larger, a loaded replica preempts."""
    kv = limits.kv_capacity_tokens
    prompt = min(max(1, round(traffic.prompt_tokens)), kv - 1)
    output = min(max(1, round(traffic.output_tokens)), kv - prompt)
    seats = min(limits.max_num_seqs, limits.max_batched_tokens)
    return min(seats, max(1, kv // min(prompt, limits.max_batched_tokens))), max(1, kv // (prompt + output))


def predicted_work(traffic: Traffic, limits: Limits, requests: int, windowed: bool = False) -> int:
    """The work units a run of `requests` requests of the traffic's mean lengths is predicted
    to take, before it starts (an estimate: the run itself counts its work and stops at its
    limit). Each request is admitted once and its prompt computed in chunks of the token
    budget; where the scheduler admits more requests than the KV cache holds at full length
    (`seats_admitted_and_held`), a loaded replica preempts, about (admitted - held) / held
    times per request, each recomputing the prompt and half the answer on average in chunks of
    the token budget (bursts of Llama 3.1 8B on an H100 count 1.4 to 23 times this, the
    longest answers the most: a refusal on it is seldom wrong); a sliding-window model walks
    each decode step one by one."""
    kv = limits.kv_capacity_tokens
    prompt = min(max(1, round(traffic.prompt_tokens)), kv - 1)
    output = min(max(1, round(traffic.output_tokens)), kv - prompt)
    token_budget = limits.max_batched_tokens
    units = requests + -(-requests * prompt // token_budget)
    admitted, held = seats_admitted_and_held(traffic, limits)
    if admitted > held:
        recompute_chunks = -(-(prompt + output // 2) // token_budget)
        units += requests * (admitted - held) * recompute_chunks // held
    if windowed:
        units += requests * (output - 1) // min(limits.max_num_seqs, token_budget)
    return units


def _check_requests(requests: int) -> None:
    if not 1 <= requests <= MAX_REQUESTS:
        raise ValueError(f"requests must be between 1 and {MAX_REQUESTS}")


def saturation_rate(
    steps: StepModel,
    traffic: Traffic,
    limits: Limits,
    *,
    seed: int = 0,
    requests: int = 2000,
    max_work: int = UNBOUNDED_WORK,
) -> float:
    """λ_sat, requests/s: the replica's throughput with every request queued at once, over
    the middle of the run (completions between the 20% and the 80% marks). Raises
    WorkLimitExceeded past `max_work` or the request's work budget."""
    _check_requests(requests)
    engine = _within_budget(_Engine(steps, traffic, limits, seed, requests, 0, True, True, 0, _max_work(max_work)))
    done = sorted(engine.finished[:requests])
    lo, hi = int(0.2 * requests), int(0.8 * requests)
    if hi <= lo or done[hi] <= done[lo]:
        return requests / done[-1]
    return (hi - lo) / (done[hi] - done[lo])


@dataclass(frozen=True)
class BurstResult:
    """An offline batch of requests queued at once, in seconds from the start: the time to
    the last completion, what the run produced over it, and each request's TTFT and E2E
    (its wait for a seat included)."""

    requests: int
    makespan_s: float
    prompt_tokens: int
    output_tokens: int
    output_tokens_per_s: float
    ttft_s: Percentiles
    e2e_s: Percentiles
    preemptions: int
    cut_requests: int  # sampled longer than the KV cache holds, cut to fit it
    steps: int
    work: int  # the units a `max_work` limit counts


def burst(
    steps: StepModel,
    traffic: Traffic,
    limits: Limits,
    *,
    seed: int = 0,
    requests: int = DEFAULT_BURST_REQUESTS,
    max_work: int = UNBOUNDED_WORK,
) -> BurstResult:
    """`requests` requests queued at t = 0 and run to the last completion (see the module
    docstring): the drain of the longest answers at a small batch counts, which is why a
    burst's throughput can sit well below the steady state at the same batch cap. Raises
    WorkLimitExceeded past `max_work` units of work (see the module docstring) or the
    request's work budget (app/sizing/budget.py)."""
    _check_requests(requests)
    max_work = _max_work(max_work)
    e = _Engine(steps, traffic, limits, seed, requests, 0, True, True, 0, max_work)
    e.queue_all()
    floor = e.work_floor()
    if floor > max_work:
        raise WorkLimitExceeded(max_work, 0.0, 0, floor)
    _within_budget(e)
    if e.work > max_work:  # the last pass's chunks and preemptions, counted after its check
        raise WorkLimitExceeded(max_work, e.now, e.preemptions)
    overhead = steps.hw.request_overhead_s
    makespan = max(e.finished[:requests]) + overhead
    output = sum(e.output[:requests])
    return BurstResult(
        requests=requests,
        makespan_s=makespan,
        prompt_tokens=sum(e.prompt[:requests]),
        output_tokens=output,
        output_tokens_per_s=output / makespan,
        ttft_s=summarize([e.first_token[i] + overhead for i in range(requests)]),
        e2e_s=summarize([e.finished[i] + overhead for i in range(requests)]),
        preemptions=e.preemptions,
        cut_requests=e.cut_requests,
        steps=e.n_steps,
        work=e.work,
    )


def simulate(
    steps: StepModel,
    traffic: Traffic,
    limits: Limits,
    *,
    seed: int = 0,
    requests: int = DEFAULT_REQUESTS,
    warmup_fraction: float = DEFAULT_WARMUP_FRACTION,
    saturation_rate_per_s: float | None = None,
    walk_stretches: bool = True,
    max_work: int = UNBOUNDED_WORK,
) -> SimulationResult:
    """One replica at `traffic.rate_per_s` (see the module docstring). `saturation_rate_per_s`
    (λ_sat) is computed by `saturation_rate` when not given (pass it when sweeping rates).
    `walk_stretches=False` steps every decode step through the scheduler (for tests). Raises
    WorkLimitExceeded past `max_work` or the request's work budget."""
    _check_requests(requests)
    if not 0 <= warmup_fraction < 1:
        raise ValueError("warmup_fraction must be in [0, 1)")
    measured_from = min(int(warmup_fraction * requests), requests - 1)
    if saturation_rate_per_s is None:
        saturation_rate_per_s = saturation_rate(
            steps, traffic, limits, seed=seed, requests=min(requests, SATURATION_REQUESTS), max_work=max_work
        )
    extra = requests // 4 + 1000
    limit = _max_work(max_work)
    engine = _Engine(steps, traffic, limits, seed, requests, measured_from, False, walk_stretches, extra, limit)
    e = _within_budget(engine)
    overhead = steps.hw.request_overhead_s
    ids = range(measured_from, requests)
    wait = [e.scheduled[i] - e.arrival[i] for i in ids]
    ttft = [e.first_token[i] - e.arrival[i] + overhead for i in ids]
    e2e = [e.finished[i] - e.arrival[i] + overhead for i in ids]
    tpot = [(e.finished[i] - e.first_token[i]) / (e.output[i] - 1) for i in ids if e.output[i] > 1]
    lo, hi = e.window_lo, e.window_hi
    window = hi - lo
    if window <= 0:
        window = max(e.now - lo, 1e-12)
        hi = lo + window
    # Time-average of the requests in the system: each one's stay clipped to the window.
    in_system = math.fsum(max(0.0, min(f, hi) - max(a, lo)) for a, f in zip(e.arrival, e.finished, strict=True))
    arrived_in_window = requests - 1 - measured_from
    finished_in_window = sum(1 for f in e.finished if lo <= f < hi)
    utilization = traffic.rate_per_s / saturation_rate_per_s
    stable = utilization < 1.0 and finished_in_window >= 0.95 * arrived_in_window
    return SimulationResult(
        rate_per_s=traffic.rate_per_s,
        saturation_rate_per_s=saturation_rate_per_s,
        utilization=utilization,
        stable=stable,
        in_flight_mean=in_system / window,
        running_mean=e.itl_sum / window,
        queue_wait_s=summarize(wait),
        ttft_s=summarize(ttft),
        tpot_s=summarize(tpot) if tpot else Percentiles(0.0, 0.0, 0.0, 0.0, 0.0),
        itl_s=_itl_percentiles(e),
        e2e_s=summarize(e2e),
        queue_wait_ci=batch_means_ci(wait),
        ttft_ci=batch_means_ci(ttft),
        tpot_ci=batch_means_ci(tpot),
        e2e_ci=batch_means_ci(e2e),
        output_tokens_per_s=(e.itl_tokens + e.first_tokens_in_window) / window,
        busy_fraction=e.busy / window,
        measured_requests=len(wait),
        simulated_requests=e.n_arrived,
        preemptions=e.preemptions,
        steps=e.n_steps,
        events=e.events,
        window_s=window,
        measured_arrival_rate_per_s=arrived_in_window / window if window > 0 else math.nan,
        mixed_step_share=e.window_mixed_steps / e.window_steps if e.window_steps else 0.0,
    )


def _itl_percentiles(e: _Engine) -> Percentiles:
    """ITL over the decode tokens of the window: each token's gap is its step's duration."""
    if e.itl_tokens <= 0:
        return Percentiles(math.nan, math.nan, math.nan, math.nan, math.nan)
    bins = sorted(e.itl_bins.items())
    total = math.fsum(w for _, w in bins)
    out = []
    for p in PERCENTILES:
        goal = total * p / 100
        acc = 0.0
        value = math.nan
        for b, w in bins:
            if acc + w >= goal:
                # Within the bin, evenly in log-duration.
                frac = (goal - acc) / w if w > 0 else 0.0
                value = math.exp((b + frac) * _ITL_LOG_BIN)
                break
            acc += w
        if math.isnan(value):
            value = math.exp((bins[-1][0] + 1) * _ITL_LOG_BIN)
        out.append(value)
    return Percentiles(e.itl_sum / e.itl_tokens, out[0], out[1], out[2], out[3])

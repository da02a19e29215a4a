"""Fast analytic mode: one replica under random arrivals, on the step-time
model the simulator uses (`timing.StepModel`); tens of microseconds for the means.

The open-loop fixed point at λ requests/s (E[P], E[O] the mean prompt and output tokens,
T = max_batched_tokens):

    N      running decodes, Little's law: N = λ (E[O] - 1) TPOT
    t_d    the decode-only step a decoding request sees (itself and N others)
    k      chunks of the mean prompt after the decodes: ceil(E[P] / (T - N))
    X      what a prompt adds to the steps it rides on: k (t_mixed - t_d); a prompt that
           finds a backlog (probability σ) shares its step with the 1 / (1 - σ) queued with
           it, a fuller step past the memory-bound knee
    u      λ X: TPOT = t_d / (1 - u) (the load effect: steps get longer, t0 / (1 - u))

iterated to the fixed point (secant steps). Decodes pile up while prefill runs, so the mean
TPOT exceeds the step average: a linearised fluid model of N under the busy / idle
alternation of the prefill stream corrects N and TPOT (`_feedback`).

Prefill is the queue: prompts are served as a token stream at T - N tokens per full step,
S = P t_full / (T - N), ρ = λ E[S]. An arrival finds it busy with probability σ, the root of
the GI/M/1 equation σ = (1 + (1 - σ) / (k ρ))^-k for gamma(k) inter-arrivals (σ = ρ at
Poisson); the wait given busy has mean S / (1 - σ) (ca² + cs²) / (ca² + 1) (Pollaczek-
Khinchine at Poisson; ca² = 1/k, cs² the prompt spread) and an exponential (gamma) tail,
after the residual of the mixed step in flight; an arrival that finds it idle waits out
the decode step in flight, if any. Near the running-batch cap (`max_num_seqs`, or the seats
the KV cache holds at E[P] + E[O]/2 tokens each) requests also wait for a seat: Erlang C,
scaled by the Allen-Cunneen factor. TTFT percentiles mix all this over the prompt lengths
(quadrature nodes); TPOT percentiles mix, over output lengths, a lognormal spread from the
prompts arriving within a request's decode window (compound count, over-dispersed by ca²
and the load) and the drift of N; ITL is the decode-only or the mixed step; E2E is TTFT
plus the decode steps.

KV: mean and sd of the KV held (an M/G/∞ count of contexts, sd widened when bursty); a rate is
KV-safe when mean + 3 sd <= capacity. Utilization is λ / λ_sat, λ_sat the throughput with
every request queued: N decodes and full-budget prefill steps in balance, N the budget's
share (T E[O-1] / (E[P] + E[O-1])) or the seats, whichever is fewer (`_saturation`); within
about 10% of the simulator's on the bench grid.

The spread constants below were fitted by hand against the simulator on bench.latency.GRID
and not refitted for the cases added later (bench.latency.HELD_OUT; the prompt-packing term
was added after seeing them); tests/sizing/test_queueing.py holds both to the simulator.
Left out: preemption cascades when the KV cache is nearly full (the KV rule keeps plans out
of that regime), prefix caching, and priority scheduling.

Entry points
------------
`ReplicaModel.build(steps, traffic, limits) -> ReplicaModel`
    once per replica shape and traffic shape (lengths, spreads, burstiness); the rate of
    `traffic` is not used. `steps` is `timing.StepModel.build(work, hw)`. About 0.1-5 ms
    (quadrature nodes of gamma lengths are found by bisection).
`model.saturation_rate_per_s`, `model.saturation_bound`
    λ_sat and what bounds it (`saturation`: the step budget, `max_num_seqs`, `kv_capacity`).
`model.mean_core(rate_per_s) -> MeanCore`
    the fixed point: means only (N, TPOT, TTFT, queue wait, E2E, step times, ρ, σ), for
    ranking; `stable` False past saturation.
`model.latency(rate_per_s, percentiles=True) -> LatencyEstimate`
    `utilization`, `stable`, `in_flight_mean`, Percentiles (mean, p50, p90, p95, p99,
    seconds) of queue wait, TTFT, TPOT, ITL and E2E (NaN percentiles when not asked, NaN
    everything when unstable), output tokens/s, KV mean and sd and `kv_ok`. About 1-10 ms
    with percentiles.
`model.max_request_rate(ttft_slo_s=None, tpot_slo_s=None, e2e_slo_s=None, percentile=95)
 -> MaxRate`  the highest rate meeting every given SLO at the percentile (50, 90, 95, 99)
    and the KV rule, by bisection on (0, λ_sat) to 0.1%, with `bound_by` (`ttft_slo`,
    `tpot_slo`, `e2e_slo`, `kv_capacity`, `max_num_seqs`, `saturation`), `meets_slo`
    (False, rate 0, when even a trickle fails) and the estimate at that rate. About 1-100 ms;
    `percentile=None` holds the means to the SLOs (mean core only, well under 1 ms): rank
    with that, then ask the percentile for the finalists.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from statistics import NormalDist

from .simulate import FIXED_LENGTH_CV, Limits, Percentiles, Traffic
from .timing import StepModel
from .vocabulary import Binding, LengthDistribution

OFFERED_PERCENTILES = (50.0, 90.0, 95.0, 99.0)

# Quadrature nodes over a length distribution (equal-probability strata).
LENGTH_NODES = 12
# KV safety: mean + KV_SIGMAS sd of the KV held must fit.
KV_SIGMAS = 3.0
# Tuning of the spreads, fitted against the simulator (bench/latency.py).
WAIT_TAIL_SHAPE = 1.0  # gamma shape of the prefill wait given a wait
TPOT_DISPERSION = 2.0  # arrivals in a decode window vary this much more than Poisson (x ca²)
N_DRIFT_SHARE = 0.5  # share of N's variance a decode window's average keeps
TPOT_AMPLIFY_POWER = 1.0  # the window's count variance grows as 1 / (1 - u) to this power
# Seat waits (Erlang C): P(wait) x f and the mean given a wait x sqrt(f), f the Allen-Cunneen
# factor (ca² + cs²) / 2 of the holding time; exponential given a wait.
SEAT_PROB_POWER = 1.0
SEAT_GIVEN_POWER = 0.5
SEAT_TAIL_SHAPE = 1.0
_NAN = math.nan
_NAN_PERCENTILES = Percentiles(_NAN, _NAN, _NAN, _NAN, _NAN)
_STD_NORMAL = NormalDist()
# A distribution function of a time in seconds.
Cdf = Callable[[float], float]


@dataclass(frozen=True)
class MeanCore:
    """The fixed point's means at one rate (seconds, tokens)."""

    rate_per_s: float
    stable: bool
    running: float  # N, decoding requests
    chunks: int  # of the mean prompt
    chunk_tokens: float
    decode_step_s: float  # t_d with N + 1 decodes
    mixed_step_s: float  # a step carrying a chunk, N decodes
    prefill_s: float  # the mean prompt's own prefill steps
    load: float  # u = λ X
    prefill_utilization: float  # ρ of the prefill stream
    tpot_s: float
    queue_wait_s: float
    ttft_s: float
    e2e_s: float
    seat_wait_s: float
    wait_probability: float  # σ, prefill stream busy at an arrival
    busy_wait_s: float = 0.0  # mean backlog ahead of an arrival that finds the stream busy


@dataclass(frozen=True)
class LatencyEstimate:
    rate_per_s: float
    saturation_rate_per_s: float
    utilization: float
    stable: bool
    in_flight_mean: float
    running_mean: float
    queue_wait_s: Percentiles
    ttft_s: Percentiles
    tpot_s: Percentiles
    itl_s: Percentiles
    e2e_s: Percentiles
    output_tokens_per_s: float
    kv_tokens_mean: float
    kv_tokens_sd: float
    kv_ok: bool
    core: MeanCore


@dataclass(frozen=True)
class MaxRate:
    rate_per_s: float  # 0 when no rate meets the SLOs
    bound_by: Binding
    meets_slo: bool
    estimate: LatencyEstimate | None  # at that rate


def length_nodes(mean: float, cv: float, distribution: str, n: int = LENGTH_NODES) -> tuple[float, ...]:
    """Equal-weight nodes of an integer length distribution >= 1 (the simulator's): the
    quantiles at the middles of n strata (one node, the mean, below FIXED_LENGTH_CV)."""
    if cv < FIXED_LENGTH_CV:
        return (float(max(1, round(mean))),)
    nodes = []
    for i in range(n):
        q = (i + 0.5) / n
        if distribution == LengthDistribution.LOGNORMAL:
            s2 = math.log1p(cv * cv)
            x = math.exp(math.log(mean) - s2 / 2 + math.sqrt(s2) * _STD_NORMAL.inv_cdf(q))
        else:
            x = _gamma_quantile(1 / (cv * cv), mean * cv * cv, q)
        nodes.append(float(max(1, round(x))))
    # Midpoint quantiles miss the far tail: scale them back to the mean.
    scale = mean / (sum(nodes) / n)
    return tuple(max(1.0, x * scale) for x in nodes)


# Strata of the narrower of the two lengths the tail of their sum is integrated over (the
# wider one's CDF is exact): equal ones up to its 98th percentile, then ever thinner ones into
# its tail, which a p99.9 of the sum reaches into when the two are alike.
BODY_STRATA = 60
BODY_TOP = 0.98
TAIL_RATIO = 0.6
TAIL_END = 1e-7


def _strata(mean: float, cv: float, distribution: str) -> list[tuple[float, float]]:
    """(length, weight) at the middle of each stratum of the length's quantiles."""
    edges = [BODY_TOP * i / BODY_STRATA for i in range(BODY_STRATA + 1)]
    rest = 1 - BODY_TOP
    while rest > TAIL_END:
        rest *= TAIL_RATIO
        edges.append(1 - rest)
    edges.append(1.0)
    strata = []
    for lo, hi in itertools.pairwise(edges):
        q = (lo + hi) / 2
        if distribution == LengthDistribution.LOGNORMAL:
            s2 = math.log1p(cv * cv)
            x = math.exp(math.log(mean) - s2 / 2 + math.sqrt(s2) * _STD_NORMAL.inv_cdf(q))
        else:
            x = _gamma_quantile(1 / (cv * cv), mean * cv * cv, q)
        strata.append((x, hi - lo))
    return strata


def _length_cdf(mean: float, cv: float, distribution: str, x: float) -> float:
    if cv < FIXED_LENGTH_CV:
        return 1.0 if x >= mean else 0.0
    if distribution == LengthDistribution.LOGNORMAL:
        if x <= 0:
            return 0.0
        s2 = math.log1p(cv * cv)
        return _STD_NORMAL.cdf((math.log(x) - math.log(mean) + s2 / 2) / math.sqrt(s2))
    return gamma_cdf(1 / (cv * cv), x / (mean * cv * cv))


@functools.lru_cache(maxsize=256)
def total_length_quantile(
    prompt_mean: float, prompt_cv: float, output_mean: float, output_cv: float, distribution: str, q: float
) -> int:
    """The q-quantile of a request's prompt + output tokens, the two drawn independently as the
    simulator draws them: P(P + O <= x) is the mean, over equal-weight strata of the narrower
    length, of the wider one's CDF at x minus the stratum's length; solved for x by bisection
    (whole tokens, rounded up)."""
    (wide, wide_cv), (narrow, narrow_cv) = sorted(
        ((prompt_mean, prompt_cv), (output_mean, output_cv)), key=lambda m: m[0] * m[1], reverse=True
    )
    strata = _strata(narrow, narrow_cv, distribution) if narrow_cv >= FIXED_LENGTH_CV else [(narrow, 1.0)]

    def cdf(x: float) -> float:
        return sum(w * _length_cdf(wide, wide_cv, distribution, x - n) for n, w in strata)

    lo, hi = 0.0, 2.0 * (prompt_mean + output_mean)
    while cdf(hi) < q:
        hi *= 2
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return max(math.ceil(hi), round(prompt_mean + output_mean))


def _gamma_quantile(shape: float, scale: float, q: float) -> float:
    lo, hi = 0.0, shape * scale * 10 + 10 * scale
    while gamma_cdf(shape, hi / scale) < q:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if gamma_cdf(shape, mid / scale) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


# A gamma of this shape (a CV of 1%) is near enough a normal: see gamma_cdf.
WILSON_HILFERTY_SHAPE = 1e4


def gamma_cdf(shape: float, x: float) -> float:
    """Regularized lower incomplete gamma P(shape, x) (series / continued fraction; past
    WILSON_HILFERTY_SHAPE, the Wilson-Hilferty normal approximation, within 1e-6 there, where
    the series would need more terms than it takes and x + 1 - shape can round to zero)."""
    if shape > WILSON_HILFERTY_SHAPE:
        if x <= 0:
            return 0.0
        ninth = 1.0 / (9.0 * shape)
        return _STD_NORMAL.cdf(((x / shape) ** (1.0 / 3.0) - (1.0 - ninth)) / math.sqrt(ninth))
    if x <= 0:
        return 0.0
    if x < shape + 1:
        term = 1.0 / shape
        total = term
        a = shape
        for _ in range(500):
            a += 1
            term *= x / a
            total += term
            if term < total * 1e-12:
                break
        return min(1.0, total * math.exp(-x + shape * math.log(x) - math.lgamma(shape)))
    # Lentz's continued fraction for Q.
    b = x + 1 - shape
    c = 1e300
    d = 1 / b
    h = d
    for i in range(1, 500):
        an = -i * (i - shape)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-12:
            break
    return max(0.0, 1.0 - math.exp(-x + shape * math.log(x) - math.lgamma(shape)) * h)


def _gi_m_1_sigma(rho: float, shape: float) -> float:
    """P(wait > 0) of a GI/M/1 queue with gamma(shape) inter-arrivals at load rho: the root
    in (0, 1) of σ = A(σ) = (1 + (1 - σ) / (shape ρ))^-shape (σ = ρ for Poisson). A - σ is
    convex with roots σ* and 1, so Newton from 0 climbs to σ* monotonically."""
    if rho <= 0:
        return 0.0
    if rho >= 1:
        return 1.0
    if abs(shape - 1.0) < 1e-12:
        return rho
    sigma = 0.0
    kr = shape * rho
    for _ in range(100):
        base = 1 + (1 - sigma) / kr
        a = math.pow(base, -shape)
        slope = a / (base * rho)
        step = (a - sigma) / (1 - slope)
        sigma += step
        if step < 1e-12:
            break
    return min(sigma, 1.0)


def erlang_c(servers: float, offered: float) -> float:
    """Probability an arrival waits for one of `servers` (rounded down) at `offered` load."""
    c = max(1, int(servers))
    if offered <= 0:
        return 0.0
    if offered >= c:
        return 1.0
    b = 1.0
    for j in range(1, c + 1):
        b = offered * b / (j + offered * b)
    return c * b / (c - offered * (1 - b))


def _lognormal_cdf(mean: float, var: float, x: float) -> float:
    if x <= 0:
        return 0.0
    if var <= 0:
        return 1.0 if x >= mean else 0.0
    s2 = math.log1p(var / (mean * mean))
    mu = math.log(mean) - s2 / 2
    return 0.5 * (1 + math.erf((math.log(x) - mu) / math.sqrt(2 * s2)))


# Relative precision of a percentile reported (_solve), and of one a capacity search compares
# with an SLO: the search's own step is 1% of the rate, so 1e-4 of the time is plenty.
REPORTED_PRECISION = 1e-7
SEARCH_PRECISION = 1e-4


def _solve(cdf: Cdf, p: float, hi: float, precision: float = REPORTED_PRECISION) -> float:
    """The smallest t with cdf(t) >= p, within `precision` of it, by bisection (cdf
    non-decreasing)."""
    lo = 0.0
    while cdf(hi) < p:
        lo = hi
        hi *= 2
        if hi > 1e9:
            return math.inf
    for _ in range(48):
        mid = (lo + hi) / 2
        if cdf(mid) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= precision * hi:
            break
    return (lo + hi) / 2


def _cached_tokens(traffic: Traffic, prompt: float) -> float:
    """Tokens of a `prompt`-token prompt found in the prefix cache (Traffic.cached_tokens, for
    a quadrature node's fractional length)."""
    if not traffic.prefix_cache_hit_rate and not traffic.shared_prefix_tokens:
        return 0.0
    return max(0.0, min(prompt - 1.0, max(traffic.prefix_cache_hit_rate * prompt, float(traffic.shared_prefix_tokens))))


@dataclass(frozen=True)
class ReplicaModel:
    steps: StepModel
    traffic: Traffic
    limits: Limits
    prompt_nodes: tuple[float, ...]
    output_nodes: tuple[float, ...]
    prompt_mean: float
    output_mean: float
    decode_steps_mean: float  # E[O - 1]
    decode_context: float  # time-average context of a decoding request
    arrival_scv: float
    kv_per_rate_mean: float  # KV tokens held per unit rate, per TPOT second
    kv_per_rate_square: float
    output_var: float
    attended_context: float  # layer-tokens of cache one decoding request reads
    prompt_attention_flops: float  # the mean prompt's causal attention
    seats: float  # min(max_num_seqs, KV seats)
    seats_bound: Binding
    saturation_rate_per_s: float
    saturation_bound: Binding
    # Prefix caching: prompt_nodes and prompt_mean are the tokens a prefill computes; each
    # attends to cached tokens of this share of its own (0 without a cache), and the shared
    # prefix is held once, outside the sequences' KV.
    cached_per_computed: float = 0.0
    shared_prefix_tokens: float = 0.0

    @classmethod
    def build(
        cls, steps: StepModel, traffic: Traffic, limits: Limits, seat_cap: Binding = Binding.MAX_NUM_SEQS
    ) -> ReplicaModel:
        """`seat_cap` names what limits.max_num_seqs stands for: the engine's cap, or
        (Binding.KV_CAPACITY) the sequences of the full length the KV cache holds, as a fleet caps it."""
        if traffic.length_distribution not in tuple(LengthDistribution):
            raise ValueError(f"unknown length distribution {traffic.length_distribution!r}")
        cap = limits.kv_capacity_tokens
        pn = tuple(
            min(p, cap - 1.0)
            for p in length_nodes(traffic.prompt_tokens, traffic.prompt_tokens_cv, traffic.length_distribution)
        )
        on = length_nodes(traffic.output_tokens, traffic.output_tokens_cv, traffic.length_distribution)
        p_mean = sum(pn) / len(pn)
        o_mean = sum(on) / len(on)
        d_mean = sum(o - 1 for o in on) / len(on)
        # A decoding request's context runs P .. P + O - 2 over its O - 1 steps.
        tri = sum((o - 1) * o / 2 for o in on) / len(on)
        context = p_mean + (tri / d_mean if d_mean > 0 else 0.0)
        # The KV a sequence holds itself: the shared prefix is held once, outside it.
        shared = float(min(traffic.shared_prefix_tokens, cap - 2))
        own = [max(0.0, p - shared) for p in pn] if shared else list(pn)
        own_mean = sum(own) / len(own)
        own2 = sum(p * p for p in own) / len(own)
        # Per decode second: sum over steps of context, and of context^2.
        kv1 = own_mean * d_mean + tri
        kv2 = sum((o - 1) * own2 + own_mean * (o - 1) * o + (o - 1) * o * (2 * o - 1) / 6 for o in on) / len(on)
        footprint = own_mean + o_mean / 2
        kv_seats = (cap - shared) / footprint
        # What a prefill computes: the prompt less its cached tokens (never the last one).
        cached = [_cached_tokens(traffic, p) for p in pn]
        pn = tuple(p - c for p, c in zip(pn, cached, strict=True))
        computed_mean = sum(pn) / len(pn)
        cached_share = sum(cached) / len(cached) / computed_mean
        seats = float(min(limits.max_num_seqs, steps.max_decodes(limits.max_batched_tokens)))
        bound = seat_cap
        if kv_seats < seats:
            seats, bound = kv_seats, Binding.KV_CAPACITY
        model = cls(
            steps=steps,
            traffic=traffic,
            limits=limits,
            prompt_nodes=pn,
            output_nodes=on,
            prompt_mean=computed_mean,
            output_mean=o_mean,
            decode_steps_mean=d_mean,
            decode_context=context,
            arrival_scv=traffic.arrival_scv,
            kv_per_rate_mean=kv1,
            kv_per_rate_square=kv2,
            output_var=sum((o - o_mean) ** 2 for o in on) / len(on),
            attended_context=steps.attended(context),
            prompt_attention_flops=steps.chunk_attention_flops(computed_mean, computed_mean * cached_share),
            seats=seats,
            seats_bound=bound,
            saturation_rate_per_s=1.0,
            saturation_bound=Binding.SATURATION,
            cached_per_computed=cached_share,
            shared_prefix_tokens=shared,
        )
        rate, why = model._saturation()
        return replace(model, saturation_rate_per_s=rate, saturation_bound=why)

    def _saturation(self) -> tuple[float, Binding]:
        """λ_sat with every request queued: N decodes run, and the steps that carry prefill
        carry a full budget (T - N tokens). Prefill tokens in = decode completions out:
        λ E[P] = f (T - N) / t̄ and λ = N / (E[O - 1] t̄), t̄ = f t_full + (1 - f) t_d, so the
        share of full steps is f = E[P] N / (E[O - 1] (T - N)). Budget-bound, f = 1 and
        N = T E[O - 1] / (E[P] + E[O - 1]); seat-bound (max_num_seqs, or the seats the KV
        holds), N = seats and f < 1."""
        s = self.steps
        budget = self.limits.max_batched_tokens
        d_mean, p = self.decode_steps_mean, self.prompt_mean
        # Budget-bound, prompt tokens in (lambda P) meet what full steps' room leaves; under
        # speculation a step of one token carries (T - N (k + 1)) / E of them.
        n = budget * d_mean / (s.tokens_per_step * p + s.queries_per_decode * d_mean)
        bound = Binding.SATURATION
        if n > self.seats:
            n, bound = self.seats, self.seats_bound
        room = max(1.0, s.prefill_room(budget, n))
        full = s.time_parts_s(
            n, n * self.attended_context, room, self.prompt_attention_flops * room / p, s.attended(room)
        )
        if d_mean <= 0:
            return room / (p * full), bound
        share = min(1.0, p * n / (d_mean * room))
        mean_step = share * full + (1.0 - share) * self._decode_s(n)
        return n / (d_mean * mean_step), bound

    # -- step times ---------------------------------------------------------------------
    def _decode_s(self, decodes: float) -> float:
        return self.steps.time_parts_s(decodes, decodes * self.attended_context, 0, 0.0, 0.0)

    def _prefill(self, decodes: float, prompt: float) -> tuple[int, float, float]:
        """Chunks of `prompt` after `decodes` decodes take the budget, the tokens of each,
        and one chunk step's duration (attention averaged over the chunks)."""
        s = self.steps
        room = max(1.0, s.prefill_room(self.limits.max_batched_tokens, decodes))
        k = math.ceil(prompt / room - 1e-9)
        chunk = prompt / k
        whole = (
            self.prompt_attention_flops
            if prompt == self.prompt_mean
            else s.chunk_attention_flops(prompt, prompt * self.cached_per_computed)
        )
        t = s.time_parts_s(decodes, decodes * self.attended_context, chunk, whole / k, s.attended(chunk))
        return k, chunk, t

    def _loop_steps(self, seen: float) -> tuple[int, float, float, float, float]:
        """One pass of the fixed point's step times with `seen` decodes, in one go: the
        mean prompt's chunks, their tokens and step (`_prefill`), the decode-only step
        (`_decode_s`) and the prompt's share of the prefill stream (`_fluid_service_s`)."""
        s = self.steps
        if s.windowed or s.speculative:
            k, chunk, alone = self._prefill(seen, self.prompt_mean)
            return k, chunk, alone, self._decode_s(seen), self._fluid_service_s(seen, self.prompt_mean)
        p = self.prompt_mean
        room = max(1.0, s.prefill_room(self.limits.max_batched_tokens, seen))
        k = math.ceil(p / room - 1e-9)
        chunk = p / k
        kv = s.kv_s_per_layer_token
        per_flop = s.s_per_flop
        per_token = s.prefill_flops_per_token
        layers = s.layers
        fixed = s.communication_fixed_s + s.overhead_s
        per_comm = s.communication_per_token_s
        weights = s.weights_s
        attended = seen * self.attended_context
        decode_flops = seen * s.decode_flops_per_token + s.attention_flops_per_layer_token * attended
        memory = weights(seen) + kv * attended
        compute = per_flop * decode_flops
        # Per-sequence and per-expert-GEMM costs as time_parts_s counts them.
        per_sequence = s.sequence_overhead_s
        experts = s.expert_overhead_s
        decode = (memory if memory > compute else compute) + fixed + per_comm * seen
        decode += per_sequence * seen + experts(seen)
        # Prompt tokens at their cost to a step (time_parts_s's prefill_cost: 0 on a decode replica).
        cost = s.prefill_cost
        costed = chunk * cost
        memory = weights(seen + costed) + kv * (attended + layers * costed)
        compute = per_flop * (decode_flops + cost * (chunk * per_token + self.prompt_attention_flops / k))
        alone = (memory if memory > compute else compute) + fixed + per_comm * (seen + costed)
        alone += per_sequence * (seen + (1.0 if costed > 0 else 0.0)) + experts(seen + costed)
        costed = room * cost
        memory = weights(seen + costed) + kv * (attended + layers * costed)
        compute = per_flop * (decode_flops + cost * (room * per_token + self.prompt_attention_flops * room / p))
        full = (memory if memory > compute else compute) + fixed + per_comm * (seen + costed)
        full += per_sequence * (seen + (1.0 if costed > 0 else 0.0)) + experts(seen + costed)
        return k, chunk, alone, decode, p * full / room

    # -- the mean core ------------------------------------------------------------------
    def mean_core(self, rate_per_s: float) -> MeanCore:
        """The fixed point at `rate_per_s` (see the module docstring); means only."""
        lam = rate_per_s
        d_mean = self.decode_steps_mean
        p = self.prompt_mean
        budget = self.limits.max_batched_tokens
        shape = self.traffic.burstiness
        n = lam * d_mean * self._decode_s(1.0)
        stable = True
        td = 0.0
        k = 1
        chunk = p
        u = rho = sigma = 0.0
        tpot = 0.0
        # n = F(n), F increasing: plain iteration climbs to the fixed point from below; secant
        # steps speed it up, and a secant step that lands where F fails falls back.
        prev_n = prev_g = math.nan
        last_plain = n
        secant = True
        for _ in range(60):
            # As a decoding request sees the steps: itself and N others.
            seen = n + 1.0
            room = max(1.0, self.steps.prefill_room(budget, seen))
            k, chunk, t_alone, td, service = self._loop_steps(seen)
            rho = lam * service
            failed = rho >= 1.0
            if not failed:
                extra = k * max(0.0, t_alone - td)
                if p < room:
                    sigma = _gi_m_1_sigma(rho, shape)
                    # A prompt that finds a backlog shares its step with the prompts queued
                    # with it (GI/M/1: 1 / (1 - σ) of them): a fuller step, past the knee.
                    packed = min(room, p / (1.0 - sigma))
                    extra = (1.0 - sigma) * extra + sigma * max(0.0, self._prefill(seen, packed)[2] - td) * p / packed
                u = lam * extra
                failed = u >= 1.0
            if not failed:
                tpot = td / (1.0 - u)
                new = lam * d_mean * tpot
                failed = new > self.seats
            if failed:
                if secant and n != last_plain:
                    secant = False
                    n = last_plain
                    continue
                stable = False
                n = min(n, self.seats)
                break
            g = new - n
            if abs(g) <= 1e-7 * (1.0 + n):
                n = new
                break
            candidate = new
            if secant and prev_g == prev_g and g != prev_g:
                candidate = n - g * (n - prev_n) / (g - prev_g)
                if not 0.0 < candidate < math.inf:
                    candidate = new
            prev_n, prev_g = n, g
            last_plain = new
            n = candidate
        k, chunk, tm = self._prefill(n, p)
        prefill = k * tm
        if not stable or lam * prefill >= 1.0:
            return self._unstable(lam, n, k, chunk, td, tm, prefill, u, rho)
        ca2 = self.arrival_scv
        cs2 = self.traffic.prompt_tokens_cv**2
        service = self._fluid_service_s(n, p)
        rho = lam * service
        sigma = _gi_m_1_sigma(rho, shape)
        # GI/M/1's wait, its service scaled to the spread: P-K at Poisson.
        wait = sigma / (1.0 - sigma) * service * (ca2 + cs2) / (ca2 + 1.0)
        given = wait / sigma if sigma > 0 else 0.0
        # The step in flight (a mixed one when the stream is busy, else a decode step if any
        # runs), then the backlog.
        decoding = 1.0 - math.exp(-n)
        residual = sigma * tm / 2 + (1.0 - sigma) * decoding * self._decode_s(max(n, 1.0)) / 2
        n, tpot = self._feedback(lam, n, tpot, td, tm, prefill, min(1.0, lam * prefill), ca2, cs2)
        seat_wait, _, _ = self._seat_wait(lam, prefill, tpot)
        if math.isinf(seat_wait):
            return self._unstable(lam, n, k, chunk, td, tm, prefill, u, rho)
        queue_wait = residual + wait + seat_wait
        overhead = self.steps.hw.request_overhead_s
        ttft = overhead + queue_wait + prefill
        e2e = ttft + d_mean * tpot
        return MeanCore(
            lam, True, n, k, chunk, td, tm, prefill, u, rho, tpot, queue_wait, ttft, e2e, seat_wait, sigma, given
        )

    @staticmethod
    def _unstable(
        lam: float, n: float, k: int, chunk: float, td: float, tm: float, prefill: float, u: float, rho: float
    ) -> MeanCore:
        inf = math.inf
        return MeanCore(lam, False, n, k, chunk, td, tm, prefill, u, rho, inf, inf, inf, inf, inf, 1.0)

    def _feedback(
        self,
        lam: float,
        n: float,
        tpot: float,
        td: float,
        tm: float,
        prefill: float,
        mixed_share: float,
        ca2: float,
        cs2: float,
    ) -> tuple[float, float]:
        """Decodes pile up while the prefill stream is busy (steps are long and prompts keep
        turning into decodes), so they are more numerous on the long steps than on the short
        ones and the mean TPOT exceeds the step average. A fluid model: dN/dt = a(t) - N r(t),
        a = 1/S and r = 1/(E[O-1] t_m) while prefill runs, a = 0 and r = 1/(E[O-1] t_d) while
        not; linearised, with the busy indicator's correlation decaying over the residual
        busy period and the mean idle period, E[N r] = λ gives N."""
        d_mean = self.decode_steps_mean
        if d_mean <= 0 or mixed_share <= 0 or tm <= td:
            return n, tpot
        rho = mixed_share
        r_mean = (rho / tm + (1 - rho) / td) / d_mean
        dr = (1 / td - 1 / tm) / d_mean
        sigma = _gi_m_1_sigma(rho, self.traffic.burstiness)
        busy = prefill / (1 - sigma)
        busy_residual = prefill * (ca2 + cs2) / (2 * (1 - sigma) ** 2)
        idle = busy * (1 - rho) / rho
        decay = 1 / busy_residual + 1 / idle
        c = rho * (1 - rho) / (r_mean + decay)
        denominator = r_mean - dr * dr * c
        if denominator <= 0:
            return n, tpot
        # Prompts turn into decodes as their prefill ends: inside a busy period only when
        # another prompt waits behind them (σ).
        n_corr = (lam + sigma * dr * c / prefill) / denominator
        n0 = lam / r_mean
        factor = n_corr / n0
        return n * factor, tpot * factor

    def _fluid_service_s(self, decodes: float, prompt: float) -> float:
        """A prompt's share of the prefill stream: its tokens at the rate of full steps."""
        s = self.steps
        room = max(1.0, s.prefill_room(self.limits.max_batched_tokens, decodes))
        full = s.time_parts_s(
            decodes,
            decodes * self.attended_context,
            room,
            self.prompt_attention_flops * room / self.prompt_mean,
            s.attended(room),
        )
        return prompt * full / room

    def _seat_wait(self, lam: float, prefill_s: float, tpot_s: float) -> tuple[float, float, float]:
        """Mean wait for a seat, P(wait), and the mean wait given one (Erlang C): a seat is
        held through the prefill and the decode steps."""
        holding_s = prefill_s + self.decode_steps_mean * tpot_s
        offered = lam * holding_s
        c = self.seats
        if c - offered > 4.0 * math.sqrt(offered) + 1.0:
            # Halfin-Whitt: P(wait) < 1e-4 beyond 4 standard deviations of the seats.
            return 0.0, 0.0, 0.0
        if offered >= int(c):
            return math.inf, 1.0, math.inf
        # Allen-Cunneen: G/G/c waits scale with (ca² + cs²) / 2 of M/M/c's.
        cs2 = self.output_var * tpot_s * tpot_s / (holding_s * holding_s)
        scale = (self.arrival_scv + cs2) / 2
        pw = min(1.0, erlang_c(c, offered) * scale**SEAT_PROB_POWER)
        given = holding_s / (int(c) - offered) * scale**SEAT_GIVEN_POWER
        return pw * given, pw, given

    # -- percentiles --------------------------------------------------------------------
    def latency(self, rate_per_s: float, percentiles: bool = True) -> LatencyEstimate:
        """The replica at `rate_per_s`: means always, percentiles when asked; unstable (past
        λ_sat or the fixed point) gives NaN figures and the capacity's output tokens/s."""
        core, util, stable, (kv_mean, kv_sd), kv_ok = self._screen(rate_per_s)
        lam = rate_per_s
        if not stable:
            return LatencyEstimate(
                lam,
                self.saturation_rate_per_s,
                util,
                False,
                math.inf,
                core.running,
                _NAN_PERCENTILES,
                _NAN_PERCENTILES,
                _NAN_PERCENTILES,
                _NAN_PERCENTILES,
                _NAN_PERCENTILES,
                self.saturation_rate_per_s * self.output_mean,
                kv_mean,
                kv_sd,
                False,
                core,
            )
        if percentiles:
            wait, ttft = self._ttft_percentiles(core)
            tpot = self._tpot_percentiles(core)
            itl = self._itl_percentiles(core)
            e2e = self._e2e_percentiles(core, ttft.mean, ttft.p50, ttft.p90)
        else:
            wait = Percentiles(core.queue_wait_s, _NAN, _NAN, _NAN, _NAN)
            ttft = Percentiles(core.ttft_s, _NAN, _NAN, _NAN, _NAN)
            tpot = Percentiles(core.tpot_s, _NAN, _NAN, _NAN, _NAN)
            itl = Percentiles(core.tpot_s, _NAN, _NAN, _NAN, _NAN)
            e2e = Percentiles(core.e2e_s, _NAN, _NAN, _NAN, _NAN)
        return LatencyEstimate(
            lam,
            self.saturation_rate_per_s,
            util,
            True,
            lam * e2e.mean,
            core.running,
            wait,
            ttft,
            tpot,
            itl,
            e2e,
            lam * self.output_mean,
            kv_mean,
            kv_sd,
            kv_ok,
            core,
        )

    def _screen(self, rate_per_s: float) -> tuple[MeanCore, float, bool, tuple[float, float], bool]:
        """The mean core at a rate, its utilization, whether it is stable, the KV tokens held
        (mean, sd) and whether they fit (mean + KV_SIGMAS sd)."""
        core = self.mean_core(rate_per_s)
        util = rate_per_s / self.saturation_rate_per_s
        kv_mean, kv_sd = self._kv(core)
        kv_ok = kv_mean + KV_SIGMAS * kv_sd <= self.limits.kv_capacity_tokens - self.shared_prefix_tokens
        return core, util, core.stable and util < 1.0, (kv_mean, kv_sd), kv_ok

    def _kv(self, core: MeanCore) -> tuple[float, float]:
        """KV tokens held: decoding contexts (per TPOT second) and half-done prompts."""
        lam, tpot = core.rate_per_s, core.tpot_s
        if not core.stable:
            return math.inf, math.inf
        mean = lam * tpot * self.kv_per_rate_mean + lam * core.prefill_s * self.prompt_mean / 2
        var = lam * tpot * self.kv_per_rate_square * max(1.0, self.arrival_scv)
        return mean, math.sqrt(var)

    def _ttft_percentiles(self, core: MeanCore) -> tuple[Percentiles, Percentiles]:
        """The queue wait's and the TTFT's percentiles (see _ttft_distribution)."""
        wait_cdf, ttft_cdf, hi, ttft_mean = self._ttft_distribution(core)
        wait = Percentiles(core.queue_wait_s, *(_solve(wait_cdf, q / 100, hi) for q in OFFERED_PERCENTILES))
        ttft = Percentiles(ttft_mean, *(_solve(ttft_cdf, q / 100, hi) for q in OFFERED_PERCENTILES))
        return wait, ttft

    def _ttft_distribution(self, core: MeanCore) -> tuple[Cdf, Cdf, float, float]:
        """The CDFs of the queue wait and the TTFT, a time above most of their mass (the
        percentile search's start), and the TTFT's mean. TTFT mixed over the prompt's length
        (quadrature nodes) and two cases: the arrival finds the prefill stream idle (1 - σ:
        the residual of a decode step in flight, if any) or busy (σ: the residual of the
        mixed step in flight and the wait for the backlog, a gamma tail); then its own
        chunks; seat waits (Erlang C) on top."""
        n = core.running
        sigma = core.wait_probability
        td = self._decode_s(max(n, 1.0))
        tm = core.mixed_step_s
        decoding = 1.0 - math.exp(-n)
        own = [self._prefill_time(n, p) for p in self.prompt_nodes]
        given = core.busy_wait_s
        overhead = self.steps.hw.request_overhead_s
        _, seat_p, seat_given = self._seat_wait(core.rate_per_s, core.prefill_s, core.tpot_s)
        shape = WAIT_TAIL_SHAPE
        scale = given / shape if given > 0 else 0.0

        def uniform(t: float, width: float) -> float:
            return 1.0 if t >= width else max(0.0, t / width)

        def wait_cdf(t: float) -> float:
            if t < 0:
                return 0.0
            idle = (1.0 - decoding) + decoding * uniform(t, td)
            # The mixed step's residual (its mean), then the backlog.
            busy = gamma_cdf(shape, max(0.0, t - tm / 2) / scale) if scale > 0 else uniform(t, tm)
            f = (1 - sigma) * idle + sigma * busy
            if seat_p > 0:
                f = (1 - seat_p) * f + seat_p * gamma_cdf(SEAT_TAIL_SHAPE, t * SEAT_TAIL_SHAPE / seat_given)
            return f

        def ttft_cdf(t: float) -> float:
            x = t - overhead
            return sum(wait_cdf(x - s) for s in own) / len(own)

        mean = overhead + core.queue_wait_s + sum(own) / len(own)
        return wait_cdf, ttft_cdf, max(core.ttft_s, 1e-6) * 4, mean

    def _prefill_time(self, n: float, prompt: float) -> float:
        k, _, t = self._prefill(n, prompt)
        return k * t

    def _tpot_spread(self, core: MeanCore) -> tuple[float, float]:
        """Per unit window, the variance of the prefill time arriving in a request's decode
        window (compound count of prompts, over-dispersed by ca² and the load), and that of
        the drift of N (seconds² per decode step², times the window's steps)."""
        lam, n = core.rate_per_s, core.running
        x2 = 0.0
        for p in self.prompt_nodes:
            k, _, t = self._prefill(n + 1.0, p)
            x = k * max(0.0, t - core.decode_step_s)
            x2 += x * x
        x2 /= len(self.prompt_nodes)
        amplify = 1.0 / (1.0 - core.load)
        count = TPOT_DISPERSION * self.arrival_scv * lam * core.tpot_s * x2 * math.pow(amplify, TPOT_AMPLIFY_POWER)
        slope = self._decode_s(n + 2.0) - self._decode_s(n + 1.0)
        drift = (slope * amplify) ** 2 * N_DRIFT_SHARE * n * self.arrival_scv
        return count, drift

    def _tpot_variance(self, core: MeanCore, decode_steps: float, spread: tuple[float, float] | None = None) -> float:
        """Variance of one request's TPOT over `decode_steps` steps: the arrivals' part
        falls as 1 / steps, the drift of N does not."""
        count, drift = self._tpot_spread(core) if spread is None else spread
        return count / decode_steps + drift

    def _tpot_percentiles(self, core: MeanCore) -> Percentiles:
        cdf = self._tpot_cdf(core)
        if cdf is None:
            return Percentiles(0.0, 0.0, 0.0, 0.0, 0.0)
        mean = core.tpot_s
        return Percentiles(mean, *(_solve(cdf, q / 100, mean * 2) for q in OFFERED_PERCENTILES))

    def _tpot_cdf(self, core: MeanCore) -> Cdf | None:
        """A lognormal of the mean TPOT and each output length's variance, mixed over the
        output lengths of requests with at least two tokens (None: no request has two)."""
        mean = core.tpot_s
        spread = self._tpot_spread(core)
        variances = [self._tpot_variance(core, o - 1, spread) for o in self.output_nodes if o >= 2]
        if not variances:
            return None

        def cdf(t: float) -> float:
            return sum(_lognormal_cdf(mean, v, t) for v in variances) / len(variances)

        return cdf

    def _itl_percentiles(self, core: MeanCore) -> Percentiles:
        """Step durations as decoding requests see them: decode-only steps, steps carrying a
        lone prompt's chunk (an arrival that found the stream idle, 1 - σ), and steps packed
        with the prompts queued together (σ; 1 / (1 - σ) prompts, up to the budget)."""
        lam, tpot, n, sigma = core.rate_per_s, core.tpot_s, core.running, core.wait_probability
        seen = n + 1.0
        p = self.prompt_mean
        room = max(1.0, self.steps.prefill_room(self.limits.max_batched_tokens, seen))
        k, _, alone = self._prefill(seen, p)
        td = self._decode_s(seen)
        parts = [(td, 0.0), (max(td, alone), lam * (1 - sigma) * k * tpot)]
        if p < room and sigma > 0:
            packed = min(room, p / (1 - sigma))
            parts.append((max(td, self._prefill(seen, packed)[2]), lam * sigma * p / packed * tpot))
        else:
            parts[1] = (parts[1][0], lam * k * tpot)
        mixed = sum(w for _, w in parts[1:])
        if mixed > 1.0:
            parts = [(t, w / mixed) for t, w in parts]
            mixed = 1.0
        parts[0] = (td, 1.0 - mixed)
        parts.sort()
        values = []
        for q in OFFERED_PERCENTILES:
            acc = 0.0
            value = parts[-1][0]
            for t, w in parts:
                acc += w
                if acc >= q / 100:
                    value = t
                    break
            values.append(value)
        return Percentiles(core.tpot_s, *values)

    def _e2e_percentiles(self, core: MeanCore, ttft_mean: float, ttft_p50: float, ttft_p90: float) -> Percentiles:
        cdf, mean = self._e2e_distribution(core, ttft_mean, ttft_p50, ttft_p90)
        return Percentiles(mean, *(_solve(cdf, q / 100, mean * 2) for q in OFFERED_PERCENTILES))

    def _e2e_distribution(
        self, core: MeanCore, ttft_mean: float, ttft_p50: float, ttft_p90: float
    ) -> tuple[Cdf, float]:
        """TTFT plus the decode steps, mixed over output lengths (lognormal per length; the
        TTFT's spread read off its p50 to p90): the CDF and the mean."""
        ttft_var = ((ttft_p90 - ttft_p50) / 1.2816) ** 2 if ttft_p90 > ttft_p50 else 0.0
        tpot = core.tpot_s
        spread = self._tpot_spread(core)
        parts = []
        for o in self.output_nodes:
            d = o - 1
            var = ttft_var + (d * d * self._tpot_variance(core, d, spread) if d > 0 else 0.0)
            parts.append((ttft_mean + d * tpot, var))
        mean = sum(m for m, _ in parts) / len(parts)

        def cdf(t: float) -> float:
            return sum(_lognormal_cdf(m, v, t) for m, v in parts) / len(parts)

        return cdf, mean

    # -- capacity -----------------------------------------------------------------------
    def max_request_rate(
        self,
        ttft_slo_s: float | None = None,
        tpot_slo_s: float | None = None,
        e2e_slo_s: float | None = None,
        percentile: float | None = 95.0,
        relative_tolerance: float = 1e-3,
    ) -> MaxRate:
        """The highest rate whose percentile TTFT, TPOT and E2E meet the given SLOs and
        whose KV use (mean + 3 sd) fits, by bisection on (0, λ_sat). `percentile` None holds
        the means to the SLOs instead: the mean core alone, fast enough to rank every shape
        before computing percentiles for the finalists."""
        if percentile is not None and float(percentile) not in OFFERED_PERCENTILES:
            raise ValueError(f"percentile must be one of {OFFERED_PERCENTILES}")

        slos = (ttft_slo_s, tpot_slo_s, e2e_slo_s)

        def failing(rate: float) -> Binding | None:
            if percentile is None:
                est = self.latency(rate, percentiles=False)
                if not est.stable:
                    return Binding.SATURATION
                if not est.kv_ok:
                    return Binding.KV_CAPACITY
                return _first_missed(slos, (est.ttft_s.mean, est.tpot_s.mean, est.e2e_s.mean))
            return self._missed_at_percentile(rate, slos, percentile / 100)

        lo, hi = 0.0, self.saturation_rate_per_s
        reason = Binding.SATURATION
        tiny = hi * 1e-6
        why = failing(tiny)
        if why is not None:
            return MaxRate(0.0, why, False, self.latency(tiny, percentiles=percentile is not None))
        lo = tiny
        while hi - lo > relative_tolerance * hi:
            mid = (lo + hi) / 2
            why = failing(mid)
            if why is None:
                lo = mid
            else:
                hi, reason = mid, why
        if reason == Binding.SATURATION:
            reason = self.saturation_bound
        return MaxRate(lo, reason, True, self.latency(lo, percentiles=percentile is not None))

    def _missed_at_percentile(
        self, rate_per_s: float, slos: tuple[float | None, float | None, float | None], q: float
    ) -> Binding | None:
        """What a rate misses, computing only the SLOs' own figures at quantile q (a capacity
        search needs one percentile of each, not the whole table): None when it meets them."""
        core, _, stable, _, kv_ok = self._screen(rate_per_s)
        if not stable:
            return Binding.SATURATION
        if not kv_ok:
            return Binding.KV_CAPACITY
        # The q-quantile exceeds an SLO exactly when less than q of the distribution lies at or
        # below it: one evaluation of the CDF at the SLO, not a search for the quantile.
        ttft_slo_s, tpot_slo_s, e2e_slo_s = slos
        if ttft_slo_s is not None or e2e_slo_s is not None:
            _, ttft_cdf, hi, ttft_mean = self._ttft_distribution(core)
            if ttft_slo_s is not None and ttft_cdf(ttft_slo_s) < q:
                return Binding.TTFT_SLO
        if tpot_slo_s is not None:
            tpot_cdf = self._tpot_cdf(core)
            if tpot_cdf is not None and tpot_cdf(tpot_slo_s) < q:
                return Binding.TPOT_SLO
        if e2e_slo_s is not None:
            p50, p90 = (_solve(ttft_cdf, at, hi, SEARCH_PRECISION) for at in (0.5, 0.9))
            e2e_cdf, _ = self._e2e_distribution(core, ttft_mean, p50, p90)
            if e2e_cdf(e2e_slo_s) < q:
                return Binding.E2E_SLO
        return None


def _first_missed(
    slos: tuple[float | None, float | None, float | None], figures: tuple[float, float, float]
) -> Binding | None:
    """The first of TTFT, TPOT, E2E whose figure exceeds its SLO (None: all met)."""
    for name, slo, figure in zip((Binding.TTFT_SLO, Binding.TPOT_SLO, Binding.E2E_SLO), slos, figures, strict=True):
        if slo is not None and figure > slo:
            return name
    return None

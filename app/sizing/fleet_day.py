"""A simulated day of a fleet under an autoscaling policy (simulate.py's replica simulator, many replicas).

Requests arrive over the day at each hour's rate (gamma gaps of shape `burstiness`, Poisson
at 1) and are spread round robin over the replicas that serve (a Kubernetes Service's spread,
without load awareness); each replica is the discrete-event simulator's vLLM-like scheduler
(`simulate.FedReplica`), run interval by interval. Every `polling_interval_s` the autoscaler
reads the serving replicas' gauges and acts as KEDA's ScaledObject through the HPA does:

- each trigger wants ceil(sum of its gauge / threshold) replicas (AverageValue), left as is
  within HPA's 10% tolerance of the current count; the policy wants the most any trigger
  wants, within [min_replicas, max_replicas];
- scale-up is immediate (no stabilization), at most max(4, current) replicas a poll (HPA's
  default rate); a warm replica (loaded, idle, not serving) serves from the next poll, a new
  one only after `scale_up_delay_s` (node provisioning and the model's load), and a warm
  replica taken is replaced, which takes the same delay;
- scale-down takes the highest recommendation of the last `scale_down_delay_s` (HPA's
  stabilization window), one replica a minute (the policy `format=keda` emits); a starting
  replica is cancelled first, else the newest serving one stops taking requests and drains.

A replica costs from the decision that starts it to the end of its drain (warm ones all
the while). Requests still in the fleet at midnight are run to completion, without new
arrivals, and counted in the hour they arrived; their replicas' last minutes are billed.
Requests that arrive while no replica serves wait at the gateway for the first to come up.

The cost is the simulator's per request plus the fleet's per poll; a day is bounded by
`max_work` units summed over its replicas (simulate.WorkLimitExceeded past it), and checks the
request's time budget at every poll (app/sizing/budget.py).
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field

from . import budget as request_budget
from .budget import UNBOUNDED_WORK
from .simulate import FedReplica, Limits, Outcomes, Traffic, WorkLimitExceeded
from .timing import StepModel
from .triggers import IN_FLIGHT, KV_USAGE, WAITING

SECONDS_PER_HOUR = 3600.0
POLLING_INTERVAL_S = 15.0
# HPA: no change while the wanted / current ratio is within 10% of 1.
HPA_TOLERANCE = 0.1
# HPA's default scale-up rate: the larger of 4 pods and 100% a period (here a poll).
SCALE_UP_PODS = 4
# The scale-down policy format=keda emits: one pod a minute.
SCALE_DOWN_PERIOD_S = 60.0
# Past midnight the fleet keeps stepping until the day's last request finished, this long at most.
MAX_DRAIN_S = 6 * SECONDS_PER_HOUR


@dataclass(frozen=True)
class Policy:
    """The autoscaler: `triggers` as (signal, threshold per replica) pairs, the HPA's max over
    them; delays in seconds; replica bounds and the warm pool. A static fleet is
    min_replicas == max_replicas with no triggers."""

    triggers: tuple[tuple[str, float], ...]
    scale_up_delay_s: float
    scale_down_delay_s: float
    min_replicas: int
    max_replicas: int
    warm_pool: int = 0
    polling_interval_s: float = POLLING_INTERVAL_S


@dataclass(frozen=True)
class DayTraffic:
    """Requests arriving in each hour of the day, how bursty, and the replica's request shape
    (`shape.rate_per_s` unused)."""

    hourly_requests: tuple[float, ...]
    shape: Traffic

    @property
    def requests(self) -> float:
        return math.fsum(self.hourly_requests)


@dataclass(frozen=True)
class Slos:
    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None


@dataclass(frozen=True)
class HourResult:
    hour: int
    arrived: int
    finished: int
    missed_ttft: int
    missed_tpot: int
    missed_e2e: int
    missed_any: int
    replica_hours: float  # billed: starting, serving, draining and warm
    serving_mean: float  # replicas serving, time-averaged over the hour
    serving_max: int


@dataclass(frozen=True)
class DayResult:
    hours: list[HourResult]
    # (time s, serving, starting, warm) at every change.
    timeline: list[tuple[float, int, int, int]]
    replica_hours: float
    arrived: int
    finished: int
    missed_any: int
    work: int
    scale_ups: int
    scale_downs: int
    drain_s: float  # past midnight until the last request finished

    @property
    def violation_rate(self) -> float:
        return self.missed_any / self.finished if self.finished else 0.0


@dataclass
class _Replica:
    engine: FedReplica
    ready_s: float  # when it serves (or, warm, could)
    billed_from_s: float
    warm: bool = False


@dataclass
class _Fleet:
    serving: list[_Replica] = field(default_factory=list)
    starting: list[_Replica] = field(default_factory=list)  # will serve at ready_s
    warming: list[_Replica] = field(default_factory=list)  # will be warm at ready_s
    warm: list[_Replica] = field(default_factory=list)
    draining: list[_Replica] = field(default_factory=list)

    def billed(self) -> int:
        return len(self.serving) + len(self.starting) + len(self.warming) + len(self.warm) + len(self.draining)


def expected_work_floor(day: DayTraffic, limits: Limits) -> int:
    """A lower bound on a day's work before it runs: each request is admitted at least once
    and its prompt takes at least its share of a step's token budget (simulate's own floor,
    on the day's mean lengths)."""
    requests = day.requests
    return math.ceil(requests * (1 + day.shape.prompt_tokens / limits.max_batched_tokens))


def _arrivals(day: DayTraffic, rng: random.Random) -> list[float]:
    """The day's arrival times: in each hour, gamma gaps at that hour's rate."""
    times: list[float] = []
    k = day.shape.burstiness
    for hour, requests in enumerate(day.hourly_requests):
        if requests <= 0:
            continue
        rate = requests / SECONDS_PER_HOUR
        start, end = hour * SECONDS_PER_HOUR, (hour + 1) * SECONDS_PER_HOUR
        t = start
        if k == 1.0:
            while True:
                t += rng.expovariate(rate)
                if t >= end:
                    break
                times.append(t)
        else:
            scale = 1.0 / (k * rate)
            while True:
                t += rng.gammavariate(k, scale)
                if t >= end:
                    break
                times.append(t)
    return times


def _wanted(policy: Policy, serving: list[_Replica], current: int) -> int:
    """The replicas the triggers want (HPA: AverageValue over the summed gauges, 10% tolerance)."""
    if not policy.triggers:
        return current
    waiting = running = 0
    kv = 0.0
    for replica in serving:
        w, r, k = replica.engine.gauges()
        waiting += w
        running += r
        kv += k
    totals = {IN_FLIGHT: float(waiting + running), WAITING: float(waiting), KV_USAGE: kv}
    wanted = 0
    for signal, threshold in policy.triggers:
        total = totals[signal]
        if current > 0 and abs(total / (threshold * current) - 1.0) <= HPA_TOLERANCE:
            want = current
        else:
            want = math.ceil(total / threshold - 1e-9)
        wanted = max(wanted, want)
    return wanted


def simulate_day(
    steps: StepModel,
    limits: Limits,
    day: DayTraffic,
    policy: Policy,
    slos: Slos,
    *,
    initial_replicas: int,
    seed: int = 0,
    max_work: int = UNBOUNDED_WORK,
) -> DayResult:
    """The day under `policy`, starting with `initial_replicas` serving (see the module
    docstring). Raises WorkLimitExceeded when the day needs more than `max_work` units:
    before it starts when its floor (expected_work_floor) is already over."""
    floor = expected_work_floor(day, limits)
    if floor > max_work:
        raise WorkLimitExceeded(max_work, 0.0, 0, floor)
    hours = len(day.hourly_requests)
    end_s = hours * SECONDS_PER_HOUR
    outcomes = Outcomes(hours, slos.ttft_s, slos.tpot_s, slos.e2e_s)
    rng = random.Random(seed)
    arrivals = _arrivals(day, random.Random(rng.getrandbits(64)))
    arrived_by_hour = [0] * hours
    for t in arrivals:
        arrived_by_hour[int(t // SECONDS_PER_HOUR)] += 1
    shape = day.shape
    made = 0

    def new_replica(now: float, ready_s: float) -> _Replica:
        nonlocal made
        made += 1
        engine = FedReplica(steps, shape, limits, seed * 1_000_003 + made, outcomes, ready_s)
        return _Replica(engine, ready_s, now)

    fleet = _Fleet()
    first = max(policy.min_replicas, min(policy.max_replicas, initial_replicas))
    fleet.serving = [new_replica(0.0, 0.0) for _ in range(first)]
    fleet.warm = [new_replica(0.0, 0.0) for _ in range(policy.warm_pool)]
    for replica in fleet.warm:
        replica.warm = True
    retired_work = 0
    gateway: deque[float] = deque()
    interval = policy.polling_interval_s
    recommendations: deque[tuple[float, int]] = deque()
    last_down = -math.inf
    scale_ups = scale_downs = 0
    billed_s = [0.0] * hours
    serving_s = [0.0] * hours
    serving_max = [0] * hours
    timeline: list[tuple[float, int, int, int]] = []
    next_rr = 0
    i_arrival = 0
    n_arrivals = len(arrivals)
    t0 = 0.0

    def note(now: float) -> None:
        state = (len(fleet.serving), len(fleet.starting), len(fleet.warm) + len(fleet.warming))
        if not timeline or timeline[-1][1:] != state:
            timeline.append((now, *state))

    note(0.0)
    while True:
        request_budget.check("the simulated day")
        t1 = t0 + interval
        # Replicas whose delay is over serve (or wait warm) from this interval on.
        for replica in [r for r in fleet.starting if r.ready_s <= t0]:
            fleet.starting.remove(replica)
            fleet.serving.append(replica)
        for replica in [r for r in fleet.warming if r.ready_s <= t0]:
            fleet.warming.remove(replica)
            replica.warm = True
            fleet.warm.append(replica)
        serving = fleet.serving
        # The interval's arrivals, round robin (those that found no replica first).
        if serving:
            count = len(serving)
            while gateway:
                serving[next_rr % count].engine.push(max(gateway.popleft(), t0))
                next_rr += 1
            while i_arrival < n_arrivals and arrivals[i_arrival] < t1:
                serving[next_rr % count].engine.push(arrivals[i_arrival])
                next_rr += 1
                i_arrival += 1
        else:
            while i_arrival < n_arrivals and arrivals[i_arrival] < t1:
                gateway.append(arrivals[i_arrival])
                i_arrival += 1
        used = retired_work
        for replica in (*serving, *fleet.draining):
            engine = replica.engine
            engine.max_work = max_work - used + engine.work
            engine.run(t1)
            used += engine.work
        for replica in (*fleet.starting, *fleet.warming, *fleet.warm):
            replica.engine.now = max(replica.engine.now, t1)
        total_work = retired_work + sum(r.engine.work for r in (*serving, *fleet.draining))
        if total_work > max_work:
            raise WorkLimitExceeded(max_work, t1, sum(r.engine.preemptions for r in serving))
        for replica in [r for r in fleet.draining if r.engine.idle]:
            fleet.draining.remove(replica)
            retired_work += replica.engine.work
        hour = min(int(t0 // SECONDS_PER_HOUR), hours - 1)
        billed_s[hour] += fleet.billed() * interval
        serving_s[hour] += len(serving) * interval
        serving_max[hour] = max(serving_max[hour], len(serving))
        if t1 >= end_s and i_arrival >= n_arrivals and not gateway:
            if all(r.engine.idle for r in serving) and not fleet.draining:
                t0 = t1
                break
            if t1 >= end_s + MAX_DRAIN_S:
                t0 = t1
                break
        # The autoscaler's poll.
        current = len(serving) + len(fleet.starting)
        if t1 < end_s:
            wanted = min(policy.max_replicas, max(policy.min_replicas, _wanted(policy, serving, current)))
            recommendations.append((t1, wanted))
            while recommendations and recommendations[0][0] < t1 - policy.scale_down_delay_s:
                recommendations.popleft()
            if wanted > current:
                add = min(wanted - current, max(SCALE_UP_PODS, current))
                scale_ups += 1
                for _ in range(add):
                    if fleet.warm:
                        replica = fleet.warm.pop()
                        replica.warm = False
                        replica.ready_s = t1
                        fleet.starting.append(replica)
                    else:
                        fleet.starting.append(new_replica(t1, t1 + policy.scale_up_delay_s))
            else:
                held = max(w for _, w in recommendations)
                if held < current and t1 - last_down >= SCALE_DOWN_PERIOD_S:
                    last_down = t1
                    scale_downs += 1
                    if fleet.starting:
                        fleet.starting.pop()
                    elif fleet.serving:
                        fleet.draining.append(fleet.serving.pop())
            # The warm pool refills: each taken one is replaced, after the same delay.
            while len(fleet.warm) + len(fleet.warming) < policy.warm_pool:
                fleet.warming.append(new_replica(t1, t1 + policy.scale_up_delay_s))
        else:
            # Past midnight nothing new starts: the warm pool and the starting replicas go.
            fleet.warm.clear()
            fleet.warming.clear()
            fleet.starting.clear()
        note(t1)
        t0 = t1
    work = retired_work + sum(r.engine.work for r in (*fleet.serving, *fleet.draining))
    results = []
    for h in range(hours):
        results.append(
            HourResult(
                hour=h,
                arrived=arrived_by_hour[h],
                finished=outcomes.finished[h],
                missed_ttft=outcomes.missed_ttft[h],
                missed_tpot=outcomes.missed_tpot[h],
                missed_e2e=outcomes.missed_e2e[h],
                missed_any=outcomes.missed_any[h],
                replica_hours=billed_s[h] / SECONDS_PER_HOUR,
                serving_mean=serving_s[h] / SECONDS_PER_HOUR,
                serving_max=serving_max[h],
            )
        )
    return DayResult(
        hours=results,
        timeline=timeline,
        replica_hours=math.fsum(billed_s) / SECONDS_PER_HOUR,
        arrived=n_arrivals,
        finished=sum(outcomes.finished),
        missed_any=sum(outcomes.missed_any),
        work=work,
        scale_ups=scale_ups,
        scale_downs=scale_downs,
        drain_s=max(0.0, t0 - end_s),
    )


def static_policy(replicas: int) -> Policy:
    """A fleet held at `replicas` all day (the plan's peak fleet)."""
    return Policy((), 0.0, 0.0, replicas, replicas)


# The recommendation's grid: warm pools and each trigger's threshold scaled by these, the
# fewest min_replicas that meets the target found for each pair.
WARM_POOLS = (0, 1, 2)
THRESHOLD_SCALES = (1.0, 0.7)


@dataclass(frozen=True)
class Candidate:
    policy: Policy
    threshold_scale: float
    result: DayResult


def scaled(policy: Policy, scale: float, min_replicas: int, warm_pool: int) -> Policy:
    return Policy(
        tuple((signal, threshold * scale) for signal, threshold in policy.triggers),
        policy.scale_up_delay_s,
        policy.scale_down_delay_s,
        min_replicas,
        max(min_replicas, policy.max_replicas),
        warm_pool,
        policy.polling_interval_s,
    )


def recommendation_days_floor() -> int:
    """The fewest days a recommendation simulates: one a grid pair."""
    return len(WARM_POOLS) * len(THRESHOLD_SCALES)


def recommend(
    steps: StepModel,
    limits: Limits,
    day: DayTraffic,
    policy: Policy,
    slos: Slos,
    max_violation_rate: float,
    *,
    initial_replicas: int,
    highest_min: int,
    seed: int = 0,
    max_work: int = UNBOUNDED_WORK,
) -> tuple[Candidate | None, list[Candidate]]:
    """The cheapest policy in replica-hours whose day misses an SLO for at most
    `max_violation_rate` of its requests: for each warm pool and threshold scale of the grid,
    the fewest min_replicas (from 1 up to `highest_min`) that meets it. A point is not run
    when its floor (min_replicas and the warm pool billed all day) already costs no less
    than the best found, nor are larger min_replicas of its pair. Returns the best (None
    when no point meets the target) and every point run, in order; `max_work` bounds the
    whole search (WorkLimitExceeded)."""
    evaluated: list[Candidate] = []
    used = 0
    hours = len(day.hourly_requests)
    best: Candidate | None = None
    for warm in WARM_POOLS:
        for scale in THRESHOLD_SCALES:
            for low in range(1, highest_min + 1):
                if best is not None and (low + warm) * hours >= best.result.replica_hours:
                    break
                trial = scaled(policy, scale, low, warm)
                result = simulate_day(
                    steps,
                    limits,
                    day,
                    trial,
                    slos,
                    initial_replicas=initial_replicas,
                    seed=seed,
                    max_work=max_work - used,
                )
                used += result.work
                found = Candidate(trial, scale, result)
                evaluated.append(found)
                if result.violation_rate <= max_violation_rate:
                    if best is None or result.replica_hours < best.result.replica_hours:
                        best = found
                    break
    return best, evaluated

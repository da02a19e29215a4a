"""A request's work budget: how long its computation may run, and how much simulator work
its simulations may take between them.

The API starts one per request (`running(Budget(...))`, the service's TIME_BUDGET_S and
WORK_BUDGET_UNITS settings); the long loops check it cooperatively: the simulator every
1,024 scheduler passes (and every 65,536 steps it walks one by one), the ranking at each
shape, the forecast at each period, the integer programs through their solver's time limit.
Past its time, `check` raises OutOfTime, which the API answers 503 with Retry-After: the
computation stops where it is, its worker free for the next request, rather than running into
the server's worker timeout. Simulations draw their `max_work` from `work_left()` and
`spend()` what they used, so an answer's simulations together stay within the work budget.

Outside a request (the CLI, the benchmarks, the tests of app/sizing) there is no budget:
`current()` is unbounded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

# No limit on a computation's work.
UNBOUNDED_WORK = 1 << 62


class OutOfTime(Exception):
    """A computation stopped at its time budget: `limit_s` seconds, `elapsed_s` when it was
    noticed, while it was doing `doing` (a phrase: "the simulation", "the ranking")."""

    def __init__(self, limit_s: float, elapsed_s: float, doing: str) -> None:
        super().__init__(f"{doing} ran past the time budget of {limit_s:g} s")
        self.limit_s = limit_s
        self.elapsed_s = elapsed_s
        self.doing = doing


@dataclass
class Budget:
    """`time_s` seconds of wall time from `started` (by `clock`), and `work_units` of
    simulator work (scheduler passes, prefill chunks, preemptions, steps walked one by one)."""

    time_s: float = math.inf
    work_units: int = UNBOUNDED_WORK
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    started: float = math.nan
    spent_units: int = 0

    def __post_init__(self) -> None:
        if math.isnan(self.started):
            self.started = self.clock()

    def elapsed_s(self) -> float:
        return self.clock() - self.started

    def remaining_s(self) -> float:
        return self.time_s - self.elapsed_s()

    def check(self, doing: str) -> None:
        """Raise OutOfTime when the time budget is spent."""
        if self.time_s != math.inf:
            elapsed = self.elapsed_s()
            if elapsed > self.time_s:
                raise OutOfTime(self.time_s, elapsed, doing)

    def work_left(self) -> int:
        return max(0, self.work_units - self.spent_units)

    def spend(self, units: int) -> None:
        self.spent_units += units


_UNBOUNDED = Budget()
_CURRENT: ContextVar[Budget | None] = ContextVar("fleet_sizer_budget", default=None)


def current() -> Budget:
    """The running request's budget; unbounded outside one."""
    return _CURRENT.get() or _UNBOUNDED


def check(doing: str) -> None:
    """Raise OutOfTime when the running request's time budget is spent."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.check(doing)


def solver_time_limit_s(own_limit_s: float) -> float:
    """An integer program's time limit: its own, or what is left of the request's time when
    less (at least a tenth of a second, so the solver returns its best answer so far)."""
    return max(0.1, min(own_limit_s, current().remaining_s()))


def start(budget: Budget) -> object:
    """Make `budget` the running one; returns the token `stop` takes."""
    return _CURRENT.set(budget)


def stop(token: object) -> None:
    _CURRENT.reset(token)  # type: ignore[arg-type]


@contextmanager
def running(budget: Budget) -> Iterator[Budget]:
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)

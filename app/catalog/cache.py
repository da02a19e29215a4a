"""A worker's in-memory copy of database rows, kept fresh by a fingerprint query.

Planning reads the catalog and the stored calibrations on every request, so each worker keeps
them as frozen snapshots (specs, not ORM rows) and asks the database only for a fingerprint of
the tables (one aggregate query) at most every CHECK_INTERVAL_S, reloading when it changed. A
write from any worker, replica or the CLI changes the fingerprint, and the worker reloads; the
worker that writes drops its copy at once (`invalidate`).

Measured under gunicorn (`make bench`, 2 workers): checking on every request cost planning
GETs 15 to 40 % of their requests/s (0.18 ms of a ~0.6 ms answer); once a second it costs
nothing measurable, for edits that reach the other workers up to a second later.

When a check or a reload fails with a database error and the worker has a copy, the copy is
served (`Outage`): callers put `Outage.note` in their answers, and the next check waits twice
as long each time (CHECK_INTERVAL_S doubling up to DB_RETRY_MAX_S), so an outage does not cost
every request a connection timeout. The first check that succeeds ends it. A check whose
connection was cut under it (a terminated backend: the pool's ping passed, the query did not) is
retried once on a new connection before the worker calls the database unreachable.

Standard SQLAlchemy only: the Flask glue (one cache per app, one snapshot per request) is
app/api/lookup.py's.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import Engine, Executable
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger(__name__)

# How often a worker compares its copy with the database's fingerprint. Callers recheck at once
# when a request names a slug the copy lacks (so a new model is plannable everywhere on the
# next request); edits and deletions made through another worker or replica reach this one
# within this interval.
CHECK_INTERVAL_S = 1.0
# The longest wait between checks while the database is unreachable (DB_RETRY_MAX_S).
DEFAULT_RETRY_MAX_S = 30.0

T = TypeVar("T")


class Outage:
    """A worker's view of a database it cannot reach: since when, and when to try again.

    Each failed check doubles the wait before the next one (from CHECK_INTERVAL_S up to
    `retry_max_s`); until then the copy is served without asking the database."""

    def __init__(self, retry_max_s: float = DEFAULT_RETRY_MAX_S) -> None:
        self.retry_max_s = retry_max_s
        self.since: datetime | None = None
        self.failures = 0
        self.retry_at = -math.inf

    def failed(self, now: float, exc: BaseException, what: str) -> None:
        if self.since is None:
            self.since = datetime.now(UTC)
            log.warning("database unreachable, %s served from memory: %s", what, exc.__class__.__name__)
        self.failures += 1
        self.retry_at = now + min(CHECK_INTERVAL_S * 2 ** (self.failures - 1), self.retry_max_s)

    def ended(self, what: str) -> None:
        if self.since is not None:
            log.warning("database reachable again, %s reloaded from it", what)
        self.since = None
        self.failures = 0
        self.retry_at = -math.inf

    def waiting(self, now: float) -> bool:
        return self.since is not None and now < self.retry_at

    def note(self, what: str) -> str | None:
        if self.since is None:
            return None
        since = self.since.isoformat(timespec="seconds").replace("+00:00", "Z")
        return f"{what} served from memory: the database is unreachable since {since}"


@dataclass(frozen=True)
class _Copy(Generic[T]):
    value: T
    fingerprint: tuple[Any, ...]
    depends_on: Hashable
    loaded_at: float


class FingerprintCache(Generic[T]):
    """One worker's copy of what `load` reads, reloaded when `fingerprint` answers otherwise,
    when `depends_on` (e.g. the serial of another copy it reads from) changes, or when older
    than `max_age_s`. `load(session, serial)` numbers its copies with `serial`, which counts
    this cache's loads: what anything derived from a copy is keyed by."""

    def __init__(
        self,
        engine: Engine,
        sessions: sessionmaker[Session],
        *,
        what: str,
        fingerprint: Executable,
        load: Callable[[Session, int], T],
        outage: Outage | None = None,
        max_age_s: float = math.inf,
    ) -> None:
        self.what = what
        self._engine = engine
        self._sessions = sessions
        self._fingerprint = fingerprint
        self._load = load
        self.max_age_s = max_age_s
        self._copy: _Copy[T] | None = None
        self._loads = 0
        self._checked_at = -math.inf
        # Shared by caches of the same database: one failed check per request at most.
        self.outage = outage or Outage()

    def fingerprint(self) -> tuple[Any, ...]:
        """One round trip on a Core connection, not an ORM session: about 180 us on SQLite
        against about 300 us, and still seen by SQLAlchemy's events and logging."""
        with self._engine.connect() as connection:
            return tuple(tuple(row) for row in connection.execute(self._fingerprint))

    def get(self, *, recheck: bool = False, depends_on: Hashable = None) -> tuple[T, bool]:
        """The copy, and whether it was compared with the database just now. Raises the
        database's error only when there is no copy to serve."""
        started = time.monotonic()
        copy = self._copy
        fresh = copy is not None and copy.depends_on == depends_on
        if copy is not None and fresh and not recheck and started - self._checked_at < CHECK_INTERVAL_S:
            return copy.value, False
        if copy is not None and self.outage.waiting(started):
            return copy.value, True
        try:
            try:
                copy = self._refresh(copy, fresh, depends_on, started)
            except DBAPIError as exc:
                if not exc.connection_invalidated:
                    raise
                # One connection was cut (a terminated backend, a restarted proxy) after the pool's
                # ping: the pool has dropped it, and a new one is a round trip away. Only a second
                # failure says the database is unreachable.
                log.info("database connection lost, retrying once: %s", exc.__class__.__name__)
                copy = self._refresh(copy, fresh, depends_on, started)
        except SQLAlchemyError as exc:
            if copy is None:
                raise
            self.outage.failed(time.monotonic(), exc, self.what)
            return copy.value, True
        self.outage.ended(self.what)
        return copy.value, True

    def _refresh(self, copy: _Copy[T] | None, fresh: bool, depends_on: Hashable, started: float) -> _Copy[T]:
        """Compare the copy with the database's fingerprint and reload it when they differ."""
        # The fingerprint is read before the rows: a write landing in between makes the copy
        # newer than its fingerprint, which costs one more reload, never a stale copy.
        current = self.fingerprint()
        self._checked_at = started
        if copy is None or not fresh or copy.fingerprint != current or started - copy.loaded_at > self.max_age_s:
            with self._sessions() as db:
                value = self._load(db, self._loads + 1)
            self._loads += 1
            copy = self._copy = _Copy(value, current, depends_on, time.monotonic())
        return copy

    def invalidate(self) -> None:
        """Drop the copy (after committing a write through this worker)."""
        self._copy = None

"""Database URL, engine and session factory for the catalog.

One engine per process (per gunicorn worker); sessions are owned by the caller (a request,
a CLI command, a test), never by the query functions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

REPO_ROOT = Path(__file__).resolve().parents[2]
ALEMBIC_INI = REPO_ROOT / "alembic.ini"
DEFAULT_SQLITE_PATH = REPO_ROOT / "instance" / "fleet_sizer.sqlite3"

# Heroku-style and bare PostgreSQL URLs name no driver (or a retired one); we ship psycopg 3.
_POSTGRES_PREFIXES = ("postgres://", "postgresql://")
_PSYCOPG_PREFIX = "postgresql+psycopg://"

SQLITE_BUSY_TIMEOUT_MS = 5000
SQLITE_BEGIN_IMMEDIATE = "fleet_sizer_sqlite_begin_immediate"


def database_url(env: Mapping[str, str] = os.environ) -> str:
    """The catalog's URL: `DATABASE_URL`, else the SQLite file under `instance/`."""
    url = env.get("DATABASE_URL", "").strip()
    if not url:
        return f"sqlite:///{DEFAULT_SQLITE_PATH}"
    return normalise_url(url)


def normalise_url(url: str) -> str:
    """Point driverless PostgreSQL URLs at psycopg 3; leave every other URL alone."""
    for prefix in _POSTGRES_PREFIXES:
        if url.startswith(prefix):
            return _PSYCOPG_PREFIX + url[len(prefix) :]
    return url


def _is_sqlite_memory(url: URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or url.query.get("mode") == "memory"


@dataclass(frozen=True)
class DbTimeouts:
    """How long a worker waits on PostgreSQL before it gives up (DB_* settings).

    `connect_s` bounds a whole connection attempt (libpq's connect_timeout). `statement_ms`
    is the server's statement_timeout (0: none); the client also stops waiting for any answer
    (a query, a commit, the pool's ping) `statement_ms` + ANSWER_MARGIN_S after asking, so a
    database that stops answering without closing the connection (a hung host, a frozen
    proxy) costs a request seconds, not gunicorn's worker timeout. TCP keepalives probe idle
    pooled connections after `keepalive_idle_s`, so a peer that vanished is noticed.
    """

    connect_s: int = 2
    statement_ms: int = 2000
    keepalive_idle_s: int = 5

    @property
    def answer_s(self) -> float | None:
        return self.statement_ms / 1000 + ANSWER_MARGIN_S if self.statement_ms else None


# Past the server's statement_timeout, how long the client still waits for its error.
ANSWER_MARGIN_S = 1.0
KEEPALIVE_INTERVAL_S = 2
KEEPALIVE_COUNT = 3
# psycopg's own polling interval for a blocking wait (how often it looks for Ctrl-C).
WAIT_INTERVAL_S = 0.1


class DatabaseNotAnswering(psycopg.OperationalError):
    """The server sent nothing back within the answer timeout; the connection is closed."""


class BoundedConnection(psycopg.Connection[Any]):
    """A psycopg connection that waits at most `answer_timeout_s` for any one answer.

    psycopg routes every round trip of a blocking connection (execute, fetch, commit,
    rollback) through `wait`; past the deadline the connection is closed, so SQLAlchemy
    sees a disconnect, drops it and the rest of its pool."""

    answer_timeout_s: float | None = None

    def wait(self, gen: Any, interval: float = WAIT_INTERVAL_S, timeout: float | None = None) -> Any:
        limit = self.answer_timeout_s
        if limit is None or timeout is not None:
            return super().wait(gen, interval, timeout)
        try:
            return super().wait(gen, interval, limit)
        except psycopg.errors._WaitTimeout:
            self.pgconn.finish()
            raise DatabaseNotAnswering(f"the database did not answer within {limit:g} s") from None


def _postgres_connect_args(timeouts: DbTimeouts) -> dict[str, Any]:
    args: dict[str, Any] = {
        "connect_timeout": timeouts.connect_s,
        "keepalives": 1,
        "keepalives_idle": timeouts.keepalive_idle_s,
        "keepalives_interval": KEEPALIVE_INTERVAL_S,
        "keepalives_count": KEEPALIVE_COUNT,
    }
    if timeouts.statement_ms:
        args["options"] = f"-c statement_timeout={timeouts.statement_ms}"
    return args


def _install_answer_timeout(engine: Engine, timeouts: DbTimeouts) -> None:
    @event.listens_for(engine, "do_connect")
    def _connect(_dialect: Any, _record: Any, cargs: Any, cparams: dict[str, Any]) -> Any:
        connection = BoundedConnection.connect(*cargs, **cparams)
        connection.answer_timeout_s = timeouts.answer_s
        return connection


def make_engine(url: str | URL, timeouts: DbTimeouts | None = None) -> Engine:
    """An engine with pre-ping; for PostgreSQL also connect, statement, answer and keepalive
    timeouts; for SQLite foreign keys, WAL and a busy timeout."""
    sa_url = make_url(url)
    if sa_url.get_backend_name() != "sqlite":
        timeouts = timeouts or DbTimeouts()
        if sa_url.get_driver_name() != "psycopg":
            return create_engine(sa_url, pool_pre_ping=True)
        engine = create_engine(sa_url, pool_pre_ping=True, connect_args=_postgres_connect_args(timeouts))
        _install_answer_timeout(engine, timeouts)
        return engine

    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    if _is_sqlite_memory(sa_url):
        # Each sqlite3 connection to :memory: is its own database: share one connection.
        kwargs["poolclass"] = StaticPool
        kwargs["connect_args"] = {"check_same_thread": False}
    else:
        Path(sa_url.database or DEFAULT_SQLITE_PATH).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(sa_url, **kwargs)
    _install_sqlite_hooks(engine)
    return engine


def _install_sqlite_hooks(engine: Engine) -> None:
    """Per-connection pragmas, and SQLAlchemy (not sqlite3) in charge of BEGIN.

    sqlite3's legacy transaction control skips BEGIN before SELECT, DDL and SAVEPOINT, so a
    savepoint would commit on release and a failed migration would be half applied. The
    recipe from SQLAlchemy's SQLite dialect docs makes transactions behave as on PostgreSQL.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            # Foreign keys are off by default in SQLite and the setting is per connection.
            cursor.execute("PRAGMA foreign_keys=ON")
            # WAL lets readers (other gunicorn workers) proceed while one writer commits.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get(SQLITE_BEGIN_IMMEDIATE)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions whose objects stay readable after commit (views serialise after committing)."""
    return sessionmaker(bind=engine, expire_on_commit=False)


def begin_write(session: Session) -> None:
    """Open the session's transaction as a writer; call it before the session's first query.

    SQLite (WAL) lets a transaction that has read an older snapshot never write: a second
    writer would fail mid-request with "database is locked". BEGIN IMMEDIATE takes the write
    lock up front, so concurrent writers queue (busy timeout) and each reads the version the
    previous one committed. Other backends keep a plain BEGIN: there the UPDATE's version
    check (StaleDataError) catches a concurrent writer.
    """
    session.connection(execution_options={SQLITE_BEGIN_IMMEDIATE: True})

"""Database URL, engine and session factory for the catalog.

One engine per process (per gunicorn worker); sessions are owned by the caller (a request,
a CLI command, a test), never by the query functions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

REPO_ROOT = Path(__file__).resolve().parents[2]
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


def make_engine(url: str | URL) -> Engine:
    """An engine with pre-ping; for SQLite also foreign keys, WAL and a busy timeout."""
    sa_url = make_url(url)
    if sa_url.get_backend_name() != "sqlite":
        return create_engine(sa_url, pool_pre_ping=True)

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

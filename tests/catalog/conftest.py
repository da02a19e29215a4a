"""Catalog fixtures: every database test runs once on SQLite and once on PostgreSQL.

Each backend is migrated once per test session with Alembic (the real migrations, not
`create_all`), and every test runs inside a transaction that is rolled back afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, MetaData, create_engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from app.catalog.db import make_engine, normalise_url
from app.catalog.seed import seed_catalog

REPO_ROOT = Path(__file__).resolve().parents[2]
ALEMBIC_INI = REPO_ROOT / "alembic.ini"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
DEFAULT_TEST_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def alembic_config(url: str) -> Config:
    """The repository's alembic.ini, aimed at `url`, leaving pytest's logging alone."""
    config = Config(str(ALEMBIC_INI))
    # Config values go through configparser interpolation: a literal % must be doubled.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["configure_logger"] = False
    return config


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def postgres_url_or_skip() -> str:
    """TEST_DATABASE_URL (or the local default), skipped when unreachable outside CI."""
    url = normalise_url(os.environ.get("TEST_DATABASE_URL", DEFAULT_TEST_DATABASE_URL))
    probe = create_engine(url, poolclass=NullPool, connect_args={"connect_timeout": 3})
    try:
        with probe.connect():
            pass
    except OperationalError as exc:
        # In CI a missing database is a broken pipeline, not a reason to go green.
        if _in_ci():
            pytest.fail(f"PostgreSQL unreachable at {url} in CI: {exc}")
        pytest.skip(f"PostgreSQL unreachable at {url}")
    finally:
        probe.dispose()
    return url


def drop_everything(url: str) -> None:
    """Drop every table (alembic_version included) of the database's default schema."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.begin() as connection:
            metadata = MetaData()
            metadata.reflect(connection)
            metadata.drop_all(connection)
    finally:
        engine.dispose()


@pytest.fixture(scope="session", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A freshly migrated database (`alembic upgrade head`) for the whole session."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('catalog') / 'catalog.sqlite3'}"
    else:
        url = postgres_url_or_skip()
        drop_everything(url)
    command.upgrade(alembic_config(url), "head")
    yield url
    if request.param == "postgresql":
        # The database is shared with other suites: leave it as empty as we found it.
        drop_everything(url)


@pytest.fixture(scope="session")
def engine(db_url: str) -> Iterator[Engine]:
    """The application's own engine factory on the migrated database."""
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A session inside an outer transaction that is rolled back after the test.

    `create_savepoint` turns the session's own commits and rollbacks into savepoints, so
    code under test may commit freely and still leave nothing behind.
    """
    with engine.connect() as connection:
        outer = connection.begin()
        session = Session(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            yield session
        finally:
            session.close()
            outer.rollback()


@pytest.fixture
def seeded(session: Session) -> Session:
    """The session with the small fixture catalog loaded."""
    seed_catalog(session, FIXTURES)
    return session

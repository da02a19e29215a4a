"""URL handling and the engine factory."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.pool import StaticPool

from app.catalog.db import DEFAULT_SQLITE_PATH, database_url, make_engine, make_sessionmaker


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgres://u:p@db:5432/fleet", "postgresql+psycopg://u:p@db:5432/fleet"),
        (
            "postgresql://u:p@db/fleet?sslmode=require",
            "postgresql+psycopg://u:p@db/fleet?sslmode=require",
        ),
        ("postgresql+psycopg://u@db/fleet", "postgresql+psycopg://u@db/fleet"),
        ("sqlite:////var/lib/fleet.sqlite3", "sqlite:////var/lib/fleet.sqlite3"),
    ],
)
def test_database_url_points_postgres_urls_at_psycopg(given: str, expected: str) -> None:
    assert database_url({"DATABASE_URL": given}) == expected


@pytest.mark.parametrize("env", [{}, {"DATABASE_URL": ""}, {"DATABASE_URL": "  "}])
def test_database_url_defaults_to_the_sqlite_file_under_instance(env: dict[str, str]) -> None:
    assert database_url(env) == f"sqlite:///{DEFAULT_SQLITE_PATH}"
    assert DEFAULT_SQLITE_PATH.parent.name == "instance"
    assert DEFAULT_SQLITE_PATH.name == "fleet_sizer.sqlite3"


def test_sqlite_file_engine_creates_its_folder_and_sets_the_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "not" / "yet" / "there.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    try:
        assert path.parent.is_dir()
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
    finally:
        engine.dispose()


def test_sqlite_memory_engine_shares_one_database_across_checkouts() -> None:
    engine = make_engine("sqlite:///:memory:")
    try:
        assert isinstance(engine.pool, StaticPool)
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE t (x INTEGER)"))
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM t")).scalar() == 0
    finally:
        engine.dispose()


def test_sqlite_savepoint_rollback_keeps_the_outer_transaction(tmp_path: Path) -> None:
    # Without SQLAlchemy emitting BEGIN, sqlite3 would let the savepoint commit on its own.
    engine = make_engine(f"sqlite:///{tmp_path / 'sp.sqlite3'}")
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE t (x INTEGER)"))
        with engine.connect() as connection:
            outer = connection.begin()
            with connection.begin_nested():
                connection.execute(text("INSERT INTO t VALUES (1)"))
            outer.rollback()
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM t")).scalar() == 0
    finally:
        engine.dispose()


def test_sessionmaker_does_not_expire_on_commit(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 's.sqlite3'}")
    try:
        factory = make_sessionmaker(engine)
        assert factory.kw["expire_on_commit"] is False
    finally:
        engine.dispose()

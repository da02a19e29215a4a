"""Alembic environment: the catalog's metadata, on the URL the application would use."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection

from app.catalog.db import DbTimeouts, database_url, make_engine, normalise_url
from app.catalog.models import Base

config = context.config

# Programmatic callers (the tests) keep their own logging: fileConfig would replace it.
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def _url() -> str:
    """A `sqlalchemy.url` set on the Config wins; otherwise what the app itself would use."""
    return normalise_url(config.get_main_option("sqlalchemy.url") or database_url())


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        # SQLite cannot ALTER most things: batch mode copies the table instead.
        render_as_batch=_url().startswith("sqlite"),
        **kwargs,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    """Emit SQL to stdout (`alembic upgrade head --sql`) without connecting."""
    _configure(url=_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def _run_on(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


def _run_on_sqlite(connection: Connection) -> None:
    """Migrate SQLite in one transaction with foreign keys off, checked before commit.

    Batch mode rebuilds a table by copy, DROP and rename; with foreign keys on, that DROP
    would cascade-delete the children (e.g. every MIG profile). This is SQLite's own
    procedure for schema changes. The pragma is a no-op inside a transaction, so it goes
    to the driver connection before SQLAlchemy emits BEGIN.
    """
    driver_connection = connection.connection.driver_connection
    assert driver_connection is not None
    driver_connection.execute("PRAGMA foreign_keys=OFF")
    try:
        # make_engine lets SQLAlchemy emit BEGIN, so SQLite DDL is transactional after all.
        _configure(connection=connection, transactional_ddl=True)
        with context.begin_transaction():
            context.run_migrations()
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"migration left dangling foreign keys: {broken}")
    finally:
        driver_connection.execute("PRAGMA foreign_keys=ON")


def run_migrations_online() -> None:
    """Migrate through the app's own engine factory (SQLite pragmas, psycopg URL)."""
    # Connect and keepalive timeouts, but no statement timeout: a migration may rewrite a table.
    engine = make_engine(_url(), DbTimeouts(statement_ms=0))
    try:
        with engine.connect() as connection:
            if connection.dialect.name == "sqlite":
                _run_on_sqlite(connection)
            else:
                _run_on(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

"""The DB_* settings reach every PostgreSQL engine as connect, statement, answer and keepalive
timeouts (the behaviour under a hung or missing database: tests/ops/test_database_faults.py)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.catalog.db import BoundedConnection, DbTimeouts, make_engine
from app.config import Config, ConfigError

from .conftest import postgres_url_or_skip


def test_the_settings_are_read_and_checked() -> None:
    env = {"DB_CONNECT_TIMEOUT_S": "3", "DB_STATEMENT_TIMEOUT_MS": "750", "DB_KEEPALIVE_IDLE_S": "9"}
    config = Config.from_env({**env, "DB_RETRY_MAX_S": "4"})
    assert config.db_timeouts == DbTimeouts(connect_s=3, statement_ms=750, keepalive_idle_s=9)
    assert config.db_retry_max_s == 4
    assert Config.from_env({}).db_timeouts == DbTimeouts(connect_s=2, statement_ms=2000, keepalive_idle_s=5)
    with pytest.raises(ConfigError, match="DB_CONNECT_TIMEOUT_S"):
        Config.from_env({"DB_CONNECT_TIMEOUT_S": "1"})  # libpq would read it as 2
    with pytest.raises(ConfigError, match="DB_STATEMENT_TIMEOUT_MS"):
        Config.from_env({"DB_STATEMENT_TIMEOUT_MS": "soon"})


def test_the_answer_timeout_follows_the_statement_timeout() -> None:
    assert DbTimeouts(statement_ms=500).answer_s == 1.5
    assert DbTimeouts(statement_ms=0).answer_s is None


@pytest.mark.postgres
def test_a_postgres_connection_carries_every_timeout() -> None:
    engine = make_engine(postgres_url_or_skip(), DbTimeouts(connect_s=3, statement_ms=1234, keepalive_idle_s=7))
    try:
        with engine.connect() as connection:
            assert connection.execute(text("SHOW statement_timeout")).scalar() == "1234ms"
            raw = connection.connection.driver_connection
            assert isinstance(raw, BoundedConnection)
            assert raw.answer_timeout_s == pytest.approx(2.234)
            params = raw.info.get_parameters()
            assert params["connect_timeout"] == "3"
            assert (params["keepalives"], params["keepalives_idle"]) == ("1", "7")
    finally:
        engine.dispose()

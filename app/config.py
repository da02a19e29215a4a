"""Every setting the service reads, from the environment, checked at start-up.

| variable | default | meaning |
| --- | --- | --- |
| DATABASE_URL | sqlite file under instance/ | SQLAlchemy URL; postgres:// is normalised to psycopg 3 |
| MAX_BODY_BYTES | 1048576 | request bodies above this answer 413 |
| SEED_ON_START | 1 | `flask seed` fills an empty catalog from catalog_seed/; 0 leaves it empty (--force overrides) |
| LOG_LEVEL | INFO | |
| API_TOKENS | (none) | comma-separated bearer tokens for catalog writes (16-256 chars); none: writes 403 |
| DB_CONNECT_TIMEOUT_S | 2 | PostgreSQL: give up a connection attempt after this (libpq's minimum is 2) |
| DB_STATEMENT_TIMEOUT_MS | 2000 | PostgreSQL statement_timeout; the client stops waiting 1 s later (0: no limit) |
| DB_KEEPALIVE_IDLE_S | 5 | PostgreSQL: TCP keepalive probes on a connection idle this long |
| DB_RETRY_MAX_S | 30 | while the database is unreachable, the longest wait between a worker's retries |
| CORS_ORIGINS | (none) | comma-separated origins (`https://dash.example.com`) allowed to call the API from a browser |
| TIME_BUDGET_S | 20 | a computation stops past this many seconds of its request: 503 with Retry-After |
| DEFAULT_ENGINE | vllm | the engine profile a planning request that names none plans under; it cannot be deleted |
| WORK_BUDGET_UNITS | 1000000 | simulator work one answer's simulations may take together; predicted over: 422 |
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.catalog.db import DbTimeouts, database_url
from app.sizing.engine import DEFAULT_ENGINE


class ConfigError(ValueError):
    """A setting with a value the service cannot start with."""


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


# Below gunicorn's 30 s worker timeout, with room for the answer's rendering after the stop.
DEFAULT_TIME_BUDGET_S = 20
# About 2 to 6 s of one core at the simulator's 2 to 6 µs a unit; the largest latency sweeps at
# common lengths take less (40 rates of 5,000 requests spread at cv 1 with the capacity search:
# 890,000; 50,000 requests at cv 2: 570,000).
DEFAULT_WORK_BUDGET_UNITS = 1_000_000
MIN_TOKEN_LENGTH = 16
MAX_TOKEN_LENGTH = 256


def _token_problem(token: str) -> str | None:
    if not MIN_TOKEN_LENGTH <= len(token) <= MAX_TOKEN_LENGTH:
        return f"must be {MIN_TOKEN_LENGTH} to {MAX_TOKEN_LENGTH} characters long"
    # What an Authorization header can carry as a bearer token, without surprises.
    if not all(33 <= ord(c) <= 126 for c in token) or "," in token:
        return "must be printable ASCII without spaces or commas"
    return None


def _tokens(env: Mapping[str, str]) -> tuple[str, ...]:
    """API_TOKENS split on commas; blanks around and between tokens are ignored."""
    return tuple(part.strip() for part in env.get("API_TOKENS", "").split(",") if part.strip())


# An origin as a browser sends it: scheme, host and optional port, nothing else.
ORIGIN_PATTERN = re.compile(r"https?://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?")


def _origins(env: Mapping[str, str]) -> tuple[str, ...]:
    """CORS_ORIGINS split on commas; blanks are ignored, a trailing slash is not an origin."""
    return tuple(part.strip() for part in env.get("CORS_ORIGINS", "").split(",") if part.strip())


def _engine_name(env: Mapping[str, str]) -> str:
    """DEFAULT_ENGINE: an engine name as the catalog spells them (letters, digits, `.`, `_`, `-`)."""
    name = env.get("DEFAULT_ENGINE", "").strip() or DEFAULT_ENGINE
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name):
        raise ConfigError(f"DEFAULT_ENGINE must be an engine name such as {DEFAULT_ENGINE}, got {name!r}")
    return name


@dataclass(frozen=True)
class Config:
    database_url: str
    max_body_bytes: int = 1024 * 1024
    seed_on_start: bool = True
    log_level: str = "INFO"
    # Bearer tokens for catalog writes; empty means writes are switched off.
    api_tokens: tuple[str, ...] = field(default=(), repr=False)  # secrets stay out of logs
    # Browser origins answered with CORS headers; empty means no cross-origin access.
    cors_origins: tuple[str, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)
    db_timeouts: DbTimeouts = field(default_factory=DbTimeouts)
    # Backoff cap for a worker's catalog checks while the database is unreachable.
    db_retry_max_s: int = 30
    # A request's work budget (app/sizing/budget.py): its computation's wall time, and the
    # simulator work its simulations may take between them.
    # The engine profile planning uses when a request names none (a catalog engine, or ideal).
    default_engine: str = DEFAULT_ENGINE
    time_budget_s: int = DEFAULT_TIME_BUDGET_S
    work_budget_units: int = DEFAULT_WORK_BUDGET_UNITS

    def __post_init__(self) -> None:
        # Checked here, not only in from_env, so a config given to create_app() is held to it too.
        tokens = self.api_tokens
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            raise ConfigError("api_tokens must be a sequence of strings")
        for index, token in enumerate(tokens):
            problem = _token_problem(token)
            if problem:
                # Never echo the token itself: it is a secret.
                raise ConfigError(f"API_TOKENS entry #{index + 1} {problem}")
        object.__setattr__(self, "api_tokens", tuple(tokens))
        origins = self.cors_origins
        if isinstance(origins, str) or not all(isinstance(o, str) for o in origins):
            raise ConfigError("cors_origins must be a sequence of strings")
        for origin in origins:
            if not ORIGIN_PATTERN.fullmatch(origin):
                raise ConfigError(f"CORS_ORIGINS entry {origin!r} must be an origin such as https://dash.example.com")
        object.__setattr__(self, "cors_origins", tuple(origins))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        level = env.get("LOG_LEVEL", "INFO").upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ConfigError(f"LOG_LEVEL must be a logging level name, got {level!r}")
        return cls(
            database_url=database_url(env),
            max_body_bytes=_int(env, "MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
            seed_on_start=_bool(env, "SEED_ON_START", True),
            log_level=level,
            api_tokens=_tokens(env),
            cors_origins=_origins(env),
            db_timeouts=DbTimeouts(
                connect_s=_int(env, "DB_CONNECT_TIMEOUT_S", 2, 2, 600),
                statement_ms=_int(env, "DB_STATEMENT_TIMEOUT_MS", 2000, 0, 3_600_000),
                keepalive_idle_s=_int(env, "DB_KEEPALIVE_IDLE_S", 5, 1, 7200),
            ),
            db_retry_max_s=_int(env, "DB_RETRY_MAX_S", 30, 1, 3600),
            default_engine=_engine_name(env),
            time_budget_s=_int(env, "TIME_BUDGET_S", DEFAULT_TIME_BUDGET_S, 1, 3600),
            work_budget_units=_int(env, "WORK_BUDGET_UNITS", DEFAULT_WORK_BUDGET_UNITS, 1000, 10**12),
        )

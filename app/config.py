"""Every setting the service reads, from the environment, checked at start-up.

| variable | default | meaning |
| --- | --- | --- |
| DATABASE_URL | sqlite file under instance/ | SQLAlchemy URL; postgres:// is normalised to psycopg 3 |
| MAX_BODY_BYTES | 1048576 | request bodies above this answer 413 |
| SEED_ON_START | 1 | seed the catalog from catalog_seed/ when it is empty |
| LOG_LEVEL | INFO | |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.catalog.db import database_url


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


@dataclass(frozen=True)
class Config:
    database_url: str
    max_body_bytes: int = 1024 * 1024
    seed_on_start: bool = True
    log_level: str = "INFO"
    extra: dict[str, object] = field(default_factory=dict)

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
        )

"""A database that cannot be reached, or does not answer in time, is a 503, not a 500.

Catalog writes (and reads that go to the database) answer problem+json 503 with Retry-After
while the database is down; planning keeps answering from the worker's copy (lookup.py).
The engine's timeouts (app/catalog/db.py) bound how long finding that out takes.
"""

from __future__ import annotations

import logging

from flask import Flask, Response
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app import observability

from .errors import problem

log = logging.getLogger(__name__)

# What a client waits before trying again: about the first few retries of lookup.py's backoff.
RETRY_AFTER_S = 5


def _unavailable(exc: Exception) -> Response:
    log.warning("database unavailable: %s", exc.__class__.__name__, exc_info=True)
    observability.DATABASE_UNAVAILABLE.inc()
    response = problem(503, "the database is unavailable: try again later")
    response.headers["Retry-After"] = str(RETRY_AFTER_S)
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(OperationalError, _unavailable)
    app.register_error_handler(InterfaceError, _unavailable)
    app.register_error_handler(PoolTimeout, _unavailable)

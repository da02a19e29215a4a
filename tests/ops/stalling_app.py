"""The service as gunicorn serves it, plus one thing for tests of gunicorn's timeout: a request
carrying `X-Test-Stall-S` holds its worker that many seconds after the app's own before-request
hooks (request id, metrics, the running-request record) have run. A worker killed at gunicorn's
timeout then depends on the clock alone, not on how fast this machine computes an answer.
Never served outside tests."""

from __future__ import annotations

import time

from flask import Flask, request

from app import create_app as create_service

STALL_HEADER = "X-Test-Stall-S"


def create_app() -> Flask:
    app = create_service()

    @app.before_request  # registered last, so it runs after the service's own hooks
    def stall() -> None:
        seconds = request.headers.get(STALL_HEADER)
        if seconds:
            time.sleep(float(seconds))

    return app

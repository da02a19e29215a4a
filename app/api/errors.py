"""RFC 9457 problem+json for every error: HTTP errors, sizing refusals, invalid fields.

Registered first so that nothing, not even a bug, answers with an HTML page.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from flask import Flask, Response, current_app, json, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException, InternalServerError

from app.observability import request_id
from app.planning.errors import Conflict, InvalidRequest, PlanningError, TooLarge, UnknownResource
from app.sizing.errors import SizingError

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger(__name__)

TITLES = {
    308: "Permanent Redirect",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    412: "Precondition Failed",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    428: "Precondition Required",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

# Stable identifiers a client can switch on; relative URIs resolved against the service.
TYPES = {
    308: "/problems/moved",
    400: "/problems/malformed-request",
    401: "/problems/unauthorized",
    403: "/problems/forbidden",
    404: "/problems/not-found",
    405: "/problems/method-not-allowed",
    406: "/problems/not-acceptable",
    409: "/problems/conflict",
    412: "/problems/stale-version",
    413: "/problems/body-too-large",
    415: "/problems/unsupported-media-type",
    422: "/problems/invalid-field",
    428: "/problems/if-match-required",
    500: "/problems/internal-error",
    503: "/problems/unavailable",
}


class ApiError(Exception):
    """An error a view raises on purpose, with the fields it blames."""

    def __init__(self, status: int, detail: str, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors


def flatten_errors(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """marshmallow nests errors like its schemas ({"model": {"kv_heads": [...]}}); clients
    want one flat object keyed by dotted path ("model.kv_heads")."""
    flat: dict[str, list[str]] = {}
    if isinstance(messages, dict):
        for key, value in messages.items():
            name = "_schema" if key == "_schema" and not prefix else f"{prefix}{key}"
            if isinstance(value, dict):
                flat.update(flatten_errors(value, f"{name}."))
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                flat.setdefault(name, []).extend(value)
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    flat.update(flatten_errors(item, f"{name}.{index}."))
            else:
                flat.setdefault(name, []).append(str(value))
    elif isinstance(messages, list):
        flat.setdefault(prefix.rstrip(".") or "_schema", []).extend(str(m) for m in messages)
    else:
        flat.setdefault(prefix.rstrip(".") or "_schema", []).append(str(messages))
    return flat


def problem(status: int, detail: str, errors: dict[str, list[str]] | None = None, **extra: Any) -> Response:
    body: dict[str, Any] = {
        "type": TYPES.get(status, "about:blank"),
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        # A URI reference (RFC 9457 3.1.5): the path as it was sent, percent-encoded again.
        "instance": quote(request.path, safe="/:@!$&'()*+,;=-._~") if request else None,
        "request_id": request_id() if request else None,
    }
    if errors:
        body["errors"] = errors
    body.update(extra)
    response = current_app.response_class(json.dumps(body), status=status, mimetype=PROBLEM_JSON)
    return response


def _http_error(exc: HTTPException) -> Response:
    status = exc.code or 500
    detail = exc.description or TITLES.get(status, "Error")
    response = problem(status, detail)
    if status == 405 and exc.valid_methods:  # type: ignore[attr-defined]
        response.headers["Allow"] = ", ".join(exc.valid_methods)  # type: ignore[attr-defined]
    return response


def _validation_error(exc: ValidationError) -> Response:
    errors = flatten_errors(exc.messages)
    fields = ", ".join(sorted(errors))
    return problem(422, f"invalid value for {fields}", errors)


def _sizing_error(exc: SizingError) -> Response:
    return problem(422, exc.message, {exc.field: [exc.message]})


def _api_error(exc: ApiError) -> Response:
    return problem(exc.status, exc.detail, exc.errors)


# A service's refusal and its HTTP status.
PLANNING_STATUS: dict[type[PlanningError], int] = {
    UnknownResource: 404,
    InvalidRequest: 422,
    Conflict: 409,
    TooLarge: 413,
}


def _planning_error(exc: PlanningError) -> Response:
    return problem(PLANNING_STATUS.get(type(exc), 422), exc.detail, exc.errors)


def _unexpected(exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.path)
    detail = repr(exc) if current_app.debug else InternalServerError.description
    return problem(500, detail)


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(ValidationError, _validation_error)
    app.register_error_handler(SizingError, _sizing_error)
    app.register_error_handler(ApiError, _api_error)
    app.register_error_handler(PlanningError, _planning_error)
    app.register_error_handler(Exception, _unexpected)

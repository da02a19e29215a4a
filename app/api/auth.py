"""Bearer tokens for catalog writes.

Tokens come from API_TOKENS (app.config). With none configured the service is read-only:
writes answer 403, since no credential could ever be right. A missing or wrong token is 401
with a `WWW-Authenticate: Bearer` challenge (RFC 6750).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

from flask import Response, current_app, g, request

from .errors import ApiError
from .lookup import EXTENSION

REALM = "fleet-sizer"
P = ParamSpec("P")
R = TypeVar("R")


def _matches_any(presented: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time over every configured token: no early exit tells which one came close."""
    given = presented.encode("utf-8", "surrogateescape")
    matched = False
    for token in tokens:
        matched |= hmac.compare_digest(given, token.encode("utf-8"))
    return matched


def check_bearer_token() -> None:
    """Raise the 403/401 problem unless the request carries a configured bearer token."""
    tokens: tuple[str, ...] = current_app.extensions[EXTENSION]["config"].api_tokens
    if not tokens:
        raise ApiError(403, "catalog writes are disabled: the service was started without API_TOKENS")
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    credentials = credentials.strip()
    if scheme.lower() != "bearer" or not credentials:
        g.bearer_challenge = f'Bearer realm="{REALM}"'
        raise ApiError(401, "catalog writes need an Authorization: Bearer <token> header")
    if not _matches_any(credentials, tokens):
        g.bearer_challenge = f'Bearer realm="{REALM}", error="invalid_token"'
        raise ApiError(401, "the bearer token is not valid")


def require_token(view: Callable[P, R]) -> Callable[P, R]:
    """Decorate a view that writes the catalog."""

    @wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        check_bearer_token()
        return view(*args, **kwargs)

    return wrapped


def add_challenge(response: Response) -> Response:
    """after_request: a 401 names the scheme it wants (RFC 9110 §11.6.1)."""
    if response.status_code == 401:
        response.headers["WWW-Authenticate"] = g.get("bearer_challenge", f'Bearer realm="{REALM}"')
    return response

"""The request edge: limits gunicorn no longer enforces, characters no handler should see,
and the headers every answer carries (nosniff, CORS for the configured origins).

gunicorn runs with an unlimited request line and generous header limits (gunicorn.conf.py), so
that an over-long URL or header reaches the app and is answered here, as problem+json with an
X-Request-ID, instead of by gunicorn's HTML page.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from flask import Flask, Response, current_app, request
from werkzeug.routing import RequestRedirect

from .errors import ApiError, problem

# A URL (path and query string, as sent) longer than this answers 414. Generous: a GET with an
# inline model and GPU in dotted parameters is about 1 KB.
MAX_URL_BYTES = 16 * 1024
# One header field (name and value) longer than this, more fields than this, or more header
# bytes in all than this answer 431.
MAX_HEADER_FIELD_BYTES = 8 * 1024
MAX_HEADER_FIELDS = 100
MAX_HEADERS_BYTES = 32 * 1024

CORS_ALLOW_HEADERS = "Authorization, Content-Type, If-Match, X-Request-ID"
CORS_EXPOSE_HEADERS = "ETag, Location, Retry-After, X-Request-ID"
CORS_MAX_AGE_S = 600


def has_control(text: str) -> bool:
    """A C0 control character (NUL included) or DEL: never part of a slug, a number or a name."""
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def _url_length() -> int:
    wsgi = request.environ  # (named so that the README's settings scan does not read it as env)
    raw = wsgi.get("RAW_URI") or wsgi.get("REQUEST_URI")
    if raw:
        return len(raw)
    query = wsgi.get("QUERY_STRING", "")
    return len(wsgi.get("PATH_INFO", "")) + (len(query) + 1 if query else 0)


def _check_headers() -> None:
    fields = [(key, value) for key, value in request.environ.items() if key.startswith("HTTP_")]
    for special in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if special in request.environ:
            fields.append((special, request.environ[special]))
    if len(fields) > MAX_HEADER_FIELDS:
        raise ApiError(431, f"at most {MAX_HEADER_FIELDS} header fields are read; this request sent {len(fields)}")
    total = 0
    for key, value in fields:
        size = len(key) + len(str(value))
        total += size
        if size > MAX_HEADER_FIELD_BYTES:
            name = key.removeprefix("HTTP_").replace("_", "-").title()
            raise ApiError(431, f"header {name} is over the limit of {MAX_HEADER_FIELD_BYTES} bytes per header field")
    if total > MAX_HEADERS_BYTES:
        raise ApiError(431, f"the header fields are over the limit of {MAX_HEADERS_BYTES} bytes in all")


def _check_characters() -> None:
    if has_control(request.path):
        raise ApiError(404, "no resource has a control character (such as NUL) in its path")
    for key, value in request.args.items(multi=True):
        if has_control(key) or has_control(value):
            name = key if not has_control(key) else repr(key)
            raise ApiError(
                422, f"query parameter {name} holds a control character", {name: ["must not hold control characters"]}
            )


def _allowed_origin() -> str | None:
    origin = request.headers.get("Origin")
    if origin and origin in current_app.extensions["fleet_sizer"]["config"].cors_origins:
        return origin
    return None


def _preflight() -> Response | None:
    """A CORS preflight from a configured origin to a route that exists: 204 with what the
    route allows. Anything else is answered as usual (no CORS headers: the browser refuses)."""
    if request.method != "OPTIONS" or "Access-Control-Request-Method" not in request.headers:
        return None
    if _allowed_origin() is None or request.url_rule is None:
        return None
    # Every method of every rule on this path (GET and PATCH on /v1/models/<slug> are two rules).
    methods = sorted(current_app.url_map.bind_to_environ(request.environ).allowed_methods())
    response = current_app.response_class(status=204)
    response.headers["Access-Control-Allow-Methods"] = ", ".join(methods)
    response.headers["Access-Control-Allow-Headers"] = CORS_ALLOW_HEADERS
    response.headers["Access-Control-Max-Age"] = str(CORS_MAX_AGE_S)
    response.headers["Allow"] = ", ".join(methods)
    return response


def _redirect() -> Response | None:
    """A path the router would redirect (`/v1//models` to `/v1/models`: slashes merged): 308
    to a relative Location, path and query only, so the client's Host header (anyone's site)
    never appears in it, with a problem+json body. Werkzeug's own answer builds an absolute URL
    from the Host header and an HTML body."""
    moved = request.routing_exception
    if not isinstance(moved, RequestRedirect):
        return None
    target = urlsplit(moved.new_url)
    # One leading slash: "//host/..." would be a network-path reference, another site.
    path = "/" + target.path.lstrip("/")
    location = urlunsplit(("", "", path, target.query, ""))
    response = problem(308, f"this resource is at {location}: repeat the request there (the method is kept)")
    response.headers["Location"] = location
    return response


def _before() -> Response | None:
    if _url_length() > MAX_URL_BYTES:
        raise ApiError(414, f"the URL is over the limit of {MAX_URL_BYTES} bytes; send the request as a POST body")
    _check_headers()
    _check_characters()
    return _preflight() or _redirect()


def _after(response: Response) -> Response:
    response.headers["X-Content-Type-Options"] = "nosniff"
    if current_app.extensions["fleet_sizer"]["config"].cors_origins:
        response.vary.add("Origin")
        origin = _allowed_origin()
        if origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = CORS_EXPOSE_HEADERS
    return response


def init_app(app: Flask) -> None:
    """After observability (request ids), before the memo and the blueprints."""
    app.before_request(_before)
    app.after_request(_after)

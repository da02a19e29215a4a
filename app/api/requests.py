"""Reading a planning request: JSON body on POST, flat query parameters on GET."""

from __future__ import annotations

from typing import Any

from flask import request
from marshmallow import Schema, fields
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge

from .errors import ApiError
from .schemas import load

# Query parameters that are ours but not the schema's (representation, not input).
RESERVED = frozenset({"format"})
# Methods whose input is the query string: HEAD is a GET without the body (RFC 9110 9.3.2).
QUERY_METHODS = frozenset({"GET", "HEAD"})
# Inline objects can be spelled as dotted query parameters (gpu.memory_gb=80,
# prices.spot_usd_per_hour=1.2), where the endpoint takes that object.
INLINE_PREFIXES = ("model.", "gpu.", "prices.", "ownership.", "speculative.")
# The deepest a request may nest: a JSON body's objects and arrays (a fleet forecast is 3 deep,
# an inline GPU's MIG profiles 4), a dotted query name's levels (gpu.peak_tflops.bf16 is 3).
MAX_JSON_DEPTH = 32
MAX_DOTTED_DEPTH = 8


def json_depth(value: Any) -> int:
    """How deep objects and arrays nest in `value` (a scalar is 0), without recursion."""
    return _walk(value)[0]


def _unstorable(text: str) -> str | None:
    """Why no text column or CSV cell can hold `text`, or None: a NUL, or a code point UTF-8
    cannot encode (a lone UTF-16 surrogate such as JSON's "\\ud800", which the JSON parser lets
    through and the database driver and the CSV writer would fail on)."""
    if "\x00" in text:
        return "must not hold a NUL character"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as bad:
            return (
                f"must be text UTF-8 can encode: U+{ord(text[bad.start]):04X} at character {bad.start} is a lone "
                "UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair)"
            )
    return None


def _walk(value: Any) -> tuple[int, tuple[str, str] | None]:
    """The nesting depth of `value` (stopping past the limit) and the dotted path of the first
    string (key or value) no text column can store, with why (`_unstorable`)."""
    deepest, bad = 0, None
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            if bad is None and (why := _unstorable(item)) is not None:
                bad = (path or "_schema", why)
            continue
        if isinstance(item, dict):
            children: list[tuple[Any, str]] = [(child, str(key)) for key, child in item.items()]
            if bad is None:
                # A name no column can store: the object holding it is at fault (a name is no field).
                why = next((why for key in item if (why := _unstorable(key)) is not None), None)
                if why is not None:
                    bad = (path or "_schema", f"a field name {why}")
        elif isinstance(item, list):
            children = [(child, str(index)) for index, child in enumerate(item)]
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            break
        stack.extend((child, depth + 1, f"{path}.{name}" if path else name) for child, name in children)
    return deepest, bad


def _set_path(target: dict[str, Any], dotted: str, value: Any) -> None:
    head, _, rest = dotted.partition(".")
    if not rest:
        target[head] = value
        return
    child = target.setdefault(head, {})
    if not isinstance(child, dict):
        raise ApiError(422, f"{head} is given both as a slug and as {dotted}", {head: ["slug or fields, not both"]})
    _set_path(child, rest, value)


def ignored_parameter(key: str) -> bool:
    """Names starting with `_` are the client's own (cache-busters such as `_=1700000000`)."""
    return key.startswith("_")


def check_repeats(keys: list[str] | None = None, lists: frozenset[str] = frozenset()) -> None:
    """A scalar parameter given twice is ambiguous (which one counts?): 422 naming it. List
    parameters (`lists`) may repeat; their values are joined."""
    repeated = sorted(
        key
        for key in (request.args if keys is None else keys)
        if key not in lists and not ignored_parameter(key) and len(request.args.getlist(key)) > 1
    )
    if repeated:
        raise ApiError(
            422,
            f"query parameter given more than once: {', '.join(repeated)}",
            {key: ["given more than once; give it once"] for key in repeated},
        )


def check_unknown(known: set[str] | frozenset[str], *, dotted: bool = False) -> None:
    """Query names the endpoint does not read: 422 naming them, so a typo (`promt_tokens`)
    never plans with a default silently. `format` and names starting with `_` are allowed."""
    unknown = sorted(
        key
        for key in request.args
        if key not in known
        and key not in RESERVED
        and not ignored_parameter(key)
        and not (dotted and key.startswith(INLINE_PREFIXES) and key.partition(".")[0] in known)
    )
    if unknown:
        raise ApiError(
            422,
            f"unknown query parameter: {', '.join(unknown)}",
            {key: ["unknown parameter (names starting with _ are ignored)"] for key in unknown},
        )


def query_args(schema: Schema) -> dict[str, str]:
    """A list endpoint's query parameters for its filter schema: unknown or repeated names are
    a 422; `format` and names starting with `_` are left out."""
    check_unknown(frozenset(schema.fields))
    check_repeats()
    return {key: value for key, value in request.args.items() if key not in RESERVED and not ignored_parameter(key)}


def query_payload(schema: Schema) -> dict[str, Any]:
    """Query parameters as the schema's input. Empty values count as absent (a blank
    spreadsheet cell); list fields take repeated or comma-separated values; an unknown
    name or a repeated scalar is a 422 (names starting with `_` are ignored)."""
    lists = frozenset(k for k, f in schema.fields.items() if isinstance(f, fields.List))
    check_unknown(frozenset(schema.fields), dotted=True)
    check_repeats(lists=lists | {k for k in request.args if k.endswith(".native_precisions")})
    payload: dict[str, Any] = {}
    for key in request.args:
        if key in RESERVED or ignored_parameter(key):
            continue
        values = [v for v in request.args.getlist(key) if v.strip() != ""]
        if not values:
            continue
        field = schema.fields.get(key)
        if isinstance(field, fields.List):
            payload[key] = [part.strip() for v in values for part in v.split(",") if part.strip()]
        elif key.startswith(INLINE_PREFIXES):
            if key.count(".") >= MAX_DOTTED_DEPTH:
                raise ApiError(
                    422,
                    f"query parameter names nest at most {MAX_DOTTED_DEPTH} levels deep",
                    {key[:64]: [f"at most {MAX_DOTTED_DEPTH} dotted levels"]},
                )
            if key.endswith("native_precisions"):
                _set_path(payload, key, [p.strip() for v in values for p in v.split(",") if p.strip()])
            else:
                _set_path(payload, key, values[-1])
        else:
            if key in ("model", "gpu") and isinstance(payload.get(key), dict):
                raise ApiError(422, f"{key} is given both as a slug and as fields", {key: ["slug or fields, not both"]})
            payload[key] = values[-1]
    return payload


def _body_bytes() -> bytes:
    """The body, with a chunked one (no Content-Length) over the cap refused as 413 rather
    than cut at the cap and parsed as truncated JSON."""
    data = request.get_data(cache=True)
    limit = request.max_content_length
    chunked = request.content_length is None and limit is not None and len(data) >= limit
    wsgi = request.environ
    if chunked and wsgi["wsgi.input"].read(1):  # one byte past the cap: the body is over it
        raise RequestEntityTooLarge()
    return data


def json_payload(hint: str = " (or use GET with query parameters)") -> dict[str, Any]:
    """The JSON object a POST, PUT or PATCH sends (application/json or any +json type)."""
    if not request.is_json:
        raise ApiError(415, f"send the body as application/json{hint}")
    _body_bytes()
    too_deep = ApiError(400, f"the body nests objects and arrays more than {MAX_JSON_DEPTH} levels deep (the limit)")
    try:
        data = request.get_json()
    except BadRequest:
        raise ApiError(400, "the body is not valid JSON") from None
    except RecursionError:  # deeper than the parser goes
        raise too_deep from None
    depth, bad = _walk(data)
    if depth > MAX_JSON_DEPTH:
        raise too_deep
    if bad is not None:
        field, why = bad
        raise ApiError(422, f"{field}: {why}", {field: [why]})
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def parse(schema: Schema) -> Any:
    """The request's parameters (GET, and HEAD: the same answer without its body) or body
    (POST) loaded by `schema`: a planning schema's typed request."""
    if request.method in QUERY_METHODS:
        return load(schema, query_payload(schema), strict=False)
    return load(schema, json_payload(), strict=True)

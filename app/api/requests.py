"""Reading a planning request: JSON body on POST, flat query parameters on GET."""

from __future__ import annotations

from typing import Any

from flask import request
from marshmallow import Schema, fields
from werkzeug.exceptions import BadRequest

from .errors import ApiError
from .schemas import load

# Query parameters that are ours but not the schema's (representation, not input).
RESERVED = frozenset({"format"})
# Inline objects can be spelled as dotted query parameters: gpu.memory_gb=80.
INLINE_PREFIXES = ("model.", "gpu.")


def _set_path(target: dict[str, Any], dotted: str, value: Any) -> None:
    head, _, rest = dotted.partition(".")
    if not rest:
        target[head] = value
        return
    child = target.setdefault(head, {})
    if not isinstance(child, dict):
        raise ApiError(422, f"{head} is given both as a slug and as {dotted}", {head: ["slug or fields, not both"]})
    _set_path(child, rest, value)


def query_payload(schema: Schema) -> dict[str, Any]:
    """Query parameters as the schema's input. Empty values count as absent (a blank
    spreadsheet cell); list fields take repeated or comma-separated values; unknown names
    are left for the schema to ignore."""
    payload: dict[str, Any] = {}
    for key in request.args:
        if key in RESERVED:
            continue
        values = [v for v in request.args.getlist(key) if v.strip() != ""]
        if not values:
            continue
        field = schema.fields.get(key)
        if isinstance(field, fields.List):
            payload[key] = [part.strip() for v in values for part in v.split(",") if part.strip()]
        elif key.startswith(INLINE_PREFIXES):
            if key.endswith("native_precisions"):
                _set_path(payload, key, [p.strip() for v in values for p in v.split(",") if p.strip()])
            else:
                _set_path(payload, key, values[-1])
        else:
            if key in ("model", "gpu") and isinstance(payload.get(key), dict):
                raise ApiError(422, f"{key} is given both as a slug and as fields", {key: ["slug or fields, not both"]})
            payload[key] = values[-1]
    return payload


def json_payload(hint: str = " (or use GET with query parameters)") -> dict[str, Any]:
    """The JSON object a POST, PUT or PATCH sends (application/json or any +json type)."""
    if not request.is_json:
        raise ApiError(415, f"send the body as application/json{hint}")
    try:
        data = request.get_json()
    except BadRequest:
        raise ApiError(400, "the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def parse(schema: Schema) -> dict[str, Any]:
    if request.method == "GET":
        return load(schema, query_payload(schema), strict=False)
    return load(schema, json_payload(), strict=True)

"""JSON or CSV, by `?format=` or the Accept header.

CSV is for spreadsheets (Google Sheets IMPORTDATA, Excel Power Query): UTF-8, a header row,
a stable column order, `.` decimals, no thousands separators; nested objects become
`parent_child` columns and lists become one cell. Text cells that a spreadsheet would read as
a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) are prefixed with `'`;
numbers are written as numbers, negative ones included.

A JSON string that a spreadsheet would read as a number, a date or a boolean (an engine version
`0.10`, `0.6.3`, an all-digit id, `2026-01`, `true`) starts with U+2060 WORD JOINER, an
invisible character no number or date parser accepts, so the cell stays the text the JSON has.
Quoting does not do it: Excel, Google Sheets' IMPORTDATA and LibreOffice (by default) read a
quoted `"0.10"` as the number 0.1, and Power Query's type detection does too. A leading `'` is
shown as part of the text by LibreOffice's import and IMPORTDATA, and `="0.10"` is a formula
(Power Query shows it as written). tests/api/test_csv_text_cells.py imports such a CSV into
LibreOffice and checks each cell's type.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from flask import Response, current_app, json, request

from .errors import ApiError

JSON = "application/json"
CSV = "text/csv"
FORMATS = {"json": JSON, "csv": CSV}
# Formats one view renders itself (/v1/fleet: a KEDA policy, a workbook); others refuse them.
OWN_FORMATS = frozenset({"keda", "xlsx"})
# What makes Excel, LibreOffice or Google Sheets read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Text a spreadsheet would read as a number, date, time or percentage: digits and number
# punctuation only (with at least one digit), or a boolean word.
NUMBER_LIKE = re.compile(r"[\d\s.,:/%eE]*\d[\d\s.,:/%eE+-]*")
BOOLEAN_WORDS = frozenset({"true", "false"})
# Invisible and never part of a number: the cell stays text, and looks as the JSON string does.
TEXT_MARK = "\u2060"


def _format_asked() -> str | None:
    """`?format=` when it names one of FORMATS' keys or a wrong one (not blank, not a view's own)."""
    asked = request.args.get("format")
    if asked is None or asked.strip() == "" or asked.lower() in OWN_FORMATS:
        return None
    return asked


def wants() -> str:
    """The representation asked for: `?format=` wins over Accept; JSON by default."""
    asked = _format_asked()
    if asked is not None:
        if asked.lower() not in FORMATS:
            raise ApiError(422, "format must be json or csv", {"format": ["must be one of: json, csv"]})
        return FORMATS[asked.lower()]
    best = request.accept_mimetypes.best_match([JSON, CSV], default=JSON)
    return best or JSON


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ""
        # repr gives the shortest round-tripping form, never a thousands separator.
        return repr(value)
    if isinstance(value, (list, tuple)):
        return " | ".join(_cell(v) for v in value)
    if isinstance(value, (int, Decimal)):
        return str(value)
    text = str(value)
    # A text cell a spreadsheet would run as a formula (OWASP "CSV injection") gets a leading
    # apostrophe; numbers are numbers, so a negative figure stays -1.5, not '-1.5.
    if text.startswith(FORMULA_STARTS):
        return "'" + text
    return TEXT_MARK + text if looks_like_a_number(text) else text


def looks_like_a_number(text: str) -> bool:
    """Whether a spreadsheet would turn this text into a number, date, time, percentage or
    boolean on import."""
    return NUMBER_LIKE.fullmatch(text) is not None or text.strip().casefold() in BOOLEAN_WORDS


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}_"))
        else:
            flat[name] = value
    return flat


def csv_text(rows: Iterable[Mapping[str, Any]], columns: list[str] | None = None) -> str:
    flat_rows = [flatten(r) for r in rows]
    if columns is None:
        columns = []
        for row in flat_rows:
            columns.extend(k for k in row if k not in columns)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in flat_rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return out.getvalue()


def respond(body: Mapping[str, Any], rows: Sequence[Mapping[str, Any]] | None = None, status: int = 200) -> Response:
    """`body` as JSON, or as CSV: `rows` (a list or sweep, one row each) when given, else
    the body's scalar fields as one row."""
    if wants() == CSV:
        if rows is None:
            rows = [{k: v for k, v in body.items() if not isinstance(v, list) or k in ("warnings",) or _scalars(v)}]
        response = current_app.response_class(csv_text(rows), status=status, mimetype=CSV)
        response.headers["Content-Type"] = "text/csv; charset=utf-8"
    else:
        response = current_app.response_class(_json(body), status=status, mimetype=JSON)
    if _format_asked() is None:
        # Accept chose the format: a shared cache must not hand this answer to another Accept.
        response.vary.add("Accept")
    return response


def _json(body: Mapping[str, Any]) -> str:
    """The body as JSON, every non-finite float null. Most answers hold none: the encoder's
    own refusal of one is the check, and only then is the body walked."""
    try:
        return json.dumps(body, allow_nan=False)
    except ValueError:
        return json.dumps(finite(body))


def finite(value: Any) -> Any:
    """JSON has no Infinity or NaN: an unbounded figure (a cost per token with no tokens,
    a time at a vanishing rate) is null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def _scalars(values: list[Any]) -> bool:
    return all(not isinstance(v, (Mapping, list)) for v in values)

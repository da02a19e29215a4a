"""Typed answers to their wire form, by the schemas that document them.

Each answer type of app/planning/answers.py is written by a marshmallow schema of
app/openapi/answers.py (`WRITERS`), the same one the OpenAPI document is generated from: the
keys, their types and their units are declared once. Keys come in the answer type's field
order, each written by the schema's field that reads that attribute; a nested answer by the
schema its field nests; a piece marked FLAT (app.planning.answers) as its own fields in
place, each read through the path to it (`memory.weights_bytes`); a field marked OMITTED is
left out while its value (or that of the OMITTED piece holding it) is None.

Dumping through marshmallow itself costs about 0.7 us a field, which a whole throughput answer
would feel; each (type, schema) pair is compiled once into a plain list of getters and
converters. A field held in SI units and written in another is a `Scaled` field (`time_s`
written as microseconds: `Scaled(1e6, attribute="time_s")`): the converter does the arithmetic
a hand-written answer did, so the bytes are the same.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Iterator, Mapping
from operator import attrgetter
from typing import Any

from marshmallow import Schema, fields
from marshmallow.class_registry import get_class

from app.openapi.answers import WRITERS, Cents, Rounded, Scaled
from app.planning.answers import FLAT_KEY, OMITTED_KEY

Dumper = Callable[[Any], dict[str, Any]]
Convert = Callable[[Any], Any]
Get = Callable[[Any], Any]
# A wire key, the getter of its value from the answer, what the value goes through, and the
# getters of the OMITTED fields on its path, outermost first: while one is None, the key is
# left out.
Step = tuple[str, Get, Convert | None, tuple[Get, ...]]
_COMPILED: dict[tuple[type, type[Schema]], tuple[Dumper, list[Step]]] = {}


def _schema_class(nested: Any) -> type[Schema]:
    found = get_class(nested) if isinstance(nested, str) else nested  # answers.py registers every component
    if isinstance(found, Schema):
        return type(found)
    assert isinstance(found, type) and issubclass(found, Schema)
    return found


def _nested(nested: Any) -> Convert:
    """A nested answer, written by the schema `nested` names as its own type's fields (both
    found and compiled on first sight: a nested mapping, such as a request body of a request
    schema's component, is written as it is)."""

    found: list[type[Schema]] = []

    def convert(value: Any) -> Any:
        if value is None or isinstance(value, Mapping):
            return value  # ranges by figure name, a spread by statistic: written as they are
        if not found:
            found.append(_schema_class(nested))
        return compiled(type(value), found[0])(value)

    return convert


def _converter(field: fields.Field[Any]) -> Convert | None:
    """What a value goes through on its way out (None: written as it is)."""
    if isinstance(field, (Scaled, Rounded, Cents)):
        return field.convert
    if isinstance(field, fields.Dict) and field.value_field is not None:
        value = _converter(field.value_field)
        if value is not None:
            return lambda items: None if items is None else {k: value(v) for k, v in items.items()}
    if isinstance(field, fields.Nested):
        inner = _nested(field.nested)
        if field.many:
            return lambda values: None if values is None else [inner(v) for v in values]
        return inner
    if isinstance(field, fields.List):
        item = _converter(field.inner)
        if item is None:
            return lambda values: None if values is None else list(values)
        return lambda values: None if values is None else [item(v) for v in values]
    return None


def _compile(answer_type: type, schema: type[Schema]) -> tuple[Dumper, list[Step]]:
    found = _COMPILED.get((answer_type, schema))
    if found is not None:
        return found
    by_attribute = {field.attribute or name: (field.data_key or name, field) for name, field in schema().fields.items()}
    steps: list[Step] = []
    for path, name, omitted in _paths(answer_type):
        if name not in by_attribute:
            raise TypeError(f"{schema.__name__} has no field that writes {answer_type.__name__}.{path}")
        key, schema_field = by_attribute[name]
        steps.append((key, attrgetter(path), _converter(schema_field), tuple(attrgetter(o) for o in omitted)))

    def dump(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, get, convert, omitted in steps:
            if omitted and any(absent(value) is None for absent in omitted):
                continue
            item = get(value)
            out[key] = item if convert is None else convert(item)
        return out

    _COMPILED[(answer_type, schema)] = (dump, steps)
    return dump, steps


def _paths(
    answer_type: type, prefix: str = "", omitted: tuple[str, ...] = ()
) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """Each written field of `answer_type` as (the path to it, its own name, the paths of the
    OMITTED fields on the way), a flat piece's fields in its place."""
    hints = typing.get_type_hints(answer_type)
    for field in dataclasses.fields(answer_type):
        path = f"{prefix}{field.name}"
        on_the_way = (*omitted, path) if field.metadata.get(OMITTED_KEY) else omitted
        if field.metadata.get(FLAT_KEY):
            yield from _paths(_present(hints[field.name]), f"{path}.", on_the_way)
        else:
            yield path, field.name, on_the_way


def _present(hint: Any) -> type:
    """A flat piece's type (an OMITTED one's annotation is an optional: `Piece | None`)."""
    kinds = [arg for arg in typing.get_args(hint) if arg is not type(None)] or [hint]
    if len(kinds) != 1:
        raise TypeError(f"a flat piece has one type, not {hint}")
    piece: type = kinds[0]
    return piece


def compiled(answer_type: type, schema: type[Schema]) -> Dumper:
    """How `schema` writes an `answer_type`: each field of the type in order, through the
    schema's field that reads it."""
    return _compile(answer_type, schema)[0]


def keys(answer_type: type, schema: type[Schema]) -> list[str]:
    """The wire keys `schema` writes for an `answer_type`, in order."""
    return [key for key, _, _, _ in _compile(answer_type, schema)[1]]


def dump(answer: Any) -> dict[str, Any]:
    """A typed answer's wire form. Every planning answer is a type with its writer: anything
    else (a dict built by hand) is refused, so no answer reaches a user undocumented."""
    schema = WRITERS.get(type(answer))
    if schema is None:
        raise TypeError(f"{type(answer).__name__} has no writer in app.openapi.answers.WRITERS")
    return compiled(type(answer), schema)(answer)

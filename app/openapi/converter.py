"""marshmallow fields and schemas as JSON Schema (OpenAPI 3.1): the one converter the
generator writes openapi.yaml with and tests/test_openapi.py checks it against.

Only constraints come from here (type, null, ranges, lengths, enums, patterns, defaults);
prose comes from app.openapi.descriptions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from marshmallow import RAISE, Schema, fields, missing, validate

from app.api.schemas import SlugOrInline
from app.sizing.precision import ALIASES, PRECISIONS

# A slug where a body takes slug-or-object (SlugOrInline: 1 to 200 characters).
SLUG_LENGTH = (1, 200)
# Every spelling a precision validator might accept; an enum holds exactly those it accepts.
PRECISION_CANDIDATES = (*PRECISIONS, *ALIASES, "auto", "native")

# Schema class -> the name of the component documenting it.
Naming = Callable[[type[Schema]], str]


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _accepts(validator: Any, value: str) -> bool:
    try:
        validator(value)
    except Exception:  # marshmallow.ValidationError, or anything a custom validator raises
        return False
    return True


SCALARS = (
    (fields.Boolean, "boolean"),
    (fields.Integer, "integer"),
    (fields.Float, "number"),
    (fields.String, "string"),
    (fields.Dict, "object"),
)


def _scalar_type(field: fields.Field[Any]) -> str:
    for kind, name in SCALARS:
        if isinstance(field, kind):
            return name
    raise TypeError(f"no JSON type known for {type(field).__name__}: teach app/openapi/converter.py about it")


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null: a `[type, "null"]` (enum with null), or a null branch of oneOf."""
    if "$ref" in schema or "oneOf" in schema:
        branches = schema.pop("oneOf", None) or [{"$ref": schema.pop("$ref")}]
        schema["oneOf"] = [*branches, {"type": "null"}]
    elif "type" in schema:
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    else:
        raise TypeError(f"cannot make {schema!r} nullable")
    return schema


def _nested_name(field: fields.Nested, naming: Naming) -> str:
    """The component a nested field points at: a documentation schema (app.openapi.answers)
    names it by string, a request schema nests the class or an instance."""
    nested = field.nested
    if isinstance(nested, str):
        return nested
    if isinstance(nested, Schema):
        return naming(type(nested))
    if isinstance(nested, type) and issubclass(nested, Schema):
        return naming(nested)
    raise TypeError(f"cannot document the nested schema {nested!r}")


def _apply(schema: dict[str, Any], validator: Any) -> None:
    kind = schema.get("type")
    if isinstance(validator, validate.Range):
        if validator.min is not None:
            schema["minimum" if validator.min_inclusive else "exclusiveMinimum"] = validator.min
        if validator.max is not None:
            schema["maximum" if validator.max_inclusive else "exclusiveMaximum"] = validator.max
    elif isinstance(validator, validate.Length):
        words = {"array": ("minItems", "maxItems"), "object": ("minProperties", "maxProperties")}.get(
            str(kind), ("minLength", "maxLength")
        )
        equal = validator.equal
        low, high = (equal, equal) if equal is not None else (validator.min, validator.max)
        for word, bound in zip(words, (low, high), strict=True):
            if bound is not None:
                schema[word] = bound
    elif isinstance(validator, validate.OneOf):
        choices = validator.choices
        schema["enum"] = sorted(choices) if isinstance(choices, (set, frozenset)) else list(choices)
    elif isinstance(validator, validate.NoneOf):
        schema["not"] = {"enum": sorted(validator.iterable)}
    elif isinstance(validator, validate.Regexp):
        schema["pattern"] = validator.regex.pattern
    else:  # a precision validator: an enum of the spellings it accepts
        accepted = [name for name in PRECISION_CANDIDATES if _accepts(validator, name)]
        if not accepted:
            raise TypeError(f"cannot document the validator {validator!r}")
        schema["enum"] = accepted


def field_schema(field: fields.Field[Any], naming: Naming, *, query: bool = False) -> dict[str, Any]:
    """The JSON Schema (minus prose) a marshmallow field implies: type, null when the field
    allows it (never for a query parameter: a blank value counts as absent), ranges, lengths,
    enums, patterns and the default. `query=True` gives the GET form: a slug where a body
    takes slug-or-object. `metadata` adds keywords (`format`) or, as `one_of`, names the
    documentation schemas a value is one of."""
    schema: dict[str, Any]
    metadata = dict(field.metadata)
    if isinstance(field, SlugOrInline):
        slug = {"type": "string", "minLength": SLUG_LENGTH[0], "maxLength": SLUG_LENGTH[1]}
        if query:
            return slug
        schema = {"oneOf": [slug, ref(naming(field.inline_schema))]}
    elif isinstance(field, fields.Nested):
        schema = ref(_nested_name(field, naming))
    elif isinstance(field, fields.List):
        schema = {"type": "array", "items": field_schema(field.inner, naming, query=query)}
        if getattr(field, "accepts_single", False) and not query:
            # A body may give one item as itself (schemas.PrecisionChoices); a query string
            # spells the list comma-separated or repeated either way.
            for validator in field.validators:
                _apply(schema, validator)
            schema = {"oneOf": [field_schema(field.inner, naming), schema]}
            return nullable(schema) if field.allow_none else schema
    elif isinstance(field, fields.Constant) and field.constant is None:
        return {"type": "null"}
    elif "one_of" in metadata:
        schema = {"oneOf": [ref(name) for name in metadata.pop("one_of")]}
    else:
        schema = {"type": _scalar_type(field)}
        if isinstance(field, fields.Dict):
            if field.key_field is not None:
                names = field_schema(field.key_field, naming)
                names.pop("type")
                if names:
                    schema["propertyNames"] = names
            if field.value_field is not None:
                schema["additionalProperties"] = field_schema(field.value_field, naming)
    schema.update(metadata)
    for validator in field.validators:
        _apply(schema, validator)
    default = field.load_default
    if default is not missing:
        default = default() if callable(default) else default
        if default is not None:
            schema["default"] = default
    if field.allow_none and not query:
        nullable(schema)
    return schema


def loadable(schema: Schema) -> Iterator[tuple[str, fields.Field[Any]]]:
    """A schema's fields a request may carry (dump-only ones are answers' only)."""
    for name, field in schema.fields.items():
        if not field.dump_only:
            yield name, field


def object_schema(
    schema: Schema, naming: Naming, describe: Callable[[str, fields.Field[Any]], dict[str, Any]]
) -> dict[str, Any]:
    """An object: its properties (each described by `describe`), required names and
    `additionalProperties: false` when unknown fields are refused."""
    out: dict[str, Any] = {"type": "object"}
    required = sorted(name for name, field in loadable(schema) if field.required)
    if required:
        out["required"] = required
    if schema.unknown == RAISE:
        out["additionalProperties"] = False
    out["properties"] = {
        name: {**field_schema(field, naming), **describe(name, field)} for name, field in loadable(schema)
    }
    return out


def objects(field: fields.Field[Any]) -> bool:
    """A list of objects (fleet's `forecast`, a GPU's `mig_profiles`) or of lists
    (`length_samples`): no query spelling."""
    return isinstance(field, fields.List) and isinstance(field.inner, (fields.Nested, fields.List))


def query_fields(schema: Schema) -> Iterator[tuple[str, fields.Field[Any], type[Schema] | None]]:
    """GET parameter names of a planning schema, their fields and the inline schema a dotted
    one belongs to: the flat fields, then the dotted inline ones (`model.layers`,
    `gpu.peak_tflops.bf16`); lists of objects left out."""
    for name, field in schema.fields.items():
        if not objects(field):
            yield name, field, None
    for name, field in schema.fields.items():
        if isinstance(field, SlugOrInline):
            yield from _dotted(field.inline_schema(), f"{name}.")


def _dotted(schema: Schema, prefix: str) -> Iterator[tuple[str, fields.Field[Any], type[Schema] | None]]:
    for name, field in schema.fields.items():
        if isinstance(field, fields.Nested):
            yield from _dotted(_nested_instance(field), f"{prefix}{name}.")
        elif not objects(field):
            yield f"{prefix}{name}", field, type(schema)


def _nested_instance(field: fields.Nested) -> Schema:
    schema = field.schema
    assert isinstance(schema, Schema)
    return schema

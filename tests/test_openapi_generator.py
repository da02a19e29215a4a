"""app/openapi: the converter's JSON Schema for each kind of marshmallow field, stated here
by hand, and the generator's refusals (a field without a description, a nested schema no
component documents), so that no field of a new schema reaches openapi.yaml undocumented."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from marshmallow import RAISE, Schema, fields, validate

from app.api import catalog_schemas
from app.api.schemas import PLANNING_BY_PATH, InlineGpuSchema, SlugOrInline
from app.catalog import models as tables
from app.openapi import answers, descriptions, generator
from app.openapi.converter import field_schema


def convert(field: fields.Field[Any], *, query: bool = False) -> dict[str, Any]:
    return field_schema(field, generator.naming, query=query)


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (fields.Integer(validate=validate.Range(1, 10)), {"type": "integer", "minimum": 1, "maximum": 10}),
        (
            fields.Float(allow_none=True, validate=validate.Range(min=0, min_inclusive=False, max=1)),
            {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
        ),
        (
            fields.String(allow_none=True, validate=validate.OneOf(("a", "b"))),
            {"type": ["string", "null"], "enum": ["a", "b", None]},
        ),
        (
            fields.String(validate=[validate.Length(min=1, max=8), validate.Regexp(r"^[a-z]+$")]),
            {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$"},
        ),
        (fields.String(validate=validate.NoneOf(("import",))), {"type": "string", "not": {"enum": ["import"]}}),
        (
            fields.List(
                fields.Integer(validate=validate.Range(min=1)), load_default=list, validate=validate.Length(max=3)
            ),
            {"type": "array", "items": {"type": "integer", "minimum": 1}, "default": [], "maxItems": 3},
        ),
        (
            fields.List(fields.Float(), validate=validate.Length(equal=2)),
            {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        ),
        (
            fields.Dict(
                keys=fields.String(validate=validate.Length(min=1, max=5)),
                values=fields.Integer(),
                validate=validate.Length(max=2),
            ),
            {
                "type": "object",
                "propertyNames": {"minLength": 1, "maxLength": 5},
                "additionalProperties": {"type": "integer"},
                "maxProperties": 2,
            },
        ),
        (fields.Boolean(load_default=True), {"type": "boolean", "default": True}),
        (fields.String(metadata={"format": "date-time"}), {"type": "string", "format": "date-time"}),
        (
            fields.Nested("PlanCalibration", allow_none=True),
            {"oneOf": [{"$ref": "#/components/schemas/PlanCalibration"}, {"type": "null"}]},
        ),
        (fields.Constant(None), {"type": "null"}),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, fields.Field) else "",
)
def test_field_schemas(field: fields.Field[Any], expected: dict[str, Any]) -> None:
    assert convert(field) == expected


def test_slug_or_inline_is_a_slug_in_a_query_and_either_in_a_body() -> None:
    field = SlugOrInline(InlineGpuSchema, allow_none=True)
    slug = {"type": "string", "minLength": 1, "maxLength": 200}
    assert convert(field, query=True) == slug
    assert convert(field) == {"oneOf": [slug, {"$ref": "#/components/schemas/InlineGpu"}, {"type": "null"}]}


def test_a_precision_is_an_enum_of_the_spellings_the_validator_accepts() -> None:
    field = PLANNING_BY_PATH["/v1/fit"].schema.fields["weight_precision"]
    schema = convert(field, query=True)
    assert {"bf16", "fp8", "bfloat16", "auto"} <= set(schema["enum"])
    assert "native" not in schema["enum"]
    for name in schema["enum"]:
        field.validators[0](name)


def test_a_field_of_no_known_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="no JSON type known"):
        convert(fields.Raw())


def test_a_request_field_without_a_description_stops_the_generator() -> None:
    class Extended(Schema):
        class Meta:
            unknown = RAISE

        prompt_tokens = fields.Integer()
        no_such_documented_field = fields.Integer()

    with pytest.raises(generator.UndocumentedError, match=r"Extended\.no_such_documented_field"):
        generator.request_object("Extended", Extended())


def test_an_answer_field_without_a_description_stops_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    class Health(answers.Health):  # type: ignore[misc, valid-type]
        uptime_ticks = fields.Integer(required=True)

    monkeypatch.setattr(answers, "COMPONENTS", (*answers.COMPONENTS, Health))
    with pytest.raises(generator.UndocumentedError, match=r"Health\.uptime_ticks"):
        generator.build()


def test_a_nested_schema_no_component_documents_stops_the_generator() -> None:
    class Orphan(Schema):
        pass

    class Holder(Schema):
        prompt_tokens = fields.Nested(Orphan)

    with pytest.raises(generator.UndocumentedError, match="no component documents"):
        generator.request_object("Holder", Holder())


def test_the_document_is_deterministic() -> None:
    assert generator.render() == generator.render()


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_every_reference_names_a_whole_component() -> None:
    """Client generators (openapi-python-client) resolve `#/components/<kind>/<Name>` only: a
    reference into another schema's properties drops the schema and every operation using it."""
    document = generator.build()
    refs = set(_refs(document))
    assert refs
    for target in refs:
        kind, name = target.removeprefix("#/components/").split("/")
        assert target.startswith("#/components/") and name in document["components"][kind], target
    schemas = document["components"]["schemas"]
    assert "description" in schemas["FitRequest"]["properties"]["prompt_tokens"]
    assert (
        schemas["ThroughputRequest"]["properties"]["prompt_tokens"]
        == schemas["FitRequest"]["properties"]["prompt_tokens"]
    )


def test_no_dotted_query_parameter_declares_a_default() -> None:
    """A client that sends every declared default would send `model.name=inline model` beside
    `model=llama-3.1-8b`: a 422 (slug or fields, not both). The default is in the prose."""
    parameters = generator.build()["components"]["parameters"]
    dotted = {name: parameter for name, parameter in parameters.items() if "." in parameter["name"]}
    assert "model.name" in dotted and "gpu.gpus_per_node" in dotted
    assert [name for name, parameter in dotted.items() if "default" in parameter["schema"]] == []
    assert dotted["model.name"]["description"].endswith("left out: inline model.")


def test_every_description_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """No prose for a field that no schema has any more (descriptions.py would rot)."""
    asked: set[tuple[str, str]] = set()
    original = generator.description

    def recording(component: str, name: str) -> str:
        asked.add((component, name))
        return original(component, name)

    monkeypatch.setattr(generator, "description", recording)
    generator.build()
    overridden = {(component, name) for component, names in descriptions.OVERRIDES.items() for name in names}
    assert overridden - asked == set(), "OVERRIDES for fields no schema has"
    by_default = {name for component, name in asked - overridden}
    assert set(descriptions.FIELDS) - by_default == set(), "FIELDS no schema uses without an override"


def test_a_catalog_answer_is_the_write_document_as_its_table_holds_it() -> None:
    """A field added to a catalog write schema reaches the answer's documentation unwritten:
    every write field (and `version`) always present, null where the column may be null."""

    class Wider(catalog_schemas.ModelWriteSchema):
        rope_theta = fields.Float(allow_none=True, load_default=None)

    declared = answers.catalog_entry(Wider, tables.Model)._declared_fields
    assert set(declared) == set(Wider().fields)
    assert all(field.required for field in declared.values())
    assert list(declared)[:2] == ["slug", "name"] and list(declared)[-2:] == ["rope_theta", "version"]
    # Nullable in a write (derived when omitted), never in an answer: the column is NOT NULL.
    assert Wider().fields["head_dim"].allow_none and not declared["head_dim"].allow_none
    assert declared["params_active"].allow_none
    # No column holds it (a part built for the answer, as a GPU's interconnect): never null.
    assert not declared["rope_theta"].allow_none

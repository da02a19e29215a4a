"""openapi.yaml from the code: `python -m app.openapi` (`make spec`) writes it, and
tests/test_openapi.py fails when the committed file differs from what this writes (`make test`).

Request bodies and GET parameters come from the very marshmallow schemas the views load
with (app.api.schemas, app.api.catalog_schemas, app.api.calibrations), answers from the
documentation schemas of app.openapi.answers, operations from app.openapi.paths and every
word of prose from app.openapi.descriptions. The output is deterministic: no timestamps,
and every mapping in declaration order.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from marshmallow import RAISE, Schema, fields

from app.api import calibrations, catalog_schemas
from app.api.schemas import (
    PLANNING_ENDPOINTS,
    DayPolicySchema,
    GpuPricesSchema,
    HourSchema,
    InlineGpuSchema,
    InlineModelSchema,
    InterconnectSchema,
    LengthBucketSchema,
    MigProfileSchema,
    OwnershipSchema,
    PeakSchema,
    PeriodSchema,
    PriceFiguresSchema,
    SlugOrInline,
    SpeculativeSchema,
)

from . import answers, descriptions, paths
from .converter import field_schema, loadable, object_schema, query_fields, ref

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
VERSION = "0.1.0"

# Request-side schemas (the classes the views load with) -> the component documenting them.
REQUEST_COMPONENTS: dict[type[Schema], str] = {
    InlineModelSchema: "InlineModel",
    InlineGpuSchema: "InlineGpu",
    MigProfileSchema: "MigProfile",
    PeakSchema: "PeakTflops",
    InterconnectSchema: "Interconnect",
    GpuPricesSchema: "Prices",
    PriceFiguresSchema: "PriceOverrides",
    PeriodSchema: "ForecastPeriod",
    OwnershipSchema: "Ownership",
    SpeculativeSchema: "Speculative",
    LengthBucketSchema: "LengthBucket",
    DayPolicySchema: "DayPolicy",
    HourSchema: "DayForecastHour",
    catalog_schemas.CatalogMigProfileSchema: "CatalogMigProfile",
    catalog_schemas.CatalogInterconnectSchema: "CatalogInterconnect",
    catalog_schemas.CatalogPricesSchema: "CatalogPrices",
    catalog_schemas.KernelEfficiencySchema: "CatalogKernelEfficiency",
    catalog_schemas.UncertaintySchema: "CatalogUncertainty",
    catalog_schemas.ImportSchema: "ImportRequest",
    calibrations.CalibrationCreateSchema: "CalibrationRequest",
    calibrations.EngineSchema: "CalibrationEngineInput",
    calibrations.PointSchema: "CalibrationPoint",
}
# Catalog writes: component prefix -> (POST schema, PUT/PATCH schema, the identity field
# that the URL carries on PUT/PATCH).
CATALOG_WRITES: dict[str, tuple[type[Schema], type[Schema], str]] = {
    "Model": (catalog_schemas.ModelWriteSchema, catalog_schemas.ModelReplaceSchema, "slug"),
    "Gpu": (catalog_schemas.GpuWriteSchema, catalog_schemas.GpuReplaceSchema, "slug"),
    "Engine": (catalog_schemas.EngineWriteSchema, catalog_schemas.EngineReplaceSchema, "name"),
}
# What a schema's own checks (validates_schema) enforce that no field states, as JSON Schema.
EXTRA: dict[str, dict[str, Any]] = {
    "ModelDocument.quantized_components": {"uniqueItems": True},
    "GpuDocument.native_precisions": {"uniqueItems": True},
    "CalibrationPoint": {
        "anyOf": [{"required": [name]} for name in ("tpot_ms", "itl_ms", "ttft_ms", "output_tokens_per_s")]
    },
}
REF_PREFIX = "#/components/"


class UndocumentedError(LookupError):
    """A schema field, component or parameter without a description in app.openapi.descriptions."""


def naming(cls: type[Schema]) -> str:
    if cls in REQUEST_COMPONENTS:
        return REQUEST_COMPONENTS[cls]
    if cls in answers.COMPONENTS:
        return cls.__name__
    raise UndocumentedError(f"no component documents {cls.__module__}.{cls.__name__}: name it in app/openapi")


def description(component: str, name: str) -> str:
    """The text of `component`'s field `name`: the component's override, else the name's."""
    text = descriptions.OVERRIDES.get(component, {}).get(name) or descriptions.FIELDS.get(name)
    if not text:
        raise UndocumentedError(
            f"{component}.{name} has no description: add it to app/openapi/descriptions.py "
            "(FIELDS, or OVERRIDES when the name means something else here)"
        )
    return text


def _describer(component: str) -> Any:
    def describe(name: str, _: fields.Field[Any]) -> dict[str, Any]:
        return {"description": description(component, name), **EXTRA.get(f"{component}.{name}", {})}

    return describe


def _with_prose(component: str, schema: dict[str, Any]) -> dict[str, Any]:
    text = descriptions.SCHEMAS.get(component)
    head = {"description": text} if text else {}
    return {**head, **schema, **EXTRA.get(component, {})}


def request_object(component: str, schema: Schema) -> dict[str, Any]:
    out = _with_prose(component, object_schema(schema, naming, _describer(component)))
    if component in paths.SCHEMA_EXAMPLES:
        out["examples"] = [paths.SCHEMA_EXAMPLES[component]]
    return out


def _own_fields(cls: type[Schema], base: type[Schema] | None) -> dict[str, fields.Field[Any]]:
    """The fields `cls` adds to its documented base: its own declarations first, then those
    of private mixins (marshmallow lists inherited fields first)."""
    inherited = base._declared_fields if base else {}
    own = {
        name: field
        for name, field in cls._declared_fields.items()
        if name not in inherited or inherited[name] is not field
    }
    mixed = {name for b in cls.__mro__[1:] if issubclass(b, Schema) for name in b._declared_fields}
    return {name: own[name] for name in sorted(own, key=lambda name: name in mixed)}


def answer_object(cls: type[Schema], written: dict[str, Any]) -> dict[str, Any]:
    """A documentation schema: an object, or `allOf` its documented base and its own fields.
    Extending a document already `written`, a field the document describes needs no
    description of its own."""
    component = cls.__name__
    described: set[str] = set()
    if component in answers.EXTENDS:
        described = set(written[answers.EXTENDS[component]].get("properties", {}))
    base = next((b for b in cls.__mro__[1:] if b in answers.COMPONENTS), None)
    own = _own_fields(cls, base)
    body: dict[str, Any] = {"type": "object"}
    required = [name for name, field in own.items() if field.required]
    if required:
        body["required"] = required
    body["properties"] = {
        name: {**field_schema(field, naming), **_own_description(component, name, described)}
        for name, field in own.items()
    }
    closed = cls.Meta is not Schema.Meta and getattr(cls.Meta, "unknown", None) == RAISE
    if component in answers.EXTENDS:
        # A catalog document's answer: one flat object of the document's fields as the answer
        # types them (client generators cannot merge an allOf whose parts type a field apart).
        return _with_prose(component, _flat_object(written[answers.EXTENDS[component]], body, closed))
    extends = ref(base.__name__) if base else None
    if extends is None:
        if closed:
            body["additionalProperties"] = False
        return _with_prose(component, body)
    out: dict[str, Any] = {"allOf": [extends, body]}
    if closed:
        out["unevaluatedProperties"] = False
    return _with_prose(component, out)


def _flat_object(document: dict[str, Any], own: dict[str, Any], closed: bool) -> dict[str, Any]:
    """`document`'s properties with `own`'s over them (a field `own` types again keeps the
    document's description unless it brings its own), and `own`'s required fields."""
    documented = document.get("properties", {})
    properties = dict(documented)
    for name, schema in own.get("properties", {}).items():
        prose = {"description": documented[name]["description"]} if "description" in documented.get(name, {}) else {}
        properties[name] = {**schema, **prose} if "description" not in schema else schema
    out: dict[str, Any] = {"type": "object"}
    if own.get("required"):
        out["required"] = own["required"]
    out["properties"] = properties
    if closed:
        out["additionalProperties"] = False
    return out


def _own_description(component: str, name: str, described: set[str]) -> dict[str, str]:
    if name in described and name not in descriptions.OVERRIDES.get(component, {}):
        return {}
    return {"description": description(component, name)}


def catalog_components(prefix: str, create: type[Schema], replace: type[Schema], key: str) -> dict[str, Any]:
    """A catalog table's write bodies: the document (its writable fields, none required),
    then POST (with the identity field), PUT (the URL names it) and PATCH (a merge patch)."""
    document = f"{prefix}Document"
    writes = create()
    fields_ = {name: field for name, field in loadable(writes) if name != key}
    describe = _describer(document)
    properties = {name: {**field_schema(field, naming), **describe(name, field)} for name, field in fields_.items()}
    out: dict[str, Any] = {document: _with_prose(document, {"type": "object", "properties": properties})}

    def part(schema: Schema, with_key: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": "object",
            "required": [name for name, field in loadable(schema) if field.required],
        }
        if with_key:
            field = schema.fields[key]
            body["properties"] = {
                key: {**field_schema(field, naming), "description": description(f"{prefix}Create", key)}
            }
        return body

    # Each body one flat, closed object of the document's fields (no allOf: client generators
    # merge its parts badly, and a closed allOf needs unevaluatedProperties, which few read).
    documented = out[document]
    out[f"{prefix}Create"] = _with_prose(f"{prefix}Create", _flat_object(documented, part(writes, True), True))
    out[f"{prefix}Replace"] = _with_prose(f"{prefix}Replace", _flat_object(documented, part(replace(), False), True))
    out[f"{prefix}Patch"] = _with_prose(f"{prefix}Patch", _flat_object(documented, {}, True))
    return out


def schemas() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for endpoint in PLANNING_ENDPOINTS:
        out[paths.request_component(endpoint)] = request_object(paths.request_component(endpoint), endpoint.schema)
    for cls, component in REQUEST_COMPONENTS.items():
        out[component] = request_object(component, cls())
    for prefix, (create, replace, key) in CATALOG_WRITES.items():
        out.update(catalog_components(prefix, create, replace, key))
    for cls in answers.COMPONENTS:
        out[cls.__name__] = answer_object(cls, out)
    return out


# --- parameters ------------------------------------------------------------------------------


def _parameter(name: str, where: str, text: str, schema: dict[str, Any], field: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "in": where, "description": text, "schema": schema}
    if isinstance(field, fields.List):
        # Comma-separated (`sweep=1,8,64`); app/api/requests.py takes repeated names as well.
        out.update({"style": "form", "explode": False})
    return out


class Parameters:
    """components/parameters: each distinct parameter once, named by its field (a later one
    that differs under the same name takes its endpoint's prefix: `roofline_weight_precision`)."""

    def __init__(self) -> None:
        self.components: dict[str, Any] = {}

    def add(self, component: str, parameter: dict[str, Any], prefix: str) -> str:
        if component in self.components and self.components[component] != parameter:
            component = f"{prefix}_{component}"
        if component in self.components and self.components[component] != parameter:
            raise ValueError(f"two parameters named {component}")
        self.components[component] = parameter
        return component

    def planning(self, endpoint: Any) -> list[str]:
        names = []
        request = paths.request_component(endpoint)
        for name, field, inline in query_fields(endpoint.schema):
            schema = field_schema(field, naming, query=True)
            if inline is not None:
                root, rest = name.split(".", 1)
                owner = naming(inline)
                text = descriptions.QUERY.get(name) or description(owner, name.rsplit(".", 1)[1])
                text = f"Inline {root} field ({REQUEST_COMPONENTS[_inline_root(endpoint, root)]}.{rest}): {text}"
                # No declared default: a client that fills in every default would send it beside
                # a slug (`model=llama-3.1-8b&model.name=inline model`), which is a 422.
                if "default" in schema:
                    text = f"{text} When an inline {root} is given and this is left out: {schema.pop('default')}."
            elif isinstance(field, SlugOrInline):
                text = descriptions.QUERY[name]
            else:
                text = description(request, name)
            names.append(self.add(name, _parameter(name, "query", text, schema, field), endpoint.label))
        return names

    def listing(self, query: type[Schema], prefix: str) -> list[str]:
        names = []
        for name, field in query().fields.items():
            component = f"list_{name}" if name in ("limit", "offset") else f"{prefix}{name}"
            text = descriptions.QUERY.get(component)
            if not text:
                raise UndocumentedError(f"list parameter {component} has no description in descriptions.QUERY")
            names.append(
                self.add(component, _parameter(name, "query", text, field_schema(field, naming, query=True)), "")
            )
        return names


def _inline_root(endpoint: Any, root: str) -> type[Schema]:
    field = endpoint.schema.fields[root]
    assert isinstance(field, SlugOrInline)
    return field.inline_schema


# --- operations ------------------------------------------------------------------------------


def _component_ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"{REF_PREFIX}{kind}/{name}"}


def _answer(answer: paths.Answer) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Request-ID": _component_ref("headers", "X-Request-ID")}
    headers.update({name: _component_ref("headers", name) for name in answer.headers})
    headers.update(answer.inline_headers)
    out: dict[str, Any] = {"description": answer.description, "headers": headers}
    content: dict[str, Any] = {}
    if answer.schema:
        content["application/json"] = {"schema": ref(answer.schema)}
    if answer.csv:
        content["text/csv"] = {"schema": {"type": "string", "description": answer.csv}}
    content.update(answer.content)
    if content:
        out["content"] = content
    return out


def _status_key(code: str) -> tuple[int, str]:
    return (1000 if code == "default" else int(code), code)


def operation(op: paths.Operation, parameters: Parameters) -> dict[str, Any]:
    out: dict[str, Any] = {"tags": [op.tag], "operationId": op.operation_id, "summary": op.summary}
    if op.description:
        out["description"] = op.description
    if op.secured:
        out["security"] = [{"bearerAuth": []}]
    names = list(op.parameters)
    if op.planning is not None:
        names = parameters.planning(op.planning) + names
    if op.query is not None:
        names = parameters.listing(*op.query) + names
    if names:
        out["parameters"] = [_component_ref("parameters", name) for name in names]
    if op.body_media:
        out["requestBody"] = {"required": True, "content": op.body_media}
    if op.body:
        media = {"schema": ref(op.body)}
        label = op.body.removesuffix("Request").lower()
        if label in paths.EXAMPLES:
            media["examples"] = {
                name: {"summary": summary, "value": value} for name, (summary, value) in paths.EXAMPLES[label].items()
            }
        content = {"application/json": media}
        if op.merge_patch:
            content["application/merge-patch+json"] = {"schema": ref(op.body)}
        out["requestBody"] = {"required": True, "content": content}
    responses: dict[str, Any] = {
        answer.status: _component_ref("responses", answer.component) if answer.component else _answer(answer)
        for answer in op.answers
    }
    for name in (*op.errors, *paths.EDGE):
        responses[paths.ERRORS[name][0]] = _component_ref("responses", name)
    out["responses"] = {code: responses[code] for code in sorted(responses, key=_status_key)}
    return out


def shared_responses() -> dict[str, Any]:
    """Answers several operations give (a planning estimate, on GET and POST), then the errors."""
    out: dict[str, Any] = {}
    for op in paths.OPERATIONS:
        for answer in op.answers:
            if answer.component:
                out[answer.component] = _answer(answer)
    for name, (_, text, extra) in paths.ERRORS.items():
        headers = {header: _component_ref("headers", header) for header in ("X-Request-ID", *extra)}
        out[name] = {
            "description": text,
            "headers": headers,
            "content": {"application/problem+json": {"schema": ref("Problem")}},
        }
    return out


def build() -> dict[str, Any]:
    """The whole document, as a mapping."""
    parameters = Parameters()
    parameters.components.update(paths.PARAMETERS)
    paths_: dict[str, Any] = {}
    for op in paths.OPERATIONS:
        item = paths_.setdefault(op.path, {"parameters": [_component_ref("parameters", "X-Request-ID")]})
        item[op.method] = operation(op, parameters)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Fleet Sizer", "version": VERSION, "description": descriptions.INFO},
        "tags": [
            {"name": name, "description": f"{text} {paths.GET_RULES}" if name == "planning" else text}
            for name, text in descriptions.TAGS.items()
        ],
        "paths": paths_,
        "components": {
            "schemas": schemas(),
            "parameters": parameters.components,
            "responses": shared_responses(),
            "headers": paths.HEADERS,
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "One of the tokens in the service's API_TOKENS (comma-separated). Needed for "
                    "catalog writes only; without API_TOKENS writes answer 403.",
                }
            },
        },
    }


# --- YAML ------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style for structure, flow style for a small mapping or list of scalars
    (`{type: integer, minimum: 1}`), so the document stays short and diffs stay readable.
    No YAML anchors: what is shared is shared with `$ref`."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


FLOW_WIDTH = 100


def _flat(value: Any) -> bool:
    if isinstance(value, dict):
        # Scalars and lists of scalars only.
        return all(not isinstance(v, dict) and _flat(v) for v in value.values())
    if isinstance(value, list):
        return all(not isinstance(v, (dict, list)) for v in value)
    return True


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.MappingNode:
    flow = _flat(data) and "description" not in data and len(repr(data)) <= FLOW_WIDTH
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=_flat(data))


_Dumper.add_representer(dict, _represent_dict)
_Dumper.add_representer(list, _represent_list)


def _plain(value: Any) -> Any:
    """The document with every vocabulary member (a StrEnum) as the plain string it stands for:
    YAML's safe dumper knows no str subclass, and the flow-style rule measures repr()."""
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, StrEnum):
        return str(value)
    return value


def render(document: dict[str, Any] | None = None) -> str:
    """openapi.yaml's text, byte for byte."""
    text: str = yaml.dump(
        _plain(build() if document is None else document),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=120,
    )
    return text


def write(path: Path = SPEC_PATH) -> bool:
    """Writes the document; True when the file changed."""
    text = render()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True

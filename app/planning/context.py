"""What a planning service plans with: the catalog and the calibrations as of this request,
and the notes every answer with warnings carries about them (the database unreachable)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.catalog.snapshots import NO_CALIBRATIONS, CalibrationSnapshot, CatalogSnapshot
from app.sizing.engine import DEFAULT_ENGINE, IDEAL, EngineProfile
from app.sizing.specs import GpuSpec, ModelSpec

from . import names
from .errors import InvalidRequest, UnknownResource
from .requests import GpuRef, ModelRef


@dataclass
class Context:
    """The snapshots a request plans on. `refresh` compares the catalog with the database at
    once and returns the newer copy: a slug the copy lacks may have been added a moment ago
    through another worker (None: the catalog is final, as in the CLI and the benchmarks)."""

    catalog: CatalogSnapshot
    calibrations: CalibrationSnapshot = NO_CALIBRATIONS
    notes: tuple[str, ...] = ()
    refresh: Callable[[], CatalogSnapshot] | None = field(default=None, repr=False)
    # The engine a request that names none plans under (the DEFAULT_ENGINE setting).
    default_engine: str = DEFAULT_ENGINE

    def _refreshed(self) -> CatalogSnapshot:
        if self.refresh is not None:
            self.catalog = self.refresh()
            self.refresh = None  # once per request
        return self.catalog

    def _find(self, table: str, slug: str) -> Any:
        """The catalog entry named `slug` in `table`, rechecking the database once if absent."""
        return getattr(self.catalog, table).get(slug) or getattr(self._refreshed(), table).get(slug)

    def _lookup(self, table: str, value: str, kind: str, listing: str) -> tuple[Any, str]:
        """The entry a request's name finds (names.resolve: any case, a model's Hugging Face
        repository or its variants), rechecking the database once; a 404 naming the nearest."""
        for snapshot in (self.catalog, None):
            entries = getattr(snapshot or self._refreshed(), table)
            slug = names.resolve(entries, value, models=table == "models")
            if slug is not None:
                return entries[slug], slug
        field_name = "model" if table == "models" else "gpu"
        message = f"unknown {kind} {value!r}"
        near = ", ".join(names.nearest(entries, value))
        raise UnknownResource(f"{message}; nearest: {near} (see GET {listing})", {field_name: [message]})

    def model(self, value: ModelRef) -> tuple[ModelSpec, str]:
        """A request's `model` as a spec, and the label answers name it by (its catalog slug)."""
        if isinstance(value, ModelSpec):
            return value, value.name
        spec: ModelSpec
        spec, slug = self._lookup("models", value, "model", "/v1/models")
        return spec, slug

    def gpu(self, value: GpuRef) -> tuple[GpuSpec, str]:
        if isinstance(value, GpuSpec):
            return value, value.name
        spec: GpuSpec
        spec, slug = self._lookup("gpus", value, "GPU", "/v1/gpus")
        return spec, slug

    def slug(self, value: str, table: str = "models") -> str:
        """The catalog slug a request's name stands for (calibrations are stored by it)."""
        return (self.model(value) if table == "models" else self.gpu(value))[1]

    def engine_name(self, name: str | None) -> str:
        """A request's `engine`, the default when it names none."""
        return self.default_engine if name is None else name

    def engine(self, name: str | None) -> EngineProfile | None:
        """A planning request's `engine`: None for `ideal` (the roofline alone), else the
        catalog's profile. An unknown name is an invalid field value (422 naming `engine`),
        not a missing resource: the request names no engine path."""
        defaulted = name is None
        name = self.engine_name(name)
        if name == IDEAL:
            return None
        profile: EngineProfile | None = self._find("engines", name)
        if profile is None:
            known = ", ".join((IDEAL, *self.catalog.engines))
            message = f"unknown engine {name!r}: known are {known}"
            if defaulted:  # the request named none: the service's setting is what is missing
                message = (
                    f"this service's default engine {name!r} (the DEFAULT_ENGINE setting) is not in the catalog: "
                    f"name one of {known}"
                )
            raise InvalidRequest(f"{message} (see GET /v1/engines)", {"engine": [message]})
        return profile

    def gpu_list(self) -> list[tuple[str, GpuSpec]]:
        """Every catalog GPU as (slug, spec), by slug: what the whole-catalog ranking walks."""
        return list(self.catalog.gpu_list)

    def gpu_choices(self, values: tuple[GpuRef, ...] | None) -> list[tuple[str, GpuSpec]]:
        """The GPUs a ranking may choose from as (label, spec): those given, else the catalog."""
        if values is None:
            return self.gpu_list()
        found = []
        for value in values:
            try:
                spec, label = self.gpu(value)
            except UnknownResource as exc:
                raise UnknownResource(exc.detail, {"gpus": [f"unknown GPU {value!r}"]}) from None
            found.append((label, spec))
        return found

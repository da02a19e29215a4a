"""What a planning or catalog service refuses, named by the field at fault. The HTTP edge maps
each kind to its status (app/api/errors.py); the CLI prints them."""

from __future__ import annotations


class PlanningError(Exception):
    """A request a service cannot answer. `errors` maps dotted field paths to messages."""

    def __init__(self, detail: str, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors


class UnknownResource(PlanningError):
    """A catalog slug that names nothing (HTTP 404)."""


class InvalidRequest(PlanningError):
    """A value the request gives, or lacks, that the service cannot plan with (HTTP 422)."""


class Conflict(PlanningError):
    """A write that collides with what the catalog holds (HTTP 409)."""


class TooLarge(PlanningError):
    """An input over one of a service's size caps (HTTP 413): e.g. too many tensors or shards."""

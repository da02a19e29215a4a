"""What the sizing core refuses, named by the input field at fault so the edge can say so."""

from __future__ import annotations


class SizingError(ValueError):
    """A request the model cannot answer. `field` is the input at fault (dotted path)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class MissingFigure(SizingError):
    """A catalog entry lacks a figure this estimate needs: refuse rather than guess."""

    def __init__(self, field: str, what: str) -> None:
        super().__init__(field, f"{what} is not known for this entry; pass it inline to plan with it")


class NotFound(SizingError):
    """A named thing (MIG profile) that the entry does not have."""

"""An answer's simulations within the request's work budget (app/sizing/budget.py).

Before the first simulation the answer's work is predicted from the request's own size (its
runs, their requests and mean lengths: `simulate.predicted_work`); over the budget it is a
422 naming the fields that make it large and the limit, and nothing is simulated. A run the
prediction let through still counts its work and stops at what the budget has left: the same
422, with what the run had done.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.sizing import budget
from app.sizing.queueing import ReplicaModel
from app.sizing.simulate import WorkLimitExceeded, predicted_work, seats_admitted_and_held

from .errors import InvalidRequest

LENGTH_FIELDS = ("prompt_tokens", "output_tokens")
SETTING = "WORK_BUDGET_UNITS"


@dataclass(frozen=True)
class Runs:
    """The simulations an answer will run on one replica model: each one's request count."""

    model: ReplicaModel
    requests: Sequence[int]

    def predicted(self) -> int:
        model = self.model
        return sum(predicted_work(model.traffic, model.limits, n, model.steps.windowed) for n in self.requests)

    def thrashes(self) -> bool:
        """Whether the scheduler admits more requests than the KV cache holds at full length
        (where a loaded replica preempts, and a smaller max_num_seqs preempts less)."""
        admitted, held = seats_admitted_and_held(self.model.traffic, self.model.limits)
        return admitted > held


def check_predicted(runs: Sequence[Runs], size_fields: Sequence[str]) -> None:
    """Refuse (422) an answer whose simulations are predicted to take more than the request's
    work budget, naming `size_fields` (what multiplies the runs), the lengths, and
    max_num_seqs when the KV cache would thrash."""
    spent = budget.current()
    limit = spent.work_units
    predicted = sum(r.predicted() for r in runs)
    if predicted <= spent.work_left():  # what the answer's earlier simulations left
        return
    thrashes = any(r.thrashes() for r in runs)
    detail = (
        f"this answer's simulations are predicted to take {predicted:,} units of work (scheduler passes, prefill "
        f"chunks, preemptions), over the limit of {limit:,} ({SETTING}) that keeps an answer within its time"
    )
    raise _refusal(detail, size_fields, thrashes)


def over_budget(over: WorkLimitExceeded, size_fields: Sequence[str]) -> InvalidRequest:
    """The 422 for a run stopped at the work budget's limit."""
    limit = budget.current().work_units
    detail = (
        f"this answer's simulations take more than {limit:,} units of work (scheduler passes, "
        f"prefill chunks, preemptions), the limit ({SETTING}) that keeps an answer within its time; the run "
        f"stopped {over.simulated_s:.3g} s into the simulated time after {over.preemptions:,} preemptions"
    )
    return _refusal(detail, size_fields, over.preemptions > 0)


def _refusal(detail: str, size_fields: Sequence[str], thrashes: bool) -> InvalidRequest:
    names = [*size_fields, *LENGTH_FIELDS]
    advice = "fewer requests or rates, shorter prompts or answers, or mode=analytic"
    if thrashes:
        advice += (
            "; the KV cache holds fewer requests at their full length than the engine runs at once, so a loaded "
            "replica preempts and recomputes: a smaller max_num_seqs preempts less"
        )
        names.append("max_num_seqs")
    message = f"{detail}: {advice}"
    return InvalidRequest(message, {name: [message] for name in names})

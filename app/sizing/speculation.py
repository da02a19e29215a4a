"""Speculative decoding: a drafter proposes k tokens, the target verifies them in one step.

With a per-token acceptance rate a (each drafted token accepted with probability a, given
the ones before it were), a verification step finishes on average

    E = 1 + a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a)

tokens per sequence (Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers via
Speculative Decoding", eq. 1): the accepted prefix of the draft plus the token the target
samples itself. The verification step runs k + 1 query tokens per sequence: its arithmetic
(and, for a MoE, the experts it touches) grows k + 1 times with the batch while the weights
and the KV are read once, so speculation pays while decode is memory-bound and loses once
the k + 1 times larger step turns compute-bound. Drafting adds its own time:

- draft_model: a smaller catalog model decodes the k tokens, k steps of its own;
- eagle, eagle3, mtp: a head of one decoder layer (plus the target's lm_head, which it
  shares) per drafted token, costed as that share of the target's decode step;
- ngram: prompt lookup on the host, counted as free.

TPOT = (verify step + draft time) / E; speedup = plain decode step / TPOT.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import memory, timing
from .errors import SizingError
from .precision import bytes_per_param
from .specs import ModelSpec

EAGLE = "eagle"
EAGLE3 = "eagle3"
MTP = "mtp"
NGRAM = "ngram"
DRAFT_MODEL = "draft_model"
METHODS = (EAGLE, EAGLE3, MTP, NGRAM, DRAFT_MODEL)
# Methods whose drafter is a head of about one decoder layer on the target's hidden states.
HEAD_METHODS = (EAGLE, EAGLE3, MTP)

# Per-token acceptance rates when the request gives none, with where they come from. They are
# workload-dependent (chat, code and summaries differ by tenths): measure yours and pass it.
DEFAULT_ACCEPTANCE_RATE = {
    # EAGLE (Li et al. 2024, "EAGLE: Speculative Sampling Requires Rethinking Feature
    # Uncertainty", ICML 2024, Table 7): the chain draft's acceptance rates n-alpha on MT-bench
    # are about 0.7-0.8 for Vicuna and LLaMA2-Chat; the low end.
    EAGLE: 0.7,
    # EAGLE-3 (Li et al. 2025, "EAGLE-3: Scaling up Inference Acceleration of Large Language
    # Models via Training-Time Test"): training-time test keeps n-alpha about 0.8 for every
    # draft position, where EAGLE's falls with the position.
    EAGLE3: 0.8,
    # DeepSeek-V3 Technical Report (2024, section 5.4.3): the MTP module's second-token
    # acceptance rate is 85-90% across generation topics (1.8x TPS); the low end.
    MTP: 0.85,
    # Prompt lookup (n-gram) accepts only where the output copies the prompt (Saxena 2023,
    # "Prompt Lookup Decoding"; vLLM's docs): high on summaries and code edits, low on open
    # chat. No single published rate applies; 0.5 is this service's assumption.
    NGRAM: 0.5,
    # A small model of the same family drafting for a large one: Leviathan et al. 2023 (Table 3)
    # measure alpha 0.5-0.9 over their pairs; 0.7 the middle.
    DRAFT_MODEL: 0.7,
}
# Drafted tokens per step when the request gives none: DeepSeek-V3 predicts one extra token;
# the others take vLLM's examples' 3.
DEFAULT_SPECULATIVE_TOKENS = {EAGLE: 3, EAGLE3: 3, MTP: 1, NGRAM: 3, DRAFT_MODEL: 3}


@dataclass(frozen=True)
class Speculation:
    """What a request asks of speculative decoding; `draft` is the catalog's draft model."""

    method: str
    num_speculative_tokens: int
    acceptance_rate: float
    draft_model: str | None = None
    draft: ModelSpec | None = None
    # A fleet may plan each option with or without it, and keep the cheaper.
    auto: bool = False


def speculation(
    method: str,
    num_speculative_tokens: int | None = None,
    acceptance_rate: float | None = None,
    draft_model: str | None = None,
    auto: bool = False,
) -> Speculation:
    """The request's speculation with the method's defaults filled in; refuses (naming the
    field) what no engine runs."""
    if method not in METHODS:
        raise SizingError("speculative.method", f"unknown method {method!r} (one of {', '.join(METHODS)})")
    if (method == DRAFT_MODEL) != (draft_model is not None):
        raise SizingError("speculative.draft_model", "give a draft_model with method=draft_model, and only then")
    k = DEFAULT_SPECULATIVE_TOKENS[method] if num_speculative_tokens is None else num_speculative_tokens
    if k < 1:
        raise SizingError("speculative.num_speculative_tokens", "must be at least 1")
    a = DEFAULT_ACCEPTANCE_RATE[method] if acceptance_rate is None else acceptance_rate
    if not 0.0 <= a < 1.0:
        raise SizingError("speculative.acceptance_rate", "must be in [0, 1)")
    return Speculation(method, k, a, draft_model, auto=auto)


def expected_tokens_per_step(acceptance_rate: float, num_speculative_tokens: int) -> float:
    """E = (1 - a^(k+1)) / (1 - a): tokens a verification step finishes per sequence."""
    a, k = acceptance_rate, num_speculative_tokens
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def head_fraction(model: ModelSpec) -> float:
    """An EAGLE/MTP head's share of the target's decode step: one decoder layer's active
    parameters plus the lm_head it shares, over the target's per-token parameters."""
    params = memory.params_by_component(model)
    embeddings = params[memory.EMBEDDINGS]
    lm_head = params[memory.LM_HEAD] or embeddings
    body = model.active_params - embeddings - params[memory.LM_HEAD]
    per_token = body + lm_head
    return (body / model.layers + lm_head) / per_token


def draft_weights_bytes(spec: Speculation, model: ModelSpec, weight_precision: str) -> float:
    """What the drafter adds to the replica's weights: the draft model's, one decoder layer
    of the target for an EAGLE/MTP head (it shares the target's embeddings and lm_head), none
    for n-gram lookup."""
    if spec.method == DRAFT_MODEL:
        assert spec.draft is not None
        return memory.weights_bytes(spec.draft, weight_precision)
    if spec.method in HEAD_METHODS:
        params = memory.params_by_component(model)
        body = model.params_total - params[memory.EMBEDDINGS] - params[memory.LM_HEAD]
        return body / model.layers * bytes_per_param(weight_precision)
    return 0.0


def draft_kv_bytes_per_token(spec: Speculation, model: ModelSpec, kv_precision: str, tp: int) -> float:
    """The drafter's KV for every token of a sequence: the draft model's every layer, one layer
    of the target's for a head, none for n-gram lookup."""
    if spec.method == DRAFT_MODEL:
        assert spec.draft is not None
        return memory.kv_bytes_per_token(spec.draft, kv_precision, tp)
    if spec.method in HEAD_METHODS:
        return memory.kv_bytes_per_token_per_layer(model, kv_precision, tp)
    return 0.0


def check_draft(target: ModelSpec, draft: ModelSpec) -> None:
    if draft.params_total >= target.params_total:
        raise SizingError(
            "speculative.draft_model",
            f"the draft model ({draft.params_total / 1e9:.1f}B parameters) must be smaller than the target "
            f"({target.params_total / 1e9:.1f}B)",
        )


@dataclass(frozen=True)
class SpeculativeStep:
    """One speculative step at a batch, against the plain decode step it replaces."""

    tokens_per_step: float
    verify_s: float
    draft_s: float
    plain_step_s: float

    @property
    def time_per_token_s(self) -> float:
        return (self.verify_s + self.draft_s) / self.tokens_per_step

    @property
    def speedup(self) -> float:
        return self.plain_step_s / self.time_per_token_s


def draft_workload(work: timing.Workload, draft: ModelSpec) -> timing.Workload:
    """The draft model on the target's GPUs, at its precisions (params x bytes)."""
    return timing.Workload(
        draft, work.weight_precision, work.kv_precision, work.tp, work.prompt_tokens, work.output_tokens
    )


def draft_time_s(
    spec: Speculation, work: timing.Workload, hw: timing.Hardware, batch: int, context_tokens: float, plain_s: float
) -> float:
    """Drafting k tokens for `batch` sequences: k steps of the draft model, k head passes
    (the head's share of the plain step), or nothing (n-gram lookup)."""
    k = spec.num_speculative_tokens
    if spec.method == DRAFT_MODEL:
        assert spec.draft is not None
        return k * timing.decode_step(draft_workload(work, spec.draft), hw, batch, context_tokens).time_s
    if spec.method in HEAD_METHODS:
        return k * head_fraction(work.model) * plain_s
    return 0.0


def speculative_step(
    spec: Speculation, work: timing.Workload, hw: timing.Hardware, batch: int, context_tokens: float
) -> SpeculativeStep:
    """Draft, then verify k + 1 tokens per sequence in one target step."""
    plain = timing.decode_step(work, hw, batch, context_tokens).time_s
    verify = timing.forward_step(
        work, hw, batch, context_tokens, queries_per_decode=spec.num_speculative_tokens + 1
    ).time_s
    return SpeculativeStep(
        tokens_per_step=expected_tokens_per_step(spec.acceptance_rate, spec.num_speculative_tokens),
        verify_s=verify,
        draft_s=draft_time_s(spec, work, hw, batch, context_tokens, plain),
        plain_step_s=plain,
    )


def steady_state(
    spec: Speculation, work: timing.Workload, hw: timing.Hardware, batch: int, max_batched_tokens: int
) -> tuple[timing.SteadyState | None, SpeculativeStep]:
    """Continuous batching under speculation at `batch`, and the step it runs (at the
    steady state's average context, prompt + output / 2)."""
    context = work.prompt_tokens + work.output_tokens / 2
    step = speculative_step(spec, work, hw, batch, context)
    steady = timing.continuous_batching(
        work,
        hw,
        batch,
        max_batched_tokens,
        queries_per_decode=spec.num_speculative_tokens + 1,
        tokens_per_step=step.tokens_per_step,
        draft_s=step.draft_s,
    )
    return steady, step


def step_model(
    spec: Speculation, work: timing.Workload, hw: timing.Hardware, steps: timing.StepModel
) -> timing.StepModel:
    """`steps` (the target's step model) under `spec`, in steps of one token
    (`StepModel.speculating`): what the simulator and the queueing model run under arrivals.
    The drafter is the draft model's own step model, or the target's plain steps at a head's
    share (EAGLE, MTP); n-gram lookup drafts for free."""
    tokens = expected_tokens_per_step(spec.acceptance_rate, spec.num_speculative_tokens)
    k = spec.num_speculative_tokens
    if spec.method == DRAFT_MODEL:
        assert spec.draft is not None
        drafter = timing.StepModel.build(draft_workload(work, spec.draft), hw)
        return steps.speculating(k, tokens, drafter)
    if spec.method in HEAD_METHODS:
        return steps.speculating(k, tokens, steps, head_fraction(work.model))
    return steps.speculating(k, tokens, None)

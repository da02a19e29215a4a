"""The measured rows of bench/measurements/ as planning questions: which request each row
asks of the API, and which answer field stands for the measured figure.

Rows name models, GPUs, engines and precisions in free text (copied from their sources);
this module maps them onto catalog slugs and request fields, and says so when it cannot
(the row is then reported as skipped, with the reason). Nothing here is fitted: a held-out
file of the same columns goes through the same mapping.
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.catalog.seed import load_seed_files

DATA_DIR = Path(__file__).with_name("measurements")
GIB = 2**30

# Metrics, in the order the report prints them.
WEIGHTS = "weights_gib_per_gpu"
KV_FROM_BUDGET = "kv_tokens_from_budget"
KV_AT_DEFAULTS = "kv_tokens_at_defaults"
TPOT = "tpot_ms"
TTFT = "ttft_ms"
OUTPUT_TOK_S = "output_tokens_per_s"
E2E = "static_batch_latency_ms"
METRICS = (WEIGHTS, KV_FROM_BUDGET, KV_AT_DEFAULTS, TPOT, TTFT, OUTPUT_TOK_S, E2E)

# Free-text model names to catalog slugs: the first pattern that matches wins.
MODEL_PATTERNS = (
    (r"meta-llama-3\.1-405b.*fp8", "llama-3.1-405b-fp8"),
    (r"llama-?3\.1-405b", "llama-3.1-405b"),
    (r"llama-?3\.3-70b", "llama-3.3-70b"),
    (r"llama-?3(\.1)?[- ]70b|llama70b", "llama-3.1-70b"),
    (r"llama-?3\.1-8b|llama8b", "llama-3.1-8b"),
    (r"llama-?2-70b|llama2-70b", "llama-2-70b"),
    (r"llama-?2-7b|llama2-7b", "llama-2-7b"),
    (r"qwen3-235b-a22b", "qwen3-235b-a22b"),
    # The Coder variant has the same MoE architecture (48 layers, 128 experts, 8 active).
    (r"qwen3-(coder-)?30b-a3b", "qwen3-30b-a3b"),
    (r"qwen3-14b", "qwen3-14b"),
    (r"qwen3-1\.7b", "qwen3-1.7b"),
    (r"qwen3-32b", "qwen3-32b"),
    (r"qwen3-8b", "qwen3-8b"),
    (r"qwen2\.5-72b", "qwen2.5-72b"),
    (r"qwen2\.5-7b", "qwen2.5-7b"),
    (r"mixtral-?8x7b", "mixtral-8x7b"),
    (r"mistral-7b", "mistral-7b"),
    (r"deepseek-(v3|r1)", "deepseek-v3"),
    (r"gpt-oss-120b", "gpt-oss-120b"),
    (r"gpt-oss-20b", "gpt-oss-20b"),
    (r"dbrx", "dbrx"),
    (r"gemma-?3-27b", "gemma-3-27b"),
    (r"phi-4", "phi-4"),
)

# Free-text GPU names to catalog slugs.
GPU_PATTERNS = (
    (r"h100.*(pcie)", "h100-pcie"),
    (r"h100.*nvl", "h100-nvl"),
    (r"h100", "h100-sxm"),
    (r"h200", "h200-sxm"),
    (r"gb200", "gb200"),
    (r"b200", "b200"),
    (r"b300", "b300"),
    (r"a100.*40", "a100-sxm-40gb"),
    (r"a100", "a100-sxm-80gb"),
    (r"l40s", "l40s"),
    (r"\bl4\b", "l4"),
    (r"a10g", "a10g"),
    (r"\ba10\b", "a10"),
    (r"a30", "a30"),
    (r"mi300x", "mi300x"),
    (r"mi325x", "mi325x"),
    (r"mi355x", "mi355x"),
    # A cloud vGPU or MIG device of the whole die (its rows say 188 SMs, 94,895 MiB) is the card.
    (r"rtx pro 6000", "rtx-pro-6000"),
    (r"rtx 4090", "rtx-4090"),
    (r"rtx 5090", "rtx-5090"),
)

# GPUs that are not in the catalog but whose memory a row prints: planned inline, memory only.
INLINE_GPUS = {r"rtx 3090": {"name": "NVIDIA RTX 3090 24GB", "memory_gb": 24, "architecture": "ampere-gddr"}}

# The /v1/latency replay of open-loop rows (OPENLOOP_METRICS). The rows and the measurements'
# README give no lengths, so these are published figures of the same sampling: vLLM's
# benchmark_serving on ShareGPT_V3_unfiltered_cleaned_split (first turn, Llama-3.1 tokenizer,
# 1,000 prompts): "Total input tokens: 229711, Total generated tokens: 203068"
# (vllm-project/vllm pull request #18566, 2025-05-22), i.e. 230 in and 203 out per request.
SHAREGPT_MEAN_PROMPT_TOKENS = 230
SHAREGPT_MEAN_OUTPUT_TOKENS = 203
# No source found here gives ShareGPT's coefficients of variation (only means and
# histograms), and none is fitted: lengths are replayed as fixed, which leaves out the
# spread's share of queueing (the replay understates waits, more so at higher rates).
SHAREGPT_PROMPT_TOKENS_CV = 0.0
SHAREGPT_OUTPUT_TOKENS_CV = 0.0
# A burst of ShareGPT requests drains at the pace of its longest answers, so there the spread
# cannot be left out: ShareGPT's first-turn lengths are right-skewed (many short questions, a
# long tail), a coefficient of variation about 1 as for an exponential; assumed, not measured.
SHAREGPT_BURST_CV = 1.0
# SGLang's random dataset at range_ratio 0 draws each length uniformly up to the nominal one:
# a uniform distribution's CV is 1/sqrt(3).
UNIFORM_CV = 3**-0.5

# Open-loop figures, replayed through /v1/latency at the row's request rate: medians
# (p50; a mean where the row gives no median) of TTFT, TPOT and ITL. Their own metrics, so
# the fit (which asks /v1/fit and /v1/throughput only) never sees them.
OPENLOOP_TTFT = "openloop_ttft_p50_ms"
OPENLOOP_TPOT = "openloop_tpot_p50_ms"
OPENLOOP_ITL = "openloop_itl_p50_ms"
OPENLOOP_METRICS = (OPENLOOP_TTFT, OPENLOOP_TPOT, OPENLOOP_ITL)


class Skip(Exception):
    """A row this mapping cannot turn into a request; the message says why."""


@dataclass(frozen=True)
class Case:
    """One measured figure and the planning request that predicts it."""

    row_id: str
    metric: str
    measured: float
    endpoint: str
    params: dict[str, Any]
    engine: str
    trust: str
    # How the answer gives the prediction; `then` asks a second request built from the first.
    extract: Callable[[dict[str, Any]], float | None]
    then: Callable[[dict[str, Any]], tuple[str, dict[str, Any], Callable[[dict[str, Any]], float | None]]] | None = None
    note: str = ""
    # Which publication the row comes from (rows of one source share its setup and biases).
    source: str = ""
    # A cheaper question whose answer moves with this one's (a burst's steady state at the
    # engine's largest batch): the fit asks it, scaled by the ratio of the two at its start.
    surrogate: Case | None = None


@dataclass(frozen=True)
class Skipped:
    row_id: str
    reason: str


def source_of(row: dict[str, str]) -> str:
    """The publication a row cites, without the section or comment it points into."""
    text = row.get("source") or ""
    return re.split(r" \(| '|, section|, https?:", text, maxsplit=1)[0].strip()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _num(text: str | None) -> float | None:
    """The first number in a cell ('0.93 (mem_fraction_static)' -> 0.93), else None."""
    if text is None:
        return None
    match = re.search(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    return float(match.group()) if match else None


def _int(text: str | None) -> int | None:
    value = _num(text)
    return None if value is None else int(value)


def engine_of(text: str) -> str:
    low = text.lower()
    if "sglang" in low:
        return "sglang"
    if "tensorrt" in low or "trt" in low or "nim" in low:
        return "trtllm"
    if "vllm" in low:
        return "vllm"
    raise Skip(f"engine {text!r} has no profile")


def model_of(text: str) -> str:
    low = text.lower().replace("_", "-")
    for pattern, slug in MODEL_PATTERNS:
        if re.search(pattern, low):
            return slug
    raise Skip(f"model {text!r} is not in the catalog")


def gpu_of(text: str, reported_gib: float | None) -> str | dict[str, Any]:
    low = text.lower()
    for pattern, inline in INLINE_GPUS.items():
        if re.search(pattern, low):
            if reported_gib is None:
                raise Skip(f"GPU {text!r} is not in the catalog and the row gives no memory")
            return {**inline, "memory_visible_gib": reported_gib}
    for pattern, slug in GPU_PATTERNS:
        if re.search(pattern, low):
            return slug
    raise Skip(f"GPU {text!r} is not in the catalog")


def precision_of(text: str) -> str | None:
    """The weight format a row states, None for the checkpoint's own (unstated, bf16/fp16)."""
    low = text.lower()
    if "nvfp4" in low or "fp4 (" in low or low.strip() == "fp4":
        return "nvfp4"
    if "mxfp4" in low:
        return "mxfp4"
    if "awq" in low or "int4" in low or "gptq" in low:
        return "int4"
    if "fp8" in low:
        return "fp8"
    if "int8" in low or "w8a8" in low:
        return "int8"
    return None


def kv_precision_of(model_text: str, precision_text: str, kv_text: str | None, engine_text: str = "") -> str | None:
    """The KV-cache format: the row's, else what the checkpoint ships. AMD's `-FP8-KV` and
    NVIDIA's ModelOpt `nvidia/...-FP8` checkpoints carry FP8 KV scales, which engines use.

    NIM's FP8 TensorRT-LLM profiles are built from ModelOpt FP8 quantization too, and their own
    figures rule a 16-bit cache out: Llama-3.3-70B FP8 on 2 x H100 runs about 87 sequences of
    5,000-5,500 tokens at once at concurrency 100 (its throughput 917 tokens/s at an ITL of
    93 ms, and 8 s of queueing for the other 13), about 460k tokens. At 320 KiB a token in
    bf16 that is 150 GB of cache beside 72 GB of weights on 160 GB; at FP8 it is 75 GB."""
    if kv_text and "fp8" in kv_text.lower():
        return "fp8"
    low = model_text.lower()
    if "fp8-kv" in low or (low.startswith("nvidia/") and "fp8" in (low + precision_text.lower())):
        return "fp8"
    if re.search(r"\bnim\b", engine_text.lower()) and "fp8" in precision_text.lower():
        return "fp8"
    return None


def _base(row: dict[str, str], model_text: str, precision_text: str, tp: int | None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": model_of(model_text),
        "gpu": gpu_of(row["gpu"], _num(row.get("gpu_mem_reported_gib"))),
        "engine": engine_of(row["engine"]),
    }
    precision = precision_of(precision_text)
    if precision is not None:
        params["weight_precision"] = precision
    kv = kv_precision_of(model_text, precision_text, row.get("kv_cache_dtype"), row["engine"])
    if kv is not None:
        params["kv_precision"] = kv
    if "trtllm-bench" in (row.get("benchmark_tool") or ""):
        # The source's own note: these tables ran kv_cache_free_gpu_mem_fraction 0.95.
        params["gpu_memory_utilization"] = 0.95
    if tp:
        params["tensor_parallel"] = tp
    if (hit := PREFIX_HIT.search(row.get("notes") or "")) is not None:
        # The engine's own count of prompt tokens found in its prefix cache over the run.
        params["prefix_cache_hit_rate"] = float(hit.group(1)) / 100
    return params


# vLLM's log line, as a row's notes quote it: "prefix cache hit rate GPU=49.92%".
PREFIX_HIT = re.compile(r"prefix cache hit rate\D*?([\d.]+)%", re.IGNORECASE)


def _ep(text: str | None) -> int | None:
    match = re.search(r"ep\s*=?\s*(\d+)", (text or "").lower())
    return int(match.group(1)) if match else None


def _field(name: str) -> Callable[[dict[str, Any]], float | None]:
    def get(body: dict[str, Any]) -> float | None:
        value: Any = body
        for part in name.split("."):
            if not isinstance(value, dict):
                return None
            value = value.get(part)
        return None if value is None else float(value)

    return get


def _weights_gib(body: dict[str, Any]) -> float | None:
    return body["weights_bytes_per_gpu"] / GIB


def memory_cases(path: Path) -> Iterator[Case | Skipped]:
    for row in _rows(path):
        row_id = row["row_id"]
        try:
            tp = _int(row["tensor_parallel_size"]) or 1
            params = _base(row, row["model"], row["model_precision_or_quant"], tp)
        except Skip as exc:
            yield Skipped(row_id, str(exc))
            continue
        common = {"engine": params["engine"], "trust": row["trust"], "source": source_of(row)}
        weights = _num(row["weights_gib_per_gpu"])
        if weights is not None:
            yield Case(row_id, WEIGHTS, weights, "/v1/fit", params, extract=_weights_gib, **common)
        block = _int(row["block_size"]) or 16
        tokens = _int(row["kv_tokens"])
        if tokens is None and _int(row["gpu_blocks"]) is not None:
            tokens = _int(row["gpu_blocks"]) * block  # type: ignore[operator]
        available = _num(row["available_kv_gib_per_gpu"])
        if tokens is None or tokens <= 0:
            continue
        if available is not None and available > 0:

            def from_budget(body: dict[str, Any], gib: float = available, size: int = block, ranks: int = tp) -> float:
                per_rank = body["kv_bytes_per_token"] / ranks
                return float(int(gib * GIB / per_rank) // size * size)

            yield Case(row_id, KV_FROM_BUDGET, tokens, "/v1/fit", params, extract=from_budget, **common)
        settings = dict(params)
        utilization = _num(row["gpu_memory_utilization"])
        if utilization is not None:
            settings["gpu_memory_utilization"] = utilization
        if "V0" in row["engine"] and _int(row["max_model_len"]):
            # The old engine profiled a whole max_model_len prompt (no chunked prefill).
            settings["max_batched_tokens"] = _int(row["max_model_len"])
        yield Case(row_id, KV_AT_DEFAULTS, tokens, "/v1/fit", settings, extract=_field("kv_capacity_tokens"), **common)


@dataclass(frozen=True)
class Totals:
    """What a run's result block counts: requests completed, prompt and output tokens."""

    requests: int
    prompt_tokens: int
    output_tokens: int

    @property
    def mean_prompt_tokens(self) -> int:
        return max(1, round(self.prompt_tokens / self.requests))

    @property
    def mean_output_tokens(self) -> int:
        return max(1, round(self.output_tokens / self.requests))


_COUNT = (r"(\d+) successful", r"completed (\d+)", r"(\d+) requests sent at once", r"(\d+) prompts")
_PROMPT_TOTAL = r"total[ _]input[ _]tokens:? (\d+)"
_OUTPUT_TOTAL = r"total[ _](?:generated|output)[ _]tokens:? (\d+)"


def totals_of(*cells: str | None) -> Totals | None:
    """The counts a benchmark's result block prints (vLLM's 'total input tokens', SGLang's
    'total_input_tokens'), searched in the given cells; None unless all three are there."""
    text = " ".join(c for c in cells if c).replace(",", "")
    prompt = re.search(_PROMPT_TOTAL, text, re.IGNORECASE)
    output = re.search(_OUTPUT_TOTAL, text, re.IGNORECASE)
    count = next((m for pattern in _COUNT if (m := re.search(pattern, text, re.IGNORECASE))), None)
    if not (prompt and output and count) or int(count.group(1)) <= 0:
        return None
    return Totals(int(count.group(1)), int(prompt.group(1)), int(output.group(1)))


def row_totals(row: dict[str, str]) -> Totals | None:
    """The run's counts, wherever the row's cells print them."""
    return totals_of(row.get("notes"), row.get("batch_or_concurrency"), row.get("dataset"))


def _sharegpt(text: str | None) -> bool:
    return "sharegpt" in (text or "").lower()


def _lengths(row: dict[str, str]) -> tuple[int, int]:
    """Mean prompt and output lengths: the row's, else the run's totals over its requests,
    else ShareGPT's published means for a ShareGPT run."""
    prompt, output = _int(row["isl"]), _int(row["osl"])
    if prompt is not None and output is not None and not _sharegpt(row["isl"]):
        return prompt, output
    totals = row_totals(row)
    if totals is not None:
        return totals.mean_prompt_tokens, totals.mean_output_tokens
    if _sharegpt(row.get("dataset")) or _sharegpt(row["isl"]):
        return SHAREGPT_MEAN_PROMPT_TOKENS, SHAREGPT_MEAN_OUTPUT_TOKENS
    raise Skip("no input/output lengths")


# What a row's spec_decoding text names, as the service's methods (the most specific first).
SPECULATION_METHODS = (("mtp", "mtp"), ("eagle3", "eagle3"), ("eagle-3", "eagle3"), ("eagle", "eagle"),
                       ("ngram", "ngram"), ("n-gram", "ngram"), ("prompt lookup", "ngram"))  # fmt: skip
SPECULATION_DRAFTED = re.compile(
    r"(?:nextn_predict_layers|num_speculative_tokens|draft tokens?)\D*(\d+)|(\d+) draft tokens?"
)


def speculation_of(row: dict[str, str]) -> dict[str, Any] | None:
    """The row's speculative decoding as the request's `speculative` (the method and the
    tokens drafted a step; the acceptance rate, which no row measures, is the method's
    default), None without it."""
    text = (row.get("spec_decoding") or "none").strip().lower()
    if text in ("", "none", "no", "off"):
        return None
    method = next((ours for name, ours in SPECULATION_METHODS if name in text), None)
    if method is None:
        raise Skip(f"speculative decoding ({row['spec_decoding']}) is not a method this service models")
    spec: dict[str, Any] = {"method": method}
    if (drafted := SPECULATION_DRAFTED.search(text)) is not None:
        spec["num_speculative_tokens"] = int(drafted.group(1) or drafted.group(2))
    return spec


def _unmodelled(row: dict[str, str]) -> None:
    """Serving features the step model leaves out: their rows would fit a wrong constant."""
    text = " ".join(row.get(k) or "" for k in ("other_parallel", "notes")).lower()
    if "dp attention" in text or "dp-attention" in text or "attention dp" in text or _perf_overview_moe(row):
        raise Skip("data-parallel attention is not modelled")
    if _lockstep(row) and model_of(row["model"]) in _moe_slugs():
        raise Skip("identical greedy requests route every sequence to the same experts")


def _perf_overview_moe(row: dict[str, str]) -> bool:
    """TensorRT-LLM's perf-overview tables run their MoE models with `enable_attention_dp: true`
    and expert parallel (the page's own "Running the Benchmark" options for MoE models), which
    its rows do not repeat."""
    return "perf-overview" in (row.get("source") or "") and model_of(row["model"]) in _moe_slugs()


def _lockstep(row: dict[str, str]) -> bool:
    """Concurrent copies of one prompt at temperature 0 decode the same tokens in lockstep:
    an MoE step then reads one sequence's experts, not the batch's union of them."""
    dataset = (row.get("dataset") or "").lower()
    tool = (row.get("benchmark_tool") or "").lower()
    return (
        "single" in dataset
        and "prompt" in dataset
        and "temperature 0" in tool
        and (_int(row.get("batch_or_concurrency")) or 1) > 1
    )


@functools.cache
def _moe_slugs() -> frozenset[str]:
    """The seed catalog's mixture-of-experts models."""
    return frozenset(m["slug"] for m in load_seed_files()["models"] if (m["experts"] or 0) > 1)


def _burst_requests(row: dict[str, str]) -> int | None:
    """How many requests a burst (every request sent at once) held, None for other loads."""
    load = " ".join((row["load_type"], row["batch_or_concurrency"])).lower()
    if "burst" not in load and "sent at once" not in load:
        return None
    totals = row_totals(row)
    if totals is not None:
        return totals.requests
    count = re.search(r"(\d+) (?:successful|requests sent at once|prompts)", load + " " + (row.get("dataset") or ""))
    return int(count.group(1)) if count else None


def _output_tok_s(row: dict[str, str], gpus: int, prompt: int, output: int) -> float | None:
    """Output tokens/s of the deployment: the row's, per GPU times GPUs, or its total tokens/s
    (input counted too) times the output share of the mean lengths."""
    total = _num(row["output_tok_s_total"])
    per_gpu = _num(row["output_tok_s_per_gpu"])
    if total is None and per_gpu is not None:
        total = per_gpu * gpus
    both = _num(row.get("total_tok_s"))
    if total is None and both is not None:
        total = both * output / (prompt + output)
    return total


def speed_cases(path: Path) -> Iterator[Case | Skipped]:
    for row in _rows(path):
        row_id = row["row_id"]
        try:
            _unmodelled(row)
            tp = _int(row["tensor_parallel_size"]) or _int(row["num_gpus"]) or 1
            params = _base(row, row["model"], row["precision"], tp)
            prompt, output = _lengths(row)
            spec = speculation_of(row)
        except Skip as exc:
            yield Skipped(row_id, str(exc))
            continue
        params.update(prompt_tokens=prompt, output_tokens=output)
        if spec is not None:
            params["speculative"] = spec
        ep = _ep(row["other_parallel"])
        if ep:
            params["expert_parallel"] = ep
        common = {"engine": params["engine"], "trust": row["trust"], "source": source_of(row)}
        load = row["load_type"].lower()
        gpus = _int(row["num_gpus"]) or tp
        if "static batch" in load:
            batch = _int(row["batch_or_concurrency"]) or 1
            e2e = _num(row["e2e_latency_ms"])
            if e2e is not None:
                yield Case(
                    row_id,
                    E2E,
                    e2e,
                    "/v1/throughput",
                    {**params, "concurrency": batch},
                    extract=_field("request_latency_ms"),
                    **common,
                )
            continue
        burst = _burst_requests(row)
        if burst is not None:
            # A burst's TTFT and TPOT are mostly queueing: its throughput is the figure kept.
            measured = _output_tok_s(row, gpus, prompt, output)
            if measured is None:
                continue
            varied = _sharegpt(row.get("dataset")) or _sharegpt(row["isl"])
            cv = SHAREGPT_BURST_CV if varied else 0.0
            at = {**params, "requests": burst, "prompt_tokens_cv": cv, "output_tokens_cv": cv}
            yield Case(
                row_id,
                OUTPUT_TOK_S,
                measured,
                "/v1/batch",
                at,
                extract=_field("output_tokens_per_s"),
                surrogate=_at_engine_max_case(row_id, measured, params, common),
                note=f"a burst of {burst} requests, simulated to the last completion"
                + (f" (lengths spread, CV {cv:g} assumed)" if varied else ""),
                **common,
            )
            continue
        if "offline" in load:
            measured = _output_tok_s(row, gpus, prompt, output)
            if measured is None:
                continue
            yield _at_engine_max_case(row_id, measured, params, common)
            continue
        concurrency = _int(row["batch_or_concurrency"]) or 1
        at = {**params, "concurrency": concurrency}
        # A per-token time that includes prefill (no streaming) is not TPOT: its row keeps tokens/s.
        with_prefill = "includes prefill" in (row.get("tpot_itl_metric") or "")
        # A TTFT its source says was served from the prefix cache measured no prefill: the run's
        # hit rate counts the warm-up's miss too, so it cannot say how much of this prompt hit.
        cached = "ttft reflects a cached prompt" in (row.get("notes") or "").lower()
        for metric, value, name in (
            (TPOT, None if with_prefill else _num(row["tpot_or_itl_ms"]), "time_per_token_ms"),
            (TTFT, None if cached else _num(row["ttft_ms"]), "ttft_ms"),
            (OUTPUT_TOK_S, _output_tok_s(row, gpus, prompt, output), "tokens_per_s"),
        ):
            if value is not None:
                yield Case(
                    row_id,
                    metric,
                    value,
                    "/v1/fit",
                    at,
                    extract=_field("max_concurrency"),
                    then=_closed_loop(at, name, concurrency),
                    note="closed loop: the replica runs min(N, KV capacity, max_num_seqs); the rest queue",
                    **common,
                )


def _closed_loop(
    params: dict[str, Any], name: str, concurrency: int
) -> Callable[[dict[str, Any]], tuple[str, dict[str, Any], Callable[[dict[str, Any]], float | None]]]:
    """A closed-loop run keeps N = `concurrency` requests in flight. The replica runs
    B = min(N, KV capacity, max_num_seqs) of them; the other N - B wait, so their TTFT holds
    the time for N - B requests ahead to finish at the replica's request rate (Little's law)."""

    def then(fit: dict[str, Any]) -> tuple[str, dict[str, Any], Callable[[dict[str, Any]], float | None]]:
        running = max(1, min(concurrency, fit["max_concurrency"], fit.get("max_num_seqs") or concurrency))

        def get(body: dict[str, Any]) -> float | None:
            steady = body.get("continuous_batching")
            if steady is None:
                return None
            value = float(steady[name])
            if name == "ttft_ms" and running < concurrency and steady["requests_per_s"]:
                value += (concurrency - running) / steady["requests_per_s"] * 1e3
            return value

        return "/v1/throughput", {**params, "concurrency": running}, get

    return then


def _at_engine_max(
    params: dict[str, Any],
) -> Callable[[dict[str, Any]], tuple[str, dict[str, Any], Callable[[dict[str, Any]], float | None]]]:
    def then(fit: dict[str, Any]) -> tuple[str, dict[str, Any], Callable[[dict[str, Any]], float | None]]:
        batch = max(1, min(fit["max_concurrency"], fit["max_num_seqs"] or fit["max_concurrency"]))
        return "/v1/throughput", {**params, "concurrency": batch}, _field("continuous_batching.tokens_per_s")

    return then


def _at_engine_max_case(row_id: str, measured: float, params: dict[str, Any], common: dict[str, Any]) -> Case:
    """Output tokens/s of the continuously batched replica at the engine's largest batch."""
    return Case(
        row_id,
        OUTPUT_TOK_S,
        measured,
        "/v1/fit",
        params,
        extract=_field("max_concurrency"),
        then=_at_engine_max(params),
        note="at the engine's largest batch: min(max_num_seqs, KV capacity)",
        **common,
    )


def _openloop_lengths(row: dict[str, str]) -> tuple[int, int, float, float]:
    """Mean prompt and output lengths and their CVs for an open-loop run: a random dataset's
    fixed lengths (range ratio 1) or uniform draws (range ratio 0, means from the run's totals),
    else a ShareGPT run's totals or ShareGPT's published means."""
    dataset = row.get("dataset") or ""
    totals = totals_of(row.get("notes"), f"{row.get('prompts') or 0} prompts")
    fixed = re.search(r"random (\d+)/(\d+).*(?:range-ratio|range_ratio) 1\b", dataset)
    if fixed:
        return int(fixed.group(1)), int(fixed.group(2)), 0.0, 0.0
    if re.search(r"random .*range_ratio 0(\.0)?\b", dataset) and totals is not None:
        return totals.mean_prompt_tokens, totals.mean_output_tokens, UNIFORM_CV, UNIFORM_CV
    if _sharegpt(dataset):
        if totals is not None:
            prompt, output = totals.mean_prompt_tokens, totals.mean_output_tokens
        else:
            prompt, output = SHAREGPT_MEAN_PROMPT_TOKENS, SHAREGPT_MEAN_OUTPUT_TOKENS
        return prompt, output, SHAREGPT_PROMPT_TOKENS_CV, SHAREGPT_OUTPUT_TOKENS_CV
    raise Skip(f"dataset {dataset!r}: its spread is not stated (no published length statistics)")


# An open-loop run served less than this share of its offered rate: its queue grew for the
# whole run. A stable queue falls short of the offered rate only by the drain of its last
# requests (a request's lifetime over a run of minutes: a few percent); the runs that fall
# short by a quarter or more are the ones whose sources call them overloaded.
OVERLOADED_SHARE = 0.75
_DURATION = re.compile(r"duration:? ([\d.]+) ?s\b", re.IGNORECASE)


def achieved_rate(row: dict[str, str]) -> float | None:
    """Requests per second the run served: as printed, else its prompts over its duration."""
    printed = _num(row.get("achieved_req_s"))
    if printed is not None:
        return printed
    duration = _DURATION.search(row.get("notes") or "")
    prompts = _int(row.get("prompts"))
    if duration is None or not prompts or float(duration.group(1)) <= 0:
        return None
    return prompts / float(duration.group(1))


def overloaded(achieved: float | None, offered: float | None) -> bool:
    return achieved is not None and offered is not None and achieved < OVERLOADED_SHARE * offered


def openloop_cases(path: Path) -> Iterator[Case | Skipped]:
    for row in _rows(path):
        row_id = row["row_id"]
        try:
            _unmodelled(row)
            tp = _int(row["tensor_parallel"]) or 1
            params = _base(row, row["model"], row["precision"], tp)
            prompt, output, _, _ = _openloop_lengths(row)
        except Skip as exc:
            yield Skipped(row_id, str(exc))
            continue
        achieved = achieved_rate(row)
        offered = _num(row["request_rate"])
        # A stable queue serves what is offered (a rate from the duration would count the drain).
        rate = _num(row["achieved_req_s"]) or offered
        params.update(prompt_tokens=prompt, output_tokens=output)
        common = {"engine": params["engine"], "trust": row["trust"], "source": source_of(row)}
        # Means where the row gives them, else medians (a right-skewed TTFT's median sits below
        # its mean, so this leans toward less queueing).
        tpot = next(
            (v for k in ("tpot_mean_ms", "itl_mean_ms", "tpot_p50_ms", "itl_p50_ms") if (v := _num(row[k]))), None
        )
        ttft = _num(row["ttft_mean_ms"]) or _num(row["ttft_p50_ms"])
        if overloaded(achieved, offered):
            # The queue grew for the whole run: TTFT measures how long the run lasted, not the
            # replica. The running batch is still a steady state (the engine caps it), so TPOT
            # stays, at the decode stage's own Little's law on the rate actually served.
            ttft = None
            in_flight = max(1, round((achieved or 1) * output * (tpot or 0) / 1e3))
            note = f"overloaded ({achieved:g} of {offered:g} req/s served): TPOT at the decoding count"
        else:
            # Little's law: requests in flight = rate x time in the system (TTFT + decode).
            in_flight = max(1, round((rate or 1) * ((ttft or 0) + output * (tpot or 0)) / 1e3))
            note = "open loop at the in-flight count Little's law gives"
        at = {**params, "concurrency": in_flight}
        if tpot is not None:
            yield Case(
                row_id, TPOT, tpot, "/v1/throughput", at, extract=_field("continuous_batching.time_per_token_ms"),
                note=note, **common,
            )  # fmt: skip
        if ttft is not None:
            yield Case(
                row_id, TTFT, ttft, "/v1/throughput", at, extract=_field("continuous_batching.ttft_ms"),
                note=note, **common,
            )  # fmt: skip


def _rate_answer(figure: str, statistic: str) -> Callable[[dict[str, Any]], float | None]:
    """rates[0].<figure>.<statistic> of a /v1/latency answer (None past saturation)."""

    def get(body: dict[str, Any]) -> float | None:
        value = body["rates"][0][figure][statistic]
        return None if value is None else float(value)

    return get


def openloop_latency_cases(path: Path) -> Iterator[Case | Skipped]:
    """Open-loop rows as /v1/latency questions: one replica at the row's request rate,
    Poisson arrivals (the benchmarks' default), the run's mean lengths (_openloop_lengths); each
    measured median against the predicted one (a measured mean against the predicted mean)."""
    for row in _rows(path):
        row_id = row["row_id"]
        try:
            _unmodelled(row)
            prompt, output, prompt_cv, output_cv = _openloop_lengths(row)
            rate = _num(row["request_rate"])
            if rate is None or rate <= 0:
                raise Skip("no request rate")
            tp = _int(row["tensor_parallel"]) or 1
            params = _base(row, row["model"], row["precision"], tp)
        except Skip as exc:
            yield Skipped(row_id, str(exc))
            continue
        params.update(
            prompt_tokens=prompt,
            output_tokens=output,
            prompt_tokens_cv=prompt_cv,
            output_tokens_cv=output_cv,
            arrival="poisson",
            request_rate=rate,
            mode="analytic",
        )
        common = {"engine": params["engine"], "trust": row["trust"], "source": source_of(row)}
        achieved = _num(row.get("achieved_req_s"))
        note = f"Poisson at {rate:g} req/s" + (f" (achieved {achieved:g})" if achieved else "")
        for metric, figure in ((OPENLOOP_TTFT, "ttft"), (OPENLOOP_TPOT, "tpot"), (OPENLOOP_ITL, "itl")):
            median, mean = _num(row.get(f"{figure}_p50_ms")), _num(row.get(f"{figure}_mean_ms"))
            measured, statistic = (median, "p50") if median is not None else (mean, "mean")
            if measured is None:
                continue
            yield Case(
                row_id,
                metric,
                measured,
                "/v1/latency",
                params,
                extract=_rate_answer(f"{figure}_ms", statistic),
                note=f"{note}; {statistic}",
                **common,
            )


def load_openloop_cases(data_dir: Path = DATA_DIR) -> tuple[list[Case], list[Skipped]]:
    """The open-loop rows of data_dir/openloop.csv as /v1/latency cases (none without the file)."""
    path = data_dir / "openloop.csv"
    if not path.exists():
        return [], []
    cases: list[Case] = []
    skipped: list[Skipped] = []
    for item in openloop_latency_cases(path):
        if isinstance(item, Case):
            cases.append(item)
        else:
            skipped.append(item)
    return cases, skipped


def _all_cases(data_dir: Path) -> tuple[list[Case], list[Skipped]]:
    cases: list[Case] = []
    skipped: list[Skipped] = []
    for name, reader in (("memory.csv", memory_cases), ("speed.csv", speed_cases), ("openloop.csv", openloop_cases)):
        path = data_dir / name
        if not path.exists():
            continue
        for item in reader(path):
            (cases if isinstance(item, Case) else skipped).append(item)
    return cases, skipped


def speculative(case: Case) -> bool:
    return "speculative" in case.params


SPECULATIVE_APART = (
    "speculative decoding: replayed apart (load_speculative_cases): its acceptance rate is the method's "
    "default, not measured, so the row trains no constant"
)


def load_cases(data_dir: Path = DATA_DIR) -> tuple[list[Case], list[Skipped]]:
    """The rows that train and judge the engine profiles: every row but speculation's."""
    cases, skipped = _all_cases(data_dir)
    apart = {c.row_id for c in cases if speculative(c)}
    return [c for c in cases if not speculative(c)], [*skipped, *(Skipped(r, SPECULATIVE_APART) for r in sorted(apart))]


def load_speculative_cases(data_dir: Path = DATA_DIR) -> list[Case]:
    """The rows served with speculative decoding, asked with the row's method and drafted
    tokens at the method's default acceptance rate: a check of the speculation model, never
    a training row."""
    return [c for c in _all_cases(data_dir)[0] if speculative(c)]

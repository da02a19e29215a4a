"""Read what an inference engine says about memory at start-up (vLLM V0 and V1, SGLang).

The engine prints how much its weights took, how much memory is left for the KV cache and
how many tokens that holds. Those figures calibrate the service's memory model to what the
engine really does on the user's hardware. Only the log text is read: nothing is run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

GIB = 2**30
GB = 10**9
MAX_LOG_BYTES = 4 * 1024 * 1024

_NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
_UNIT = r"\s*(GiB|GB|MiB|MB)"
_UNITS = {"GiB": GIB, "GB": GB, "MiB": 2**20, "MB": 10**6}


def _bytes(number: str, unit: str) -> float:
    return float(number.replace(",", "")) * _UNITS[unit]


# Each figure as the engines print it; the first pattern that matches wins.
PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "weights_bytes": (
        re.compile(r"Model loading took " + _NUMBER + _UNIT),  # vLLM V1
        re.compile(r"Loading model weights took " + _NUMBER + _UNIT),  # vLLM V0 / early V1
        re.compile(r"model weights take " + _NUMBER + _UNIT),  # vLLM V0 memory profiling
        # SGLang; the tempered dot keeps a line of many "Load weight end." linear to scan.
        re.compile(r"Load weight end\.(?:(?!Load weight end\.)[^\n])*?mem usage=" + _NUMBER + _UNIT),
    ),
    "kv_cache_bytes": (
        re.compile(r"Available KV cache memory: " + _NUMBER + _UNIT),  # vLLM V1
        re.compile(r"the rest of the memory reserved for KV Cache is " + _NUMBER + _UNIT),  # vLLM V0
    ),
    "non_torch_bytes": (re.compile(r"non_torch_memory takes " + _NUMBER + _UNIT),),
    "activation_peak_bytes": (re.compile(r"activation peak memory takes " + _NUMBER + _UNIT),),
    "cuda_graph_bytes": (re.compile(r"Graph capturing finished in [0-9.]+ secs?, took " + _NUMBER + _UNIT),),
}
KV_TOKENS = re.compile(r"GPU KV cache size: " + _NUMBER + r" tokens")
GPU_BLOCKS = re.compile(r"# (?:GPU|cuda) blocks: " + _NUMBER)
BLOCK_SIZE = re.compile(r"block_size=([0-9]+)")
MAX_CONCURRENCY = re.compile(r"Maximum concurrency for " + _NUMBER + r" tokens per request: " + _NUMBER + r"x")
SGLANG_KV = re.compile(
    r"KV Cache is allocated\. #tokens: " + _NUMBER + r", K size: " + _NUMBER + _UNIT + r", V size: " + _NUMBER + _UNIT
)
# vLLM's default paged-attention block, used to turn "# GPU blocks" into tokens.
DEFAULT_BLOCK_SIZE = 16


class LogParseError(ValueError):
    """The text holds none of the lines a calibration needs."""


EXPECTED_LINES = (
    '"Model loading took X GiB" or "Loading model weights took X GB" (weights)',
    '"Available KV cache memory: X GiB" (V1) or "the rest of the memory reserved for KV Cache is X GiB" (V0)',
    '"GPU KV cache size: N tokens" (V1), "# GPU blocks: N" (V0) or SGLang\'s "KV Cache is allocated. #tokens: N"',
)


@dataclass(frozen=True)
class StartupLog:
    """Per-GPU figures (the engine logs rank 0) and the replica's KV token capacity."""

    engine: str
    weights_bytes: float | None = None
    kv_cache_bytes: float | None = None
    kv_capacity_tokens: int | None = None
    non_torch_bytes: float | None = None
    activation_peak_bytes: float | None = None
    cuda_graph_bytes: float | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens: int | None = None
    lines_used: list[str] = field(default_factory=list)

    @property
    def kv_bytes_per_token(self) -> float | None:
        """Per GPU, as the engine allocated it (pages and padding included)."""
        if self.kv_cache_bytes and self.kv_capacity_tokens:
            return self.kv_cache_bytes / self.kv_capacity_tokens
        return None


def _int(text: str) -> int:
    return int(float(text.replace(",", "")))


def parse_startup_log(text: str) -> StartupLog:
    """The figures found in `text`. Raises LogParseError naming the lines it looked for when
    neither a weights nor a KV-capacity line is there."""
    found: dict[str, float] = {}
    used: list[str] = []
    for name, patterns in PATTERNS.items():
        for pattern in patterns:
            match = pattern.search(text)
            if match:
                found[name] = _bytes(match.group(1), match.group(2))
                used.append(_line_of(text, match))
                break
    engine = "vllm"
    tokens: int | None = None
    if match := SGLANG_KV.search(text):
        engine = "sglang"
        tokens = _int(match.group(1))
        found["kv_cache_bytes"] = _bytes(match.group(2), match.group(3)) + _bytes(match.group(4), match.group(5))
        used.append(_line_of(text, match))
    elif match := KV_TOKENS.search(text):
        tokens = _int(match.group(1))
        used.append(_line_of(text, match))
    elif match := GPU_BLOCKS.search(text):
        block = BLOCK_SIZE.search(text)
        tokens = _int(match.group(1)) * (int(block.group(1)) if block else DEFAULT_BLOCK_SIZE)
        used.append(_line_of(text, match))
    concurrency = MAX_CONCURRENCY.search(text)
    if concurrency:
        used.append(_line_of(text, concurrency))
    if "weights_bytes" not in found and tokens is None and "kv_cache_bytes" not in found:
        raise LogParseError("no start-up memory lines found; expected: " + "; ".join(EXPECTED_LINES))
    return StartupLog(
        engine=engine,
        weights_bytes=found.get("weights_bytes"),
        kv_cache_bytes=found.get("kv_cache_bytes"),
        kv_capacity_tokens=tokens,
        non_torch_bytes=found.get("non_torch_bytes"),
        activation_peak_bytes=found.get("activation_peak_bytes"),
        cuda_graph_bytes=found.get("cuda_graph_bytes"),
        max_concurrency=float(concurrency.group(2).replace(",", "")) if concurrency else None,
        max_concurrency_tokens=_int(concurrency.group(1)) if concurrency else None,
        lines_used=used,
    )


def _line_of(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end != -1 else len(text)].strip()

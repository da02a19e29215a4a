"""Number formats: bytes per parameter, which a card runs natively, and the "auto" policy.

Policy (seed 002): pick the smallest precision the card's tensor cores run natively; at
equal size prefer the floating-point format (fp8 over int8, nvfp4/mxfp4 over int4);
when a card's native list is unknown, assume bf16 only and say so. Asking for a format
the card lacks is allowed but warned: the math is converted up, so compute gains nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .specs import GpuSpec, ModelSpec


@dataclass(frozen=True)
class Precision:
    name: str
    bits: int
    kind: str  # "float" | "int"
    block_scaled: bool = False

    @property
    def bytes_per_param(self) -> float:
        return self.bits / 8


PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision("fp32", 32, "float"),
        Precision("bf16", 16, "float"),
        Precision("fp16", 16, "float"),
        Precision("fp8", 8, "float"),
        Precision("int8", 8, "int"),
        Precision("fp6", 6, "float", block_scaled=True),
        Precision("nvfp4", 4, "float", block_scaled=True),
        Precision("mxfp4", 4, "float", block_scaled=True),
        Precision("fp4", 4, "float"),
        Precision("int4", 4, "int"),
    )
}

# Spellings users paste from configs and engine flags.
ALIASES = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "e4m3": "fp8",
    "float8": "fp8",
}

# Formats that run anywhere as weight-only quantisation (dequantised in the kernel), so
# asking for them on a card without native support is ordinary, not a mistake.
WEIGHT_ONLY_ANYWHERE = frozenset({"int4"})

# The format compute runs in when nothing else is asked (seed 000: "Compute is always BF16").
DEFAULT_COMPUTE = "bf16"

# Tie-break among equal sizes: float formats first, block-scaled floats before plain ones.
_PREFERENCE = ("nvfp4", "mxfp4", "fp4", "int4", "fp6", "fp8", "int8", "bf16", "fp16", "fp32")


# What a quantized checkpoint keeps in 16 bits: embeddings and lm_head (and norms, routers).
KEPT_PRECISION = "bf16"
# Which components a checkpoint of each format quantizes unless it says otherwise
# (memory.COMPONENTS): linear layers for the usual formats; MXFP4 (gpt-oss) only the experts.
_LINEAR = ("attention", "dense_mlp", "experts")
QUANTIZED_BY_DEFAULT: dict[str, tuple[str, ...]] = {"mxfp4": ("experts",)}
# Scale bytes a block-quantized checkpoint stores per weight: one fp32 per 128x128 block
# (DeepSeek/Qwen FP8), fp16 scale + 4-bit zero per group of 128 (AWQ/GPTQ int4), one E8M0
# per 32 (MXFP4), one E4M3 per 16 (NVFP4). Per-channel int8 scales are negligible.
SCALE_BYTES_PER_PARAM = {
    "fp8": 4 / (128 * 128),
    "int4": 2.5 / 128,
    "mxfp4": 1 / 32,
    "fp6": 1 / 32,
    "nvfp4": 1 / 16,
}


# The weight-format policy a request may ask for instead of a format: each card's best (choose_weight_precision).
AUTO = "auto"


class UnknownPrecision(ValueError):
    """A precision name that is not in the table."""


@lru_cache(maxsize=256)
def normalise(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in PRECISIONS:
        raise UnknownPrecision(name)
    return key


@lru_cache(maxsize=256)
def bytes_per_param(name: str) -> float:
    return PRECISIONS[normalise(name)].bytes_per_param


def is_quantized(name: str) -> bool:
    """Narrower than 16 bits: a checkpoint in it keeps some tensors in bf16."""
    return PRECISIONS[normalise(name)].bits < 16


def quantized_by_default(name: str) -> tuple[str, ...]:
    return QUANTIZED_BY_DEFAULT.get(normalise(name), _LINEAR)


def scale_bytes_per_param(name: str) -> float:
    return SCALE_BYTES_PER_PARAM.get(normalise(name), 0.0)


def native_on(gpu: GpuSpec) -> tuple[tuple[str, ...], bool]:
    """The card's native formats, and whether that list is known (else bf16 is assumed,
    also when it names no format we serve in)."""
    if gpu.native_precisions is None:
        return ("bf16",), False
    names = []
    for raw in gpu.native_precisions:
        try:
            names.append(normalise(raw))
        except UnknownPrecision:
            continue  # tf32, fp64 and friends matter for training, not for serving
    if not names:
        return ("bf16",), False
    return tuple(names), True


def _rank(name: str) -> tuple[float, int]:
    return (PRECISIONS[name].bytes_per_param, _PREFERENCE.index(name))


@dataclass(frozen=True)
class PrecisionChoice:
    weight_precision: str
    native: bool
    warnings: tuple[str, ...] = field(default_factory=tuple)


def choose_weight_precision(requested: str | None, model: ModelSpec, gpu: GpuSpec) -> PrecisionChoice:
    """Resolve `requested` (None = the model's checkpoint format, "auto" = the policy)."""
    natives, known = native_on(gpu)
    warnings: list[str] = []
    if not known:
        warnings.append(f"{gpu.name}: native precisions unknown; assuming bf16 only")
    explained = False
    if requested is None:
        if model.native_precision is None:
            raise UnknownPrecision("the model's native precision is not known: pass weight_precision")
        chosen = normalise(model.native_precision)
    elif requested.strip().lower() == AUTO:
        # int4 tensor-core math (Ampere has it) is not what serving engines run: 4-bit
        # integer weights are dequantised, so the policy picks among the formats computed in.
        chosen = min((n for n in natives if n not in WEIGHT_ONLY_ANYWHERE), key=_rank, default="bf16")
        checkpoint = None if model.native_precision is None else normalise(model.native_precision)
        # Never plan bigger weights than the checkpoint ships: an mxfp4 checkpoint on a
        # card without fp4 still loads as 4-bit weights, dequantised in the kernel.
        if checkpoint is not None and _rank(checkpoint) < _rank(chosen):
            warnings.append(
                f"{checkpoint} checkpoint is smaller than any format {gpu.name} runs natively "
                f"({chosen}); kept as weight-only {checkpoint}, dequantised for the math"
            )
            chosen, explained = checkpoint, True
    else:
        chosen = normalise(requested)
    # fp16 and bf16 share tensor-core rates on every card that has either.
    native = chosen in natives or (chosen == "fp16" and "bf16" in natives)
    if not native and not explained and chosen not in WEIGHT_ONLY_ANYWHERE:
        warnings.append(f"{chosen} is not native on {gpu.name}: converted up for the math, no speed-up")
    return PrecisionChoice(chosen, native, tuple(warnings))


def peak_key(precision_name: str) -> str:
    """The peak_tflops column a format computes at: 4-bit floats share fp4's, fp16 bf16's."""
    return {"nvfp4": "fp4", "mxfp4": "fp4", "fp16": "bf16"}.get(precision_name, precision_name)


@dataclass(frozen=True)
class ComputePeak:
    """The format compute runs in, its peak (None: the card's figure is not known) and, when
    the policy had to step down to bf16 for want of a figure, what the answer says."""

    precision: str
    tflops: float | None
    warning: str | None = None


def _peak_of(gpu: GpuSpec, precision_name: str) -> float | None:
    key = peak_key(precision_name)
    peak = gpu.peak_tflops.get(key)
    if peak is None and key == "bf16":
        peak = gpu.peak_tflops.get("fp16")
    return peak


def compute_peak(gpu: GpuSpec, compute_precision: str | None, weight_precision: str) -> ComputePeak:
    """Which peak compute runs at: bf16 by default; "native" = the weight format's own peak
    when the card runs it natively (an H100 doing true fp8 math has about twice the bf16 peak).
    Under "native", a format whose peak the card's figures lack is computed at the bf16 peak,
    as the policy does for a card whose native list is unknown, and the answer says so; a
    format asked for by name keeps its own (None when unknown: the caller names the field)."""
    wanted = DEFAULT_COMPUTE if compute_precision is None else compute_precision.strip().lower()
    if wanted != "native":
        wanted = normalise(wanted)
        return ComputePeak(wanted, _peak_of(gpu, wanted))
    natives, _ = native_on(gpu)
    # Weight-only int4 is dequantized to bf16 for the math even where int4 tensor cores
    # exist (Ampere): engines run int4 weights through bf16 kernels (Marlin, AWQ).
    runs_natively = weight_precision in natives and weight_precision not in WEIGHT_ONLY_ANYWHERE
    if not runs_natively:
        return ComputePeak(DEFAULT_COMPUTE, _peak_of(gpu, DEFAULT_COMPUTE))
    peak = _peak_of(gpu, weight_precision)
    if peak is not None or peak_key(weight_precision) == peak_key(DEFAULT_COMPUTE):
        return ComputePeak(weight_precision, peak)
    fallback = _peak_of(gpu, DEFAULT_COMPUTE)
    warning = (
        f"{gpu.name} runs {weight_precision} natively but its {peak_key(weight_precision)} peak is not known: "
        f"{weight_precision} math planned at its {DEFAULT_COMPUTE} peak"
        + ("" if fallback is None else f" ({fallback:g} TFLOP/s)")
        + f"; give gpu.peak_tflops.{peak_key(weight_precision)} for the native rate"
    )
    return ComputePeak(DEFAULT_COMPUTE, fallback, warning)


def compute_peak_tflops(gpu: GpuSpec, compute_precision: str | None, weight_precision: str) -> tuple[str, float | None]:
    """compute_peak's format and peak, without its note."""
    chosen = compute_peak(gpu, compute_precision, weight_precision)
    return chosen.precision, chosen.tflops

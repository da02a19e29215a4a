"""Serving engines: what vLLM, SGLang and TensorRT-LLM do that the roofline leaves out.

An engine profile is data (the catalog's `engines` table, seeded from catalog_seed/engines.yaml):
how the engine sizes its KV cache, what memory it reserves before that, its default settings,
what every step costs beyond moving bytes and doing arithmetic, and the share of the datasheet
peaks its kernels reach on each GPU generation. Every constant is fitted on measured rows and
names them. `None` as a profile means `engine=ideal`: sections 1 to 5 exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from . import architectures

GIB = 2**30
IDEAL = "ideal"
VLLM = "vllm"
SGLANG = "sglang"
TRTLLM = "trtllm"
ENGINE_NAMES = (IDEAL, VLLM, SGLANG, TRTLLM)
DEFAULT_ENGINE = VLLM

# How an engine turns GPU memory into a KV-cache budget, per GPU.
# vLLM: util x visible - weights - activation peak - non-torch [- CUDA graphs].
UTIL_OF_VISIBLE = "util_of_visible"
# SGLang: mem_fraction_static x visible holds weights and the KV pool; non-torch comes off it.
STATIC_FRACTION = "static_fraction"
# TensorRT-LLM: kv_cache_free_gpu_mem_fraction x the memory free after the engine has loaded.
FRACTION_OF_FREE = "fraction_of_free"
KV_RULES = (UTIL_OF_VISIBLE, STATIC_FRACTION, FRACTION_OF_FREE)

# Which kernel-efficiency row a GPU without one of its own uses.
ANY_ARCHITECTURE = "*"


@dataclass(frozen=True)
class KernelEfficiency:
    """Share of the datasheet peaks an engine's kernels reach on one GPU generation.

    `memory`: decode GEMVs and attention reads, of the memory bandwidth. `compute`: dense
    GEMMs (prefill, large batches), of the tensor-core peak at the compute precision.
    `moe_memory`: grouped expert GEMMs at a few tokens per expert, as a share of `memory`
    (each expert's small GEMM cannot stream at full bandwidth)."""

    architecture: str
    memory: float
    compute: float
    moe_memory: float = 1.0


@dataclass(frozen=True)
class Uncertainty:
    """The 10th and 90th percentile of measured / predicted on the training rows, per
    metric; `rows` counts them (0: no row of that kind, the range is a stated guess)."""

    time_per_token: tuple[float, float] = (0.7, 1.5)
    ttft: tuple[float, float] = (0.6, 1.7)
    tokens_per_s: tuple[float, float] = (0.6, 1.4)
    kv_capacity_tokens: tuple[float, float] = (0.85, 1.1)
    rows: dict[str, int] = field(default_factory=dict)
    # Widen by this factor (on the log scale) where the training set has no row of the
    # request's kind (MoE, a GPU generation): said in the answer.
    unseen_widening: float = 1.5

    def range_for(self, metric: str) -> tuple[float, float]:
        return getattr(self, metric)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class EngineProfile:
    """One serving engine's behaviour, as planning needs it. Memory in GiB per GPU."""

    name: str
    display_name: str
    version: str
    kv_rule: str
    # Defaults a deployment gets when it sets nothing.
    gpu_memory_utilization: float
    max_batched_tokens: int
    max_num_seqs: int
    block_size: int
    # vLLM picks larger defaults on big cards (>= 70 GiB: "H100 and MI300x class").
    large_gpu_gib: float | None = None
    max_batched_tokens_large_gpu: int | None = None
    max_num_seqs_large_gpu: int | None = None
    # Activation peak of a profiling pass over max_batched_tokens tokens: bytes per token per
    # unit of hidden size (the dense forward's workspace), plus per routed expert (the fused
    # MoE kernel's intermediate caches), plus the sampler's fp32 logits of max_num_seqs rows.
    activation_bytes_per_token_hidden: float = 0.0
    activation_bytes_per_token_expert_hidden: float = 0.0
    logits_bytes_per_vocab_entry: float = 0.0
    # NCCL buffers, cuBLAS workspaces, the CUDA context: a base and a part per extra rank.
    non_torch_gib: float = 0.0
    non_torch_gib_per_extra_rank: float = 0.0
    # CUDA-graph pools; counted in the KV budget (newer vLLM) or captured after it.
    cuda_graph_gib: float = 0.0
    cuda_graph_in_budget: bool = False
    # TensorRT-LLM: runtime buffers taken before the free fraction is applied.
    engine_buffers_gib: float = 0.0
    # Per forward step: scheduling, sampling, detokenisation (fixed), kernel launches (per layer).
    step_overhead_ms: float = 0.0
    layer_overhead_us: float = 0.0
    # Per running sequence per step: its sampling, detokenising and scheduler bookkeeping, so a
    # step (ITL, TPOT) grows with the running batch as engines show.
    sequence_overhead_us: float = 0.0
    # Per collective under tensor or expert parallel, beyond the link's own latency: NCCL's
    # small-message all-reduce at a decode step's few kilobytes (launch, synchronisation).
    collective_latency_us: float = 0.0
    # Per expert GEMM a step runs, per MoE layer on each GPU: the grouped kernel's per-expert
    # tile scheduling and launch, which few tokens per expert cannot hide.
    expert_overhead_us: float = 0.0
    # Per layer of an MLA model (DeepSeek-V2/V3-style), per step: its attention runs several
    # small projections and a latent decompression beyond the roofline's bytes and FLOPs.
    mla_layer_overhead_us: float = 0.0
    # Per request, before its first token: the API server's tokenising and scheduling.
    ttft_overhead_ms: float = 0.0
    efficiencies: tuple[KernelEfficiency, ...] = ()
    uncertainty: Uncertainty = field(default_factory=Uncertainty)
    # Constant name -> the training rows (measurements/ row ids) it was fitted on.
    fitted_on: dict[str, str] = field(default_factory=dict)
    source: str = ""
    notes: str | None = None

    @cached_property
    def _by_architecture(self) -> dict[str, KernelEfficiency]:
        return {e.architecture: e for e in self.efficiencies}

    def efficiency(self, architecture: str | None) -> KernelEfficiency:
        """The row for this GPU generation, else its family's (ampere-gddr takes ampere's,
        blackwell-gddr blackwell's), else the catalog-wide one ("*")."""
        by_arch = self._by_architecture
        for candidate in (architecture, architectures.family(architecture)):
            if candidate is not None and candidate in by_arch:
                return by_arch[candidate]
        if ANY_ARCHITECTURE in by_arch:
            return by_arch[ANY_ARCHITECTURE]
        return KernelEfficiency(ANY_ARCHITECTURE, 0.7, 0.5)

    def knows_architecture(self, architecture: str | None) -> bool:
        return any(e.architecture == architecture for e in self.efficiencies)

    def default_max_batched_tokens(self, visible_gib: float) -> int:
        if self.large_gpu_gib is not None and self.max_batched_tokens_large_gpu and visible_gib >= self.large_gpu_gib:
            return self.max_batched_tokens_large_gpu
        return self.max_batched_tokens

    def default_max_num_seqs(self, visible_gib: float) -> int:
        if self.large_gpu_gib is not None and self.max_num_seqs_large_gpu and visible_gib >= self.large_gpu_gib:
            return self.max_num_seqs_large_gpu
        return self.max_num_seqs

    def step_overhead_s(self, layers: int, mla: bool = False) -> float:
        """What every forward step costs beyond the roofline: fixed plus per layer (more per
        layer for MLA attention)."""
        per_layer_us = self.layer_overhead_us + (self.mla_layer_overhead_us if mla else 0.0)
        return self.step_overhead_ms / 1e3 + layers * per_layer_us / 1e6


def visible_gib(
    memory_gb: float, memory_visible_gib: float | None, architecture: str | None, gpu_name: str | None = None
) -> float:
    """The memory an engine sees on one GPU: the catalog's measured figure, else derived from
    the datasheet's (which is binary GiB in practice) by the share the driver shows for the
    card's memory kind and ECC (architectures.visible_share)."""
    if memory_visible_gib is not None:
        return memory_visible_gib
    return memory_gb * architectures.visible_share(architecture, gpu_name)


@dataclass(frozen=True)
class Reservations:
    """What an engine holds per GPU besides weights and KV cache, in bytes."""

    activation_bytes: float
    non_torch_bytes: float
    cuda_graph_bytes: float
    engine_buffers_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.activation_bytes + self.non_torch_bytes + self.cuda_graph_bytes + self.engine_buffers_bytes


def reservations(
    engine: EngineProfile,
    *,
    hidden_size: int,
    vocab_size: int | None,
    experts_per_token: int | None,
    tp: int,
    max_batched_tokens: int,
    max_num_seqs: int,
) -> Reservations:
    """Per-GPU reservations at these settings. The activation peak is that of a forward pass
    over the whole step budget (vLLM's profiling run), which grows with it."""
    per_token = engine.activation_bytes_per_token_hidden * hidden_size
    if experts_per_token:
        per_token += engine.activation_bytes_per_token_expert_hidden * hidden_size * experts_per_token
    logits = engine.logits_bytes_per_vocab_entry * (vocab_size or 0) * max_num_seqs
    return Reservations(
        activation_bytes=max_batched_tokens * per_token + logits,
        non_torch_bytes=(engine.non_torch_gib + engine.non_torch_gib_per_extra_rank * (tp - 1)) * GIB,
        cuda_graph_bytes=engine.cuda_graph_gib * GIB,
        engine_buffers_bytes=engine.engine_buffers_gib * GIB,
    )


def kv_budget_bytes_per_gpu(
    engine: EngineProfile,
    *,
    visible_bytes: float,
    weights_bytes_per_gpu: float,
    reserved: Reservations,
    utilization: float,
) -> float:
    """The KV cache an engine allocates on one GPU (may be negative: it would not start)."""
    if engine.kv_rule == STATIC_FRACTION:
        return utilization * visible_bytes - weights_bytes_per_gpu - reserved.non_torch_bytes
    if engine.kv_rule == FRACTION_OF_FREE:
        free = visible_bytes - weights_bytes_per_gpu - reserved.total_bytes
        return utilization * free
    graphs = reserved.cuda_graph_bytes if engine.cuda_graph_in_budget else 0.0
    return (
        utilization * visible_bytes
        - weights_bytes_per_gpu
        - reserved.activation_bytes
        - reserved.non_torch_bytes
        - reserved.engine_buffers_bytes
        - graphs
    )


def whole_blocks(tokens: float, block_size: int) -> int:
    """Engines allocate KV in blocks (pages) of `block_size` tokens: round down to whole ones."""
    if tokens <= 0:
        return 0
    return math.floor(tokens / block_size) * block_size


# Planning answer field -> the Uncertainty attribute its range comes from.
UNCERTAIN_FIELDS = {
    "time_per_token_ms": "time_per_token",
    "ttft_ms": "ttft",
    "tokens_per_s": "tokens_per_s",
    "kv_capacity_tokens": "kv_capacity_tokens",
}


def uncertainty_ranges(
    engine: EngineProfile,
    predicted: dict[str, float | None],
    *,
    moe: bool,
    architecture: str | None,
    mla: bool = False,
) -> tuple[dict[str, list[float] | None], list[str]]:
    """[low, high] around each predicted figure: the spread of measured / predicted on the
    engine's training rows, widened (and said) where those rows hold nothing of this kind."""
    spread = engine.uncertainty
    notes = []
    widen = 1.0
    if moe and not spread.rows.get("moe"):
        widen = spread.unseen_widening
        notes.append(f"{engine.name}'s training rows hold no mixture-of-experts model: range widened")
    if mla and not spread.rows.get("mla"):
        widen = spread.unseen_widening
        notes.append(f"{engine.name}'s training rows hold no MLA (DeepSeek-style) model: range widened")
    if not measured_on(engine, architecture):
        widen = max(widen, spread.unseen_widening)
        notes.append(f"{engine.name}'s training rows hold no {architecture or 'unknown'} GPU: range widened")
    ranges: dict[str, list[float] | None] = {}
    for name, attribute in UNCERTAIN_FIELDS.items():
        value = predicted.get(name)
        if value is None:
            ranges[name] = None
            continue
        low, high = spread.range_for(attribute)
        ranges[name] = [value * low**widen, value * high**widen]
    return ranges, notes


def coverage_notes(engine: EngineProfile, *, moe: bool, architecture: str | None, gpu_name: str) -> list[str]:
    """What an answer under `engine` rests on that its training rows do not hold: a GPU
    generation without a measured row (its kernel efficiencies are borrowed or the default
    ones), a mixture-of-experts model where no row is one. Each is a guess, and says so."""
    notes = []
    if not measured_on(engine, architecture):
        kind = architecture or "unknown"
        borrowed = architectures.family(architecture)
        source = (
            f"its efficiencies are {engine.name}'s {borrowed} ones"
            if borrowed and borrowed != architecture and engine.knows_architecture(borrowed)
            else f"its efficiencies are {engine.name}'s fitted on other generations"
        )
        notes.append(
            f"{engine.name} has no measured row on the {kind} GPU generation: {gpu_name}'s figures are a guess "
            f"({source}); "
            "the uncertainty range is widened"
        )
    if moe and not engine.uncertainty.rows.get("moe"):
        notes.append(
            f"{engine.name} has no measured row on a mixture-of-experts model: the figures are a guess; "
            "the uncertainty range is widened"
        )
    return notes


# Weight formats NVIDIA's ModelOpt checkpoints come in with FP8 KV-cache scales beside them
# (their hf_quant_config's kv_cache_quant_algo), and the 16-bit cache formats a plan may hold.
KV_SCALED_WEIGHTS = ("fp8", "nvfp4")
SIXTEEN_BIT_KV = ("bf16", "fp16")


def kv_format_note(engine: EngineProfile, weight_precision: str, kv_precision: str) -> str | None:
    """TensorRT-LLM's KV cache takes the checkpoint's format unless told otherwise, and it runs
    FP8 and NVFP4 weights from pre-quantized (ModelOpt) checkpoints, which carry FP8 KV scales:
    a plan of such weights with a 16-bit cache holds half the tokens the engine would. Said,
    not changed: a checkpoint without those scales does run a 16-bit cache."""
    if engine.name != TRTLLM or weight_precision not in KV_SCALED_WEIGHTS or kv_precision not in SIXTEEN_BIT_KV:
        return None
    return (
        f"{engine.name} runs the KV cache in the checkpoint's format: an {weight_precision.upper()} checkpoint "
        "with FP8 KV scales (NVIDIA's ModelOpt ones) runs an FP8 cache, twice the tokens of this plan's "
        f"{kv_precision} one: pass kv_precision=fp8 for it"
    )


def measured_on(engine: EngineProfile, architecture: str | None) -> bool:
    """Whether the engine's own training rows hold this GPU generation (`rows` counts them as
    "gpu:<architecture>"); without those counts, whether it has an efficiency row for it."""
    counts = {k: v for k, v in engine.uncertainty.rows.items() if k.startswith("gpu:")}
    if not counts:
        return engine.knows_architecture(architecture)
    return bool(counts.get(f"gpu:{architecture}"))


def residual_ranges(predicted: dict[str, float | None], mape_percent: float) -> dict[str, list[float] | None]:
    """A calibration's own spread: its mean absolute error either side."""
    share = mape_percent / 100
    return {
        name: None if (value := predicted.get(name)) is None else [value * max(0.0, 1 - share), value * (1 + share)]
        for name in UNCERTAIN_FIELDS
    }

"""The GPU architectures the service knows: names told from GPU names, the memory the driver
shows when no measured figure is given, and which engine-efficiency row a generation uses.
Visible-memory figures are torch's total_memory (PyTorch's "total capacity of ... GiB") as
printed on real cards, written out next to each check."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from app.sizing import architectures as arch
from app.sizing import engine as eng
from app.sizing.plan import PlanInputs, plan_fit, plan_throughput
from app.sizing.precision import ComputePeak, compute_peak
from app.sizing.specs import GpuSpec

from .specs import A100_80, H100_SXM, LLAMA_31_8B

SEED_GPUS = Path(__file__).resolve().parents[2] / "catalog_seed" / "gpus.yaml"


def test_the_vocabulary_gives_each_architecture_its_memory_kind_and_ecc():
    assert arch.NAMES == (
        "ampere",
        "ampere-gddr",
        "ada",
        "hopper",
        "blackwell",
        "blackwell-gddr",
        "cdna3",
        "cdna4",
    )
    kinds = {name: facts.memory for name, facts in arch.ARCHITECTURES.items()}
    assert {name for name, kind in kinds.items() if kind == arch.GDDR} == {"ampere-gddr", "ada", "blackwell-gddr"}
    assert arch.ARCHITECTURES["ada"].ecc_by_default  # L4, L40S ship with ECC on
    assert not arch.ARCHITECTURES["blackwell-gddr"].ecc_by_default
    assert {facts.vendor for facts in arch.ARCHITECTURES.values()} == {"nvidia", "amd"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NVIDIA GeForce RTX 4090", "ada"),
        ("RTX4090 24GB", "ada"),
        ("NVIDIA RTX 6000 Ada Generation", "ada"),
        ("NVIDIA L4", "ada"),
        ("NVIDIA L40", "ada"),
        ("NVIDIA L40S 48GB", "ada"),
        ("NVIDIA GeForce RTX 5090", "blackwell-gddr"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "blackwell-gddr"),
        ("NVIDIA H100 80GB HBM3", "hopper"),
        ("h100-sxm", "hopper"),
        ("NVIDIA H200 NVL", "hopper"),
        ("NVIDIA H20", "hopper"),
        ("NVIDIA GH200 480GB", "hopper"),
        ("NVIDIA A100-SXM4-80GB", "ampere"),
        ("NVIDIA A800 80GB PCIe", "ampere"),
        ("NVIDIA A30", "ampere"),
        ("NVIDIA A10", "ampere-gddr"),
        ("NVIDIA A10G", "ampere-gddr"),
        ("NVIDIA A40", "ampere-gddr"),
        ("NVIDIA RTX A6000", "ampere-gddr"),
        ("NVIDIA GeForce RTX 3090", "ampere-gddr"),
        ("NVIDIA B200", "blackwell"),
        ("NVIDIA B100", "blackwell"),
        ("NVIDIA GB200 NVL72", "blackwell"),
        ("NVIDIA B300", "blackwell"),
        ("AMD Instinct MI300X", "cdna3"),
        ("AMD Instinct MI325X", "cdna3"),
        ("AMD Instinct MI350X", "cdna4"),
        ("AMD Instinct MI355X", "cdna4"),
    ],
)
def test_an_obvious_name_tells_its_architecture(name: str, expected: str):
    assert arch.infer_architecture(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        None,
        "",
        "inline GPU",
        "my 4090 box",  # no RTX: could be anything
        "Quadro RTX 6000",  # Turing, which the service does not know
        "Tesla V100-SXM2-32GB",
        "AMD Instinct MI250X",
        "xh100",  # h100 inside another word
        "h1000",
        "ah100b",
        "A100 or H100",  # two architectures: not obvious
        "NVIDIA L400",
    ],
)
def test_a_name_that_tells_nothing_sure_gives_none(name: str | None):
    assert arch.infer_architecture(name) is None


def test_every_seed_gpu_name_tells_the_architecture_the_seed_gives_it():
    gpus = yaml.safe_load(SEED_GPUS.read_text(encoding="utf-8"))["gpus"]
    for gpu in gpus:
        assert gpu["architecture"] in arch.NAMES, gpu["slug"]
        assert arch.infer_architecture(gpu["name"]) == gpu["architecture"], gpu["name"]


@pytest.mark.parametrize(
    ("architecture", "name", "memory_gb", "measured_gib", "tolerance"),
    [
        # HBM: PyTorch's total capacity on the card.
        ("hopper", "NVIDIA H100 SXM5 80GB", 80, 79.19, 0.005),
        ("hopper", "NVIDIA H200 SXM 141GB", 141, 139.80, 0.005),
        ("ampere", "NVIDIA A100 SXM4 80GB", 80, 79.15, 0.005),
        ("blackwell", "NVIDIA B200", 180, 178.35, 0.005),
        # GDDR with ECC on (data-centre cards): a sixteenth goes to ECC.
        ("ada", "NVIDIA L4 24GB", 24, 22.03, 0.005),
        ("ada", "NVIDIA L40S 48GB", 48, 44.42, 0.01),
        ("ampere-gddr", "NVIDIA A10G", 24, 22.06, 0.005),
        # GDDR without ECC: "GPU 0 has a total capacity of 23.64 GiB" on an RTX 4090 (nvidia-smi
        # 24564 MiB), 23.58 on an RTX 3090 (vLLM's total_gpu_memory, row M01), 33,677,180,928
        # bytes = 31.36 GiB on an RTX 5090 (deviceQuery).
        ("ada", "NVIDIA GeForce RTX 4090", 24, 23.64, 0.005),
        ("ampere-gddr", "NVIDIA GeForce RTX 3090", 24, 23.58, 0.005),
        ("blackwell-gddr", "NVIDIA GeForce RTX 5090", 32, 33_677_180_928 / 2**30, 0.01),
    ],
)
def test_the_visible_share_lands_on_what_the_driver_shows(
    architecture: str, name: str, memory_gb: float, measured_gib: float, tolerance: float
):
    derived = eng.visible_gib(memory_gb, None, architecture, name)
    assert derived == pytest.approx(measured_gib, rel=tolerance)


def test_the_visible_share_is_by_memory_kind_and_ecc():
    assert arch.visible_share("hopper") == arch.VISIBLE_SHARE_HBM == 0.99
    assert arch.visible_share("ada", "NVIDIA L4") == arch.VISIBLE_SHARE_GDDR_ECC == 0.92
    # The same generation on a consumer or workstation card: no ECC carve-out.
    assert arch.visible_share("ada", "NVIDIA GeForce RTX 4090") == arch.VISIBLE_SHARE_GDDR_NO_ECC == 0.985
    assert arch.visible_share("ampere-gddr", "NVIDIA RTX A6000") == 0.985
    assert arch.visible_share("blackwell-gddr", "NVIDIA RTX PRO 6000 Blackwell Server Edition") == 0.985
    # No architecture: the name tells it; nothing known at all: taken as HBM.
    assert arch.visible_share(None, "NVIDIA GeForce RTX 4090") == 0.985
    assert arch.visible_share(None, "inline GPU") == 0.99
    assert arch.visible_share("turing", None) == 0.99
    # A "24 GB" RTX 4090 shows about 23.6 GiB, not the 22.08 of an ECC card.
    assert eng.visible_gib(24, None, "ada", "NVIDIA GeForce RTX 4090") == pytest.approx(24 * 0.985)
    assert eng.visible_gib(24, 23.0, "ada", "NVIDIA GeForce RTX 4090") == 23.0


def test_a_generation_on_other_memory_takes_its_familys_efficiencies():
    rows = (
        eng.KernelEfficiency("*", 0.6, 0.4),
        eng.KernelEfficiency("ampere", 0.8, 0.55),
        eng.KernelEfficiency("blackwell", 0.7, 0.35),
        eng.KernelEfficiency("ampere-gddr", 0.75, 0.5),
    )
    profile = eng.EngineProfile(
        name="vllm",
        display_name="vLLM",
        version="test",
        kv_rule=eng.UTIL_OF_VISIBLE,
        gpu_memory_utilization=0.9,
        max_batched_tokens=2048,
        max_num_seqs=256,
        block_size=16,
        efficiencies=rows,
        uncertainty=eng.Uncertainty(rows={"gpu:ampere": 10, "gpu:blackwell": 4}),
    )
    assert arch.family("ampere-gddr") == "ampere"
    assert arch.family("blackwell-gddr") == "blackwell"
    assert arch.family("ada") == "ada"
    assert arch.family("turing") is None
    assert profile.efficiency("blackwell-gddr") == rows[2]
    assert profile.efficiency("ampere-gddr") == rows[3]  # its own row first
    without_own = replace(profile, efficiencies=rows[:3])
    assert without_own.efficiency("ampere-gddr") == rows[1]
    assert without_own.efficiency("ada") == rows[0]  # a generation of its own: the default
    assert without_own.efficiency("turing") == rows[0]
    assert without_own.efficiency(None) == rows[0]
    # The family's efficiencies are borrowed, its training rows are not: the range widens.
    assert not eng.measured_on(without_own, "blackwell-gddr")
    assert eng.measured_on(without_own, "blackwell")
    _, notes = eng.uncertainty_ranges(without_own, {"time_per_token_ms": 10.0}, moe=False, architecture="ampere-gddr")
    assert notes == ["vllm's training rows hold no ampere-gddr GPU: range widened"]


RTX_4090 = GpuSpec(
    "NVIDIA GeForce RTX 4090",
    24,
    1.008,
    {"bf16": 165.2},
    native_precisions=("bf16", "fp16", "fp8", "int8"),
    gpus_per_node=1,
)
ENGINE = eng.EngineProfile(
    name="vllm",
    display_name="vLLM",
    version="test",
    kv_rule=eng.UTIL_OF_VISIBLE,
    gpu_memory_utilization=0.9,
    max_batched_tokens=2048,
    max_num_seqs=256,
    block_size=16,
)


def test_planning_tells_the_architecture_from_the_name_and_says_so():
    fitted = plan_fit(LLAMA_31_8B, RTX_4090, PlanInputs(engine=ENGINE))
    assert fitted.target.gpu.architecture == "ada"
    assert "architecture ada told from the name 'NVIDIA GeForce RTX 4090'" in fitted.warnings
    assert fitted.visible_gib == pytest.approx(24 * 0.985)
    given = plan_fit(LLAMA_31_8B, replace(RTX_4090, architecture="ada"), PlanInputs(engine=ENGINE))
    assert not any("told from the name" in w for w in given.warnings)
    mystery = plan_fit(LLAMA_31_8B, replace(RTX_4090, name="lab card"), PlanInputs(engine=ENGINE))
    assert mystery.target.gpu.architecture is None
    assert any("engine efficiencies fall back to the default" in w for w in mystery.warnings)
    # engine=ideal reads no architecture, so it says nothing about it.
    ideal = plan_fit(LLAMA_31_8B, RTX_4090, PlanInputs())
    assert not any("architecture" in w for w in ideal.warnings)


def test_a_native_format_without_its_peak_computes_at_bf16_and_says_so():
    chosen = compute_peak(RTX_4090, "native", "fp8")
    assert (chosen.precision, chosen.tflops) == ("bf16", 165.2)
    assert chosen.warning is not None and "gpu.peak_tflops.fp8" in chosen.warning
    # With the figure, the native rate; a format the card lacks: bf16 as before, nothing to say.
    assert compute_peak(H100_SXM, "native", "fp8") == ComputePeak("fp8", H100_SXM.peak_tflops["fp8"])
    assert compute_peak(A100_80, "native", "fp8") == ComputePeak("bf16", 312)
    # Asked for by name, a missing peak stays missing (the planner names the field).
    assert compute_peak(RTX_4090, "fp8", "fp8").tflops is None
    planned = plan_throughput(LLAMA_31_8B, RTX_4090, PlanInputs(engine=ENGINE, weight_precision="fp8"))
    assert planned.compute_precision == "bf16"
    assert planned.peak_tflops == 165.2
    assert any("fp8 math planned at its bf16 peak" in w for w in planned.warnings)
    with_peak = replace(RTX_4090, peak_tflops={"bf16": 165.2, "fp8": 330.3})
    native = plan_throughput(LLAMA_31_8B, with_peak, PlanInputs(engine=ENGINE, weight_precision="fp8"))
    assert native.compute_precision == "fp8"
    assert not any("planned at its bf16 peak" in w for w in native.warnings)

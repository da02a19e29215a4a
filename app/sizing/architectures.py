"""The GPU architectures the service knows: what memory each has, whether its ECC is on out
of the box, which generation's engine efficiencies stand in for it, and how to tell one from
a GPU's name.

An architecture matters to engines only (engine=ideal reads none of it): the share of the
datasheet memory the driver shows (`visible_share`) and the engine's kernel-efficiency row
(EngineProfile.efficiency, which falls back to the architecture's `family`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HBM = "HBM"
GDDR = "GDDR"

# The share of the datasheet memory (its "GB" read as GiB: binary on every card here) that
# torch's total_memory shows, where no memory_visible_gib is given. Measured figures:
# - HBM (ECC costs no capacity): H100 80 GB 79.19 GiB (0.990); H200 141: 139.80 (0.991);
#   A100 80: 79.15 (0.989); A100 40: 39.39 (0.985); B200 180: 178.35 (0.991); MI300X 192:
#   191.98 (0.9999). 0.99 is within 0.5% of all but MI300X (ROCm keeps less back).
VISIBLE_SHARE_HBM = 0.99
# - GDDR with ECC on: the ECC bits are carved out of the memory itself (a sixteenth), then the
#   driver's reserve: L4 24 GB 22.03 GiB (0.918); L40S 48: 44.42 (0.925); A10G 24: 22.06 (0.919).
VISIBLE_SHARE_GDDR_ECC = 0.92
# - GDDR without ECC (consumer and workstation cards as shipped): the driver's reserve only:
#   RTX 4090 24 GB 23.64 GiB (0.985; PyTorch "GPU 0 has a total capacity of 23.64 GiB", nvidia-smi
#   24564 MiB); RTX 3090 24: 23.58 (0.983, vLLM's total_gpu_memory, measurements row M01);
#   RTX 5090 32: 31.36 (0.980; deviceQuery 33,677,180,928 bytes).
VISIBLE_SHARE_GDDR_NO_ECC = 0.985


@dataclass(frozen=True)
class Architecture:
    """One GPU generation as the service knows it.

    `family`: the architecture whose engine-efficiency rows this one uses when an engine has
    none of its own (the same tensor cores on another memory: GA10x is Ampere, GB20x is
    Blackwell); itself for a generation of its own. `ecc_by_default`: whether the data-centre
    parts ship with ECC on (consumer and workstation cards of the generation do not; see
    `ecc_on`)."""

    name: str
    vendor: str
    memory: str
    ecc_by_default: bool
    family: str
    examples: tuple[str, ...]


ARCHITECTURES: dict[str, Architecture] = {
    a.name: a
    for a in (
        Architecture("ampere", "nvidia", HBM, True, "ampere", ("A100", "A800", "A30")),
        Architecture("ampere-gddr", "nvidia", GDDR, True, "ampere", ("A10", "A10G", "A40", "RTX A6000", "RTX 3090")),
        Architecture("ada", "nvidia", GDDR, True, "ada", ("L4", "L40", "L40S", "RTX 4090", "RTX 6000 Ada")),
        Architecture("hopper", "nvidia", HBM, True, "hopper", ("H100", "H200", "H20", "H800", "GH200")),
        Architecture("blackwell", "nvidia", HBM, True, "blackwell", ("B100", "B200", "B300", "GB200", "GB300")),
        # ECC taken as off: the RTX PRO 6000 Blackwell Server Edition shows 94,895 MiB of its
        # 96 GiB even as a 4g.96gb MIG device (measurements rows NM16-NM27), more than the
        # 92,160 MiB a card that gave a sixteenth to ECC could.
        Architecture("blackwell-gddr", "nvidia", GDDR, False, "blackwell", ("RTX 5090", "RTX PRO 6000")),
        Architecture("cdna3", "amd", HBM, True, "cdna3", ("MI300X", "MI325X")),
        Architecture("cdna4", "amd", HBM, True, "cdna4", ("MI350X", "MI355X")),
    )
}
NAMES = tuple(ARCHITECTURES)

# Name patterns, lower-cased, each bounded so that "h100" inside another word does not count.
_B = r"(?<![a-z0-9])"
_E = r"(?![a-z0-9])"
_SEP = r"[\s_-]?"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (arch, re.compile(pattern))
    for arch, pattern in (
        ("blackwell", rf"{_B}g?b(100|200|300){_E}"),
        ("hopper", rf"{_B}(gh200|h(100|200|800|20)){_E}"),
        ("ampere", rf"{_B}a(100|800|30){_E}"),
        ("ampere-gddr", rf"{_B}(a10g?|a40){_E}|{_B}rtx{_SEP}a[4-6]000{_E}|{_B}rtx{_SEP}30[5-9]0(ti)?{_E}"),
        ("ada", rf"{_B}l(4|40s?){_E}|{_B}rtx{_SEP}40[5-9]0(ti|d)?{_E}|{_B}rtx{_SEP}[4-6]000{_SEP}ada{_E}"),
        ("blackwell-gddr", rf"{_B}rtx{_SEP}50[5-9]0(ti|d)?{_E}|{_B}rtx{_SEP}pro{_SEP}[4-6]000{_E}"),
        ("cdna3", rf"{_B}mi3(00|25)x{_E}"),
        ("cdna4", rf"{_B}mi3(50|55)x{_E}"),
    )
)
# Consumer and workstation brands: their GDDR ships with ECC off.
_CLIENT_CARD = re.compile(rf"{_B}(geforce|titan|quadro|rtx){_E}")


class UnknownArchitecture(ValueError):
    """An architecture name that is not in ARCHITECTURES."""


def known(architecture: str | None) -> Architecture | None:
    return None if architecture is None else ARCHITECTURES.get(architecture)


def infer_architecture(gpu_name: str | None) -> str | None:
    """The architecture a GPU's name makes obvious (`NVIDIA GeForce RTX 4090` is ada), else None:
    when no pattern matches, or patterns of two architectures do."""
    if not gpu_name:
        return None
    name = gpu_name.lower()
    found = {arch for arch, pattern in _PATTERNS if pattern.search(name)}
    return found.pop() if len(found) == 1 else None


def ecc_on(architecture: Architecture, gpu_name: str | None) -> bool:
    """Whether the card runs with ECC on as shipped: its generation's data-centre default,
    off on consumer and workstation cards (GeForce, RTX, TITAN, Quadro)."""
    if not architecture.ecc_by_default:
        return False
    return not (gpu_name and _CLIENT_CARD.search(gpu_name.lower()))


def visible_share(architecture: str | None, gpu_name: str | None = None) -> float:
    """The share of the datasheet memory the driver shows: by memory kind and ECC; an
    architecture not known (nor told from the name) is taken as HBM."""
    facts = known(architecture) or known(infer_architecture(gpu_name))
    if facts is None or facts.memory == HBM:
        return VISIBLE_SHARE_HBM
    return VISIBLE_SHARE_GDDR_ECC if ecc_on(facts, gpu_name) else VISIBLE_SHARE_GDDR_NO_ECC


def visible_basis(architecture: str | None, gpu_name: str | None = None) -> str:
    """What visible_share took the card for, in words."""
    facts = known(architecture) or known(infer_architecture(gpu_name))
    if facts is None:
        return "taken as HBM"
    if facts.memory == HBM:
        return "HBM"
    return "GDDR with ECC on" if ecc_on(facts, gpu_name) else "GDDR without ECC"


def family(architecture: str | None) -> str | None:
    """The architecture whose engine efficiencies stand in for this one (None: not known)."""
    facts = known(architecture)
    return None if facts is None else facts.family


def describe_known() -> str:
    return ", ".join(NAMES)

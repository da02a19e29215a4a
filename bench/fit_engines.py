"""Fit the engine profiles' constants on the measured rows (bench/measurements/), in process.

The same rows and the same answer fields as `make accuracy` (bench/accuracy_rows.py), asked of
the planning core directly rather than over HTTP, so that a search over the constants runs in
seconds. It minimises, per engine, the mean absolute log error (a median-seeking loss that a
single odd row cannot drag) by coordinate search over a few named constants, each with a
physical meaning and a range, prints what it found and the residual spread per metric (the
10th-90th percentiles of measured / predicted: the profile's `uncertainty`), and with
`--write` puts both into catalog_seed/engines.yaml.

    python -m bench.fit_engines [--engine vllm] [--rounds 3] [--write]
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from app.api.schemas import PLANNING_BY_PATH
from app.catalog.convert import engine_to_spec, gpu_to_spec, model_to_spec
from app.catalog.models import Model
from app.catalog.seed import SEED_DIR, _engine_row, _gpu_row, load_seed_files
from app.catalog.snapshots import CatalogSnapshot
from app.planning import replica
from app.planning.context import Context
from app.planning.errors import PlanningError
from app.sizing.engine import (
    ANY_ARCHITECTURE,
    FRACTION_OF_FREE,
    STATIC_FRACTION,
    UTIL_OF_VISIBLE,
    EngineProfile,
    KernelEfficiency,
)
from app.sizing.errors import SizingError
from app.sizing.specs import GpuSpec, ModelSpec
from bench.accuracy import TRUSTED, Result, evaluate, percentile, print_tables, summarise, table, trusted
from bench.accuracy_rows import (
    KV_AT_DEFAULTS,
    KV_FROM_BUDGET,
    OUTPUT_TOK_S,
    TPOT,
    TTFT,
    WEIGHTS,
    Case,
    load_cases,
)

ENGINES_YAML = SEED_DIR / "engines.yaml"


@dataclass
class Catalog:
    models: dict[str, ModelSpec]
    gpus: dict[str, GpuSpec]
    engines: dict[str, EngineProfile]


def load_catalog(seed_dir: Path = SEED_DIR) -> Catalog:
    """The seed catalog as specs, without a database (transient rows, the catalog's converters)."""
    entries = load_seed_files(seed_dir)
    return Catalog(
        models={e["slug"]: model_to_spec(Model(**e)) for e in entries["models"]},
        gpus={e["slug"]: gpu_to_spec(_gpu_row(e)) for e in entries["gpus"]},
        engines={e["name"]: engine_to_spec(_engine_row(e)) for e in entries["engines"]},
    )


def in_process(catalog: Catalog) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    """An asker that answers as the planning endpoints do (the same services), on the given catalog."""
    snapshot = CatalogSnapshot(catalog.models, catalog.gpus, tuple(sorted(catalog.gpus.items())), catalog.engines, 0)

    def ask(endpoint: str, params: dict[str, Any]) -> dict[str, Any]:
        service = replica.fit if endpoint == "/v1/fit" else replica.throughput
        try:
            return service(PLANNING_BY_PATH[endpoint].schema.load(params), Context(snapshot))
        except SizingError as exc:
            raise LookupError(f"{exc.field}: {exc.message}") from None
        except PlanningError as exc:
            raise LookupError(exc.detail) from None

    return ask


@dataclass(frozen=True)
class Knob:
    """One constant the search may move: where it lives, its range, the metrics it affects."""

    name: str
    low: float
    high: float
    metrics: tuple[str, ...]
    log_scale: bool = False


MEMORY_KNOBS = (
    Knob("activation_bytes_per_token_hidden", 0.0, 200.0, (KV_AT_DEFAULTS,)),
    Knob("activation_bytes_per_token_expert_hidden", 0.0, 100.0, (KV_AT_DEFAULTS,)),
    Knob("non_torch_gib", 0.0, 6.0, (KV_AT_DEFAULTS,)),
    Knob("non_torch_gib_per_extra_rank", 0.0, 3.0, (KV_AT_DEFAULTS,)),
    Knob("engine_buffers_gib", 0.0, 8.0, (KV_AT_DEFAULTS,)),
)
# Decode-paced figures fit the per-step constants and the memory side; TTFT has its own
# constant (the API server's share) and informs the compute side with them.
STEP_METRICS = (TPOT, OUTPUT_TOK_S, "static_batch_latency_ms")
TIME_METRICS = (*STEP_METRICS, TTFT)
TIME_KNOBS = (
    Knob("step_overhead_ms", 0.0, 20.0, STEP_METRICS),
    Knob("layer_overhead_us", 0.0, 200.0, STEP_METRICS),
    # An API server's tokenising and scheduling: a few to a few tens of ms, never seconds.
    Knob("ttft_overhead_ms", 0.0, 30.0, (TTFT,)),
)
# Ranges a kernel can physically reach: no decode GEMV streams HBM above ~92%, no serving
# GEMM holds more than ~85% of the tensor-core peak.
EFFICIENCY_KNOBS = (
    ("memory", 0.3, 0.92, STEP_METRICS),
    ("compute", 0.15, 0.85, TIME_METRICS),
    ("moe_memory", 0.2, 1.0, STEP_METRICS),
)


def _get(profile: EngineProfile, name: str) -> float:
    if "." in name:
        arch, field = name.split(".")
        return getattr(profile.efficiency(arch), field)  # type: ignore[no-any-return]
    return float(getattr(profile, name))


def _set(profile: EngineProfile, name: str, value: float) -> EngineProfile:
    if "." not in name:
        return replace(profile, **{name: value})
    arch, field = name.split(".")
    rows = {e.architecture: e for e in profile.efficiencies}
    base = rows.get(arch) or replace(profile.efficiency(arch), architecture=arch)
    rows[arch] = replace(base, **{field: value})
    return replace(profile, efficiencies=tuple(rows.values()))


def loss(results: list[Result]) -> float:
    """Mean |log(predicted / measured)|, a failed prediction counting as a factor of e."""
    if not results:
        return 0.0
    total = 0.0
    for r in results:
        if r.predicted is None or r.predicted <= 0:
            total += 1.0
        else:
            total += abs(math.log(r.predicted / r.case.measured))
    return total / len(results)


def _architecture(case: Case, catalog: Catalog) -> str | None:
    gpu = case.params["gpu"]
    if isinstance(gpu, dict):
        return gpu.get("architecture")
    return catalog.gpus[gpu].architecture


def fit_engine(catalog: Catalog, name: str, cases: list[Case], rounds: int) -> EngineProfile:
    mine = [c for c in cases if c.engine == name and c.trust.split()[0] in TRUSTED]  # low trust: reported, not fitted
    architectures = own_architectures(catalog, name, cases)
    profile = catalog.engines[name]
    knobs: list[Knob] = [*memory_knobs(profile), *TIME_KNOBS]
    for arch in architectures:
        for field, low, high, metrics in EFFICIENCY_KNOBS:
            knobs.append(Knob(f"{arch}.{field}", low, high, metrics))
    # Start the generation rows where the catch-all row stands.
    for arch in architectures:
        if not profile.knows_architecture(arch):
            base = profile.efficiency(arch)
            profile = replace(profile, efficiencies=(*profile.efficiencies, replace(base, architecture=arch)))

    def score(trial: EngineProfile, metrics: tuple[str, ...]) -> float:
        ask = in_process(replace(catalog, engines={**catalog.engines, name: trial}))
        return loss([evaluate(c, ask) for c in mine if c.metric in metrics])

    for _ in range(rounds):
        for knob in knobs:
            relevant = [c for c in mine if c.metric in knob.metrics]
            if not relevant:
                continue
            best_value, best = _get(profile, knob.name), score(profile, knob.metrics)
            low, high = knob.low, knob.high
            for _step in range(3):
                grid = [low + (high - low) * i / 8 for i in range(9)]
                for value in grid:
                    trial = _set(profile, knob.name, value)
                    s = score(trial, knob.metrics)
                    if s < best - 1e-9:
                        best, best_value = s, value
                span = (high - low) / 8
                low, high = max(knob.low, best_value - span), min(knob.high, best_value + span)
            profile = _set(profile, knob.name, round(best_value, 4))
    return with_catch_all(profile, architectures)


def own_architectures(catalog: Catalog, name: str, cases: list[Case]) -> list[str]:
    """The GPU generations an engine's trusted time rows measure."""
    return sorted(
        {
            arch
            for c in cases
            if c.engine == name
            and c.trust.split()[0] in TRUSTED
            and c.metric in TIME_METRICS
            and (arch := _architecture(c, catalog))
        }
    )


def borrow_generations(engines: dict[str, EngineProfile], own: dict[str, list[str]]) -> dict[str, EngineProfile]:
    """Kernel efficiencies are mostly the hardware's: an engine with no rows on a generation
    takes the median of the engines that have some, rather than its own catch-all. The
    catch-all ("*") is then the median over every generation it holds."""
    fitted = {name: {a: engines[name].efficiency(a) for a in archs} for name, archs in own.items()}
    everywhere = sorted({a for archs in own.values() for a in archs})
    result = dict(engines)
    for name, profile in engines.items():
        rows = dict(fitted.get(name, {}))
        for arch in everywhere:
            if arch in rows:
                continue
            others = [by_arch[arch] for other, by_arch in fitted.items() if other != name and arch in by_arch]
            rows[arch] = KernelEfficiency(
                arch,
                memory=round(statistics.median(e.memory for e in others), 4),
                compute=round(statistics.median(e.compute for e in others), 4),
                moe_memory=round(statistics.median(e.moe_memory for e in others), 4),
            )
        result[name] = with_catch_all(replace(profile, efficiencies=tuple(rows.values())), sorted(rows))
    return result


def memory_knobs(profile: EngineProfile) -> tuple[Knob, ...]:
    """The reservations the engine's KV rule subtracts (SGLang's static fraction holds no
    activations; only TensorRT-LLM takes engine buffers before its free fraction)."""
    used = {
        UTIL_OF_VISIBLE: (
            "activation_bytes_per_token_hidden",
            "activation_bytes_per_token_expert_hidden",
            "non_torch_gib",
            "non_torch_gib_per_extra_rank",
        ),
        STATIC_FRACTION: ("non_torch_gib", "non_torch_gib_per_extra_rank"),
        FRACTION_OF_FREE: ("non_torch_gib", "engine_buffers_gib"),
    }[profile.kv_rule]
    return tuple(k for k in MEMORY_KNOBS if k.name in used)


def with_catch_all(profile: EngineProfile, architectures: list[str]) -> EngineProfile:
    """A GPU generation without rows of its own gets the median of the fitted ones."""
    fitted = [profile.efficiency(a) for a in architectures]
    if not fitted:
        return profile
    catch_all = KernelEfficiency(
        ANY_ARCHITECTURE,
        memory=round(statistics.median(e.memory for e in fitted), 4),
        compute=round(statistics.median(e.compute for e in fitted), 4),
        moe_memory=round(statistics.median(e.moe_memory for e in fitted), 4),
    )
    rows = [e for e in profile.efficiencies if e.architecture != ANY_ARCHITECTURE]
    return replace(profile, efficiencies=(catch_all, *rows))


def spread(results: list[Result], metric: str) -> tuple[float, float] | None:
    ratios = sorted(r.case.measured / r.predicted for r in results if r.case.metric == metric and r.predicted)
    if len(ratios) < 2:
        return None
    return (percentile(ratios, 0.1), percentile(ratios, 0.9))


UNCERTAINTY_METRICS = {
    "time_per_token": TPOT,
    "ttft": TTFT,
    "tokens_per_s": OUTPUT_TOK_S,
    "kv_capacity_tokens": KV_AT_DEFAULTS,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append", help="fit only this engine (repeatable)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="write the fitted constants to engines.yaml")
    parser.add_argument(
        "--cross-validate", action="store_true", help="leave each source out in turn: the error on rows not fitted on"
    )
    args = parser.parse_args(argv)
    if args.cross_validate:
        return cross_validate(args.rounds)
    catalog = load_catalog()
    cases, _ = load_cases()
    names = args.engine or sorted(catalog.engines)
    document = yaml.safe_load(ENGINES_YAML.read_text(encoding="utf-8"))
    own: dict[str, list[str]] = {}
    for name in names:
        fitted = fit_engine(catalog, name, cases, args.rounds)
        own[name] = own_architectures(catalog, name, cases)
        catalog = replace(catalog, engines={**catalog.engines, name: fitted})
    catalog = replace(catalog, engines=borrow_generations(catalog.engines, own))
    for name in names:
        fitted = catalog.engines[name]
        results = [evaluate(c, in_process(catalog)) for c in cases if c.engine == name]
        print(f"== {name}")
        for line in table(summarise(results)):
            print(line)
        for r in results:
            if r.error_percent is not None and abs(r.error_percent) > 30:
                print(f"  {r.case.row_id} {r.case.metric}: measured {r.case.measured:.4g} predicted {r.predicted:.4g}")
        entry = next(e for e in document["engines"] if e["name"] == name)
        for knob in [*memory_knobs(fitted), *TIME_KNOBS]:
            entry[knob.name] = _get(fitted, knob.name)
        entry["efficiencies"] = [
            {"architecture": e.architecture, "memory": e.memory, "compute": e.compute, "moe_memory": e.moe_memory}
            for e in fitted.efficiencies
        ]
        uncertainty = dict(entry.get("uncertainty") or {})
        rows = {}
        for attribute, metric in UNCERTAINTY_METRICS.items():
            found = spread(results, metric)
            rows[attribute] = sum(1 for r in results if r.case.metric == metric and r.predicted)
            if found is not None:
                uncertainty[attribute] = [round(found[0], 3), round(found[1], 3)]
        rows["moe"] = sum(1 for c in cases if c.engine == name and catalog.models.get(c.params["model"], None) and
                          catalog.models[c.params["model"]].is_moe)  # fmt: skip
        for arch in own[name]:
            rows[f"gpu:{arch}"] = sum(
                1 for r in trusted(results) if r.case.metric in TIME_METRICS and _architecture(r.case, catalog) == arch
            )
        uncertainty["rows"] = rows
        entry["uncertainty"] = uncertainty
        _report_rows(entry, fitted, results, catalog)
        print("  constants:", {k.name: entry[k.name] for k in [*memory_knobs(fitted), *TIME_KNOBS]})
        print("  efficiencies:", entry["efficiencies"])
        print("  uncertainty:", uncertainty)
    if args.write:
        ENGINES_YAML.write_text(_HEADER + yaml.safe_dump(document, sort_keys=False, width=110), encoding="utf-8")
        print(f"wrote {ENGINES_YAML}")
    return 0


def neutral(profile: EngineProfile) -> EngineProfile:
    """The profile with every fitted constant at a neutral start: the lab's efficiencies for
    every generation, no overheads, no reservations."""
    zeros = {knob.name: 0.0 for knob in (*MEMORY_KNOBS, *TIME_KNOBS)}
    return replace(profile, efficiencies=(KernelEfficiency(ANY_ARCHITECTURE, 0.7, 0.5, 0.7),), **zeros)


def cross_validate(rounds: int) -> int:
    """Leave-one-source-out: refit each engine without one publication's rows, predict those
    rows, and report the error over all of them. The nearest thing here to a held-out set."""
    catalog = load_catalog()
    cases, _ = load_cases()
    sources = sorted({c.source for c in cases})
    held_out: list[Result] = []
    for source in sources:
        rest = [c for c in cases if c.source != source]
        mine = [c for c in cases if c.source == source]
        fitted = dict(catalog.engines)
        for name in sorted({c.engine for c in mine}):
            # From scratch: nothing of the full fit (a generation row, a constant) may leak in.
            start = replace(catalog, engines={**catalog.engines, name: neutral(catalog.engines[name])})
            fitted[name] = fit_engine(start, name, rest, rounds)
        own = {name: own_architectures(catalog, name, rest) for name in fitted}
        ask = in_process(replace(catalog, engines=borrow_generations(fitted, own)))
        held_out.extend(evaluate(c, ask) for c in mine)
        print(f"  left out {source!r}: {len(mine)} figures")
    print_tables(held_out, "Leave-one-source-out, all rows:", "Leave-one-source-out, rows of high or medium trust:")
    return 0


def _report_rows(entry: dict[str, Any], profile: EngineProfile, results: list[Result], catalog: Catalog) -> None:
    """`fitted_on`: per constant, the trusted rows whose metrics it was fitted on."""
    kept = trusted(results)
    fitted_on = {}
    for knob in [*memory_knobs(profile), *TIME_KNOBS]:
        ids = sorted({r.case.row_id for r in kept if r.case.metric in knob.metrics})
        if ids:
            fitted_on[knob.name] = ", ".join(ids)
    for e in profile.efficiencies:
        if e.architecture == ANY_ARCHITECTURE:
            fitted_on["efficiencies.*"] = "the median of the generations fitted"
            continue
        ids = sorted(
            {
                r.case.row_id
                for r in kept
                if r.case.metric in TIME_METRICS and _architecture(r.case, catalog) == e.architecture
            }
        )
        if ids:
            fitted_on[f"efficiencies.{e.architecture}"] = ", ".join(ids)
        else:
            fitted_on[f"efficiencies.{e.architecture}"] = "borrowed: the median of the engines with rows on it"
    checked = sorted({r.case.row_id for r in results if r.case.metric in (WEIGHTS, KV_FROM_BUDGET)})
    if checked:
        fitted_on["(checked, not fitted)"] = "weights and KV-from-budget rows " + ", ".join(checked)
    entry["fitted_on"] = fitted_on


_HEADER = """# Serving-engine profiles (MODEL.md section 6). Loaded into the `engines` table on first start,
# like models and GPUs. Constants are fitted by `python -m bench.fit_engines --write` on the rows of
# bench/measurements/ (copied from the measurements set with their sources); `fitted_on` names the
# rows behind each, `uncertainty` is the 10th-90th percentile of measured / predicted on them.
# Check with `make accuracy`.
"""


if __name__ == "__main__":
    raise SystemExit(main())

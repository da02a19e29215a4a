"""Fit the engine profiles' constants on the measured rows (bench/measurements/), for prediction.

The same rows and answer fields as `make accuracy` (bench/accuracy_rows.py), asked of the
planning core in process so that a search over the constants runs in minutes. Per engine it
finds the maximum a posteriori constants: the rows pull each constant (a Laplace likelihood of
the log error, each publication's rows weighted 1/sqrt(n) so that no single source decides),
its prior pulls it back (bench/engine_priors.yaml: a physical range, a prior value and its
evidence, per constant and per GPU generation). A generation an engine has no rows on keeps the
prior, never another engine's value. A fitted constant at either end of its range fails the
fit, naming the term it suggests is missing.

What decides is prediction: `--cross-validate` refits without each publication in turn and
predicts its rows (leave-one-source-out); `--write` does that first, writes the per-row result
to bench/cross_validation.csv (`make accuracy` prints it as its headline) and takes the
profiles' uncertainty ranges from those held-out errors, then fits on every row and writes
catalog_seed/engines.yaml. `--select` compares prior widths by the same held-out error.

    python -m bench.fit_engines [--engine vllm] [--rounds 2] [--write] [--cross-validate] [--select]
"""

from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from app.api.schemas import PLANNING_BY_PATH
from app.api.wire import dump
from app.catalog.convert import engine_to_spec, gpu_to_spec, model_to_spec
from app.catalog.models import Model
from app.catalog.seed import SEED_DIR, _engine_row, _gpu_row, load_seed_files
from app.catalog.snapshots import CatalogSnapshot
from app.planning import batch as batch_service
from app.planning import latency as latency_service
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
from app.sizing.specs import MLA, GpuSpec, ModelSpec
from bench.accuracy import TRUSTED, Result, evaluate, percentile, print_tables, summarise, table
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
PRIORS_YAML = Path(__file__).with_name("engine_priors.yaml")
CROSS_VALIDATION_CSV = Path(__file__).with_name("cross_validation.csv")
HELD_OUT_COLUMNS = ("row_id", "source", "engine", "metric", "measured", "predicted", "error_percent", "kind", "gpu")
# The log grid each coordinate step searches, and how many times it narrows around the best.
GRID_POINTS = 9
GRID_LEVELS = 2
# Within this share (on the log scale, of the range's width) of an end, a constant is at its bound.
AT_BOUND = 0.02

Ask = Callable[[str, dict[str, Any]], dict[str, Any]]


# ------------------------------------------------------------------------- the catalog


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


# Each answers as its endpoint writes it (a typed answer through its schema: app.api.wire).
_SERVICES: dict[str, Callable[[Any, Context], Any]] = {
    "/v1/fit": replica.fit,
    "/v1/throughput": replica.throughput,
    "/v1/batch": batch_service.batch,
    "/v1/latency": latency_service.latency,
}


def in_process(catalog: Catalog) -> Ask:
    """An asker that answers as the planning endpoints do (the same services), on the given catalog."""
    snapshot = CatalogSnapshot(catalog.models, catalog.gpus, tuple(sorted(catalog.gpus.items())), catalog.engines, 0)

    def ask(endpoint: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return dump(_SERVICES[endpoint](PLANNING_BY_PATH[endpoint].schema.load(params), Context(snapshot)))
        except SizingError as exc:
            raise LookupError(f"{exc.field}: {exc.message}") from None
        except PlanningError as exc:
            raise LookupError(exc.detail) from None

    return ask


# ------------------------------------------------------------------------- the priors


@dataclass(frozen=True)
class Prior:
    """One constant's physical range, prior value and spread (log scale), and its evidence."""

    low: float
    high: float
    prior: float
    sd: float
    evidence: str
    missing: str

    def penalty(self, value: float, width: float) -> float:
        """Minus the log prior density (to a constant): ((log v - log prior) / sd)^2 / 2."""
        z = math.log(value / self.prior) / (self.sd * width)
        return 0.5 * z * z

    def at_bound(self, value: float) -> bool:
        span = math.log(self.high / self.low)
        return math.log(value / self.low) < AT_BOUND * span or math.log(self.high / value) < AT_BOUND * span


@dataclass(frozen=True)
class Priors:
    data_scale: float
    width: float
    constants: dict[str, Prior]
    # (architecture, field) -> prior; "*" for a generation the file does not name.
    efficiencies: dict[tuple[str, str], Prior]
    efficiency_evidence: str

    def efficiency(self, architecture: str, name: str) -> Prior:
        return self.efficiencies.get((architecture, name)) or self.efficiencies[(ANY_ARCHITECTURE, name)]

    def prior_of(self, knob: str) -> Prior:
        if "." in knob:
            arch, name = knob.split(".")
            return self.efficiency(arch, name)
        return self.constants[knob]


EFFICIENCY_FIELDS = ("memory", "compute", "moe_memory")


def load_priors(path: Path = PRIORS_YAML, width: float | None = None) -> Priors:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    constants = {name: Prior(**entry) for name, entry in document["constants"].items()}
    eff = document["efficiencies"]
    efficiencies = {}
    for arch, values in eff["priors"].items():
        for name, value in zip(EFFICIENCY_FIELDS, values, strict=True):
            low, high = eff["ranges"][name]
            efficiencies[(arch, name)] = Prior(low, high, value, eff["sd"][name], eff["evidence"], eff["missing"])
    return Priors(
        data_scale=float(document["data_scale"]),
        width=float(width if width is not None else document["prior_width"]),
        constants=constants,
        efficiencies=efficiencies,
        efficiency_evidence=eff["evidence"],
    )


# ------------------------------------------------------------------------- the knobs

# Decode-paced figures fit the per-step constants; TTFT has its own constant and informs the
# compute side with them.
STEP_METRICS = (TPOT, OUTPUT_TOK_S, "static_batch_latency_ms")
TIME_METRICS = (*STEP_METRICS, TTFT)
MEMORY_METRICS = (KV_AT_DEFAULTS,)


@dataclass(frozen=True)
class Knob:
    """One constant the search moves: its name on the profile ("arch.field" for an
    efficiency), the metrics it affects and which cases it can move at all."""

    name: str
    metrics: tuple[str, ...]
    applies: Callable[[Case], bool] = field(default=lambda case: True)


def _get(profile: EngineProfile, name: str) -> float:
    if "." in name:
        arch, attribute = name.split(".")
        return float(getattr(profile.efficiency(arch), attribute))
    return float(getattr(profile, name))


def _set(profile: EngineProfile, name: str, value: float) -> EngineProfile:
    if "." not in name:
        return replace(profile, **{name: value})
    arch, attribute = name.split(".")
    rows = {e.architecture: e for e in profile.efficiencies}
    base = rows.get(arch) or replace(profile.efficiency(arch), architecture=arch)
    rows[arch] = replace(base, **{attribute: value})
    return replace(profile, efficiencies=tuple(rows.values()))


def memory_knob_names(profile: EngineProfile) -> tuple[str, ...]:
    """The reservations the engine's KV rule subtracts (SGLang's static fraction holds no
    activations; only TensorRT-LLM takes engine buffers before its free fraction)."""
    return {
        UTIL_OF_VISIBLE: (
            "activation_bytes_per_token_hidden",
            "activation_bytes_per_token_expert_hidden",
            "non_torch_gib",
            "non_torch_gib_per_extra_rank",
        ),
        STATIC_FRACTION: ("non_torch_gib", "non_torch_gib_per_extra_rank"),
        FRACTION_OF_FREE: ("non_torch_gib", "engine_buffers_gib"),
    }[profile.kv_rule]


TIME_CONSTANTS = (
    "step_overhead_ms",
    "layer_overhead_us",
    "sequence_overhead_us",
    "collective_latency_us",
    "expert_overhead_us",
    "mla_layer_overhead_us",
    "ttft_overhead_ms",
)


def knobs_for(profile: EngineProfile, catalog: Catalog, architectures: Iterable[str]) -> list[Knob]:
    def model(case: Case) -> ModelSpec | None:
        return catalog.models.get(case.params["model"])

    def moe(case: Case) -> bool:
        m = model(case)
        return bool(m and m.is_moe)

    def mla(case: Case) -> bool:
        m = model(case)
        return bool(m and m.attention == MLA)

    def parallel(case: Case) -> bool:
        return int(case.params.get("tensor_parallel") or 1) > 1 or int(case.params.get("expert_parallel") or 1) > 1

    def ranks(case: Case) -> bool:
        return int(case.params.get("tensor_parallel") or 1) > 1

    knobs: list[Knob] = []
    for name in memory_knob_names(profile):
        applies = {"activation_bytes_per_token_expert_hidden": moe, "non_torch_gib_per_extra_rank": ranks}.get(name)
        knobs.append(Knob(name, MEMORY_METRICS, applies or (lambda case: True)))
    knobs += [
        Knob("step_overhead_ms", STEP_METRICS),
        Knob("layer_overhead_us", STEP_METRICS),
        Knob("sequence_overhead_us", STEP_METRICS),
        Knob("collective_latency_us", STEP_METRICS, parallel),
        Knob("expert_overhead_us", STEP_METRICS, moe),
        Knob("mla_layer_overhead_us", STEP_METRICS, mla),
        Knob("ttft_overhead_ms", (TTFT,)),
    ]
    for arch in architectures:

        def on(case: Case, arch: str = arch) -> bool:
            return architecture_of(case, catalog) == arch

        def on_moe(case: Case, arch: str = arch) -> bool:
            return architecture_of(case, catalog) == arch and moe(case)

        knobs += [
            Knob(f"{arch}.memory", STEP_METRICS, on),
            Knob(f"{arch}.compute", TIME_METRICS, on),
            Knob(f"{arch}.moe_memory", STEP_METRICS, on_moe),
        ]
    return knobs


def architecture_of(case: Case, catalog: Catalog) -> str | None:
    gpu = case.params["gpu"]
    if isinstance(gpu, dict):
        return gpu.get("architecture")
    spec = catalog.gpus.get(gpu)
    return None if spec is None else spec.architecture


def at_priors(profile: EngineProfile, priors: Priors, architectures: Iterable[str]) -> EngineProfile:
    """The profile with every fitted constant at its prior: where a fit starts, and what an
    engine keeps on a generation it has no rows on."""
    values = {name: priors.constants[name].prior for name in (*memory_knob_names(profile), *TIME_CONSTANTS)}
    named = {arch for arch, _ in priors.efficiencies}
    rows = [
        KernelEfficiency(arch, *(priors.efficiency(arch, f).prior for f in EFFICIENCY_FIELDS))
        for arch in (ANY_ARCHITECTURE, *sorted((named | set(architectures)) - {ANY_ARCHITECTURE}))
    ]
    return replace(profile, efficiencies=tuple(rows), **values)


# ------------------------------------------------------------------------- predicting


class Predictor:
    """Predictions of one engine's cases under trial profiles, with what does not change
    cached: /v1/fit answers by the memory constants they depend on, and a burst's ratio to
    its steady-state surrogate (refreshed once a round, `refresh`)."""

    def __init__(self, catalog: Catalog, name: str) -> None:
        self.catalog = catalog
        self.name = name
        self.ratios: dict[tuple[str, str], float] = {}
        self._fits: dict[tuple[Any, ...], dict[str, Any]] = {}

    def _asker(self, profile: EngineProfile) -> Ask:
        ask = in_process(replace(self.catalog, engines={**self.catalog.engines, self.name: profile}))
        signature = tuple(_get(profile, n) for n in memory_knob_names(profile))

        def cached(endpoint: str, params: dict[str, Any]) -> dict[str, Any]:
            if endpoint != "/v1/fit":
                return ask(endpoint, params)
            key = (signature, repr(sorted(params.items())))
            if key not in self._fits:
                if len(self._fits) > 20_000:
                    self._fits.clear()
                self._fits[key] = ask(endpoint, params)
            return self._fits[key]

        return cached

    def refresh(self, profile: EngineProfile, cases: list[Case]) -> None:
        """Each burst's simulated throughput over its steady state at the engine's largest
        batch, at this profile: the search then asks the cheap steady state and scales it."""
        ask = self._asker(profile)
        for case in cases:
            if case.surrogate is None:
                continue
            full = evaluate(case, ask).predicted
            cheap = evaluate(case.surrogate, ask).predicted
            if full and cheap:
                self.ratios[(case.row_id, case.metric)] = full / cheap

    def predict(self, profile: EngineProfile, cases: list[Case]) -> list[Result]:
        ask = self._asker(profile)
        results = []
        for case in cases:
            if case.surrogate is None:
                results.append(evaluate(case, ask))
                continue
            ratio = self.ratios.get((case.row_id, case.metric))
            cheap = evaluate(case.surrogate, ask)
            if ratio is None or cheap.predicted is None:
                results.append(evaluate(case, ask))
            else:
                results.append(Result(case, cheap.predicted * ratio))
        return results


def source_weights(cases: list[Case]) -> dict[str, float]:
    """1 / sqrt(rows of the source) per source: a publication's rows share its setup, so many
    of them are worth less than as many independent ones."""
    counts = Counter(c.source for c in cases)
    return {source: 1.0 / math.sqrt(n) for source, n in counts.items()}


def data_loss(results: list[Result], weights: dict[str, float]) -> float:
    """Sum of weighted |log(predicted / measured)|; a failed prediction counts as a factor of e."""
    total = 0.0
    for r in results:
        w = weights.get(r.case.source, 1.0)
        if r.predicted is None or r.predicted <= 0:
            total += w
        else:
            total += w * abs(math.log(r.predicted / r.case.measured))
    return total


# ------------------------------------------------------------------------- fitting


@dataclass
class Fit:
    profile: EngineProfile
    architectures: list[str]
    # Knob name -> the trusted rows that moved it.
    rows: dict[str, list[str]]
    at_bound: list[str]


def trusted_cases(cases: list[Case], name: str) -> list[Case]:
    return [c for c in cases if c.engine == name and c.trust.split()[0] in TRUSTED]


def own_architectures(catalog: Catalog, cases: list[Case]) -> list[str]:
    """The GPU generations the trusted time rows measure."""
    return sorted({a for c in cases if c.metric in TIME_METRICS and (a := architecture_of(c, catalog))})


def fit_engine(catalog: Catalog, name: str, cases: list[Case], priors: Priors, rounds: int) -> Fit:
    """The MAP constants of one engine on its trusted rows among `cases`, by coordinate search
    on a log grid inside each constant's range, starting from the priors."""
    mine = trusted_cases(cases, name)
    architectures = own_architectures(catalog, mine)
    profile = at_priors(catalog.engines[name], priors, architectures)
    predictor = Predictor(catalog, name)
    weights = source_weights(mine)
    scale = priors.data_scale
    knobs = knobs_for(profile, catalog, architectures)
    moved: dict[str, list[str]] = {}
    for _ in range(rounds):
        predictor.refresh(profile, mine)
        for knob in knobs:
            relevant = [c for c in mine if c.metric in knob.metrics and knob.applies(c)]
            if not relevant:
                continue
            moved[knob.name] = sorted({c.row_id for c in relevant})
            prior = priors.prior_of(knob.name)

            def objective(
                value: float,
                knob: Knob = knob,
                relevant: list[Case] = relevant,
                prior: Prior = prior,
                base: EngineProfile = profile,
            ) -> float:
                trial = _set(base, knob.name, value)
                loss = data_loss(predictor.predict(trial, relevant), weights) / scale
                return loss + prior.penalty(value, priors.width)

            best_value = _get(profile, knob.name)
            best = objective(best_value)
            low, high = math.log(prior.low), math.log(prior.high)
            for _level in range(GRID_LEVELS):
                step = (high - low) / (GRID_POINTS - 1)
                for i in range(GRID_POINTS):
                    value = math.exp(low + i * step)
                    score = objective(value)
                    if score < best - 1e-9:
                        best, best_value = score, value
                centre = math.log(best_value)
                low, high = max(math.log(prior.low), centre - step), min(math.log(prior.high), centre + step)
            profile = _set(profile, knob.name, _round(best_value))
    at_bound = [k for k in moved if priors.prior_of(k).at_bound(_get(profile, k))]
    return Fit(profile, architectures, moved, at_bound)


def _round(value: float) -> float:
    """Four significant figures: what the yaml keeps."""
    return float(f"{value:.4g}")


def fit_all(catalog: Catalog, cases: list[Case], priors: Priors, rounds: int, names: Iterable[str]) -> dict[str, Fit]:
    return {name: fit_engine(catalog, name, cases, priors, rounds) for name in names}


def with_fits(catalog: Catalog, fits: dict[str, Fit]) -> Catalog:
    return replace(catalog, engines={**catalog.engines, **{n: f.profile for n, f in fits.items()}})


# ------------------------------------------------------------------------- cross-validation


def kind_of(case: Case, catalog: Catalog) -> str:
    model = catalog.models.get(case.params["model"])
    if model is None:
        return "?"
    if model.attention == MLA:
        return "mla"
    return "moe" if model.is_moe else "dense"


_FOLD_STATE: dict[str, Any] = {}


def _fold(source: str) -> list[tuple[float | None, str | None]]:
    """Refit every engine the source has rows of without them, and predict them: (predicted,
    error) per held-out case, in order (plain values: a fold may run in another process)."""
    catalog: Catalog = _FOLD_STATE["catalog"]
    cases: list[Case] = _FOLD_STATE["cases"]
    priors: Priors = _FOLD_STATE["priors"]
    rounds: int = _FOLD_STATE["rounds"]
    rest = [c for c in cases if c.source != source]
    held = [c for c in cases if c.source == source]
    fits = fit_all(catalog, rest, priors, rounds, sorted({c.engine for c in held}))
    # A generation the rest has no rows on keeps its prior (at_priors): nothing is borrowed.
    ask = in_process(with_fits(catalog, fits))
    predicted = [evaluate(c, ask) for c in held]
    print(f"  left out {source[:80]!r}: {len(held)} figures", flush=True)
    return [(r.predicted, r.error) for r in predicted]


def cross_validate(
    catalog: Catalog, cases: list[Case], priors: Priors, rounds: int, processes: int | None = None
) -> list[Result]:
    """Leave-one-source-out: every publication's rows predicted by constants fitted without them."""
    sources = sorted({c.source for c in cases})
    _FOLD_STATE.update(catalog=catalog, cases=cases, priors=priors, rounds=rounds)
    processes = processes or max(1, min(len(sources), (os.cpu_count() or 1)))
    if processes == 1:
        folds = [_fold(s) for s in sources]
    else:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            folds = pool.map(_fold, sources, chunksize=1)
    results = []
    for source, fold in zip(sources, folds, strict=True):
        held = [c for c in cases if c.source == source]
        results += [Result(c, predicted, error) for c, (predicted, error) in zip(held, fold, strict=True)]
    return results


def write_held_out(results: list[Result], catalog: Catalog, path: Path = CROSS_VALIDATION_CSV) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(HELD_OUT_COLUMNS)
        for r in sorted(results, key=lambda r: (r.case.row_id, r.case.metric)):
            writer.writerow(
                [
                    r.case.row_id,
                    r.case.source,
                    r.case.engine,
                    r.case.metric,
                    f"{r.case.measured:.6g}",
                    "" if r.predicted is None else f"{r.predicted:.6g}",
                    "" if r.error_percent is None else f"{r.error_percent:.1f}",
                    kind_of(r.case, catalog),
                    architecture_of(r.case, catalog) or "",
                ]
            )


# ------------------------------------------------------------------------- writing


UNCERTAINTY_METRICS = {
    "time_per_token": TPOT,
    "ttft": TTFT,
    "tokens_per_s": OUTPUT_TOK_S,
    "kv_capacity_tokens": KV_AT_DEFAULTS,
}


def spread(results: list[Result], metric: str) -> tuple[float, float] | None:
    """10th and 90th percentile of measured / predicted, widened to hold 1 (the estimate)."""
    ratios = sorted(r.case.measured / r.predicted for r in results if r.case.metric == metric and r.predicted)
    if len(ratios) < 2:
        return None
    return (min(1.0, percentile(ratios, 0.1)), max(1.0, percentile(ratios, 0.9)))


def entry_for(
    entry: dict[str, Any],
    fit: Fit,
    priors: Priors,
    uncertainty_from: list[Result],
    catalog: Catalog,
    cases: list[Case],
    basis: str,
) -> None:
    """Write one engine's fitted constants, efficiencies, uncertainty and provenance into its yaml entry."""
    profile = fit.profile
    for name in (*memory_knob_names(profile), *TIME_CONSTANTS):
        entry[name] = _get(profile, name)
    entry["efficiencies"] = [
        {"architecture": e.architecture, "memory": e.memory, "compute": e.compute, "moe_memory": e.moe_memory}
        for e in profile.efficiencies
    ]
    uncertainty = dict(entry.get("uncertainty") or {})
    mine = [r for r in uncertainty_from if r.case.engine == profile.name]
    rows: dict[str, int] = {}
    for attribute, metric in UNCERTAINTY_METRICS.items():
        found = spread(mine, metric)
        rows[attribute] = sum(1 for r in mine if r.case.metric == metric and r.predicted)
        if found is not None:
            uncertainty[attribute] = [round(found[0], 3), round(found[1], 3)]
    trusted = trusted_cases(cases, profile.name)
    rows["moe"] = sum(1 for c in trusted if kind_of(c, catalog) in ("moe", "mla"))
    rows["mla"] = sum(1 for c in trusted if kind_of(c, catalog) == "mla")
    for arch in fit.architectures:
        rows[f"gpu:{arch}"] = sum(
            1 for c in trusted if c.metric in TIME_METRICS and architecture_of(c, catalog) == arch
        )
    uncertainty["rows"] = rows
    entry["uncertainty"] = uncertainty
    fitted_on: dict[str, str] = {}
    for name in (*memory_knob_names(profile), *TIME_CONSTANTS):
        prior = priors.constants[name]
        ids = fit.rows.get(name)
        head = f"rows {', '.join(ids)}" if ids else "no rows: the prior"
        fitted_on[name] = f"{head}; prior {prior.prior:g} within {prior.low:g} to {prior.high:g}: {prior.evidence}"
    for e in profile.efficiencies:
        ids = sorted({i for f in EFFICIENCY_FIELDS for i in fit.rows.get(f"{e.architecture}.{f}", [])})
        values = ", ".join(f"{f} {priors.efficiency(e.architecture, f).prior:g}" for f in EFFICIENCY_FIELDS)
        head = f"rows {', '.join(ids)}" if ids else "no rows: the generation's prior"
        fitted_on[f"efficiencies.{e.architecture}"] = f"{head}; prior {values}"
    fitted_on["efficiencies (evidence)"] = priors.efficiency_evidence
    checked = sorted({c.row_id for c in cases if c.engine == profile.name and c.metric in (WEIGHTS, KV_FROM_BUDGET)})
    if checked:
        fitted_on["(checked, not fitted)"] = "weights and KV-from-budget rows " + ", ".join(checked)
    fitted_on["(uncertainty)"] = basis
    entry["fitted_on"] = fitted_on


_HEADER = """# Serving-engine profiles (MODEL.md section 6). Loaded into the `engines` table on first start,
# like models and GPUs. Constants are fitted by `make fit-engines` (bench/fit_engines.py) on the
# rows of bench/measurements/ (copied from the measurements set with their sources) under the
# physical ranges and priors of bench/engine_priors.yaml; `fitted_on` names the rows and the
# prior behind each; `uncertainty` is the 10th-90th percentile of measured / predicted on rows
# left out of the fit (leave-one-source-out, bench/cross_validation.csv).
"""


def report(results: list[Result], heading: str) -> None:
    print(heading)
    for line in table(summarise(results)):
        print(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append", help="fit only this engine (repeatable)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="cross-validate, then write engines.yaml")
    parser.add_argument("--cross-validate", action="store_true", help="leave each source out in turn")
    parser.add_argument("--select", action="store_true", help="compare prior widths by held-out error")
    parser.add_argument("--processes", type=int, default=None)
    parser.add_argument("--rows", type=Path, help="with --cross-validate: write the held-out rows to this CSV too")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    cases, _ = load_cases()
    priors = load_priors()
    if args.select:
        for width in (0.5, 1.0, 2.0):
            held = cross_validate(catalog, cases, replace(priors, width=width), args.rounds, args.processes)
            report(held, f"Prior width {width:g}, leave-one-source-out:")
        return 0
    held_out: list[Result] | None = None
    if args.cross_validate or args.write:
        held_out = cross_validate(catalog, cases, priors, args.rounds, args.processes)
        print_tables(held_out, "Leave-one-source-out, all rows:", "Leave-one-source-out, rows of high or medium trust:")
        if args.rows is not None:
            write_held_out(held_out, catalog, args.rows)
        if not args.write:
            return 0
        write_held_out(held_out, catalog)
        print(f"wrote {CROSS_VALIDATION_CSV}")
    names = args.engine or sorted(catalog.engines)
    fits = fit_all(catalog, cases, priors, args.rounds, names)
    fitted = with_fits(catalog, fits)
    ask = in_process(fitted)
    training = [evaluate(c, ask) for c in cases if c.engine in names]
    document = yaml.safe_load(ENGINES_YAML.read_text(encoding="utf-8"))
    failed = False
    for name in names:
        fit = fits[name]
        mine = [r for r in training if r.case.engine == name]
        report(mine, f"== {name} (training rows)")
        for r in mine:
            if r.error_percent is not None and abs(r.error_percent) > 30:
                print(f"  {r.case.row_id} {r.case.metric}: measured {r.case.measured:.4g} predicted {r.predicted:.4g}")
        print("  constants:", {k: _get(fit.profile, k) for k in (*memory_knob_names(fit.profile), *TIME_CONSTANTS)})
        print(
            "  efficiencies:", [(e.architecture, e.memory, e.compute, e.moe_memory) for e in fit.profile.efficiencies]
        )
        for knob in fit.at_bound:
            failed = True
            prior = priors.prior_of(knob)
            print(
                f"  AT BOUND: {name} {knob} = {_get(fit.profile, knob):g} in [{prior.low:g}, {prior.high:g}]:"
                f" the model lacks a term ({prior.missing})"
            )
        entry = next(e for e in document["engines"] if e["name"] == name)
        basis = (
            "leave-one-source-out residuals (bench/cross_validation.csv)"
            if held_out is not None
            else "training residuals"
        )
        entry_for(entry, fit, priors, held_out if held_out is not None else mine, catalog, cases, basis)
    if failed:
        print("fit-engines: a constant sits at a bound (above); engines.yaml not written")
        return 1
    if args.write:
        ENGINES_YAML.write_text(_HEADER + yaml.safe_dump(document, sort_keys=False, width=110), encoding="utf-8")
        print(f"wrote {ENGINES_YAML}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

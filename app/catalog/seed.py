"""Load catalog_seed/*.yaml (format: catalog_seed/SCHEMA.md) into an empty or partial catalog.

Seeding only ever inserts: an entry whose slug (a precision or an engine: whose name) is
already stored is left alone, so edits made through the API survive a restart and re-running
is harmless.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.catalog import writes
from app.catalog.convert import UNCERTAINTY_RANGES, gpu_columns, uncertainty_to_dict
from app.catalog.models import (
    CONFIDENCE_LEVELS,
    NATIVE_PRECISIONS,
    PEAK_TFLOPS_KEYS,
    PRICE_DATE_PATTERN,
    SLUG_PATTERN,
    VENDORS,
    VISIBLE_OVER_DATASHEET,
    Base,
    Engine,
    Gpu,
    Model,
    Precision,
)
from app.sizing import architectures
from app.sizing.engine import IDEAL, KV_RULES, Uncertainty
from app.sizing.memory import COMPONENTS
from app.sizing.specs import ATTENTION_KINDS, GpuPrices, model_defaults

SEED_DIR = Path(__file__).resolve().parents[2] / "catalog_seed"

SEED_FILES = {
    "models": "models.yaml",
    "gpus": "gpus.yaml",
    "precisions": "precisions.yaml",
    "engines": "engines.yaml",
}
# The field each kind's entries are identified (and kept unique) by.
KEY_FIELDS = {"models": "slug", "gpus": "slug", "precisions": "name", "engines": "name"}
# `ideal` is not an engine of the catalog: it is what planning does without one.
RESERVED_ENGINE_NAMES = frozenset({IDEAL})

Entry = dict[str, Any]


class SeedError(ValueError):
    """The seed files are missing or malformed; `problems` lists every one found."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid catalog seed:\n  " + "\n  ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class FieldRule:
    """What one YAML field may hold.

    `kind` is str, int, number, bool, list or map. A required field must be present and
    non-null; an optional one may be absent or null and then takes `default`.
    """

    kind: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] | None = None
    positive: bool = False


def _req(kind: str, *, positive: bool = False, choices: tuple[str, ...] | None = None) -> FieldRule:
    return FieldRule(kind, required=True, positive=positive, choices=choices)


def _opt(
    kind: str,
    default: Any = None,
    *,
    positive: bool = False,
    choices: tuple[str, ...] | None = None,
) -> FieldRule:
    return FieldRule(kind, default=default, positive=positive, choices=choices)


# Required = the NOT NULL columns: identity, provenance, and the shape figures the sizing
# core cannot plan without. SCHEMA.md's "unknown facts are null, never guessed" applies to
# everything else, even a GPU's memory or a checkpoint's dtype.
MODEL_FIELDS: dict[str, FieldRule] = {
    "slug": _req("str"),
    "name": _req("str"),
    "family": _opt("str"),
    "hf_repo": _opt("str"),
    "instruct_repo": _opt("str"),
    "aliases": _opt("list"),
    "params_total": _req("int", positive=True),
    "params_active": _opt("int", positive=True),
    "layers": _req("int", positive=True),
    "hidden_size": _req("int", positive=True),
    "attention_heads": _req("int", positive=True),
    "kv_heads": _req("int", positive=True),
    "head_dim": _req("int", positive=True),
    "attention": _req("str", choices=ATTENTION_KINDS),
    "kv_lora_rank": _opt("int", positive=True),
    "qk_rope_head_dim": _opt("int", positive=True),
    "sliding_window": _opt("int", positive=True),
    "sliding_window_layers": _opt("int", 0),
    "experts": _opt("int", positive=True),
    "experts_per_token": _opt("int", positive=True),
    "shared_experts": _opt("int"),
    "expert_params": _opt("int", positive=True),
    "vocab_size": _opt("int", positive=True),
    "intermediate_size": _opt("int", positive=True),
    "moe_intermediate_size": _opt("int", positive=True),
    "tie_word_embeddings": _opt("bool", False),
    "quantized_components": _opt("list"),
    "native_precision": _opt("str"),
    "max_context": _opt("int", positive=True),
    "license": _opt("str"),
    "source": _req("str"),
    "notes": _opt("str"),
    "params_beyond_shape": _opt("str"),
}

GPU_FIELDS: dict[str, FieldRule] = {
    "slug": _req("str"),
    "name": _req("str"),
    "vendor": _req("str", choices=VENDORS),
    "architecture": _opt("str", choices=architectures.NAMES),
    "form_factor": _opt("str"),
    "memory_gb": _opt("number", positive=True),
    "memory_visible_gib": _opt("number", positive=True),
    "memory_bandwidth_tb_per_s": _opt("number", positive=True),
    "peak_tflops": _opt("map"),
    "native_precisions": _opt("list"),
    "interconnect": _opt("map"),
    "gpus_per_node": _req("int", positive=True),
    "host_cpu_cores": _opt("int", positive=True),
    "hourly_price_usd": _opt("number", positive=True),
    "price_date": _opt("str"),
    "prices": _opt("map"),
    "source": _req("str"),
    "confidence": _opt("str", choices=CONFIDENCE_LEVELS),
    "notes": _opt("str"),
    "mig_profiles": _opt("list"),
}

# A GPU's `prices` beyond the on-demand rate (hourly_price_usd), and where they come from.
PRICE_FIELDS: dict[str, FieldRule] = {
    **{name: _opt("number") for name in GpuPrices.__dataclass_fields__},
    "source": _opt("str"),
}
USD_PRICE_FIELDS = ("reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour", "spot_usd_per_hour", "purchase_usd")

INTERCONNECT_FIELDS: dict[str, FieldRule] = {
    "kind": _opt("str"),
    "bandwidth_gb_per_s": _opt("number", positive=True),
    "latency_us": _opt("number", positive=True),
}

MIG_FIELDS: dict[str, FieldRule] = {
    "name": _req("str"),
    "compute_slices": _req("int", positive=True),
    "memory_slices": _req("int", positive=True),
    "memory_gb": _req("number", positive=True),
    "max_instances": _req("int", positive=True),
}

PRECISION_FIELDS: dict[str, FieldRule] = {
    "name": _req("str"),
    "bits": _req("int", positive=True),
    "bytes_per_param": _req("number", positive=True),
    "kind": _req("str", choices=("float", "int")),
    "block_scaled": _opt("bool", False),
    "source": _req("str"),
}

# One entry of engines.yaml: every field of app.sizing.engine.EngineProfile, under its name
# (`version` is the engine's release; it is stored as engines.engine_version). Optional
# fields take EngineProfile's defaults.
ENGINE_FIELDS: dict[str, FieldRule] = {
    "name": _req("str"),
    "display_name": _req("str"),
    "version": _req("str"),
    "kv_rule": _req("str", choices=KV_RULES),
    "gpu_memory_utilization": _req("number", positive=True),
    "max_batched_tokens": _req("int", positive=True),
    "max_num_seqs": _req("int", positive=True),
    "block_size": _req("int", positive=True),
    "large_gpu_gib": _opt("number", positive=True),
    "max_batched_tokens_large_gpu": _opt("int", positive=True),
    "max_num_seqs_large_gpu": _opt("int", positive=True),
    "activation_bytes_per_token_hidden": _opt("number", 0.0),
    "activation_bytes_per_token_expert_hidden": _opt("number", 0.0),
    "logits_bytes_per_vocab_entry": _opt("number", 0.0),
    "non_torch_gib": _opt("number", 0.0),
    "non_torch_gib_per_extra_rank": _opt("number", 0.0),
    "cuda_graph_gib": _opt("number", 0.0),
    "cuda_graph_in_budget": _opt("bool", False),
    "engine_buffers_gib": _opt("number", 0.0),
    "step_overhead_ms": _opt("number", 0.0),
    "layer_overhead_us": _opt("number", 0.0),
    "sequence_overhead_us": _opt("number", 0.0),
    "collective_latency_us": _opt("number", 0.0),
    "expert_overhead_us": _opt("number", 0.0),
    "mla_layer_overhead_us": _opt("number", 0.0),
    "ttft_overhead_ms": _opt("number", 0.0),
    "efficiencies": _opt("list"),
    "uncertainty": _opt("map"),
    "fitted_on": _opt("map"),
    "source": _req("str"),
    "notes": _opt("str"),
}
ENGINE_NONNEG_FIELDS = tuple(
    name for name, rule in ENGINE_FIELDS.items() if rule.kind == "number" and not rule.required and not rule.positive
)

EFFICIENCY_FIELDS: dict[str, FieldRule] = {
    "architecture": _req("str"),
    "memory": _req("number", positive=True),
    "compute": _req("number", positive=True),
    "moe_memory": _opt("number", 1.0, positive=True),
}

_DEFAULT_UNCERTAINTY = uncertainty_to_dict(Uncertainty())
UNCERTAINTY_FIELDS: dict[str, FieldRule] = {
    **{name: _opt("list", _DEFAULT_UNCERTAINTY[name]) for name in UNCERTAINTY_RANGES},
    "rows": _opt("map", {}),
    "unseen_widening": _opt("number", _DEFAULT_UNCERTAINTY["unseen_widening"], positive=True),
}

_SLUG = re.compile(SLUG_PATTERN)
_PRICE_DATE = re.compile(PRICE_DATE_PATTERN)


def _kind_ok(value: Any, kind: str) -> bool:
    # bool is an int subclass in Python: `layers: true` must not pass as 1.
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    expected = {"str": str, "bool": bool, "list": list, "map": dict}[kind]
    return isinstance(value, expected)


def _as_float(value: Any) -> Any:
    """Numbers as float (what a Float column reads back); anything else untouched."""
    return float(value) if _kind_ok(value, "number") else value


def _check_fields(raw: Any, rules: Mapping[str, FieldRule], where: str, problems: list[str]) -> Entry:
    """Validate one mapping against `rules`; return it with every field present."""
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a mapping, got {type(raw).__name__}")
        return {}
    for unknown in sorted(set(raw) - set(rules)):
        problems.append(f"{where}: field '{unknown}': unknown field")
    entry: Entry = {}
    for name, rule in rules.items():
        value = raw.get(name)
        if value is None:
            if rule.required:
                problems.append(f"{where}: field '{name}': required")
            entry[name] = rule.default
            continue
        if not _kind_ok(value, rule.kind):
            problems.append(f"{where}: field '{name}': expected {rule.kind}, got {type(value).__name__} ({value!r})")
        elif rule.choices is not None and value not in rule.choices:
            problems.append(f"{where}: field '{name}': {value!r} is not one of {rule.choices}")
        elif rule.positive and value <= 0:
            problems.append(f"{where}: field '{name}': must be > 0, got {value!r}")
        # Float columns: a YAML `80` must look the same in memory as once loaded (80.0).
        entry[name] = _as_float(value) if rule.kind == "number" else value
    return entry


def _check_gpu_extras(entry: Entry, where: str, problems: list[str]) -> None:
    """The nested parts of a GPU entry: peaks, precisions, interconnect, MIG profiles."""
    peaks = entry["peak_tflops"] if isinstance(entry["peak_tflops"], dict) else {}
    for key, value in peaks.items():
        if key not in PEAK_TFLOPS_KEYS:
            problems.append(f"{where}: field 'peak_tflops.{key}': unknown precision")
        elif value is not None and not _kind_ok(value, "number"):
            problems.append(f"{where}: field 'peak_tflops.{key}': expected number")
    entry["peak_tflops"] = {key: _as_float(peaks.get(key)) for key in PEAK_TFLOPS_KEYS}

    natives = entry["native_precisions"]
    if isinstance(natives, list):
        for item in natives:
            if item not in NATIVE_PRECISIONS:
                problems.append(f"{where}: field 'native_precisions': unknown {item!r}")

    interconnect = entry["interconnect"]
    entry["interconnect"] = _check_fields(
        interconnect if isinstance(interconnect, dict) else {},
        INTERCONNECT_FIELDS,
        f"{where} interconnect",
        problems,
    )

    profiles = entry["mig_profiles"] or []
    checked = [
        _check_fields(raw, MIG_FIELDS, f"{where} mig_profiles[{index}]", problems)
        for index, raw in enumerate(profiles if isinstance(profiles, list) else [])
    ]
    _check_unique([p.get("name") for p in checked], f"{where} mig_profiles", problems)
    entry["mig_profiles"] = checked

    price_date = entry["price_date"]
    if isinstance(price_date, str) and not _PRICE_DATE.match(price_date):
        problems.append(f"{where}: field 'price_date': expected YYYY-MM, got {price_date!r}")
    _check_prices(entry, where, problems)


def _check_prices(entry: Entry, where: str, problems: list[str]) -> None:
    """A GPU entry's `prices`: figures of zero or more, an interruption rate below 1, idle power
    at most board power, a source for any figure and the price_date for any price."""
    raw = entry["prices"]
    prices = _check_fields(raw if raw is not None else {}, PRICE_FIELDS, f"{where} prices", problems)
    figures = {name: prices.get(name) for name in GpuPrices.__dataclass_fields__}
    # The figures that are numbers (the others _check_fields has reported).
    numbers: dict[str, float] = {
        name: float(v) for name, v in figures.items() if v is not None and _kind_ok(v, "number")
    }
    for name, value in numbers.items():
        if value < 0:
            problems.append(f"{where}: field 'prices.{name}': must be >= 0, got {value!r}")
    rate = numbers.get("spot_interruptions_per_hour")
    if rate is not None and rate >= 1:
        problems.append(f"{where}: field 'prices.spot_interruptions_per_hour': must be below 1, got {rate!r}")
    power, idle = numbers.get("power_w"), numbers.get("idle_power_w")
    if power is not None and idle is not None and idle > power:
        problems.append(f"{where}: field 'prices.idle_power_w': {idle!r} is more than power_w ({power!r})")
    if any(value is not None for value in figures.values()) and not prices.get("source"):
        problems.append(f"{where}: field 'prices.source': required with any price or power figure")
    if any(figures[name] is not None for name in USD_PRICE_FIELDS) and entry["price_date"] is None:
        problems.append(f"{where}: field 'price_date': required with a price")
    entry["prices"] = prices


def _check_model_extras(entry: Entry, where: str, problems: list[str]) -> None:
    components = entry["quantized_components"]
    if isinstance(components, list):
        for item in components:
            if item not in COMPONENTS:
                problems.append(f"{where}: field 'quantized_components': {item!r} is not one of {COMPONENTS}")
        _check_unique(components, f"{where} quantized_components", problems)


def _check_gpu_memory(entry: Entry, where: str, problems: list[str]) -> None:
    visible, datasheet = entry["memory_visible_gib"], entry["memory_gb"]
    if _kind_ok(visible, "number") and _kind_ok(datasheet, "number") and visible > datasheet * VISIBLE_OVER_DATASHEET:
        problems.append(
            f"{where}: field 'memory_visible_gib': {visible!r} GiB is more than memory_gb ({datasheet!r}) allows"
        )


def _check_engine_extras(entry: Entry, where: str, problems: list[str]) -> None:
    """Ranges the field rules cannot say, and the nested efficiencies and uncertainty."""
    name = entry["name"]
    if isinstance(name, str) and name in RESERVED_ENGINE_NAMES:
        problems.append(f"{where}: field 'name': {name!r} is reserved (planning without an engine)")
    utilization = entry["gpu_memory_utilization"]
    if _kind_ok(utilization, "number") and utilization > 1:
        problems.append(f"{where}: field 'gpu_memory_utilization': must be at most 1, got {utilization!r}")
    for field in ENGINE_NONNEG_FIELDS:
        value = entry[field]
        if _kind_ok(value, "number") and value < 0:
            problems.append(f"{where}: field '{field}': must be >= 0, got {value!r}")
    if entry["large_gpu_gib"] is None:
        for field in ("max_batched_tokens_large_gpu", "max_num_seqs_large_gpu"):
            if entry[field] is not None:
                problems.append(f"{where}: field '{field}': only with large_gpu_gib")

    raw = entry["efficiencies"] if isinstance(entry["efficiencies"], list) else []
    efficiencies = [
        _check_fields(item, EFFICIENCY_FIELDS, f"{where} efficiencies[{index}]", problems)
        for index, item in enumerate(raw)
    ]
    for index, item in enumerate(efficiencies):
        for field in ("memory", "compute", "moe_memory"):
            if _kind_ok(item.get(field), "number") and item[field] > 1:
                problems.append(f"{where} efficiencies[{index}]: field '{field}': must be at most 1")
    _check_unique([e.get("architecture") for e in efficiencies], f"{where} efficiencies", problems)
    entry["efficiencies"] = efficiencies

    raw_uncertainty = entry["uncertainty"] if isinstance(entry["uncertainty"], dict) else {}
    uncertainty = _check_fields(raw_uncertainty, UNCERTAINTY_FIELDS, f"{where} uncertainty", problems)
    for metric in UNCERTAINTY_RANGES:
        pair = uncertainty.get(metric)
        if not (isinstance(pair, list) and len(pair) == 2 and all(_kind_ok(v, "number") and v > 0 for v in pair)):
            problems.append(f"{where} uncertainty: field '{metric}': expected [low, high], both > 0, got {pair!r}")
        elif pair[0] > pair[1]:
            problems.append(f"{where} uncertainty: field '{metric}': low {pair[0]!r} above high {pair[1]!r}")
        else:
            uncertainty[metric] = [float(v) for v in pair]
    rows = uncertainty.get("rows")
    if isinstance(rows, dict):
        if not all(_kind_ok(n, "int") and n >= 0 for n in rows.values()):
            problems.append(f"{where} uncertainty: field 'rows': counts must be whole numbers >= 0")
        uncertainty["rows"] = {str(metric): n for metric, n in rows.items()}
    widening = uncertainty.get("unseen_widening")
    if isinstance(widening, int | float) and widening < 1:
        problems.append(f"{where} uncertainty: field 'unseen_widening': must be at least 1, got {widening!r}")
    entry["uncertainty"] = uncertainty

    fitted_on = entry["fitted_on"]
    if fitted_on is None:
        entry["fitted_on"] = {}
    elif not all(isinstance(k, str) and isinstance(v, str) for k, v in fitted_on.items()):
        problems.append(f"{where}: field 'fitted_on': expected constant name -> training rows, both text")


def _check_unique(keys: list[Any], where: str, problems: list[str]) -> None:
    seen: set[Any] = set()
    for key in keys:
        if key is not None and key in seen:
            problems.append(f"{where}: duplicate {key!r}")
        seen.add(key)


def _read_entries(path: Path, top_key: str, problems: list[str]) -> list[Any]:
    """The list under `top_key` in one YAML file, or [] after noting what is wrong."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{path}: file not found")
        return []
    except yaml.YAMLError as exc:
        problems.append(f"{path}: not valid YAML: {exc}")
        return []
    entries = document.get(top_key) if isinstance(document, dict) else None
    if not isinstance(entries, list):
        problems.append(f"{path}: expected a top-level '{top_key}:' list")
        return []
    return entries


def _entry_label(raw: Any, key: str, index: int) -> str:
    label = raw.get(key) if isinstance(raw, dict) else None
    return repr(label) if isinstance(label, str) else f"entry #{index + 1}"


def load_seed_files(seed_dir: Path | str = SEED_DIR) -> dict[str, list[Entry]]:
    """Parse and validate the four seed files; raise SeedError listing every problem.

    Returns {"models": [...], "gpus": [...], "precisions": [...], "engines": [...]}, each
    entry holding every field of its schema (absent optional fields filled with their
    default). GPU entries keep `peak_tflops` (all five keys) and `interconnect` as nested
    mappings; engine entries keep `efficiencies` (each with `moe_memory`) and a complete
    `uncertainty`.
    """
    seed_dir = Path(seed_dir)
    problems: list[str] = []
    loaded: dict[str, list[Entry]] = {}
    rules = {"models": MODEL_FIELDS, "gpus": GPU_FIELDS, "precisions": PRECISION_FIELDS, "engines": ENGINE_FIELDS}
    for top_key, filename in SEED_FILES.items():
        path = seed_dir / filename
        key_field = KEY_FIELDS[top_key]
        entries = []
        for index, raw in enumerate(_read_entries(path, top_key, problems)):
            where = f"{path.name}: {_entry_label(raw, key_field, index)}"
            entry = _check_fields(raw, rules[top_key], where, problems)
            identifier = entry.get("name" if top_key == "engines" else "slug")
            if isinstance(identifier, str) and not _SLUG.match(identifier):
                field = "name" if top_key == "engines" else "slug"
                problems.append(f"{where}: field '{field}': lowercase letters, digits, '.' and '-' only")
            if entry and top_key == "models":
                _check_model_extras(entry, where, problems)
            if entry and top_key == "gpus":
                _check_gpu_extras(entry, where, problems)
                _check_gpu_memory(entry, where, problems)
            if entry and top_key == "engines":
                _check_engine_extras(entry, where, problems)
            entries.append(entry)
        _check_unique([e.get(key_field) for e in entries], path.name, problems)
        loaded[top_key] = entries
    if problems:
        raise SeedError(problems)
    return loaded


def _model_row(entry: Entry) -> Model:
    # Fields a seed entry leaves out mean what they mean on a write (SCHEMA.md).
    return writes.new_model({**entry, **model_defaults(entry)})


def _gpu_row(entry: Entry) -> Gpu:
    return writes.new_gpu(gpu_columns(entry))


def _engine_row(entry: Entry) -> Engine:
    # engines.yaml says `version` as EngineProfile does; the column is engine_version.
    columns = {key: value for key, value in entry.items() if key != "version"}
    return writes.new_engine({**columns, "engine_version": entry["version"]})


SEEDED_KINDS = ("models", "gpus", "precisions", "engines")


def seed_catalog(
    session: Session, seed_dir: Path | str = SEED_DIR, *, kinds: tuple[str, ...] = SEEDED_KINDS
) -> dict[str, int]:
    """Insert seed entries not stored yet; return how many rows of each kind were added.

    `kinds` limits seeding to some of the files (all four are still validated). Never
    updates a stored row and never commits: the caller owns the transaction. The session is
    flushed, so constraint violations surface here rather than at commit.
    """
    data = load_seed_files(seed_dir)
    counts = {"models": 0, "gpus": 0, "mig_profiles": 0, "precisions": 0, "engines": 0}

    # kind -> (the stored keys, the entry's key field, entry -> row)
    builders: dict[str, tuple[Any, str, Callable[[Entry], Base]]] = {
        "models": (Model.slug, "slug", _model_row),
        "gpus": (Gpu.slug, "slug", _gpu_row),
        "precisions": (Precision.name, "name", lambda entry: Precision(**entry)),
        "engines": (Engine.name, "name", _engine_row),
    }
    for kind in SEEDED_KINDS:
        if kind not in kinds:
            continue
        column, key, build = builders[kind]
        stored = set(session.scalars(select(column)))
        for entry in data[kind]:
            if entry[key] not in stored:
                session.add(build(entry))
                counts[kind] += 1
                if kind == "gpus":
                    counts["mig_profiles"] += len(entry["mig_profiles"])

    session.flush()
    return counts


def catalog_is_empty(session: Session) -> bool:
    """True when no model, GPU or precision is stored (a fresh database)."""
    return not any(
        session.scalar(select(exists().select_from(table)))
        for table in (Model.__table__, Gpu.__table__, Precision.__table__)
    )


def engines_are_empty(session: Session) -> bool:
    """True when no engine is stored: a fresh database, or one just migrated to 0003 whose
    models and GPUs were seeded before engines were catalog data."""
    return not session.scalar(select(exists().select_from(Engine.__table__)))

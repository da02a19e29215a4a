"""What the app serves, declared compactly: every operation's path, method, tag, summary,
parameters, body, success answer and error answers. tests/test_openapi.py holds these to
the app's url map and to real answers.

Planning operations (GET and POST of each `app.api.schemas.PLANNING_ENDPOINTS` entry) are
built from one template; their parameters and bodies come from the endpoint's schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.api.calibrations import CalibrationListQuery
from app.api.catalog_schemas import EngineListQuery, GpuListQuery, ModelListQuery
from app.api.schemas import PLANNING_ENDPOINTS, PlanningEndpoint
from app.api.traces import MAX_TRACE_BYTES, TraceQuery
from app.api.workbook import XLSX
from app.planning.batch import BATCH_MAX_WORK
from app.planning.simulated_day import MAX_SIMULATED_REQUESTS

CSV_RULES = (
    "UTF-8, a header row, `.` decimals, no thousands separators, booleans `true`/`false`, null as an empty cell."
)

# Error answers: component name -> (status, description, extra headers). Every one is
# problem+json with X-Request-ID.
ERRORS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "BadRequest": ("400", "Malformed request: the body is not valid JSON, or not a JSON object.", ()),
    "Unauthorized": (
        "401",
        "No `Authorization: Bearer <token>` header, or a token that is not one of API_TOKENS.",
        ("WWW-Authenticate",),
    ),
    "Forbidden": ("403", "Catalog writes are disabled: the service was started without API_TOKENS.", ()),
    "NotFound": (
        "404",
        "Unknown model or GPU slug, or engine name; `errors` names the field (`model`, `gpu`, `slug` or `name`).",
        (),
    ),
    "CalibrationNotFound": ("404", "No calibration with this id (`errors.calibration_id`).", ()),
    "Conflict": ("409", "The slug (an engine's name) is already in the catalog (`errors.slug`, `errors.name`).", ()),
    "PreconditionFailed": (
        "412",
        "If-Match does not name the current version (the stored row is unchanged): GET it again for its ETag; "
        "also when another writer committed first.",
        (),
    ),
    "ContentTooLarge": ("413", "The body is over the size cap (MAX_BODY_BYTES, 1 MiB by default).", ()),
    "ImportTooLarge": (
        "413",
        "The body is over 17 MiB, or the safetensors header over 16 MiB (`errors.safetensors_header`), or it holds "
        "over a million tensors.",
        (),
    ),
    "CalibrationTooLarge": (
        "413",
        "The body is over 9 MiB (a start-up log may be 4 MiB of UTF-8, escaped in JSON).",
        (),
    ),
    "TraceTooLarge": (
        "413",
        f"The log is over {MAX_TRACE_BYTES // 2**20} MiB (MAX_TRACE_BYTES; two to three million rows).",
        (),
    ),
    "InvalidTrace": (
        "422",
        "A row the profiler cannot read, named by line and column in `detail` and in `errors` as "
        "`log.<line>.<column>` (`log.<line>` for a line that is not a JSON object): a missing or unparsable "
        "timestamp, epoch milliseconds, lengths that are not whole numbers of tokens, more cached tokens than the "
        "prompt, a row short of the header's columns, bytes that are not UTF-8; `errors.log` for a log with fewer "
        "than two requests or no time span, or a header without timestamp, prompt_tokens and output_tokens; a "
        "query parameter out of range or unknown, or `format` other than json or csv.",
        (),
    ),
    "UriTooLong": ("414", "The URL (path and query string) is over 16 KiB; send the inputs as a POST body.", ()),
    "UnsupportedMediaType": ("415", "The body is not sent as application/json.", ()),
    "InvalidField": (
        "422",
        "Invalid values (out of range, unknown precision, unknown field in a POST body, tensor_parallel not valid "
        "for the model, a MIG profile the GPU lacks, a figure the catalog entry lacks, `format` other than json or "
        "csv): `errors` names each field at fault.",
        (),
    ),
    "InvalidFilter": (
        "422",
        "A filter, limit or offset with a value out of range or unknown (`errors` names it), or `format` other "
        "than json or csv.",
        (),
    ),
    "InvalidFormat": ("422", "`format` is neither json nor csv.", ()),
    "InvalidCalibration": (
        "422",
        "Invalid values (out of range, unknown field, a point without a measured figure or at a concurrency not "
        "below max_batched_tokens, tensor_parallel not valid for the model, a MIG profile the GPU lacks), a "
        "start-up log without the expected lines (`errors.startup_log` lists them) or not from this model and GPU, "
        'a point faster than the hardware at 100% efficiency (`errors["points.N.tpot_ms"]`), or measurements that '
        "determine nothing: `errors` names each field at fault. Nothing is stored.",
        (),
    ),
    "PreconditionRequired": ("428", "No If-Match header (or `If-Match: *`): send the ETag of a GET of the row.", ()),
    "HeaderFieldsTooLarge": (
        "431",
        "A header field is over 8 KiB, there are over 100 of them, or over 32 KiB of headers in all.",
        (),
    ),
    "Unavailable": (
        "503",
        "Not ready: database unreachable, schema behind the migrations, or catalog empty (`checks` says which).",
        (),
    ),
    "DatabaseUnavailable": (
        "503",
        "The database is unreachable (planning answers from the in-memory catalog meanwhile); try again after "
        "Retry-After seconds.",
        ("Retry-After",),
    ),
    "Unexpected": (
        "default",
        "Internal Server Error (500), or another HTTP error such as 405 Method Not Allowed, as problem+json.",
        (),
    ),
}
# What every operation may answer from the edge (app/api/edge.py) or on a server error.
EDGE = ("UriTooLong", "HeaderFieldsTooLarge", "Unexpected")
# A write: the bearer token, the body's checks, and the database it needs.
WRITE = ("BadRequest", "Unauthorized", "Forbidden", "UnsupportedMediaType", "InvalidField", "DatabaseUnavailable")
# A write to an existing row: its version in If-Match.
VERSIONED = ("NotFound", "PreconditionFailed", "PreconditionRequired")
# A delete has no body: token, row, version, database.
DELETE = ("Unauthorized", "Forbidden", "NotFound", "PreconditionFailed", "PreconditionRequired", "DatabaseUnavailable")

HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-ID": {
        "description": "This request's id, also in every log line it caused and as `request_id` in problem+json "
        "bodies: the client's own X-Request-ID when it is 1 to 128 letters, digits, `.`, `_` or `-`, else a new "
        "one (32 hex digits).",
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$"},
    },
    "ETag": {
        "description": 'The row\'s version as a strong entity tag (`"3"`); send it back in If-Match to change the row.',
        "schema": {"type": "string"},
    },
    "Location": {"description": "URL of the stored row.", "schema": {"type": "string", "format": "uri-reference"}},
    "WWW-Authenticate": {
        "description": '`Bearer realm="fleet-sizer"`, with `error="invalid_token"` when a token was sent but is '
        "not valid.",
        "schema": {"type": "string"},
    },
    "Retry-After": {"description": "Seconds to wait before trying again.", "schema": {"type": "integer", "minimum": 0}},
}

# Parameters that are no schema's field: component name -> parameter.
PARAMETERS: dict[str, dict[str, Any]] = {
    "X-Request-ID": {
        "name": "X-Request-ID",
        "in": "header",
        "description": "An id for this request, to find it in the service's logs (e.g. the caller's trace id). "
        "Kept when it is 1 to 128 letters, digits, `.`, `_` or `-`; anything else is replaced by a generated id. "
        "Either way it comes back in the X-Request-ID response header.",
        "schema": {"type": "string"},
    },
    "format": {
        "name": "format",
        "in": "query",
        "description": "Representation of a 200 answer: `json` (default) or `csv` (case-insensitive); wins over the "
        "Accept header (`Accept: text/csv` also selects CSV). Errors are always problem+json.",
        "schema": {"type": "string", "enum": ["json", "csv"], "default": "json"},
    },
    "fleet_format": {
        "name": "format",
        "in": "query",
        "description": "Representation of a 200 answer: `json` (default), `csv` (both case-insensitive; wins over "
        "the Accept header, and `Accept: text/csv` also selects CSV), `keda` (exactly so: a KEDA ScaledObject in "
        "YAML) or `xlsx` (a workbook: the plan's inputs as input cells, its costs and energy as live formulas "
        "over them). Errors are always problem+json.",
        "schema": {"type": "string", "enum": ["json", "csv", "keda", "xlsx"], "default": "json"},
    },
    "if_match": {
        "name": "If-Match",
        "in": "header",
        "required": True,
        "description": 'The ETag of the row as last read (`"3"`), strong comparison; a stale one is 412, none 428.',
        "schema": {"type": "string"},
    },
    "slug": {
        "name": "slug",
        "in": "path",
        "required": True,
        "description": "Catalog slug.",
        "schema": {"type": "string"},
    },
    "engine_name": {
        "name": "name",
        "in": "path",
        "required": True,
        "description": "Engine name (e.g. `vllm`).",
        "schema": {"type": "string"},
    },
    "calibration_id": {
        "name": "calibration_id",
        "in": "path",
        "required": True,
        "description": "The calibration's id.",
        "schema": {"type": "integer", "minimum": 1, "maximum": 2147483647},
    },
}


@dataclass(frozen=True)
class Answer:
    """A success answer: its status, description, schema component (JSON) or other content
    types with their schemas, the CSV text (None: no CSV) and headers beyond X-Request-ID."""

    status: str
    description: str
    schema: str | None = None
    csv: str | None = None
    headers: tuple[str, ...] = ()
    content: dict[str, Any] = field(default_factory=dict)
    inline_headers: dict[str, Any] = field(default_factory=dict)
    # Written once under components/responses when operations share it (GET and POST).
    component: str | None = None


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    tag: str
    summary: str
    answers: tuple[Answer, ...]
    errors: tuple[str, ...] = ()
    description: str | None = None
    parameters: tuple[str, ...] = ()
    body: str | None = None
    merge_patch: bool = False
    secured: bool = False
    # Planning GET: the parameters are the endpoint schema's fields.
    planning: PlanningEndpoint | None = None
    # Lists: the parameters are this query schema's fields (component names prefixed).
    query: tuple[type, str] | None = None
    # A body that is not JSON: media type -> its media object.
    body_media: dict[str, Any] = field(default_factory=dict)


# --- planning ------------------------------------------------------------------------------

# label -> (summary, description, CSV text, request body examples)
PLANNING_TEXT: dict[str, tuple[str, str, str]] = {
    "fit": (
        "Does it fit, on how many GPUs, for how many sequences?",
        "Weights and KV cache of a model on a GPU (or MIG slice) at a tensor-parallel size.",
        "One row: the JSON answer's fields in the same order; lists joined with ` | `.",
    ),
    "throughput": (
        "How fast, and what bounds it?",
        "Roofline timing of decode and prefill, tokens/s, cost per token, continuous batching and a concurrency "
        "sweep. CSV with `sweep` has one row per sweep concurrency.",
        "Without `sweep`: one row of the JSON answer's scalar fields, `continuous_batching` flattened to "
        "`continuous_batching_<field>` columns (the `sweep` column stays empty). With `sweep`: one row per "
        "SweepRow, SweepRow's columns.",
    ),
    "cost": (
        "What does a token cost?",
        "Hourly, monthly and per-million-token cost from a price and tokens/s, or from a throughput plan.",
        "One row: CostResponse's fields in the same order.",
    ),
    "roofline": (
        "How long does one matrix multiply take?",
        "Arithmetic intensity, attainable TFLOP/s and time of one GEMM on the roofline, from a GPU's datasheet or "
        "given figures.",
        "One row: RooflineResponse's fields in the same order.",
    ),
    "fleet": (
        "How many GPUs for this traffic?",
        "Replicas and GPUs for a traffic level (or, on POST, a forecast) under TTFT and TPOT objectives, with N+1 "
        "or zone redundancy, MIG packing, monthly cost, autoscaling numbers and the replica's vLLM command; "
        "without `gpu`, every catalog GPU and MIG profile ranked by monthly cost. `format=keda` answers a KEDA "
        "ScaledObject in YAML (422 when no option can be sized). `topology=disaggregated` sizes a prefill and a "
        "decode pool instead, beside the aggregated plan.",
        "With `forecast`: one row per FleetPeriod; else disaggregated: one row per pool (`pool`, its size and "
        "cost); else without `gpu`: one row per FleetOption; else one row of the answer, `replica` and "
        "`autoscaling` flattened to `replica_<field>` and `autoscaling_<field>` columns.",
    ),
    "latency": (
        "How long do requests take under random arrivals?",
        "One replica (the knobs of /v1/throughput) at each request rate: utilization, stability, and the mean and "
        "percentiles of queue wait, TTFT, TPOT, ITL and end-to-end latency, by the analytic queueing model "
        "(`mode=analytic`, microseconds per rate) or the discrete-event simulator (`mode=simulate`, with 95% "
        "confidence half-widths); and the highest rate meeting the given SLOs at `slo_percentile`.",
        "One row per rate (a LatencyRow of `rates`), each percentile block flattened to `<metric>_<stat>` columns "
        "(`ttft_ms_p99`).",
    ),
    "batch": (
        "How long does a queue of requests take, and what does the job cost?",
        "An offline batch on one replica (the knobs of /v1/throughput): `requests` requests queued at once (a "
        "benchmark's infinite request rate, an offline batch-inference job), simulated with the discrete-event "
        "simulator to the last completion: the makespan, output and total tokens/s over it, the mean and "
        "percentiles of TTFT and end-to-end latency from the start (the wait for a seat included), preemptions, "
        "and the job's cost. Deterministic for `seed`; a batch whose simulation would take more than "
        f"{BATCH_MAX_WORK:,} units of work answers 422 naming `requests` and the lengths.",
        "One row: the JSON answer's scalar fields, `ttft_ms` and `e2e_ms` flattened to `<metric>_<stat>` columns "
        "(`e2e_ms_p99`).",
    ),
    "autoscaling": (
        "Does this autoscaling policy hold the SLOs through a day, and at what cost?",
        "A day of the fleet (one replica as /v1/latency's, `forecast` the requests of each hour) under an "
        "autoscaling `policy` (default: the triggers and thresholds `format=keda` emits, a new replica serving "
        "after node provisioning plus the model's load, the KEDA policy's scale-down window, the plan's bounds), "
        "run by the discrete-event simulator with replicas added and drained as the policy says; per hour and in "
        "total the requests, the share whose TTFT, TPOT or E2E missed its SLO, replica-hours, GPU-hours and cost, "
        "the replicas over time, beside the static plan of /v1/fleet (its peak fleet held all day). With "
        "`recommend`, the cheapest min_replicas, warm pool and threshold of a small grid that keeps violations at "
        "or below `max_violation_rate`. POST only (the forecast is a list); a day that would simulate more than "
        f"{MAX_SIMULATED_REQUESTS:,} requests in all answers 422 before it runs.",
        "One row per hour of the autoscaled day (a DayHour of `autoscaled.per_hour`).",
    ),
}
GET_FORM = "The same inputs as the POST body, as query parameters (the rules are in the planning tag's description)."
GET_RULES = (
    "Every planning endpoint takes GET with the same inputs as the POST body, as query parameters (for "
    "spreadsheets and dashboard URLs): blank values count as absent, an unknown parameter or a repeated one (other "
    "than a list such as `sweep`) is a 422 naming it, except names starting with `_` (cache-busters such as "
    "`_=1700000000`), which are ignored, and an inline model or GPU is spelled with dotted names "
    "(`model.layers=32`, `gpu.memory_gb=80`, `gpu.peak_tflops.bf16=989`)."
)
INLINE_MODEL = {
    "name": "my-13b",
    "params_total": 13_000_000_000,
    "layers": 40,
    "hidden_size": 5120,
    "attention_heads": 40,
    "kv_heads": 8,
}
INLINE_GPU = {
    "name": "next-gen card",
    "memory_gb": 192,
    "memory_bandwidth_tb_per_s": 8,
    "peak_tflops": {"bf16": 2250},
    "gpus_per_node": 8,
    "interconnect": {"kind": "nvlink5", "bandwidth_gb_per_s": 900, "latency_us": 5},
}
INLINE = ("Inline model and GPU", {"model": INLINE_MODEL, "gpu": INLINE_GPU})
# label -> example name -> (summary, value): what Swagger UI offers; each is answered 200.
EXAMPLES: dict[str, dict[str, tuple[str, Any]]] = {
    "fit": {
        "catalog": (
            "Catalog slugs",
            {
                "model": "llama-3.1-70b",
                "gpu": "h100-sxm",
                "prompt_tokens": 2048,
                "output_tokens": 512,
                "concurrency": 32,
            },
        ),
        "inline": INLINE,
    },
    "throughput": {
        "catalog": (
            "Catalog slugs",
            {"model": "llama-3.1-8b", "gpu": "h100-sxm", "concurrency": 16, "sweep": [1, 8, 64, 256]},
        ),
        "inline": INLINE,
    },
    "cost": {"catalog": ("Catalog slugs", {"gpu": "h100-sxm", "gpus": 8, "tokens_per_s": 5000, "utilization": 0.6})},
    "roofline": {
        "catalog": ("A catalog GPU", {"m": 16, "k": 8192, "n": 8192, "gpu": "h100-sxm", "weight_precision": "fp8"}),
        "given": (
            "Given peak and bandwidth",
            {"m": 1, "k": 8192, "n": 8192, "peak_tflops": 300, "memory_bandwidth_tb_per_s": 2},
        ),
    },
    "latency": {
        "catalog": (
            "Catalog slugs",
            {
                "model": "llama-3.1-8b",
                "gpu": "h100-sxm",
                "prompt_tokens": 2000,
                "output_tokens": 400,
                "prompt_tokens_cv": 0.5,
                "sweep_rates": [1, 4, 8],
                "ttft_slo_ms": 1500,
                "tpot_slo_ms": 40,
            },
        ),
        "bursty": (
            "Bursty arrivals, simulated",
            {
                "model": "llama-3.1-8b",
                "gpu": "h100-sxm",
                "request_rate": 4,
                "arrival": "gamma",
                "burstiness": 0.25,
                "mode": "simulate",
                "requests": 2000,
            },
        ),
    },
    "batch": {
        "catalog": (
            "Catalog slugs",
            {
                "model": "llama-3.1-8b",
                "gpu": "h100-sxm",
                "prompt_tokens": 1000,
                "output_tokens": 300,
                "output_tokens_cv": 1,
                "requests": 2000,
            },
        ),
        "inline": INLINE,
    },
    "fleet": {
        "catalog": (
            "Catalog slugs",
            {
                "model": "llama-3.1-70b",
                "gpu": "h100-sxm",
                "requests_per_day": 2_000_000,
                "peak_to_average": 2.5,
                "tpot_slo_ms": 50,
                "ttft_slo_ms": 2000,
                "zones": 2,
            },
        ),
        "forecast": (
            "A forecast, one period per month",
            {
                "model": "llama-3.1-8b",
                "gpu": "l4",
                "forecast": [
                    {"period": "2026-01", "requests_per_day": 100_000},
                    {"period": "2026-02", "requests_per_day": 250_000, "peak_to_average": 3},
                ],
            },
        ),
        "ranking": (
            "No gpu: every catalog GPU and MIG profile ranked",
            {"model": "llama-3.1-8b", "requests_per_second": 10, "tpot_slo_ms": 50, "limit": 5},
        ),
    },
    "autoscaling": {
        "catalog": (
            "Four hours, the busiest 3x the quietest, the default policy from one replica up",
            {
                "model": "llama-3.1-8b",
                "gpu": "h100-sxm",
                "prompt_tokens": 1000,
                "output_tokens": 4000,
                "ttft_slo_ms": 1000,
                "tpot_slo_ms": 15,
                "forecast": [{"hour": "06:00", "requests": 900}, {"hour": "07:00", "requests": 2700}],
                "policy": {"min_replicas": 1},
            },
        ),
        "recommend": (
            "A slow scale-up, and the cheapest grid policy missing an SLO for at most 1% of requests",
            {
                "model": "llama-3.1-8b",
                "gpu": "h100-sxm",
                "output_tokens": 4000,
                "tpot_slo_ms": 15,
                "forecast": [{"requests": 900}, {"requests": 2700}],
                "policy": {"min_replicas": 1, "scale_up_delay_s": 900},
                "recommend": True,
                "max_violation_rate": 0.01,
            },
        ),
    },
}
# Examples a request schema shows beside its fields (Swagger UI's Schemas section).
SCHEMA_EXAMPLES: dict[str, Any] = {
    **{f"{label.title()}Request": examples["catalog"][1] for label, examples in EXAMPLES.items()},
    "InlineModel": INLINE_MODEL,
    "InlineGpu": INLINE_GPU,
}
WORKBOOK: dict[str, Any] = {
    "type": "string",
    "contentMediaType": XLSX,
    "description": "With `format=xlsx`: the plan as an Office Open XML workbook (an attachment, fleet.xlsx): an "
    "Inputs sheet of shaded, named input cells (prices, hours, PUE, electricity, hosting, a hosted API's prices), "
    "a sheet per pool, one per forecast period table and, with pricing=optimize, the procurement split; every "
    "cost and energy figure a live formula over the inputs, money rounded to the cent as in the JSON answer.",
}
KEDA: dict[str, Any] = {
    "type": "object",
    "description": "With `format=keda`: a KEDA ScaledObject (keda.sh/v1alpha1) for the request's engine whose "
    "min/max replicas, scale-down window and Prometheus thresholds come from the plan: the triggers of "
    "`autoscaling.triggers` (requests in flight, requests waiting, KV cache usage, each the engine's own metric "
    "filtered on `served_model_name`), a fallback to the peak fleet when a metric is missing, and with "
    "`scale_to_zero` minReplicaCount 0 and KEDA's cooldownPeriod. A YAML document, described here as the object it "
    "holds.",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": {"type": "object"},
        "spec": {"type": "object"},
    },
}


def request_component(endpoint: PlanningEndpoint) -> str:
    return f"{endpoint.label.title()}Request"


def response_component(endpoint: PlanningEndpoint) -> str:
    return f"{endpoint.label.title()}Response"


def format_parameter(endpoint: PlanningEndpoint) -> str:
    return "fleet_format" if endpoint.label == "fleet" else "format"


def _planning(endpoint: PlanningEndpoint) -> tuple[Operation, Operation]:
    summary, description, csv = PLANNING_TEXT[endpoint.label]
    content = {"application/yaml": {"schema": KEDA}, XLSX: {"schema": WORKBOOK}} if endpoint.label == "fleet" else {}
    ok = Answer(
        "200",
        "The estimate.",
        response_component(endpoint),
        f"{csv} {CSV_RULES}",
        content=content,
        component=f"{endpoint.label.title()}Estimate",
    )
    common = {"path": endpoint.path, "tag": "planning", "answers": (ok,)}
    get = Operation(
        method="get",
        operation_id=f"{endpoint.label}Get",
        summary=f"{summary} (query parameters)",
        description=f"{description} {GET_FORM}",
        errors=("NotFound", "InvalidField"),
        parameters=(format_parameter(endpoint),),
        planning=endpoint,
        **common,  # type: ignore[arg-type]
    )
    post = Operation(
        method="post",
        operation_id=f"{endpoint.label}Post",
        summary=f"{summary} (JSON body)",
        description=f"{description} Unknown body fields answer 422.",
        errors=("BadRequest", "NotFound", "ContentTooLarge", "UnsupportedMediaType", "InvalidField"),
        parameters=(format_parameter(endpoint),),
        body=request_component(endpoint),
        **common,  # type: ignore[arg-type]
    )
    return get, post


# --- the catalog ---------------------------------------------------------------------------


def _catalog(
    kind: str, path: str, key: str, noun: str, list_query: type, list_text: tuple[str, str, str, str], csv_one: str
) -> list[Operation]:
    """A catalog table's list, create, read, replace, patch and delete."""
    item = f"{path}/{{{key.removeprefix('engine_')}}}"
    list_summary, list_description, list_answer, list_csv = list_text
    ok: dict[str, Any] = {"schema": kind, "csv": csv_one}
    merge = (
        "A JSON merge patch (RFC 7396; null sets a field to null); "
        + (
            "uncertainty merges key by key, efficiencies is replaced whole; the merged profile"
            if kind == "Engine"
            else "the merged document"
        )
        + " is checked as a whole. Needs the current ETag in If-Match."
    )
    whole = (
        "profile; omitted constants take their defaults"
        if kind == "Engine"
        else f"{noun} document; omitted optional fields become null"
    )
    plain = noun.split()[0]  # "engine" for an engine profile
    a_noun = f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"
    one = f"One {noun}" + (", with its MIG profiles" if kind == "Gpu" else "")
    return [
        Operation(
            "get",
            path,
            f"list{kind}s",
            "catalog",
            list_summary,
            (Answer("200", list_answer, f"{kind}List", f"{list_csv} {CSV_RULES}"),),
            errors=("InvalidFilter",),
            description=list_description,
            parameters=("format",),
            query=(list_query, ""),
        ),
        Operation(
            "post",
            path,
            f"create{kind}",
            "catalog",
            f"Add {a_noun}",
            (Answer("201", f"Stored; the {plain} as GET answers it", headers=("Location", "ETag"), **ok),),
            errors=(*WRITE, "Conflict", "ContentTooLarge"),
            parameters=("format",),
            body=f"{kind}Create",
            secured=True,
        ),
        Operation(
            "get",
            item,
            f"get{kind}",
            "catalog",
            one,
            (Answer("200", one, headers=("ETag",), **ok),),
            errors=("NotFound", "InvalidFormat"),
            parameters=(key, "format"),
        ),
        Operation(
            "put",
            item,
            f"replace{kind}",
            "catalog",
            f"Replace {a_noun}",
            (Answer("200", f"The {plain} as stored now, with its new ETag", headers=("ETag",), **ok),),
            errors=(*WRITE, *VERSIONED, "ContentTooLarge"),
            description=f"The whole {whole}. Needs the current ETag in If-Match.",
            parameters=(key, "if_match", "format"),
            body=f"{kind}Replace",
            secured=True,
        ),
        Operation(
            "patch",
            item,
            f"patch{kind}",
            "catalog",
            f"Change some fields of {a_noun}",
            (
                Answer(
                    "200",
                    f"The {plain} as stored now, with its new ETag (unchanged when nothing changed)",
                    headers=("ETag",),
                    **ok,
                ),
            ),
            errors=(*WRITE, *VERSIONED, "ContentTooLarge"),
            description=merge,
            parameters=(key, "if_match", "format"),
            body=f"{kind}Patch",
            merge_patch=True,
            secured=True,
        ),
        Operation(
            "delete",
            item,
            f"delete{kind}",
            "catalog",
            f"Remove {a_noun}",
            (Answer("204", "Removed."),),
            errors=DELETE,
            description="Needs the current ETag in If-Match."
            + {
                "Engine": " Planning then refuses the name (422 naming `engine`).",
                "Gpu": " The GPU's MIG profiles go with it.",
            }.get(kind, ""),
            parameters=(key, "if_match"),
            secured=True,
        ),
    ]


MODELS = _catalog(
    "Model",
    "/v1/models",
    "slug",
    "model",
    ModelListQuery,
    (
        "Models, filtered, one page at a time",
        "Models by slug. The filters combine; `total` counts every match and `items` holds the page (`limit` of "
        "them from `offset`).",
        "One page of the matching models",
        "One row per model of the page, Model's fields as columns.",
    ),
    f"One row, Model's fields as columns. {CSV_RULES}",
)
GPUS = _catalog(
    "Gpu",
    "/v1/gpus",
    "slug",
    "GPU",
    GpuListQuery,
    (
        "GPUs with their MIG profiles, filtered, one page at a time",
        "GPUs by slug. The filters combine; `total` counts every match and `items` holds the page.",
        "One page of the matching GPUs",
        "One row per GPU of the page: `peak_tflops_<precision>` and `interconnect_<field>` columns, `mig_profiles` "
        "as the profile names joined with ` | `.",
    ),
    f"One row, as in GET /v1/gpus. {CSV_RULES}",
)
ENGINES = _catalog(
    "Engine",
    "/v1/engines",
    "engine_name",
    "engine profile",
    EngineListQuery,
    (
        "Serving-engine profiles, one page at a time",
        "Engine profiles by name (vLLM, SGLang, TensorRT-LLM): what a planning request's `engine` resolves to "
        "(`ideal`, planning without an engine, is not one). `total` counts them all and `items` holds the page.",
        "One page of the engine profiles",
        "One row per engine of the page: scalar fields as columns; `efficiencies_architecture`, "
        "`efficiencies_memory`, `efficiencies_compute` and `efficiencies_moe_memory` as parallel lists joined with "
        "` | `; `uncertainty_<metric>` as `low | high`, `uncertainty_rows` and `fitted_on` as `key=value` joined "
        "with ` | `.",
    ),
    f"One row, as in GET /v1/engines. {CSV_RULES}",
)
IMPORT_RESULT: dict[str, Any] = {"schema": "ImportResult", "csv": "The answer's scalar fields as one row."}
IMPORT = Operation(
    "post",
    "/v1/models/import",
    "importModel",
    "catalog",
    "Add a model from its Hugging Face config.json",
    (
        Answer("200", "dry_run: the derived model, not stored", **IMPORT_RESULT),
        Answer("201", "Stored", headers=("Location", "ETag"), **IMPORT_RESULT),
    ),
    errors=(*WRITE, "Conflict", "ImportTooLarge"),
    description="Derives the architecture and the parameter count from config.json (embeddings tied or not, "
    "attention with its biases, gated MLPs, routed and shared experts, routers, norms); a safetensors header, or "
    "an index with one header per shard, gives the exact count (stored instead) and the bytes per dtype. The same "
    "import runs from the command line: `flask --app app import-model CONFIG.json [--safetensors-header FILE] "
    "[--slug S] [--dry-run]`.",
    parameters=("format",),
    body="ImportRequest",
    secured=True,
)

# --- calibrations ----------------------------------------------------------------------------

CALIBRATIONS = [
    Operation(
        "get",
        "/v1/calibrations",
        "listCalibrations",
        "calibration",
        "Stored calibrations, newest first",
        (
            Answer(
                "200",
                "One page of the matching calibrations",
                "CalibrationList",
                "One row per calibration of the page, CalibrationSummary's fields as columns (`engine_name`, "
                f"`engine_version`, `undetermined_<field>`). {CSV_RULES}",
            ),
        ),
        errors=("InvalidFilter",),
        description="Calibrations filtered by model and GPU slug; `in_use` marks the one planning uses for its "
        "(model, GPU, MIG profile, weight precision). Points, residuals and the log summary are in "
        "GET /v1/calibrations/{calibration_id}.",
        parameters=("format",),
        query=(CalibrationListQuery, "calibration_"),
    ),
    Operation(
        "post",
        "/v1/calibrations",
        "createCalibration",
        "calibration",
        "Fit efficiencies and memory overhead to measurements, and store them",
        (
            Answer(
                "201",
                "Fitted and stored; planning for the same model, GPU, MIG profile and weight precision uses it from "
                "now on (other workers within a second)",
                "Calibration",
                "The answer's scalar fields as one row.",
                headers=("Location",),
            ),
        ),
        errors=(
            "BadRequest",
            "Unauthorized",
            "Forbidden",
            "NotFound",
            "CalibrationTooLarge",
            "UnsupportedMediaType",
            "InvalidCalibration",
            "DatabaseUnavailable",
        ),
        description="Benchmark points (as `vllm bench serve`, GuideLLM or AIPerf report them) fit memory and compute "
        "efficiency by bounded least squares (0.05 to 1.0) against the continuous-batching steady state the planner "
        "reports, on the replica the planner would build for this model, GPU, precision and tensor parallel. A vLLM "
        "(V0 or V1) or SGLang start-up log fits the memory overhead per GPU (activations, non-torch memory, CUDA "
        "graphs and the gap between the datasheet's GB and what the driver reports) that makes /v1/fit reproduce "
        "the log's KV token capacity. The answer gives the fitted values, the residual of every measured figure, "
        "the overall MAPE, and in `undetermined` what the measurements could not determine. Refused (422, naming "
        "the field) when the log holds none of the expected lines, a point is faster than the hardware at 100% "
        "efficiency, or nothing could be determined; nothing is stored then.",
        parameters=("format",),
        body="CalibrationRequest",
        secured=True,
    ),
    Operation(
        "get",
        "/v1/calibrations/{calibration_id}",
        "getCalibration",
        "calibration",
        "One calibration, with its points, residuals and start-up log summary",
        (Answer("200", "One calibration", "Calibration", "One row, CalibrationSummary's fields as columns."),),
        errors=("CalibrationNotFound", "InvalidFormat"),
        parameters=("calibration_id", "format"),
    ),
    Operation(
        "delete",
        "/v1/calibrations/{calibration_id}",
        "deleteCalibration",
        "calibration",
        "Remove a calibration",
        (Answer("204", "Removed."),),
        errors=("Unauthorized", "Forbidden", "CalibrationNotFound", "DatabaseUnavailable"),
        description="Planning falls back to the next newest calibration of the same model, GPU, MIG profile and "
        "weight precision, else to the datasheet. Calibrations are never changed, so no If-Match is needed.",
        parameters=("calibration_id",),
        secured=True,
    ),
]

# --- pages, probes and this document ---------------------------------------------------------

HTML: dict[str, Any] = {"text/html": {"schema": {"type": "string"}}}
OTHERS = [
    Operation(
        "get",
        "/",
        "index",
        "lab",
        "Front page: redirects to the lab",
        (
            Answer(
                "302",
                "Redirect to /lab.",
                inline_headers={
                    "Location": {"description": "Where the lab is (`/lab`).", "schema": {"type": "string"}}
                },
            ),
        ),
    ),
    Operation(
        "get",
        "/lab",
        "lab",
        "lab",
        "The inference lab (HTML page)",
        (Answer("200", "The page.", content=HTML),),
        description="An interactive page over /v1/fit and /v1/throughput: it computes nothing itself, every figure "
        "on it is a field of their answers. Its scripts and styles are served under /static/lab/.",
    ),
    Operation(
        "get",
        "/plan",
        "plan",
        "lab",
        "The fleet planner (HTML page)",
        (Answer("200", "The page.", content=HTML),),
        description="An interactive page over /v1/fleet and /v1/latency: it computes nothing itself, every figure "
        "on it is a field of their answers. Its scripts and styles are served under /static/plan/.",
    ),
    # /livez is /healthz under the name Kubernetes probes use.
    *(
        Operation(
            "get",
            path,
            path.removeprefix("/"),
            "operations",
            summary,
            (Answer("200", "Up.", "Health"),),
            description=text,
        )
        for path, summary, text in (
            ("/healthz", "Liveness: the process is up", "Touches nothing (no database)."),
            ("/livez", "Alias of /healthz", "For Kubernetes liveness probes; touches nothing."),
        )
    ),
    Operation(
        "get",
        "/readyz",
        "readyz",
        "operations",
        "Readiness",
        (Answer("200", "Ready.", "Ready"),),
        errors=("Unavailable",),
        description="Runs `SELECT 1`, compares the schema with the migrations' head and checks that the catalog has "
        "models and GPUs.",
    ),
    Operation(
        "get",
        "/openapi.yaml",
        "openapiDocument",
        "documentation",
        "This OpenAPI 3.1 document",
        (
            Answer(
                "200",
                "The document.",
                content={
                    "application/yaml": {
                        "schema": {
                            "type": "object",
                            "description": "A YAML document, described here as the object it holds.",
                            "required": ["openapi", "info", "paths"],
                        }
                    }
                },
            ),
        ),
        description="openapi.yaml as committed: `make spec` writes it from the code (app/openapi), and the tests "
        "fail when the file differs from what it writes. Read once at start-up.",
    ),
    Operation(
        "get",
        "/docs",
        "docs",
        "documentation",
        "Swagger UI over /openapi.yaml (HTML page)",
        (
            Answer(
                "200",
                "The page.",
                content=HTML,
                inline_headers={
                    "Content-Security-Policy": {
                        "description": "Only this service's own files (`default-src 'self'`).",
                        "schema": {"type": "string"},
                    }
                },
            ),
        ),
        description="Works offline: Swagger UI's scripts, styles and icons are served by this service under /docs/, "
        "and a Content-Security-Policy keeps the page from loading anything from elsewhere.",
    ),
    Operation(
        "get",
        "/metrics",
        "metrics",
        "operations",
        "Prometheus metrics",
        (
            Answer(
                "200",
                "The metrics, in Prometheus' text exposition format (`text/plain; version=1.0.0; charset=utf-8`).",
                content={"text/plain": {"schema": {"type": "string"}}},
            ),
        ),
        description="Every gunicorn worker's metrics in the Prometheus text format, all under the `fleet_sizer_` "
        "prefix: `fleet_sizer_http_requests_total{method,route,status}`, "
        "`fleet_sizer_http_request_duration_seconds{method,route}` (a histogram), "
        "`fleet_sizer_http_requests_in_progress{method,route}`, `fleet_sizer_estimates_total{endpoint,outcome}`, "
        "`fleet_sizer_planning_cache_lookups_total{result}`, `fleet_sizer_catalog_entries{kind}` and "
        "`fleet_sizer_build_info{version,python}`. `route` is the URL rule (`/v1/models/<slug>`), `unmatched` when "
        "no rule matched.",
    ),
]

_LOG_TEXT = {
    "schema": {
        "type": "string",
        "description": "The log: CSV with a header row naming `timestamp`, `prompt_tokens`, `output_tokens` and "
        "optionally `cached_tokens` and `model` (other columns are ignored), or JSON lines (one object a line with "
        "those keys). Timestamps are ISO 8601 (UTC without an offset) or epoch seconds. UTF-8; a byte-order mark is "
        "dropped.",
    },
    "example": "timestamp,prompt_tokens,output_tokens,cached_tokens\n2026-12-01T09:00:00Z,1200,310,800\n"
    "2026-12-01T09:00:02.5Z,900,120,0\n",
}
TRACES = Operation(
    "post",
    "/v1/traces",
    "profileTrace",
    "planning",
    "The workload a request log describes, and the /v1/fleet body that plans it",
    (
        Answer(
            "200",
            "The log's workload",
            "TraceProfile",
            f"One row per hourly period (`period`, `requests`, `covered_s`, `requests_per_day`). {CSV_RULES}",
        ),
    ),
    errors=("TraceTooLarge", "UnsupportedMediaType", "InvalidTrace"),
    description="Reads the log as it streams in (CSV or JSON lines, told apart by `log_format`, the Content-Type "
    "(`text/csv`; `application/x-ndjson`, `application/jsonl`, `application/json-lines`, "
    "`application/x-jsonlines`) or else (`application/octet-stream`, `text/plain`, none) the first character, "
    "`{` for JSON lines) and answers the rate "
    "(`requests_per_day`), the busiest hour's over it (`peak_to_average`), hourly `periods` (each usable as a "
    "/v1/fleet `forecast` period), the gamma shape of inter-arrival times within hours (`burstiness`), the "
    "lengths' mean, cv, p50, p90 and p99, `length_buckets` for a mixed fleet, `prefix_cache_hit_rate` from "
    "`cached_tokens`, and `fleet_request`: a /v1/fleet body for this traffic.",
    parameters=("format",),
    query=(TraceQuery, "trace_"),
    # application/jsonl, application/json-lines and application/x-jsonlines are read as JSON lines too;
    # raw bytes (what client generators send a file as) are told apart by their first character.
    body_media={
        "text/csv": _LOG_TEXT,
        "application/x-ndjson": {"schema": {"type": "string"}},
        "application/octet-stream": {
            "schema": {
                "type": "string",
                "format": "binary",
                "description": "The log as bytes, CSV or JSON lines: `log_format` or its first character tells.",
            }
        },
    },
)

OPERATIONS: tuple[Operation, ...] = (
    *(op for endpoint in PLANNING_ENDPOINTS for op in _planning(endpoint)),
    MODELS[0],
    MODELS[1],
    IMPORT,
    *MODELS[2:],
    *GPUS,
    *ENGINES,
    *CALIBRATIONS,
    TRACES,
    *OTHERS,
)

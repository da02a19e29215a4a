// The planner's state is its query string, spelled with /v1/fleet's own parameter names, so a
// link reproduces the plan. A forecast travels compactly as `forecast=period:requests[:peak];…`
// (each period percent-encoded, so neither separator can occur inside one).

export const ANY = "any";

/** The plan kinds of /v1/fleet's `topology`. */
export const AGGREGATED = "aggregated";
export const DISAGGREGATED = "disaggregated";
/** The page's third plan kind: `mix: true` on /v1/fleet (the URL says `mix=true`, not a topology). */
export const MIX = "mix";

/** A starting point: an 8B model, the whole catalog ranked, one figure of traffic. */
export const DEFAULTS = Object.freeze({
  topology: "aggregated",
  network_gb_per_s: "",
  model: "llama-3.1-8b",
  gpu: ANY,
  gpus: "",
  mig_profile: "",
  tensor_parallel: "",
  weight_precision: "",
  engine: "vllm",
  prompt_tokens: "2000",
  output_tokens: "400",
  prompt_tokens_cv: "",
  output_tokens_cv: "",
  ttft_slo_ms: "1500",
  tpot_slo_ms: "40",
  slo_percentile: "95",
  burstiness: "",
  spare_replicas: "1",
  zones: "1",
  headroom: "",
  price_per_gpu_hour_usd: "",
  requests_per_day: "2000000",
  peak_to_average: "2.5",
  // Paying for it: /v1/fleet's finance fields; a dotted name is a field of a nested object
  // (`prices.spot_usd_per_hour` is `prices: {spot_usd_per_hour}`), as the API names it.
  pricing: "on_demand",
  commitments: "",
  spot: "",
  period_months: "",
  horizon_months: "",
  "prices.reserved_1y_usd_per_hour": "",
  "prices.reserved_3y_usd_per_hour": "",
  "prices.spot_usd_per_hour": "",
  "prices.spot_interruptions_per_hour": "",
  "prices.purchase_usd": "",
  "prices.power_w": "",
  "prices.idle_power_w": "",
  pue: "",
  grid_g_co2_per_kwh: "",
  "ownership.amortization_months": "",
  "ownership.electricity_usd_per_kwh": "",
  "ownership.hosting_usd_per_kw_month": "",
  api_price_per_million_input_tokens_usd: "",
  api_price_per_million_output_tokens_usd: "",
});

/** pricing=optimize's own fields: the API takes them with it only. */
export const OPTIMIZE = "optimize";
export const OPTIMIZE_ONLY = Object.freeze(["commitments", "spot", "period_months", "horizon_months"]);

export const FIELDS = Object.freeze(Object.keys(DEFAULTS));

// Number formats the API accepts (app/sizing/precision.py PRECISIONS; a test keeps them equal).
export const PRECISIONS = Object.freeze(["bf16", "fp16", "fp32", "fp8", "int8", "fp6", "nvfp4", "mxfp4", "fp4", "int4"]);

// Fields sent as JSON numbers when they read as one (else as typed, so the API names them).
const TEXT = ["topology", "model", "gpu", "gpus", "mig_profile", "weight_precision", "engine", "pricing", "commitments", "spot"];
const NUMERIC = new Set(FIELDS.filter((name) => !TEXT.includes(name)));

// Fields a mixed fleet does not take: each kind's GPU, MIG slice and TP are the solver's.
const NOT_WITH_MIX = new Set(["topology", "gpu", "mig_profile", "tensor_parallel", "network_gb_per_s"]);

// --- the forecast -------------------------------------------------------------------------

/** "1,250,000" or "1 250 000" or "1.25e6" -> "1250000"-like text the API reads as a number;
 * anything else is kept as written, so the API's own message names it. */
function cleanNumber(text) {
  const compact = text.trim().replace(/^"|"$/g, "").replace(/[\s\u00a0_]/g, "");
  const plain = /^-?[\d,]+(\.\d+)?$/.test(compact) ? compact.replace(/,/g, "") : compact;
  return plain;
}

function asNumber(text) {
  if (text === "" || text == null) return null;
  const value = Number(text);
  return Number.isFinite(value) && /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text) ? value : null;
}

/** One line of a comma-separated paste, quotes as spreadsheets write them ("1,250,000"). */
function splitCsv(line) {
  const cells = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      cells.push(cell);
      cell = "";
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

function splitLine(line) {
  if (line.includes("\t")) return line.split("\t");
  if (line.includes(";") && !line.includes(",")) return line.split(";");
  return splitCsv(line);
}

/**
 * Rows of a pasted forecast: [{period, requests_per_day, peak_to_average, line}], `line` the
 * 1-based line of the paste it came from. A first line whose second cell is not a number is a
 * header and skipped; blank lines are skipped. Numbers are cleaned of thousands separators;
 * a cell that is still no number is passed on as text for the API to refuse by name.
 */
export function parseForecast(text) {
  const rows = [];
  let header = null;
  const lines = String(text || "").split(/\r\n|\r|\n/);
  lines.forEach((raw, index) => {
    if (!raw.trim()) return;
    const cells = splitLine(raw).map((cell) => cell.trim());
    const requests = cleanNumber(cells[1] ?? "");
    if (rows.length === 0 && header === null && asNumber(requests) === null) {
      header = index + 1;
      return;
    }
    const peak = cleanNumber(cells[2] ?? "").replace(/x$/i, "");
    rows.push({
      period: cells[0] ?? "",
      requests_per_day: asNumber(requests) ?? requests,
      peak_to_average: peak === "" ? null : (asNumber(peak) ?? peak),
      line: index + 1,
    });
  });
  return { rows, header };
}

/** The compact URL form of rows: `2026-01:1250000;2026-02:1500000:2.8`. */
export function encodeForecast(rows) {
  return rows
    .map((row) => {
      const cells = [encodeURIComponent(row.period), encodeURIComponent(String(row.requests_per_day))];
      if (row.peak_to_average != null && row.peak_to_average !== "") cells.push(encodeURIComponent(String(row.peak_to_average)));
      return cells.join(":");
    })
    .join(";");
}

/** Rows from the URL form (the raw, still percent-encoded query value). */
export function decodeForecast(raw) {
  if (!raw) return [];
  return raw
    .split(";")
    .filter(Boolean)
    .map((chunk, index) => {
      const [period = "", requests = "", peak] = chunk.split(":").map((cell) => {
        try {
          return decodeURIComponent(cell.replace(/\+/g, " "));
        } catch {
          return cell;
        }
      });
      return {
        period,
        requests_per_day: asNumber(requests) ?? requests,
        peak_to_average: peak === undefined || peak === "" ? null : (asNumber(peak) ?? peak),
        line: index + 1,
      };
    });
}

/** Rows as the text the forecast box shows: tab-separated, as a spreadsheet pastes. */
export function forecastText(rows) {
  return rows
    .map((row) => [row.period, row.requests_per_day, row.peak_to_average].filter((c) => c !== null && c !== undefined && c !== "").join("\t"))
    .join("\n");
}

// --- length buckets ---------------------------------------------------------------------

/**
 * Rows of pasted length buckets: [{prompt_tokens, output_tokens, share, line}]. Columns:
 * prompt tokens, output tokens, share; tab- or comma-separated; a first line whose first cell
 * is not a number is a header and skipped. A share may be written as a percentage ("95%": 0.95,
 * the same number). Cells that are no number are passed on for the API to refuse by name.
 */
export function parseBuckets(text) {
  const rows = [];
  let header = null;
  const lines = String(text || "").split(/\r\n|\r|\n/);
  lines.forEach((raw, index) => {
    if (!raw.trim()) return;
    const cells = splitLine(raw).map((cell) => cleanNumber(cell));
    if (rows.length === 0 && header === null && asNumber(cells[0] ?? "") === null) {
      header = index + 1;
      return;
    }
    const percent = /%$/.test(cells[2] ?? "");
    const shareText = (cells[2] ?? "").replace(/%$/, "");
    const share = asNumber(shareText);
    rows.push({
      prompt_tokens: asNumber(cells[0] ?? "") ?? cells[0] ?? "",
      output_tokens: asNumber(cells[1] ?? "") ?? cells[1] ?? "",
      share: share === null ? shareText : percent ? Number((share / 100).toPrecision(12)) : share,
      line: index + 1,
    });
  });
  return { rows, header };
}

/** The compact URL form of bucket rows: `100:100:0.95;120000:200:0.05`. */
export function encodeBuckets(rows) {
  return rows
    .map((row) => [row.prompt_tokens, row.output_tokens, row.share].map((cell) => encodeURIComponent(String(cell ?? ""))).join(":"))
    .join(";");
}

/** Bucket rows from the URL form (the raw, still percent-encoded query value). */
export function decodeBuckets(raw) {
  if (!raw) return [];
  return raw
    .split(";")
    .filter(Boolean)
    .map((chunk, index) => {
      const [prompt = "", output = "", share = ""] = chunk.split(":").map((cell) => {
        try {
          return decodeURIComponent(cell.replace(/\+/g, " "));
        } catch {
          return cell;
        }
      });
      return {
        prompt_tokens: asNumber(prompt) ?? prompt,
        output_tokens: asNumber(output) ?? output,
        share: asNumber(share) ?? share,
        line: index + 1,
      };
    });
}

/** Bucket rows as the box shows them: tab-separated, as a spreadsheet pastes. */
export function bucketsText(rows) {
  return rows.map((row) => [row.prompt_tokens, row.output_tokens, row.share].join("\t")).join("\n");
}

// --- state <-> URL -------------------------------------------------------------------------

/** The raw (percent-encoded) value of one query parameter, or null. */
function rawParam(search, name) {
  for (const pair of search.replace(/^\?/, "").split("&")) {
    const [key, ...rest] = pair.split("=");
    if (key === name) return rest.join("=");
  }
  return null;
}

/** State from a query string: every field (defaults where absent), the traffic mode and the
 * forecast rows. */
export function fromQuery(search) {
  const params = new URLSearchParams(search);
  const state = { ...DEFAULTS };
  for (const name of FIELDS) {
    const value = params.get(name);
    if (value !== null) state[name] = value.trim();
  }
  if (!params.has("gpu") && params.toString() !== "") state.gpu = ANY;
  if (params.get("mix") === "true") state.topology = MIX;
  state.buckets = decodeBuckets(rawParam(search, "length_buckets"));
  const forecast = decodeForecast(rawParam(search, "forecast"));
  state.forecast = forecast;
  state.traffic = forecast.length ? "forecast" : "one";
  if (state.traffic === "forecast" && !params.has("requests_per_day")) state.requests_per_day = DEFAULTS.requests_per_day;
  return state;
}

/** The query string of a state: every field that has a value, in a stable order; the forecast
 * last, in its compact form. */
export function toQuery(state) {
  const params = new URLSearchParams();
  for (const name of FIELDS) {
    if (state.traffic === "forecast" && name === "requests_per_day") continue;
    if (name === "topology" && state.topology === MIX) {
      params.set("mix", "true");
      continue;
    }
    const value = state[name];
    if (value !== undefined && value !== null && String(value) !== "") params.set(name, String(value));
  }
  let query = params.toString();
  if (state.traffic === "forecast" && state.forecast?.length) {
    query += `${query ? "&" : ""}forecast=${encodeForecast(state.forecast)}`;
  }
  if (state.topology === MIX && state.buckets?.length) {
    query += `${query ? "&" : ""}length_buckets=${encodeBuckets(state.buckets)}`;
  }
  return query;
}

// --- state -> the API's request ----------------------------------------------------------

function typed(name, value) {
  if (!NUMERIC.has(name)) return value;
  const number = asNumber(value);
  return number === null ? value : number;
}

/** The JSON body of POST /v1/fleet for a state. Blank fields are left to the API's defaults;
 * `gpu=any` is no gpu (the ranking); a burstiness other than 1 asks for gamma arrivals; the
 * network between nodes is sent with the disaggregated kind only (it is what moves the KV). A
 * mixed fleet is `mix: true` with the GPUs ticked (none: the whole catalog) and the pasted
 * buckets (none: the API draws them from the lengths' spread); no GPU, MIG slice, TP or topology. */
export function fleetBody(state) {
  const body = {};
  const mix = state.topology === MIX;
  for (const name of FIELDS) {
    const value = state[name];
    if (value === undefined || value === null || String(value).trim() === "") continue;
    if (mix && NOT_WITH_MIX.has(name)) continue;
    if (name === "gpus") {
      if (mix) body.gpus = String(value).split(",").filter(Boolean);
      continue;
    }
    if (name === "gpu" && value === ANY) continue;
    if (name === "network_gb_per_s" && state.topology !== DISAGGREGATED) continue;
    if (name === "mig_profile" && state.gpu === ANY) continue;
    if (name === "requests_per_day" && state.traffic === "forecast") continue;
    if (OPTIMIZE_ONLY.includes(name) && state.pricing !== OPTIMIZE) continue;
    // A forecast is its own horizon.
    if (name === "horizon_months" && state.traffic === "forecast") continue;
    if (name === "pricing" && value === DEFAULTS.pricing) continue;
    const text = String(value).trim();
    const typedValue = name === "spot" ? (text === "true" ? true : text === "false" ? false : text) : typed(name, text);
    const [outer, inner] = name.split(".");
    if (inner) body[outer] = { ...(body[outer] || {}), [inner]: typedValue };
    else body[name] = typedValue;
  }
  if (mix) {
    body.mix = true;
    if (state.buckets?.length) {
      body.length_buckets = state.buckets.map((row) => ({
        prompt_tokens: row.prompt_tokens,
        output_tokens: row.output_tokens,
        share: row.share,
      }));
    }
  }
  if (body.burstiness !== undefined && body.burstiness !== 1) body.arrival = "gamma";
  if (state.traffic === "forecast") {
    body.forecast = (state.forecast || []).map((row) => {
      const period = { period: row.period, requests_per_day: row.requests_per_day };
      if (row.peak_to_average !== null && row.peak_to_average !== undefined && row.peak_to_average !== "") {
        period.peak_to_average = row.peak_to_average;
      }
      return period;
    });
  }
  return body;
}

// Fields of /v1/fleet that /v1/latency reads too (the replica's knobs, the workload, the SLOs).
const LATENCY_FIELDS = Object.freeze([
  "model",
  "engine",
  "prompt_tokens",
  "output_tokens",
  "prompt_tokens_cv",
  "output_tokens_cv",
  "ttft_slo_ms",
  "tpot_slo_ms",
  "slo_percentile",
  "burstiness",
  "arrival",
]);

/** The query of /v1/latency for the chosen replica of a fleet answer, at `rates`. */
export function latencyParams(body, answer, rates) {
  const params = new URLSearchParams();
  for (const name of LATENCY_FIELDS) if (body[name] !== undefined) params.set(name, String(body[name]));
  const replica = answer.replica;
  params.set("gpu", replica.gpu);
  if (replica.mig_profile) params.set("mig_profile", replica.mig_profile);
  params.set("tensor_parallel", String(replica.tensor_parallel));
  params.set("weight_precision", replica.weight_precision);
  params.set("kv_precision", replica.kv_precision);
  // The fleet sized its replica with this many seats (its KV capacity or the engine's cap).
  if (replica.max_num_seqs != null) params.set("max_num_seqs", String(replica.max_num_seqs));
  params.set("sweep_rates", rates.map((r) => String(Number(r.toPrecision(6)))).join(","));
  return params;
}

/** Request rates for the latency curve: up to `points` evenly spaced to a little past the
 * replica's capacity, plus the planned operating point and the capacity itself. */
export function sweepRates(capacity, operating, points = 28) {
  const top = Math.max(capacity || 0, operating || 0) * 1.15 || 1;
  const values = new Set();
  for (let i = 1; i <= points; i += 1) values.add(Number(((top * i) / points).toPrecision(4)));
  if (operating > 0) values.add(Number(operating.toPrecision(6)));
  if (capacity > 0) values.add(Number(capacity.toPrecision(6)));
  return [...values].sort((a, b) => a - b).slice(0, 64);
}

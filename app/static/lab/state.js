// The lab's state is its query string, spelled with the API's own parameter names, so a
// link reproduces the view and `/v1/throughput?<the same query>` gives the same answer.

// `engine=ideal` is the seeds' arithmetic at the lab's efficiencies (its teaching figures), not
// a bound on any engine; the lab opens, as the API and /plan answer, on the API's default engine.
export const IDEAL = "ideal";
export const API_DEFAULT_ENGINE = "vllm";

// The assumptions an engine answers with its own fitted values: under an engine they are
// sent only once the user has moved them (blank otherwise), under ideal always.
export const ENGINE_OWNED = Object.freeze(["memory_efficiency", "compute_efficiency"]);

/** The seed lab's starting point: Llama 3.1 8B on one H100, 2,048-token prompts, 512-token answers. */
export const DEFAULTS = Object.freeze({
  model: "llama-3.1-8b",
  gpu: "h100-sxm",
  mig_profile: "",
  tensor_parallel: "",
  weight_precision: "",
  kv_precision: "bf16",
  prompt_tokens: "2048",
  output_tokens: "512",
  concurrency: "1",
  engine: API_DEFAULT_ENGINE,
  memory_efficiency: "0.7",
  compute_efficiency: "0.5",
  price_per_gpu_hour_usd: "",
});

export const FIELDS = Object.freeze(Object.keys(DEFAULTS));

// Number formats the API accepts (app/sizing/precision.py PRECISIONS; a test keeps them equal).
export const PRECISIONS = Object.freeze(["bf16", "fp16", "fp32", "fp8", "int8", "fp6", "nvfp4", "mxfp4", "fp4", "int4"]);

/** The defaults under an engine: the seeds' efficiencies under ideal, the engine's own (blank) otherwise. */
export function defaultsFor(engine) {
  const defaults = { ...DEFAULTS, engine: engine || API_DEFAULT_ENGINE };
  if (defaults.engine !== IDEAL) for (const name of ENGINE_OWNED) defaults[name] = "";
  return defaults;
}

/** State from a query string: every field, defaults (for its engine) where absent; a link
 * without `engine` is planned as the API plans it, on its default engine. */
export function fromQuery(search) {
  const params = new URLSearchParams(search);
  const state = defaultsFor(params.get("engine")?.trim());
  for (const name of FIELDS) {
    const value = params.get(name);
    if (value !== null && name !== "engine") state[name] = value.trim();
  }
  return state;
}

/** The query string of a state: every field that has a value, in a stable order. */
export function toQuery(state) {
  const params = new URLSearchParams();
  for (const name of FIELDS) {
    const value = state[name];
    if (value !== undefined && value !== null && String(value) !== "") params.set(name, String(value));
  }
  return params;
}

/** Concurrencies for the chart: `points` log-spaced from 1 to `top`, plus the chosen one. */
export function sweepConcurrencies(top, chosen, points = 24) {
  const values = new Set([1, top]);
  for (let i = 0; i < points; i += 1) {
    values.add(Math.max(1, Math.round(top ** (i / (points - 1)))));
  }
  if (Number.isInteger(chosen) && chosen >= 1 && chosen <= top) values.add(chosen);
  return [...values].sort((a, b) => a - b);
}

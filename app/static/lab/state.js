// The lab's state is its query string, spelled with the API's own parameter names, so a
// link reproduces the view and `/v1/throughput?<the same query>` gives the same answer.

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
  memory_efficiency: "0.7",
  compute_efficiency: "0.5",
  price_per_gpu_hour_usd: "",
});

export const FIELDS = Object.freeze(Object.keys(DEFAULTS));

// Number formats the API accepts (app/sizing/precision.py PRECISIONS; a test keeps them equal).
export const PRECISIONS = Object.freeze(["bf16", "fp16", "fp32", "fp8", "int8", "fp6", "nvfp4", "mxfp4", "fp4", "int4"]);

/** State from a query string: every field, defaults where absent. */
export function fromQuery(search) {
  const params = new URLSearchParams(search);
  const state = { ...DEFAULTS };
  for (const name of FIELDS) {
    const value = params.get(name);
    if (value !== null) state[name] = value.trim();
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

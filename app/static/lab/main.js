// The lab's controller: controls <-> state <-> URL, one /v1/throughput request per change
// (debounced while a slider moves), and rendering of the answer. Every figure shown is a
// field of that answer; nothing here estimates anything. The engine travels with every
// planning request; under one, its fitted efficiencies stand until the user moves a slider.

import { ApiProblem, apiUrl, getJson } from "../common/api.js";
import { MIG_SEPARATOR, ensureOption, gpuGroups, loadCatalog, modelGroups, option } from "../common/catalog.js";
import { copyLink, fillProblem, setText, showQuery } from "../common/page.js";
import { drawChart } from "./chart.js";
import * as fmt from "./format.js";
import { drawMemory } from "./memory.js";
import {
  DEFAULTS,
  ENGINE_OWNED,
  FIELDS,
  API_DEFAULT_ENGINE,
  IDEAL,
  PRECISIONS,
  defaultsFor,
  fromQuery,
  sweepConcurrencies,
  toQuery,
} from "./state.js";

// Lab fields that only /v1/throughput reads.
const THROUGHPUT_ONLY = Object.freeze(["memory_efficiency", "compute_efficiency", "price_per_gpu_hour_usd"]);

const SLIDER_MAX = 512;
const DEBOUNCE_MS = 150;

const $ = (id) => document.getElementById(id);
const lab = $("lab");
const controls = {
  model: $("model"),
  gpu: $("gpu"),
  weight_precision: $("weight_precision"),
  kv_precision: $("kv_precision"),
  tensor_parallel: $("tensor_parallel"),
  prompt_tokens: $("prompt_tokens"),
  output_tokens: $("output_tokens"),
  concurrency: $("concurrency"),
  concurrency_value: $("concurrency_value"),
  engine: $("engine"),
  memory_efficiency: $("memory_efficiency"),
  compute_efficiency: $("compute_efficiency"),
  price_per_gpu_hour_usd: $("price_per_gpu_hour_usd"),
};

const catalog = { models: new Map(), gpus: new Map(), engines: new Map() };
let state = { ...DEFAULTS };
let answer = null; // the last answer rendered, for the engine's own values it holds
let validTensorParallel = [];
let timer = null;
let inFlight = null;
let sequence = 0;

// --- catalog and selects -------------------------------------------------------------------

function fillModels(models) {
  controls.model.replaceChildren(...modelGroups(models, catalog.models));
}

function fillGpus(gpus) {
  controls.gpu.replaceChildren(...gpuGroups(gpus, catalog.gpus));
}

function fillEngines(engines) {
  const select = controls.engine;
  select.replaceChildren(option(IDEAL, "ideal (seed arithmetic)"));
  for (const engine of engines) {
    catalog.engines.set(engine.name, engine);
    // "TensorRT-LLM 1.0 (PyTorch backend)": name and version first, where a narrow select cuts.
    const [, short, aside] = /^(.*?)\s*(\([^)]*\))?\s*$/.exec(engine.display_name || engine.name);
    const label = [short || engine.name, engine.engine_version, aside].filter(Boolean).join(" ");
    select.append(option(engine.name, label));
  }
}

function fillPrecisions() {
  controls.kv_precision.replaceChildren(...PRECISIONS.map((name) => option(name, name)));
}

/** The weight-precision choices say what "native" means for the chosen model. */
function refreshWeightChoices() {
  const model = catalog.models.get(state.model);
  const native = model?.native_precision;
  const select = controls.weight_precision;
  select.replaceChildren(
    option("", native ? `Native (${native})` : "Native"),
    option("auto", "Auto: smallest this GPU runs natively"),
    ...PRECISIONS.map((name) => option(name, name)),
  );
}

function refreshTensorParallel(body) {
  const select = controls.tensor_parallel;
  const autoLabel = body && state.tensor_parallel === "" ? `Fewest that fit (${body.gpus})` : "Fewest that fit";
  const sizes = validTensorParallel.length ? validTensorParallel : [];
  select.replaceChildren(
    option("", autoLabel),
    ...sizes.map((n) => option(String(n), `${n} GPU${n === 1 ? "" : "s"}`)),
  );
  ensureOption(select, state.tensor_parallel, `${state.tensor_parallel} GPUs (not valid here)`);
  select.value = state.tensor_parallel;
}

// --- state <-> controls <-> URL -------------------------------------------------------------

function gpuChoice() {
  return state.mig_profile ? `${state.gpu}${MIG_SEPARATOR}${state.mig_profile}` : state.gpu;
}

function writeControls() {
  ensureOption(controls.model, state.model, `${state.model} (not in the catalog)`);
  controls.model.value = state.model;
  refreshWeightChoices();
  ensureOption(controls.weight_precision, state.weight_precision, state.weight_precision);
  controls.weight_precision.value = state.weight_precision;
  ensureOption(controls.gpu, gpuChoice(), `${state.gpu}${state.mig_profile ? ` · ${state.mig_profile}` : ""} (not in the catalog)`);
  controls.gpu.value = gpuChoice();
  ensureOption(controls.kv_precision, state.kv_precision, state.kv_precision);
  controls.kv_precision.value = state.kv_precision;
  refreshTensorParallel(null);
  controls.prompt_tokens.value = state.prompt_tokens;
  controls.output_tokens.value = state.output_tokens;
  writeConcurrency(state.concurrency);
  ensureOption(controls.engine, state.engine, `${state.engine} (not in the catalog)`);
  controls.engine.value = state.engine;
  controls.price_per_gpu_hour_usd.value = state.price_per_gpu_hour_usd;
  writeOutputs();
}

function writeConcurrency(value) {
  controls.concurrency_value.value = value;
  const n = Number(value);
  controls.concurrency.value = String(Math.min(Math.max(Number.isFinite(n) ? n : 1, 1), SLIDER_MAX));
  controls.concurrency.setAttribute("aria-valuetext", `${value} concurrent requests`);
}

function writeOutputs() {
  writeEngine();
  const gpu = catalog.gpus.get(state.gpu);
  const price = gpu?.hourly_price_usd;
  controls.price_per_gpu_hour_usd.placeholder = price != null ? `${price} (catalog)` : "no catalog price";
  const model = catalog.models.get(state.model);
  $("model-hint").textContent = model ? modelHint(model) : "";
  $("gpu-hint").textContent = gpu ? gpuHint(gpu) : "";
}

// --- the engine and the assumptions it owns ---------------------------------------------------

/** An engine's short name, for sentences: "vLLM (V1 engine)" -> "vLLM". */
function engineName(name = state.engine) {
  const display = catalog.engines.get(name)?.display_name;
  return display ? display.replace(/\s*\([^)]*\)\s*$/, "") || display : name;
}

/** The last answer, if it was for the engine now chosen: the engine's own values are in it. */
function ownAnswer() {
  return answer && answer.engine === state.engine ? answer : null;
}

/** A share as a percentage, with a decimal where a fitted value has one: 0.7 -> 70%, 0.8425 -> 84.3%. */
function share(value) {
  const whole = Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
  return fmt.percent(value, whole ? 0 : 1);
}

function writeEngine() {
  const ideal = state.engine === IDEAL;
  const own = ownAnswer();
  const profile = own ?? catalog.engines.get(state.engine);
  let hint;
  if (ideal) {
    const usable = own ? fmt.percent(own.gpu_memory_utilization) : "90%";
    hint = `The seeds' arithmetic: datasheet bandwidth and FLOP/s at the efficiencies below, ${usable} of memory usable, no engine overheads and no error bars. A teaching figure, not a bound: an engine may plan fewer GPUs.`;
  } else if (profile) {
    const version = profile.engine_version ? ` ${profile.engine_version}` : "";
    const seqs = profile.max_num_seqs != null ? `, up to ${fmt.whole(profile.max_num_seqs)} sequences` : "";
    const byDefault = state.engine === API_DEFAULT_ENGINE ? " (the API's default engine, as /plan and /v1 answer without one)" : "";
    hint = `${engineName()}${version}${byDefault}: ${fmt.percent(profile.gpu_memory_utilization)} of GPU memory, ${fmt.whole(profile.max_batched_tokens)} batched tokens${seqs}; its own overheads, with ranges from its measurements.`;
  } else {
    hint = "An engine the catalog does not list: the API says whether it knows it.";
  }
  setText("engine-hint", hint);
  writeEfficiencies();
}

/** The efficiency sliders: the user's value where one is set, else the engine's fitted one
 * (from the answer), said as such. */
function writeEfficiencies() {
  const ideal = state.engine === IDEAL;
  const own = ownAnswer();
  const name = engineName();
  const set = [];
  for (const field of ENGINE_OWNED) {
    const slider = controls[field];
    const mine = state[field] !== "";
    if (mine) set.push(field);
    const value = mine ? Number(state[field]) : own?.[field];
    const output = $(`${field}_out`);
    output.dataset.source = mine || ideal ? "set" : "engine";
    if (value == null || Number.isNaN(value)) {
      output.textContent = "–";
      slider.setAttribute("aria-valuetext", `${name}'s fitted value, once the answer is in`);
      continue;
    }
    if (String(slider.value) !== String(value)) slider.value = String(value);
    output.textContent = share(value);
    slider.setAttribute("aria-valuetext", mine || ideal ? share(value) : `${share(value)}, ${name}'s fitted value`);
  }
  const source = $("efficiency-source");
  const button = $("efficiency-own");
  const words = { memory_efficiency: "memory efficiency", compute_efficiency: "compute efficiency" };
  if (ideal) source.textContent = "";
  else if (set.length === 0) source.textContent = `Showing ${name}'s fitted values for this GPU; move a slider to use your own.`;
  else if (set.length === ENGINE_OWNED.length) source.textContent = `Both set here, in place of ${name}'s fitted values.`;
  else source.textContent = `${words[set[0]]} set here; the other is ${name}'s fitted value.`.replace(/^./, (c) => c.toUpperCase());
  source.hidden = ideal;
  button.hidden = ideal || set.length === 0;
  button.textContent = `Use ${name}'s fitted values`;
}

function useEngineEfficiencies() {
  const cleared = { ...state };
  for (const field of ENGINE_OWNED) cleared[field] = "";
  state = cleared;
  writeEfficiencies();
  syncUrl();
  controls.memory_efficiency.focus(); // the button hides itself: keep the keyboard near it
  schedule(0);
}

function modelHint(model) {
  const params = fmt.count(model.params_total / 1e9);
  const active = model.params_active && model.params_active !== model.params_total ? `, ${fmt.count(model.params_active / 1e9)}B active` : "";
  const attention = model.attention ? `, ${model.attention.toUpperCase()}` : "";
  return `${params}B parameters${active}${attention}, ${model.layers} layers`;
}

function gpuHint(gpu) {
  const profile = gpu.mig_profiles?.find((p) => p.name === state.mig_profile);
  const memory = profile ? `${profile.memory_gb} GB slice of ${gpu.memory_gb} GB` : `${gpu.memory_gb} GB`;
  const bandwidth = gpu.memory_bandwidth_tb_per_s != null ? `, ${gpu.memory_bandwidth_tb_per_s} TB/s` : "";
  const peak = gpu.peak_tflops?.bf16 != null ? `, ${gpu.peak_tflops.bf16} BF16 TFLOP/s` : "";
  return `${memory}${bandwidth}${peak} (datasheet)`;
}

function readControls(changed) {
  const next = { ...state };
  next.model = controls.model.value;
  const [gpu, mig = ""] = controls.gpu.value.split(MIG_SEPARATOR);
  next.gpu = gpu;
  next.mig_profile = mig;
  next.weight_precision = controls.weight_precision.value;
  next.kv_precision = controls.kv_precision.value;
  next.tensor_parallel = controls.tensor_parallel.value;
  next.prompt_tokens = controls.prompt_tokens.value.trim();
  next.output_tokens = controls.output_tokens.value.trim();
  next.concurrency = changed === controls.concurrency ? controls.concurrency.value : controls.concurrency_value.value.trim();
  next.engine = controls.engine.value;
  // An efficiency is the user's once its slider moves; until then the engine's (or the seeds').
  for (const field of ENGINE_OWNED) if (changed === controls[field]) next[field] = controls[field].value;
  // Another engine brings its own efficiencies: what was set for the last one does not carry over.
  if (next.engine !== state.engine) {
    const defaults = defaultsFor(next.engine);
    for (const field of ENGINE_OWNED) next[field] = defaults[field];
  }
  next.price_per_gpu_hour_usd = controls.price_per_gpu_hour_usd.value.trim();
  // A new model or card has its own valid tensor-parallel sizes: go back to "fewest that fit".
  if (next.model !== state.model || next.gpu !== state.gpu || next.mig_profile !== state.mig_profile) {
    next.tensor_parallel = "";
    validTensorParallel = [];
  }
  return next;
}

function syncUrl() {
  showQuery(toQuery(state));
}

function onInput(event) {
  const changed = event.target;
  const before = state;
  state = readControls(changed);
  if (changed === controls.concurrency) writeConcurrency(state.concurrency);
  if (changed === controls.concurrency_value) writeConcurrency(state.concurrency);
  if (state.model !== before.model) {
    refreshWeightChoices();
    controls.weight_precision.value = state.weight_precision;
  }
  if (state.tensor_parallel !== before.tensor_parallel && state.tensor_parallel === "") refreshTensorParallel(null);
  writeOutputs();
  syncUrl();
  // Selects answer at once; sliders and typed numbers wait until the hand rests.
  const immediate = changed.tagName === "SELECT";
  schedule(immediate ? 0 : DEBOUNCE_MS);
}

// --- requests ---------------------------------------------------------------------------------

function schedule(delay) {
  clearTimeout(timer);
  lab.dataset.status = "pending";
  timer = setTimeout(refresh, delay);
}

function chartTop() {
  const chosen = Number(state.concurrency);
  return Number.isInteger(chosen) && chosen > SLIDER_MAX ? chosen : SLIDER_MAX;
}

async function refresh() {
  inFlight?.abort();
  const controller = new AbortController();
  inFlight = controller;
  const mine = ++sequence;
  const query = toQuery(state);
  const top = chartTop();
  const params = new URLSearchParams(query);
  params.set("sweep", sweepConcurrencies(top, Number(state.concurrency)).join(","));
  lab.dataset.status = "loading";
  lab.setAttribute("aria-busy", "true");
  try {
    const body = await getJson("throughput", params, controller.signal);
    if (mine !== sequence) return;
    render(body, top, params);
    showError(null);
    finish("ready", query);
  } catch (error) {
    if (error.name === "AbortError" || mine !== sequence) return;
    showError(error);
    lab.classList.add("stale");
    finish("error", query);
    if (error instanceof ApiProblem && error.errors?.tensor_parallel) await recoverTensorParallel(mine);
  }
}

function finish(status, query) {
  lab.dataset.status = status;
  lab.dataset.renderedQuery = query.toString();
  lab.setAttribute("aria-busy", "false");
}

/** An invalid GPU count: ask /v1/fit without one, so the select can offer the valid sizes. */
async function recoverTensorParallel(mine) {
  const params = toQuery({ ...state, tensor_parallel: "" });
  // /v1/fit refuses parameters it does not read (a 422 naming them): drop the timing ones.
  for (const name of THROUGHPUT_ONLY) params.delete(name);
  try {
    const fit = await getJson("fit", params);
    if (mine !== sequence) return;
    validTensorParallel = fit.valid_tensor_parallel || [];
    refreshTensorParallel(null);
  } catch {
    // The first error is already on the page.
  }
}

// --- rendering --------------------------------------------------------------------------------

function requests(n) {
  return `${fmt.whole(n)} request${n === 1 ? "" : "s"}`;
}

function showError(error) {
  const box = $("error");
  if (!error) {
    box.hidden = true;
    box.replaceChildren();
    lab.classList.remove("stale");
    return;
  }
  // Field messages that only repeat the detail add nothing.
  const fields = Object.entries(error.errors || {})
    .map(([field, messages]) => [field, [].concat(messages).join("; ")])
    .filter(([, message]) => message !== (error.detail || ""));
  fillProblem(box, error, fields);
  box.hidden = false;
}

/** The `uncertainty` ranges beside the figures they bound; hidden where the answer has none. */
const RANGES = [
  ["time_per_token_ms", "time_per_token_ms_range", () => "ms", (v) => fmt.ms(v)],
  ["ttft_ms", "ttft_range", (high) => fmt.duration(high)[1], (v, unit) => fmt.durationIn(v, unit)],
  ["tokens_per_s", "tokens_per_s_range", () => "tok/s", (v) => fmt.count(v)],
  ["kv_capacity_tokens", "kv_capacity_tokens_range", () => "KV tokens", (v) => fmt.count(v)],
];

function renderRanges(body) {
  for (const [field, id, unitOf, format] of RANGES) {
    const node = $(id);
    const range = body.uncertainty?.[field];
    if (!Array.isArray(range) || range.length !== 2 || range[1] <= 0 || range[0] === range[1]) {
      node.hidden = true;
      node.replaceChildren();
      continue;
    }
    const [low, high] = range;
    const unit = unitOf(high);
    const dash = document.createElement("span");
    dash.setAttribute("aria-hidden", "true");
    dash.textContent = "–";
    const to = document.createElement("span");
    to.className = "visually-hidden";
    to.textContent = " to ";
    node.replaceChildren("range ", format(low, unit), dash, to, `${format(high, unit)} ${unit}`);
    node.dataset.low = String(low);
    node.dataset.high = String(high);
    node.hidden = false;
  }
  const note = $("uncertainty-note");
  const basis = body.uncertainty_basis;
  if (!basis) {
    note.textContent = "";
    return;
  }
  const steady = body.continuous_batching;
  let text = body.uncertainty ? `Ranges: ${basis}` : `No ranges: ${basis}`;
  if (body.uncertainty && steady && body.uncertainty_applies_to === "continuous_batching") {
    // The API says which figures its ranges bound: here the continuously batched ones (what
    // engines run), not the lab's all-at-once ones; say so, or a range beside a figure misleads.
    const [ttft, ttftUnit] = fmt.duration(steady.ttft_ms);
    const queueing = steady.queueing ? `, queueing ${steady.queueing}` : "";
    text += `. They bound the continuously batched prediction (${fmt.ms(steady.time_per_token_ms)} ms per token, ${ttft} ${ttftUnit} to first token, ${fmt.count(steady.tokens_per_s)} tok/s${queueing}), which is how engines serve`;
  }
  note.textContent = `${text}.`;
}

function rangeWords(body, field, format, unit) {
  const range = body.uncertainty?.[field];
  return Array.isArray(range) ? ` (range ${format(range[0])} to ${format(range[1])} ${unit})` : "";
}

function render(body, top, params) {
  answer = body;
  writeEngine();
  validTensorParallel = body.valid_tensor_parallel || [];
  refreshTensorParallel(body);

  setText("time_per_token_ms", fmt.ms(body.time_per_token_ms));
  setText("tokens_per_s_per_user", fmt.count(body.tokens_per_s_per_user));
  setText("tokens_per_s", fmt.count(body.tokens_per_s));
  setText("tokens_per_s_note", `decoding · ${fmt.count(body.effective_tokens_per_s)} with prefill`);
  const [ttft, ttftUnit] = fmt.duration(body.ttft_ms);
  setText("ttft", ttft);
  setText("ttft_unit", ttftUnit);
  setText("prefill_bound_note", `prefill is ${body.prefill_bound}-bound`);
  setText("cost_per_million_output_tokens_usd", fmt.usd(body.cost_per_million_output_tokens_usd));
  setText(
    "price_note",
    body.price_per_gpu_hour_usd != null ? `at ${fmt.usd(body.price_per_gpu_hour_usd)}/GPU-hour × ${body.gpus}` : "no price: enter one",
  );
  setText("decode_bound", body.decode_bound);
  $("decode_bound").dataset.bound = body.decode_bound;
  setText("decode_bound_note", `memory ${fmt.ms(body.decode_memory_ms)} · compute ${fmt.ms(body.decode_compute_ms)} ms`);
  setText(
    "intensity_note",
    `${fmt.count(body.arithmetic_intensity)} FLOP/byte; ridge ${fmt.count(body.ridge_flops_per_byte)}`,
  );
  setText("max_concurrency", fmt.whole(body.max_concurrency));
  setText("max_concurrency_note", `${fmt.whole(body.kv_capacity_tokens)} tokens of KV cache · ${fmt.binary(body.kv_bytes_per_token)}/token`);
  const model = catalog.models.get(state.model);
  const moe = model ? Boolean(model.experts) : body.expert_fraction < 1;
  setText("expert_fraction", moe ? fmt.percent(body.expert_fraction, 1) : "all");
  setText(
    "expert_note",
    moe ? `of ${model?.experts ?? "the"} experts, at ${requests(body.concurrency)}` : "dense model: every weight, every step",
  );

  $("memory-note").textContent = `${body.gpus} × ${fmt.gb(body.memory_gb_per_gpu * 1e9)}${body.mig_profile ? ` (MIG ${body.mig_profile})` : ""} · ${body.weight_precision} weights, ${body.kv_precision} KV cache · ${body.fits ? "fits" : body.fits_weights ? "KV cache does not fit" : "weights do not fit"}`;
  drawMemory($("memory-bar"), $("memory-legend"), body);

  const crossover = body.crossover_concurrency;
  const note = $("crossover-note");
  if (crossover == null) {
    note.textContent = "No crossover: each added request brings more memory traffic than arithmetic, so decode stays memory-bound at any batch size.";
  } else if (crossover > top) {
    note.textContent = `Crossover at ${fmt.whole(crossover)} concurrent requests, beyond the chart.`;
  } else {
    note.textContent = `Decode turns compute-bound at ≈ ${fmt.whole(crossover)} concurrent requests.`;
  }
  note.dataset.crossover = crossover == null ? "" : String(crossover);
  drawChart($("chart"), {
    rows: body.sweep,
    top,
    current: { concurrency: body.concurrency, time_per_token_ms: body.time_per_token_ms },
    crossover,
    maxConcurrency: body.max_concurrency,
  });

  const warnings = $("warnings");
  warnings.replaceChildren(
    ...(body.warnings.length ? body.warnings : ["None for this setup."]).map((text) => {
      const item = document.createElement("li");
      item.textContent = text;
      return item;
    }),
  );
  $("warnings-panel").classList.toggle("quiet", body.warnings.length === 0);

  renderRanges(body);
  renderFigures(body, params);
  setText("leaves-out", `This model leaves out ${body.leaves_out}. Basis: ${body.basis}.`);
  setText(
    "summary",
    `${fmt.ms(body.time_per_token_ms)} milliseconds per token${rangeWords(body, "time_per_token_ms", fmt.ms, "ms")}, ${body.decode_bound}-bound, ${fmt.count(body.tokens_per_s)} tokens per second at ${requests(body.concurrency)}, engine ${body.engine ?? state.engine}.`,
  );
}

function renderFigures(body, params) {
  const json = apiUrl("throughput", params);
  $("api-link").href = json.toString();
  const csv = new URL(json);
  csv.searchParams.set("format", "csv");
  $("api-csv-link").href = csv.toString();
  const list = $("figures");
  list.replaceChildren();
  for (const [key, value] of flatten(body)) {
    const row = document.createElement("div");
    const term = document.createElement("dt");
    term.textContent = key;
    const definition = document.createElement("dd");
    definition.textContent = fmt.raw(value);
    row.append(term, definition);
    list.append(row);
  }
}

/** The answer's fields as [dotted name, value], nested objects spelled out; the chart's rows
 * and the prose are left to the chart and the footer. */
function flatten(object, prefix = "") {
  const entries = [];
  for (const [key, value] of Object.entries(object)) {
    if (key === "sweep" || key === "leaves_out" || key === "warnings") continue;
    if (value && typeof value === "object" && !Array.isArray(value)) entries.push(...flatten(value, `${prefix}${key}.`));
    else entries.push([`${prefix}${key}`, value]);
  }
  return entries;
}

// --- start ------------------------------------------------------------------------------------

function reset() {
  state = { ...DEFAULTS };
  validTensorParallel = [];
  writeControls();
  syncUrl();
  schedule(0);
}

async function start() {
  fillPrecisions();
  try {
    // Without the engine list the lab still runs the seeds' arithmetic (and any engine a link names).
    const { models, gpus, engines } = await loadCatalog();
    fillModels(models);
    fillGpus(gpus);
    fillEngines(engines);
  } catch (error) {
    showError(error);
    lab.dataset.status = "error";
    return;
  }
  state = fromQuery(location.search);
  if (!location.search && !catalog.models.has(state.model) && catalog.models.size) state.model = catalog.models.keys().next().value;
  if (!location.search && !catalog.gpus.has(state.gpu) && catalog.gpus.size) state.gpu = catalog.gpus.keys().next().value;
  writeControls();
  syncUrl();
  for (const name of FIELDS) controls[name]?.addEventListener("input", onInput);
  controls.concurrency_value.addEventListener("input", onInput);
  $("controls").addEventListener("submit", (event) => event.preventDefault());
  $("copy-link").addEventListener("click", () => copyLink($("copy-status")));
  $("reset").addEventListener("click", reset);
  $("efficiency-own").addEventListener("click", useEngineEfficiencies);
  await refresh();
}

start();

// The planner's controller: controls <-> state <-> URL, one POST /v1/fleet per change
// (debounced while typing), then /v1/latency for the chosen replica and its KEDA policy, and
// rendering of the answers: one kind of replica, or (topology=disaggregated) a prefill and a
// decode pool beside the aggregated plan. Every figure shown is a field of those answers;
// nothing here estimates anything.

import { ApiProblem, getJson, postBlob, postBody, postJson, postText } from "../common/api.js";
import { MIG_SEPARATOR, ensureOption, gpuGroups, loadCatalog, modelGroups, option, shortName } from "../common/catalog.js";
import { copyLink, copyText, fillProblem, setText, showQuery } from "../common/page.js";
import { drawFleet, drawLatency } from "./charts.js";
import { initDay } from "./day.js";
import * as fmt from "./format.js";
import { renderOptions } from "./options.js";
import { XLSX, drawPaying, renderPaying } from "./paying.js";
import {
  AGGREGATED,
  ANY,
  DEFAULTS,
  DISAGGREGATED,
  FIELDS,
  MIX,
  OPTIMIZE,
  OPTIMIZE_ONLY,
  PRECISIONS,
  bucketsText,
  fleetBody,
  forecastText,
  fromQuery,
  latencyParams,
  parseBuckets,
  parseForecast,
  sweepRates,
  toQuery,
} from "./state.js";

const DEBOUNCE_MS = 350;

const $ = (id) => document.getElementById(id);
const root = $("plan");
const controls = Object.fromEntries(FIELDS.filter((name) => $(name)).map((name) => [name, $(name)]));
const forecastBox = $("forecast");
const bucketsBox = $("length_buckets");
const gpuChoices = $("gpu-choices");
const trafficRadios = [$("traffic-one"), $("traffic-forecast")];

const catalog = { models: new Map(), gpus: new Map(), engines: new Map() };
let state = { ...DEFAULTS, traffic: "one", forecast: [], buckets: [] };
let last = null; // {answer, body, latency} of the last plan rendered, for redrawing
let redrawDay = () => {};
let timer = null;
let inFlight = null;
let sequence = 0;

// --- catalog and selects -------------------------------------------------------------------

function gpuLabel(slug, mig) {
  const gpu = catalog.gpus.get(slug);
  const name = gpu ? shortName(gpu) : slug;
  return mig ? `${name} · MIG ${mig}` : name;
}

function fillModels(models) {
  controls.model.replaceChildren(...modelGroups(models, catalog.models));
}

function fillGpus(gpus) {
  controls.gpu.replaceChildren(option(ANY, "Any: rank every GPU and MIG slice"), ...gpuGroups(gpus, catalog.gpus));
  // The mix's choice: whole GPUs as checkboxes (a GPU brings its MIG slices); none ticked: all.
  gpuChoices.replaceChildren(
    ...gpus.map((gpu) => {
      const label = document.createElement("label");
      label.className = "choice";
      const box = document.createElement("input");
      box.type = "checkbox";
      box.name = "gpus";
      box.value = gpu.slug;
      box.id = `gpus-${gpu.slug}`;
      label.append(box, ` ${shortName(gpu)}`);
      return label;
    }),
  );
}

function gpuBoxes() {
  return [...gpuChoices.querySelectorAll('input[type="checkbox"]')];
}

function fillEngines(engines) {
  const list = engines.length ? engines : [{ name: "vllm" }];
  controls.engine.replaceChildren(
    ...list.map((engine) => {
      catalog.engines.set(engine.name, engine);
      const version = engine.engine_version ? ` ${engine.engine_version}` : "";
      return option(engine.name, `${(engine.display_name || engine.name).replace(/\s*\([^)]*\)\s*$/, "")}${version}`);
    }),
    option("ideal", "ideal (seed arithmetic, lower bounds)"),
  );
}

function fillPrecisions() {
  controls.weight_precision.replaceChildren(option("", "Native"), ...PRECISIONS.map((name) => option(name, name)));
}

// --- state <-> controls <-> URL -------------------------------------------------------------

function gpuChoice() {
  return state.gpu !== ANY && state.mig_profile ? `${state.gpu}${MIG_SEPARATOR}${state.mig_profile}` : state.gpu;
}

function writeControls() {
  for (const [name, control] of Object.entries(controls)) {
    if (name === "gpu") continue;
    if (control.tagName === "SELECT") ensureOption(control, state[name], `${state[name]} (not listed)`);
    control.value = state[name];
  }
  ensureOption(controls.gpu, gpuChoice(), `${gpuLabel(state.gpu, state.mig_profile)} (not in the catalog)`);
  controls.gpu.value = gpuChoice();
  trafficRadios[0].checked = state.traffic !== "forecast";
  trafficRadios[1].checked = state.traffic === "forecast";
  if (state.forecast.length && !forecastBox.value.trim()) forecastBox.value = forecastText(state.forecast);
  const ticked = new Set(String(state.gpus || "").split(",").filter(Boolean));
  for (const box of gpuBoxes()) box.checked = ticked.has(box.value);
  if (state.buckets?.length && !bucketsBox.value.trim()) bucketsBox.value = bucketsText(state.buckets);
  if (!state.buckets?.length) bucketsBox.value = "";
  writeTraffic();
  writeTopology();
  writePricing();
}

/** pricing=optimize's own fields are shown with it only; a forecast is its own horizon. */
function writePricing() {
  const optimize = state.pricing === OPTIMIZE;
  for (const name of OPTIMIZE_ONLY) controls[name].closest(".field").hidden = !optimize;
  $("horizon-field").hidden = !optimize || state.traffic === "forecast";
}

/** The network between nodes only matters to two pools: shown with the disaggregated kind. A
 * mix takes a list of GPUs and length buckets instead of one GPU, its MIG slice and TP. */
function writeTopology() {
  const mix = state.topology === MIX;
  $("network-field").hidden = state.topology !== DISAGGREGATED;
  $("gpu-field").hidden = mix;
  $("tensor-parallel-field").hidden = mix;
  $("gpus-field").hidden = !mix;
  $("length-buckets-field").hidden = !mix;
  const ticked = gpuBoxes().filter((box) => box.checked);
  setText(
    "gpus-read",
    ticked.length ? `${ticked.length} of ${gpuBoxes().length} GPUs ticked.` : `None ticked: the mix chooses from all ${gpuBoxes().length} GPUs of the catalog.`,
  );
  const read = $("length_buckets-read");
  const rows = state.buckets || [];
  read.textContent = rows.length
    ? `${rows.length} bucket${rows.length === 1 ? "" : "s"} read${state.bucketsHeader ? `; line ${state.bucketsHeader} taken as a header` : ""}.`
    : "No buckets given: the API draws them from the lengths and their spread.";
}

function writeTraffic() {
  const forecast = state.traffic === "forecast";
  $("forecast-field").hidden = !forecast;
  controls.requests_per_day.disabled = forecast;
  $("requests-field").classList.toggle("off", forecast);
  const read = $("forecast-read");
  if (!forecast) read.textContent = "";
  else if (!state.forecast.length) read.textContent = "No rows read yet.";
  else {
    const first = state.forecast[0].period;
    const lastRow = state.forecast[state.forecast.length - 1].period;
    read.textContent = `${state.forecast.length} period${state.forecast.length === 1 ? "" : "s"} read (${first} to ${lastRow})${state.forecastHeader ? `; line ${state.forecastHeader} taken as a header` : ""}.`;
  }
}

function readControls(changed) {
  const next = { ...state };
  for (const [name, control] of Object.entries(controls)) {
    if (name === "gpu" || name === "mig_profile") continue;
    next[name] = control.value.trim();
  }
  const [gpu, mig = ""] = controls.gpu.value.split(MIG_SEPARATOR);
  next.gpu = gpu;
  next.mig_profile = gpu === ANY ? "" : mig;
  next.traffic = trafficRadios[1].checked ? "forecast" : "one";
  next.gpus = gpuBoxes()
    .filter((box) => box.checked)
    .map((box) => box.value)
    .join(",");
  if (changed === bucketsBox) {
    const parsed = parseBuckets(bucketsBox.value);
    next.buckets = parsed.rows;
    next.bucketsHeader = parsed.header;
  }
  if (changed === forecastBox || changed === trafficRadios[1]) {
    const parsed = parseForecast(forecastBox.value);
    next.forecast = parsed.rows;
    next.forecastHeader = parsed.header;
  }
  // Another model or card has its own valid shapes: back to the cheapest.
  if (changed === controls.model || changed === controls.gpu) next.tensor_parallel = "";
  return next;
}

function syncUrl() {
  showQuery(toQuery(state));
}

function onInput(event) {
  state = readControls(event.target);
  if (event.target === controls.model || event.target === controls.gpu) controls.tensor_parallel.value = "";
  writeTraffic();
  writeTopology();
  writePricing();
  syncUrl();
  const immediate = event.target.tagName === "SELECT" || event.target.type === "radio" || event.target.type === "checkbox";
  schedule(immediate ? 0 : DEBOUNCE_MS);
}

/** Plan again on another option (a button of the options table). */
function replanOn({ gpu, mig_profile: mig, tensor_parallel: tp }) {
  state = { ...state, gpu, mig_profile: mig || "", tensor_parallel: tp == null ? "" : String(tp) };
  writeControls();
  syncUrl();
  schedule(0);
  $("chosen-title").focus?.();
}

// --- requests ---------------------------------------------------------------------------------

function schedule(delay) {
  clearTimeout(timer);
  root.dataset.status = "pending";
  timer = setTimeout(refresh, delay);
}

async function refresh() {
  inFlight?.abort();
  const controller = new AbortController();
  inFlight = controller;
  const mine = ++sequence;
  const query = toQuery(state);
  const body = fleetBody(state);
  root.dataset.status = "loading";
  root.setAttribute("aria-busy", "true");
  let answer;
  try {
    answer = await postJson("fleet", body, controller.signal);
  } catch (error) {
    if (error.name === "AbortError" || mine !== sequence) return;
    showError(error);
    root.classList.add("stale");
    finish("error", query);
    return;
  }
  if (mine !== sequence) return;
  showError(null);
  last = { answer, body, latency: null };
  renderPlan(answer, body);
  if (isDisaggregated(answer) || isMix(answer)) {
    finish("ready", query);
    return;
  }
  // The chosen replica's curve and its autoscaling policy, both from the API.
  const [latency] = await Promise.all([
    loadLatency(answer, body, controller.signal),
    loadKeda(answer, body, controller.signal),
  ]);
  if (mine !== sequence) return;
  last.latency = latency;
  finish("ready", query);
}

function finish(status, query) {
  root.dataset.status = status;
  root.dataset.renderedQuery = query;
  root.setAttribute("aria-busy", "false");
}

async function loadLatency(answer, body, signal) {
  const box = $("latency-error");
  box.hidden = true;
  const replica = answer.replica;
  if (!replica || answer.gpus_total == null) {
    root.dataset.latency = "none";
    renderLatency(null);
    setText("latency-note", "No replica to draw: nothing was sized.");
    return null;
  }
  const operating = replica.predicted?.request_rate ?? null;
  const rates = sweepRates(replica.max_request_rate, operating);
  try {
    const latency = await getJson("latency", latencyParams(body, answer, rates), signal);
    renderLatency(latency, answer);
    root.dataset.latency = "ready";
    return latency;
  } catch (error) {
    if (error.name === "AbortError") return null;
    root.dataset.latency = "error";
    renderLatency(null);
    box.replaceChildren(problemText(error));
    box.hidden = false;
    return null;
  }
}

async function loadKeda(answer, body, signal) {
  const pre = $("keda-yaml");
  if (!answer.replica) {
    pre.textContent = "No plan: nothing to scale.";
    return;
  }
  try {
    pre.textContent = await postText("fleet", body, { accept: "application/yaml", params: new URLSearchParams({ format: "keda" }), signal });
  } catch (error) {
    if (error.name !== "AbortError") pre.textContent = `No KEDA policy: ${error.detail || error.message}`;
  }
}

// --- errors beside their fields ------------------------------------------------------------

const ALIASES = {
  mig_profile: "gpu",
  arrival: "burstiness",
  requests_per_second: "requests_per_day",
  mix: "topology",
  ownership: "ownership.amortization_months",
};

function problemText(error) {
  const text = document.createElement("p");
  text.textContent = `${error.status ? `${error.status} ` : ""}${error.title || "Error"}: ${error.detail || error.message}`;
  return text;
}

function clearFieldErrors() {
  for (const node of document.querySelectorAll(".field-error")) {
    node.hidden = true;
    node.replaceChildren();
  }
  for (const node of document.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
}

function fieldError(id, text, control) {
  const node = $(`${id}-error`);
  if (!node) return false;
  const line = document.createElement("span");
  line.className = "field-error-line";
  line.textContent = text;
  if (node.childNodes.length) node.append(document.createElement("br"));
  node.append(line);
  node.hidden = false;
  // A field inside a closed section (the prices and power) opens it, so its message shows.
  const section = node.closest("details");
  if (section) section.open = true;
  (control || $(id))?.setAttribute("aria-invalid", "true");
  return true;
}

/** `forecast.3.requests_per_day` -> beside the forecast box, naming the pasted line. */
function forecastError(path, messages) {
  const [, index, field] = path.split(".");
  const row = state.forecast[Number(index)];
  const where = row ? `Line ${row.line} (period “${row.period}”)` : `Period ${Number(index) + 1}`;
  const text = field ? `${where}, ${field}: ${messages}` : `${where}: ${messages}`;
  return fieldError("forecast", text, forecastBox);
}

/** `length_buckets.1.share` -> beside the buckets box, naming the pasted line. */
function bucketsError(path, messages) {
  const [, index, field] = path.split(".");
  const row = state.buckets?.[Number(index)];
  const where = row ? `Line ${row.line}` : `Bucket ${Number(index) + 1}`;
  const text = field ? `${where}, ${field}: ${messages}` : `${where}: ${messages}`;
  return fieldError("length_buckets", text, bucketsBox);
}

function showFieldErrors(errors) {
  const unplaced = [];
  for (const [path, value] of Object.entries(errors || {})) {
    const messages = [].concat(value).join("; ");
    const head = path.split(".")[0];
    let placed = false;
    if (path.includes(".") && $(path)) {
      placed = fieldError(path, messages); // prices.* and ownership.*: a control of their own
    } else if (head === "forecast") {
      placed = /^forecast\.\d+/.test(path) ? forecastError(path, messages) : fieldError("forecast", messages, forecastBox);
    } else if (head === "length_buckets") {
      placed = /^length_buckets\.\d+/.test(path) ? bucketsError(path, messages) : fieldError("length_buckets", messages, bucketsBox);
    } else if (head === "gpus" || (head === "gpu" && state.topology === MIX)) {
      placed = fieldError("gpus", messages, $("gpus-field"));
    } else {
      let id = ALIASES[head] || head;
      if (state.traffic === "forecast" && id === "requests_per_day") id = "forecast";
      placed = fieldError(id, messages, id === "forecast" ? forecastBox : undefined);
    }
    if (!placed) unplaced.push([path, messages]);
  }
  return unplaced;
}

function showError(error) {
  const box = $("error");
  clearFieldErrors();
  if (!error) {
    box.hidden = true;
    box.replaceChildren();
    root.classList.remove("stale");
    return;
  }
  const unplaced = error instanceof ApiProblem ? showFieldErrors(error.errors) : [];
  fillProblem(box, error, unplaced);
  if (!unplaced.length && Object.keys(error.errors || {}).length) {
    const note = document.createElement("p");
    note.textContent = "The field at fault is marked beside it.";
    box.append(note);
  }
  box.hidden = false;
}

// --- rendering --------------------------------------------------------------------------------

const BOUND_WORDS = {
  ttft_slo: "the TTFT SLO",
  tpot_slo: "the TPOT SLO",
  e2e_slo: "the end-to-end SLO",
  kv_capacity: "the KV cache",
  max_num_seqs: "the engine's sequence cap (max_num_seqs)",
  saturation: "saturation: the replica's most stable rate",
};

function boundWords(code) {
  return BOUND_WORDS[code] || code || "–";
}

function chosenName(answer) {
  const replica = answer.replica;
  if (!replica) return "Nothing sized";
  const where = gpuLabel(replica.gpu, replica.mig_profile);
  const tp = replica.tensor_parallel > 1 ? `, ${replica.tensor_parallel}-way tensor parallel` : "";
  return `${where}${tp}, ${replica.weight_precision} weights, ${replica.kv_precision} KV cache, engine ${answer.engine ?? state.engine}${answer.engine_version ? ` ${answer.engine_version}` : ""}`;
}

function isDisaggregated(answer) {
  return answer.topology === DISAGGREGATED;
}

function isMix(answer) {
  return Boolean(answer.mix);
}

/** Shows the parts of the page one plan kind has and hides the others'. */
function showKind(kind) {
  const disaggregated = kind === DISAGGREGATED;
  const mix = kind === MIX;
  const aggregated = !disaggregated && !mix;
  root.dataset.topology = kind;
  const only = (selector, shown) => {
    for (const node of document.querySelectorAll(selector)) node.hidden = !shown;
  };
  only(".kpi-aggregated", aggregated);
  only(".kpi-disaggregated", disaggregated);
  only(".kpi-mix", mix);
  only("#fleet-chart-desc .key-prefill, #fleet-chart-desc .key-decode", disaggregated);
  only("#fleet-chart-desc .key-average, #fleet-chart-desc .key-peak", !mix);
  only("#periods-table .col-pool", disaggregated);
  for (const id of ["compare", "pools-panel", "pool-options-panel", "prefill-vllm-snippet", "decode-vllm-snippet", "keda-pools"]) {
    $(id).hidden = !disaggregated;
  }
  for (const id of ["mix-panel", "mix-compare", "keda-mix", "mix-keys", "mix-periods-table", "mix-vllm"]) $(id).hidden = !mix;
  $("periods-table").hidden = mix;
  $("latency-pools").hidden = aggregated;
  for (const id of ["why", "options-panel", "vllm-snippet", "keda-snippet", "latency-charts", "latency-legend"]) $(id).hidden = !aggregated;
}

function renderPlan(answer, body) {
  showKind(isMix(answer) ? MIX : isDisaggregated(answer) ? DISAGGREGATED : AGGREGATED);
  renderPaying(answer);
  if (isMix(answer)) {
    renderMix(answer, body);
    return;
  }
  if (isDisaggregated(answer)) {
    renderDisaggregated(answer, body);
    return;
  }
  const replica = answer.replica;
  const ranking = Array.isArray(answer.options);
  setText(
    "chosen-status",
    answer.status === "ok" ? (ranking ? "Cheapest option that meets the SLOs" : "Meets the SLOs") : answer.status || "",
  );
  $("chosen-status").dataset.status = answer.meets_slo ? "ok" : "miss";
  const chosen = $("chosen-option");
  chosen.textContent = chosenName(answer);
  chosen.dataset.gpu = replica?.gpu ?? "";
  chosen.dataset.migProfile = replica?.mig_profile ?? "";
  chosen.dataset.tensorParallel = replica?.tensor_parallel ?? "";
  const forecast = Array.isArray(answer.periods) && answer.periods.length;
  const busiest = busiestPeriod(answer);
  const sizedOn = busiest ? ` (sized on the busiest period, ${busiest.period})` : "";

  setText("gpus_total", fmt.whole(answer.gpus_total));
  $("gpus_total").dataset.value = answer.gpus_total ?? "";
  setText(
    "gpus_note",
    answer.gpus_total == null
      ? ""
      : `${fmt.whole(answer.gpus_peak)} at peak, ${fmt.whole(answer.gpus_average)} at average; ${fmt.whole(answer.replicas_total)} replicas of ${fmt.whole(replica?.gpus)}${sizedOn}`,
  );
  setText("monthly_cost_usd", fmt.usd(answer.monthly_cost_usd));
  $("monthly_cost_usd").dataset.value = answer.monthly_cost_usd ?? "";
  setText(
    "cost_note",
    answer.price_per_gpu_hour_usd != null ? `at ${fmt.usd(answer.price_per_gpu_hour_usd)}/GPU-hour, ${fmt.whole(answer.hours_per_month)} h/month` : "no price: enter one",
  );
  setText("bound_by", replica?.bound_by ?? "–");
  $("bound_by").dataset.value = replica?.bound_by ?? "";
  setText("bound_note", replica ? boundWords(replica.bound_by) : "");
  setText("utilization_peak", fmt.percent(replica?.utilization_peak));
  setText("utilization_note", replica ? `${fmt.percent(replica.utilization_average)} at average traffic` : "");

  const why = $("why");
  if (replica) {
    const pct = `p${Math.round(body.slo_percentile ?? 95)}`;
    const predicted = replica.predicted;
    const times = predicted
      ? `At its planned peak of ${fmt.rate(predicted.request_rate)} requests/s a replica answers in ${fmt.ms(predicted.ttft_ms?.[pct])} ms to the first token and ${fmt.ms(predicted.tpot_ms?.[pct])} ms per token (${pct}).`
      : "";
    why.textContent = `One replica takes at most ${fmt.rate(replica.max_request_rate)} requests/s, bound by ${boundWords(replica.bound_by)}. ${times} ${replica.optimistic ? "Optimistic: the engine's figures are lower bounds here, so the real fleet may need more." : "Not marked optimistic."}`;
    why.dataset.optimistic = String(Boolean(replica.optimistic));
  } else {
    why.textContent = "No configuration could be sized for these inputs.";
    why.dataset.optimistic = "";
  }
  renderUncertainty(answer);
  renderWarnings(answer);

  const periods = forecast
    ? answer.periods
    : answer.gpus_total == null
      ? []
      : [{ ...answer, period: "the given traffic", requests_per_day: body.requests_per_day ?? null }];
  last.periods = periods;
  drawFleet($("fleet-chart"), periods);
  setText(
    "fleet-chart-note",
    forecast
      ? `${answer.periods.length} periods; the same replica sized for each period's traffic.`
      : "One figure of traffic: paste a forecast to see it over time.",
  );
  renderPeriodsTable(periods);
  renderTable(answer);
  renderDeploy(answer);
  setText("leaves-out", `This plan leaves out ${answer.leaves_out ?? "–"}. Basis: ${answer.basis ?? "–"}.`);
  setText(
    "summary",
    replica
      ? `${chosenName(answer)}: ${fmt.whole(answer.gpus_total)} GPUs with spares, ${fmt.usd(answer.monthly_cost_usd)} a month, bound by ${boundWords(replica.bound_by)}.`
      : "No plan.",
  );
}

// --- two pools: topology=disaggregated ------------------------------------------------------

const POOLS = [
  ["prefill", "prefill_pool", "Prefill"],
  ["decode", "decode_pool", "Decode"],
];

function percentileKey(body) {
  return `p${Math.round(body.slo_percentile ?? 95)}`;
}

function poolName(pool) {
  if (!pool) return "not sized";
  const replica = pool.replica;
  return `${gpuLabel(pool.gpu, pool.mig_profile)} × ${replica.tensor_parallel}, ${replica.weight_precision} weights`;
}

function setValue(id, text, value) {
  const node = $(id);
  node.textContent = text;
  node.dataset.value = value ?? "";
  return node;
}

function renderDisaggregated(answer, body) {
  const prefill = answer.prefill_pool;
  const decode = answer.decode_pool;
  const sized = Boolean(prefill && decode);
  const pct = percentileKey(body);
  setText("chosen-status", answer.status === "ok" ? "Both pools meet the SLOs" : answer.status || "");
  $("chosen-status").dataset.status = answer.meets_slo ? "ok" : "miss";
  const chosen = $("chosen-option");
  const engine = `engine ${answer.engine ?? state.engine}${answer.engine_version ? ` ${answer.engine_version}` : ""}`;
  chosen.textContent = sized
    ? `Disaggregated: prefill on ${poolName(prefill)}; decode on ${poolName(decode)}; ${engine}`
    : "Disaggregated: nothing sized";
  chosen.dataset.gpu = "";
  chosen.dataset.migProfile = "";
  chosen.dataset.tensorParallel = "";
  chosen.dataset.prefillGpu = prefill?.gpu ?? "";
  chosen.dataset.decodeGpu = decode?.gpu ?? "";

  const forecast = Array.isArray(answer.periods) && answer.periods.length;
  const busiest = busiestPeriod(answer);
  const sizedOn = busiest ? ` (sized on the busiest period, ${busiest.period})` : "";
  setValue("gpus_total", fmt.whole(answer.gpus_total), answer.gpus_total);
  setText(
    "gpus_note",
    sized
      ? `${fmt.whole(answer.gpus_peak)} at peak, ${fmt.whole(answer.gpus_average)} at average; prefill pool ${fmt.whole(prefill.gpus_total)}, decode pool ${fmt.whole(decode.gpus_total)}${sizedOn}`
      : "",
  );
  setValue("monthly_cost_usd", fmt.usd(answer.monthly_cost_usd), answer.monthly_cost_usd);
  setText(
    "cost_note",
    sized ? `prefill ${fmt.usd(prefill.monthly_cost_usd)}, decode ${fmt.usd(decode.monthly_cost_usd)} a month` : "",
  );
  setValue("pd_ratio", answer.pd_ratio ?? "–", answer.pd_ratio);
  setText(
    "pd_note",
    answer.prefill_to_decode_gpus == null
      ? ""
      : `prefill GPUs to decode GPUs, with spares: ${fmt.count(answer.prefill_to_decode_gpus)} prefill per decode GPU`,
  );
  const slo = body.ttft_slo_ms;
  setValue("ttft_total", answer.ttft_ms == null ? "–" : `${fmt.ms(answer.ttft_ms)} ms`, answer.ttft_ms);
  setText(
    "ttft_note",
    answer.ttft_ms == null ? "" : slo == null ? "no TTFT SLO given" : `against the ${pct} SLO of ${fmt.ms(slo)} ms`,
  );

  // Disaggregated or aggregated: both plans' sizes and costs, and the API's verdict.
  setValue(
    "compare-disaggregated",
    answer.gpus_total == null ? "not sized" : `${fmt.whole(answer.gpus_total)} GPUs, ${fmt.usd(answer.monthly_cost_usd)} a month (P:D ${answer.pd_ratio})`,
    answer.monthly_cost_usd,
  ).dataset.gpusTotal = answer.gpus_total ?? "";
  const agg = answer.aggregated;
  setValue(
    "compare-aggregated",
    agg
      ? `${fmt.whole(agg.gpus_total)} GPUs, ${fmt.usd(agg.monthly_cost_usd)} a month: ${gpuLabel(agg.gpu, agg.mig_profile)} × ${agg.tensor_parallel}, ${agg.weight_precision} weights, ${fmt.rate(agg.max_request_rate)} requests/s per replica, bound by ${boundWords(agg.bound_by)}${agg.meets_slo ? "" : "; misses the SLOs"}`
      : "not sized",
    agg?.monthly_cost_usd,
  ).dataset.gpusTotal = agg?.gpus_total ?? "";
  const cheaper = setValue("cheaper", answer.cheaper ?? "neither", answer.cheaper);
  cheaper.dataset.cheaper = answer.cheaper ?? "";
  setText("comparison", answer.comparison ?? "");

  renderUncertainty(answer);
  renderWarnings(answer);

  for (const [name, field, title] of POOLS) renderPool(name, title, answer[field], body, answer);
  renderTransfer(answer, body);

  const periods = forecast
    ? answer.periods
    : !sized
      ? []
      : [
          {
            period: "the given traffic",
            requests_per_day: body.requests_per_day ?? null,
            peak_to_average: body.peak_to_average ?? null,
            gpus_average: answer.gpus_average,
            gpus_peak: answer.gpus_peak,
            gpus_total: answer.gpus_total,
            prefill_gpus_total: prefill.gpus_total,
            decode_gpus_total: decode.gpus_total,
            monthly_cost_usd: answer.monthly_cost_usd,
          },
        ];
  last.periods = periods;
  drawFleet($("fleet-chart"), periods);
  setText(
    "fleet-chart-note",
    forecast
      ? `${answer.periods.length} periods; both pools' replicas sized for each period's traffic, the dashed lines each pool's GPUs.`
      : "One figure of traffic: paste a forecast to see it over time. Dashed lines: each pool's GPUs.",
  );
  renderPeriodsTable(periods, true);

  // No curve for a pool's replica: say why, and where its figures are.
  root.dataset.latency = "pools";
  $("latency-error").hidden = true;
  renderLatency(null);
  setText("latency-note", "Not drawn for two pools.");
  setText(
    "latency-pools",
    "The two pools may differ in GPU and TP, and /v1/latency?topology=disaggregated answers for one P/D unit of a single shape, so no curve is drawn for a disaggregated plan. Each pool's card gives its replica's capacity at the SLO and its predicted latency at the planned peak.",
  );

  renderPoolOptions(answer);
  renderPoolDeploy(answer);
  setText("leaves-out", `This plan leaves out ${answer.leaves_out ?? "–"}. Basis: ${answer.basis ?? "–"}.`);
  setText(
    "summary",
    sized
      ? `Disaggregated: prefill pool ${fmt.whole(prefill.gpus_total)} GPUs and decode pool ${fmt.whole(decode.gpus_total)} GPUs (P:D ${answer.pd_ratio}), ${fmt.whole(answer.gpus_total)} GPUs and ${fmt.usd(answer.monthly_cost_usd)} a month; aggregated ${agg ? fmt.usd(agg.monthly_cost_usd) : "not sized"}; cheaper: ${answer.cheaper ?? "neither"}.`
      : `Disaggregated: no plan. ${answer.comparison ?? ""}`,
  );
}

function figure(list, field, label, text, value, note) {
  const wrap = document.createElement("div");
  const term = document.createElement("dt");
  term.textContent = label;
  const detail = document.createElement("dd");
  detail.dataset.field = field;
  detail.dataset.value = value ?? "";
  detail.append(text);
  if (note) {
    const small = document.createElement("span");
    small.className = "pool-note";
    small.textContent = note;
    detail.append(small);
  }
  wrap.append(term, detail);
  list.append(wrap);
}

function renderPool(name, title, pool, body, answer) {
  const card = $(`${name}-pool`);
  const list = card.querySelector(".pool-figures");
  list.replaceChildren();
  card.dataset.sized = String(Boolean(pool));
  if (!pool) {
    figure(list, "status", "Sized", "no", "", answer.comparison ?? answer.status ?? "");
    return;
  }
  const replica = pool.replica;
  const pct = percentileKey(body);
  const predicted = replica.predicted;
  figure(list, "gpu", "GPU", gpuLabel(pool.gpu, pool.mig_profile), pool.gpu);
  figure(list, "tensor_parallel", "GPUs per replica (TP)", String(replica.tensor_parallel), replica.tensor_parallel);
  figure(list, "weight_precision", "Weights", replica.weight_precision, replica.weight_precision, `${replica.kv_precision} KV cache`);
  figure(
    list,
    "gpus_total",
    "GPUs, with spares",
    fmt.whole(pool.gpus_total),
    pool.gpus_total,
    `${fmt.whole(pool.gpus_peak)} at peak, ${fmt.whole(pool.gpus_average)} at average; ${fmt.whole(pool.replicas_total)} replicas`,
  );
  figure(
    list,
    "monthly_cost_usd",
    "Monthly cost",
    fmt.usd(pool.monthly_cost_usd),
    pool.monthly_cost_usd,
    pool.price_per_gpu_hour_usd == null ? "no price: enter one" : `at ${fmt.usd(pool.price_per_gpu_hour_usd)}/GPU-hour`,
  );
  figure(list, "bound_by", "Bound by", replica.bound_by ?? "–", replica.bound_by, boundWords(replica.bound_by));
  figure(list, "max_request_rate", "Max request rate", `${fmt.rate(replica.max_request_rate)}/s`, replica.max_request_rate, "per replica, at the SLO");
  figure(
    list,
    "utilization_peak",
    "Utilization at peak",
    fmt.percent(replica.utilization_peak),
    replica.utilization_peak,
    `${fmt.percent(replica.utilization_average)} at average traffic`,
  );
  if (predicted) {
    const [metric, label] = name === "prefill" ? ["ttft_ms", "TTFT"] : ["tpot_ms", "TPOT"];
    figure(
      list,
      `predicted_${metric}`,
      `${label} at the planned peak`,
      `${fmt.ms(predicted[metric]?.[pct])} ms`,
      predicted[metric]?.[pct],
      `${pct}, at ${fmt.rate(predicted.request_rate)} requests/s per replica`,
    );
  }
  figure(
    list,
    "optimistic",
    "Optimistic",
    replica.optimistic ? "yes" : "no",
    String(Boolean(replica.optimistic)),
    replica.optimistic ? "the engine's figures are lower bounds here" : "",
  );
  card.querySelector("h3").textContent = `${title} pool: ${gpuLabel(pool.gpu, pool.mig_profile)}`;
}

function renderTransfer(answer, body) {
  const box = $("kv-transfer");
  const kv = answer.kv_transfer;
  box.dataset.link = kv?.link ?? "";
  box.dataset.ms = kv?.ms ?? "";
  box.dataset.gbPerSPerGpu = kv?.gb_per_s_per_gpu ?? "";
  box.dataset.ttftMs = answer.ttft_ms ?? "";
  if (!kv) {
    setText("kv-transfer-line", "No transfer: nothing was sized.");
    setText("ttft-line", "");
    setText("pools-note", answer.comparison ?? "");
    return;
  }
  const link = kv.link === "nvlink" ? "NVLink, inside one node" : kv.link === "network" ? "the network between nodes" : kv.link;
  setText(
    "kv-transfer-line",
    `Each request's prompt KV cache (${fmt.bytes(kv.bytes_per_request)}) moves over ${link} at ${fmt.count(kv.gb_per_s_per_gpu)} GB/s per GPU, split over ${fmt.whole(kv.parallel_gpus)} GPU${kv.parallel_gpus === 1 ? "" : "s"}: ${fmt.ms(kv.ms)} ms.`,
  );
  const pct = percentileKey(body);
  const prefillTtft = answer.prefill_pool?.replica?.ttft_ms;
  const slo = body.ttft_slo_ms == null ? "no TTFT SLO given" : `against the ${pct} SLO of ${fmt.ms(body.ttft_slo_ms)} ms`;
  setText(
    "ttft-line",
    `TTFT ${fmt.ms(answer.ttft_ms)} ms = prefill ${fmt.ms(prefillTtft)} ms + KV transfer ${fmt.ms(kv.ms)} ms, ${slo}; the prefill pool is held to ${fmt.ms(answer.prefill_ttft_budget_ms)} ms, the SLO less the slowest transfer.`,
  );
  setText("pools-note", `P:D ${answer.pd_ratio ?? "–"} (prefill GPUs : decode GPUs)`);
}

function renderPoolOptions(answer) {
  const ranking = state.gpu === ANY;
  const notes = [];
  for (const [name, field, title] of POOLS) {
    const pool = answer[field];
    const rows = pool?.options ?? [];
    const table = $(`${name}-options-table`);
    renderOptions(table, rows, {
      onPick: ranking ? replanOn : null,
      ranking,
      labelOf: gpuLabel,
      pickLabel: (gpu) => `Plan both pools on ${gpu}`,
    });
    table.dataset.rows = String(rows.length);
    const total = pool?.options_total;
    setText(`${name}-options-count`, pool ? `${rows.length}${total && total > rows.length ? ` of ${total}` : ""} options` : "not sized");
    if (!pool) notes.push(`${title} pool: not sized.`);
  }
  setText(
    "pool-options-note",
    ranking
      ? `Each pool ranks the whole catalog on its own. Sort by a column's button; "Plan on it" plans both pools on that GPU.${notes.length ? ` ${notes.join(" ")}` : ""}`
      : `Every valid tensor-parallel size and weight format of this GPU, for each pool.${notes.length ? ` ${notes.join(" ")}` : ""}`,
  );
}

function renderPoolDeploy(answer) {
  for (const [name, field] of POOLS) {
    const pool = answer[field];
    setText(`${name}-vllm-command`, pool?.vllm_command || "No command: nothing was sized.");
    const scaling = pool?.autoscaling;
    setText(
      `${name}-autoscaling`,
      scaling
        ? `Autoscaling: ${fmt.whole(scaling.min_replicas)} to ${fmt.whole(scaling.max_replicas)} replicas; a target of ${fmt.whole(scaling.target_in_flight_per_replica)} requests in flight and ${fmt.whole(scaling.target_queue_per_replica)} waiting per replica (${scaling.queue_metric}), at most ${fmt.whole(scaling.max_in_flight_per_replica)} in flight; about ${fmt.count(scaling.cold_start_s)} s to start a replica.`
        : "",
    );
  }
  setText(
    "keda-pools",
    "No KEDA ScaledObject for two pools: the API offers format=keda for one kind of replica (each pool scales on signals of its own). Each pool's autoscaling figures are under its command.",
  );
}

function renderWarnings(answer) {
  $("warnings").replaceChildren(
    ...(answer.warnings || []).map((text) => {
      const item = document.createElement("li");
      item.textContent = text;
      return item;
    }),
  );
}

// The fleet's range, as /v1/fleet gives it: the plan sized again at either end of the engine's
// spread of measured over predicted throughput.
const RANGES = [
  ["gpus_total", "GPUs with spares", fmt.whole],
  ["monthly_cost_usd", "monthly cost", fmt.usd],
  ["max_request_rate", "a replica's capacity (requests/s)", fmt.rate],
];

function renderUncertainty(answer) {
  const node = $("uncertainty");
  const range = answer.uncertainty;
  const parts = [];
  if (range && typeof range === "object") {
    for (const [field, label, format] of RANGES) {
      const value = range[field];
      if (Array.isArray(value) && value.length === 2) parts.push(`${label} ${format(value[0])} to ${format(value[1])}`);
    }
  }
  const basis = `Basis: ${answer.basis ?? "–"}${answer.calibration ? " (a stored calibration)" : ""}.`;
  node.textContent = parts.length
    ? `Range: ${parts.join("; ")}${answer.uncertainty_basis ? ` (${answer.uncertainty_basis})` : ""}. ${basis}`
    : `${basis} ${answer.uncertainty_basis ? `No range: ${answer.uncertainty_basis}.` : "The answer gives no range."}`;
  node.dataset.basis = answer.basis ?? "";
  node.dataset.gpusLow = range?.gpus_total?.[0] ?? "";
  node.dataset.gpusHigh = range?.gpus_total?.[1] ?? "";
}

function renderPeriodsTable(periods, pools = false) {
  const body = $("periods-table").tBodies[0];
  body.replaceChildren(
    ...periods.map((p) => {
      const row = document.createElement("tr");
      const cells = [
        p.period,
        p.requests_per_day == null ? "–" : fmt.whole(p.requests_per_day),
        p.peak_to_average == null ? "–" : String(p.peak_to_average),
        fmt.whole(p.gpus_average),
        fmt.whole(p.gpus_peak),
        fmt.whole(p.gpus_total),
        ...(pools ? [fmt.whole(p.prefill_gpus_total), fmt.whole(p.decode_gpus_total)] : []),
        fmt.usd(p.monthly_cost_usd),
      ];
      cells.forEach((text, i) => {
        const cell = document.createElement(i ? "td" : "th");
        if (!i) cell.scope = "row";
        cell.textContent = text;
        row.append(cell);
      });
      return row;
    }),
  );
}

function renderTable(answer) {
  const rows = answer.options ?? answer.alternatives ?? null;
  const panel = $("options-panel");
  const ranking = Array.isArray(answer.options);
  setText("options-title", ranking ? "Every GPU and MIG slice, ranked" : "Shapes on this GPU, ranked");
  if (!rows) {
    setText(
      "options-note",
      state.tensor_parallel ? `The GPUs per replica are set to ${state.tensor_parallel}: choose "Cheapest valid" to compare shapes.` : "No ranking in this answer.",
    );
    renderOptions($("options-table"), [], { onPick: replanOn, ranking });
    panel.dataset.rows = "0";
    return;
  }
  const total = answer.options_total;
  setText(
    "options-note",
    ranking
      ? `${rows.length}${total && total > rows.length ? ` of ${total}` : ""} options. Sort by a column's button; "Plan on it" re-plans on that GPU.`
      : `Every valid tensor-parallel size${rows.some((r) => r.weight_precision !== rows[0].weight_precision) ? " and weight format" : ""} on this GPU.`,
  );
  renderOptions($("options-table"), rows, { onPick: replanOn, ranking, labelOf: gpuLabel });
  panel.dataset.rows = String(rows.length);
}

function renderDeploy(answer) {
  setText("vllm-command", answer.vllm_command || "No command: nothing was sized.");
  $("keda-yaml").textContent = answer.replica ? "Loading…" : "No plan: nothing to scale.";
}

function renderLatency(latency, answer) {
  const charts = [
    ["ttft-chart", "ttft_ms", "TTFT", "ttft_slo_ms"],
    ["tpot-chart", "tpot_ms", "TPOT", "tpot_slo_ms"],
  ];
  if (!latency) {
    for (const [id] of charts) drawLatency($(id), { rows: [] });
    return;
  }
  const percentile = `p${Math.round(latency.slo_percentile)}`;
  const operating = answer.replica.predicted?.request_rate ?? null;
  setText("key-pslo", `${percentile} (the SLO percentile)`);
  for (const [id, metric, label, sloField] of charts) {
    drawLatency($(id), {
      rows: latency.rates,
      metric,
      percentile,
      slo: latency[sloField],
      operating,
      capacity: latency.max_request_rate,
      label,
    });
    const atPoint = latency.rates.find((r) => operating != null && Math.abs(r.request_rate - operating) < 1e-6 * operating);
    setText(
      `${id}-desc`,
      `${label} p50 and ${percentile} against request rate; SLO ${latency[sloField] == null ? "none" : `${fmt.ms(latency[sloField])} ms`}; at the planned ${fmt.rate(operating)} requests/s: ${fmt.ms(atPoint?.[metric]?.[percentile])} ms.`,
    );
  }
  const busiest = busiestPeriod(answer);
  const sized = busiest ? ` (the busiest period's peak, ${busiest.period})` : "";
  setText(
    "latency-note",
    `${gpuLabel(latency.gpu, latency.mig_profile)} × ${latency.tensor_parallel}: at most ${fmt.rate(latency.max_request_rate)} requests/s at the SLO (bound by ${boundWords(latency.max_request_rate_bound_by)}); planned at ${fmt.rate(operating)}/s${sized}.`,
  );
}

// With a forecast and no single figure, the API sizes the replica on the period with the highest
// peak (its first, on a tie): the same one here.
function busiestPeriod(answer) {
  if (!Array.isArray(answer.periods) || !answer.periods.length) return null;
  return answer.periods.reduce((best, p) => (p.peak_tokens_per_s > best.peak_tokens_per_s ? p : best));
}

function redraw() {
  if (!last) return;
  if (last.periods) drawFleet($("fleet-chart"), last.periods);
  drawPaying(last.answer);
  if (last.latency) renderLatency(last.latency, last.answer);
  redrawDay();
}

// --- a mixed fleet: mix=true -----------------------------------------------------------------

/** A pool's kind as the catalog names it: "A100 SXM4 80GB × 1, bf16 weights". */
function kindName(kind) {
  if (!kind) return "none";
  return `${gpuLabel(kind.gpu, kind.mig_profile)} × ${kind.tensor_parallel}, ${kind.weight_precision} weights`;
}

function cells(row, values) {
  values.forEach(([label, text, attributes = {}], i) => {
    const cell = document.createElement(i ? "td" : "th");
    if (!i) cell.scope = "row";
    cell.dataset.label = label;
    for (const [key, value] of Object.entries(attributes)) cell.dataset[key] = value ?? "";
    cell.textContent = text;
    row.append(cell);
  });
  return row;
}

function renderMix(answer, body) {
  const mix = answer.mix;
  const pools = mix.pools || [];
  const buckets = mix.buckets || [];
  const single = mix.single_kind;
  const unserved = new Set(mix.unserved_buckets || []);
  const dropped = new Set(mix.dropped_buckets || []);
  const bucketName = (b) => {
    const bucket = buckets[b];
    return bucket ? `${b + 1}: ${fmt.whole(bucket.prompt_tokens)} / ${fmt.whole(bucket.output_tokens)} tokens` : String(b + 1);
  };

  setText("chosen-status", answer.status === "ok" ? "Every bucket within the SLOs" : answer.status || "");
  $("chosen-status").dataset.status = answer.meets_slo ? "ok" : "miss";
  const chosen = $("chosen-option");
  chosen.textContent = pools.length ? `Mixed fleet: ${pools.map(kindName).join("; ")}` : "Mixed fleet: nothing sized";
  chosen.dataset.gpu = "";
  chosen.dataset.migProfile = "";
  chosen.dataset.tensorParallel = "";

  const forecast = Array.isArray(mix.periods) && mix.periods.length;
  setValue("gpus_total", fmt.whole(answer.gpus_total), answer.gpus_total);
  setText(
    "gpus_note",
    pools.length ? `${pools.map((p) => `${fmt.whole(p.gpus_total)} ${gpuLabel(p.gpu, p.mig_profile)}`).join(", ")}${forecast ? " (sized on the busiest period)" : ""}` : "",
  );
  setValue("monthly_cost_usd", fmt.usd(answer.monthly_cost_usd), answer.monthly_cost_usd);
  setText("cost_note", pools.length ? pools.map((p) => `${fmt.usd(p.monthly_cost_usd)} ${gpuLabel(p.gpu, p.mig_profile)}`).join(", ") : "");
  const savings = setValue("savings_usd", mix.savings_usd == null ? "–" : fmt.usd(mix.savings_usd), mix.savings_usd);
  savings.dataset.positive = String((mix.savings_usd ?? 0) > 0);
  setText("savings_note", single ? `a month, against ${kindName(single)} alone at ${fmt.usd(single.monthly_cost_usd)}` : "no single kind serves every bucket");
  setValue("mix_pools_count", fmt.whole(pools.length), pools.length);
  setText("mix_pools_note", `of ${fmt.whole(mix.kinds_kept)} kinds kept, ${fmt.whole(mix.kinds_considered)} considered`);

  setValue(
    "compare-mix",
    `${fmt.whole(mix.gpus_total)} GPUs, ${fmt.usd(mix.monthly_cost_usd)} a month in ${fmt.whole(pools.length)} pool${pools.length === 1 ? "" : "s"}`,
    mix.monthly_cost_usd,
  ).dataset.gpusTotal = mix.gpus_total ?? "";
  const singleNode = setValue(
    "compare-single",
    single ? `${kindName(single)}: ${fmt.whole(single.replicas_total)} replicas, ${fmt.whole(single.gpus_total)} GPUs, ${fmt.usd(single.monthly_cost_usd)} a month` : "none: no single kind serves every bucket",
    single?.monthly_cost_usd,
  );
  singleNode.dataset.gpusTotal = single?.gpus_total ?? "";
  singleNode.dataset.gpu = single?.gpu ?? "";
  singleNode.dataset.tensorParallel = single?.tensor_parallel ?? "";
  const saved = setValue("compare-savings", mix.savings_usd == null ? "–" : fmt.usd(mix.savings_usd), mix.savings_usd);
  saved.dataset.positive = String((mix.savings_usd ?? 0) > 0);

  renderUncertainty(answer);
  renderWarnings(answer);

  // Each pool, and which buckets it serves at what share and capacity.
  $("mix-pools-table").tBodies[0].replaceChildren(
    ...pools.map((pool, k) => {
      const row = document.createElement("tr");
      row.dataset.pool = String(k);
      row.dataset.gpu = pool.gpu;
      row.dataset.migProfile = pool.mig_profile ?? "";
      row.dataset.tensorParallel = pool.tensor_parallel;
      row.dataset.weightPrecision = pool.weight_precision;
      row.dataset.replicasPeak = pool.replicas_peak;
      row.dataset.replicasTotal = pool.replicas_total;
      row.dataset.gpusTotal = pool.gpus_total;
      row.dataset.monthlyCostUsd = pool.monthly_cost_usd;
      row.dataset.utilizationPeak = pool.utilization_peak;
      return cells(row, [
        ["Pool", String(k + 1)],
        ["Kind", `${kindName(pool)}${pool.cards != null ? ` (${fmt.whole(pool.cards)} cards)` : ""}`],
        ["Replicas at peak", fmt.whole(pool.replicas_peak)],
        ["Replicas with spares", fmt.whole(pool.replicas_total)],
        ["GPUs", fmt.whole(pool.gpus_total)],
        ["Monthly cost", `${fmt.usd(pool.monthly_cost_usd)} (${fmt.usd(pool.price_per_replica_hour_usd)}/replica-hour)`],
        ["Utilization at peak", fmt.percent(pool.utilization_peak)],
      ]);
    }),
  );
  $("mix-buckets-table").tBodies[0].replaceChildren(
    ...buckets.map((bucket, b) => {
      const row = document.createElement("tr");
      row.dataset.bucket = String(b);
      row.dataset.share = bucket.share;
      row.dataset.peakRequestsPerS = bucket.peak_requests_per_s;
      const flag = dropped.has(b) ? "dropped" : unserved.has(b) ? "unserved" : "served";
      row.dataset.flag = flag;
      if (flag !== "served") row.classList.add(flag);
      const words = {
        dropped: "dropped: no kind can take it at all",
        unserved: "unserved within the SLOs: a best effort",
        served: "within the SLOs",
      };
      cells(row, [
        ["Bucket", String(b + 1)],
        ["Prompt tokens", fmt.whole(bucket.prompt_tokens)],
        ["Output tokens", fmt.whole(bucket.output_tokens)],
        ["Share of requests", fmt.percent(bucket.share, 1)],
        ["Requests/s at peak", fmt.rate(bucket.peak_requests_per_s)],
        ["Served", words[flag]],
      ]);
      if (flag !== "served") row.lastChild.classList.add("flag");
      return row;
    }),
  );
  $("mix-assign-table").tBodies[0].replaceChildren(
    ...pools.flatMap((pool, k) =>
      (pool.buckets || []).map((served) => {
        const row = document.createElement("tr");
        row.dataset.pool = String(k);
        row.dataset.bucket = String(served.bucket);
        row.dataset.share = served.share;
        row.dataset.requestsPerS = served.requests_per_s;
        row.dataset.capacityPerReplica = served.capacity_per_replica;
        row.dataset.meetsSlo = String(Boolean(served.meets_slo));
        return cells(row, [
          ["Pool", `${k + 1}: ${gpuLabel(pool.gpu, pool.mig_profile)} × ${pool.tensor_parallel}`],
          ["Bucket", bucketName(served.bucket)],
          ["Share of the bucket", fmt.percent(served.share, 1)],
          ["Requests/s at peak", fmt.rate(served.requests_per_s)],
          ["Capacity per replica (requests/s)", fmt.rate(served.capacity_per_replica)],
          ["Within the SLOs", served.meets_slo ? "yes" : "no", { meetsSlo: String(Boolean(served.meets_slo)) }],
        ]);
      }),
    ),
  );
  const flags = [
    ...[...dropped].map((b) => `Bucket ${bucketName(b)} is dropped: no kind in the list can take it at all, so the plan leaves it out.`),
    ...[...unserved].filter((b) => !dropped.has(b)).map((b) => `Bucket ${bucketName(b)} is unserved: no kind serves it within the SLOs; the plan is a best effort.`),
  ];
  $("mix-flags").replaceChildren(
    ...flags.map((text) => {
      const item = document.createElement("li");
      item.textContent = text;
      return item;
    }),
  );
  $("mix-flags").dataset.unserved = (mix.unserved_buckets || []).join(",");
  $("mix-flags").dataset.dropped = (mix.dropped_buckets || []).join(",");
  const solver = $("mix-solver");
  solver.dataset.solverStatus = mix.solver_status ?? "";
  solver.textContent = `Solver (HiGHS integer program): ${mix.solver_status ?? "–"}; ${fmt.whole(mix.kinds_considered)} replica kinds considered, ${fmt.whole(mix.kinds_kept)} kept after pruning; built in ${fmt.ms(mix.build_ms)} ms, solved in ${fmt.ms(mix.solve_ms)} ms.`;
  setText("mix-note", `${fmt.whole(buckets.length)} bucket${buckets.length === 1 ? "" : "s"} over ${fmt.whole(pools.length)} pool${pools.length === 1 ? "" : "s"}`);

  // GPUs by period: the total and each pool's, as the API resized them.
  const periods = forecast
    ? mix.periods
    : pools.length
      ? [
          {
            period: "the given traffic",
            requests_per_day: body.requests_per_day ?? null,
            peak_to_average: body.peak_to_average ?? null,
            gpus_total: mix.gpus_total,
            monthly_cost_usd: mix.monthly_cost_usd,
            pool_gpus_total: pools.map((p) => p.gpus_total),
          },
        ]
      : [];
  last.periods = periods;
  drawFleet($("fleet-chart"), periods);
  $("mix-keys").replaceChildren(
    ...pools.map((pool, k) => {
      const key = document.createElement("span");
      key.className = `key key-pool-${k % 6}`;
      key.textContent = `pool ${k + 1}, ${gpuLabel(pool.gpu, pool.mig_profile)} × ${pool.tensor_parallel}`;
      return key;
    }),
  );
  setText(
    "fleet-chart-note",
    forecast
      ? `${mix.periods.length} periods; each pool resized for each period's traffic, the dashed lines each pool's GPUs.`
      : "One figure of traffic: paste a forecast to see it over time. Dashed lines: each pool's GPUs.",
  );
  const table = $("mix-periods-table");
  const head = ["Period", "Requests/day", "Peak ÷ avg", "GPUs total", ...pools.map((p, k) => `Pool ${k + 1} GPUs`), "Monthly cost"];
  table.tHead.rows[0].replaceChildren(
    ...head.map((text) => {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = text;
      return th;
    }),
  );
  table.tBodies[0].replaceChildren(
    ...periods.map((p) => {
      const row = document.createElement("tr");
      const values = [
        p.period,
        p.requests_per_day == null ? "–" : fmt.whole(p.requests_per_day),
        p.peak_to_average == null ? "–" : String(p.peak_to_average),
        fmt.whole(p.gpus_total),
        ...pools.map((_, k) => fmt.whole(p.pool_gpus_total?.[k])),
        fmt.usd(p.monthly_cost_usd),
      ];
      return cells(row, values.map((text, i) => [head[i], text]));
    }),
  );

  // No curve: the pools differ in shape and each bucket's capacity is the pool's figure.
  root.dataset.latency = "mix";
  $("latency-error").hidden = true;
  renderLatency(null);
  setText("latency-note", "Not drawn for a mixed fleet.");
  setText(
    "latency-pools",
    "A mixed fleet's pools differ in GPU, TP and the lengths they serve, so no single replica's curve is drawn. The bucket table gives each pool's capacity per replica for each bucket at the SLOs.",
  );
  setText(
    "keda-mix",
    "No KEDA ScaledObject for a mixed fleet: the API answers format=keda with a 422 (a plan of several pools scales each on signals of its own).",
  );
  renderMixCommands(pools);
  setText("leaves-out", `This plan leaves out ${answer.leaves_out ?? "–"}. Basis: ${answer.basis ?? "–"}.`);
  setText(
    "summary",
    pools.length
      ? `Mixed fleet: ${pools.map((p) => `${fmt.whole(p.gpus_total)} GPUs of ${kindName(p)}`).join("; ")}; ${fmt.whole(answer.gpus_total)} GPUs and ${fmt.usd(answer.monthly_cost_usd)} a month; ${single ? `${fmt.usd(mix.savings_usd)} less than ${kindName(single)} alone` : "no single kind beside it"}.`
      : "Mixed fleet: no plan.",
  );
}

/** Each pool's `vllm serve` line, as the answer gives it, with a copy button. */
function renderMixCommands(pools) {
  const box = $("mix-vllm");
  box.replaceChildren(
    ...pools.map((pool, k) => {
      const snippet = document.createElement("div");
      snippet.className = "snippet pool-snippet";
      const head = document.createElement("div");
      head.className = "snippet-head";
      const title = document.createElement("h3");
      title.id = `mix-vllm-title-${k}`;
      title.textContent = `Pool ${k + 1}, ${kindName(pool)}: vllm serve`;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "secondary small copy";
      button.dataset.copy = `mix-vllm-command-${k}`;
      button.setAttribute("aria-describedby", title.id);
      button.textContent = "Copy command";
      button.addEventListener("click", copySnippet);
      head.append(title, button);
      const code = document.createElement("pre");
      code.id = `mix-vllm-command-${k}`;
      code.className = "code";
      code.tabIndex = 0;
      code.setAttribute("aria-labelledby", title.id);
      code.textContent = pool.vllm_command ?? "No command: no replica of this kind was sized.";
      snippet.append(head, code);
      return snippet;
    }),
  );
  box.hidden = !pools.length;
}

// --- actions ----------------------------------------------------------------------------------

// --- a request log -----------------------------------------------------------------------------

/** The workload fields a /v1/traces answer's fleet_request sets, as the form holds them. */
function traceFields(plan) {
  const round = (value, digits) => String(Number(value.toFixed(digits)));
  return {
    requests_per_day: String(Math.round(plan.requests_per_day)),
    peak_to_average: round(plan.peak_to_average, 2),
    prompt_tokens: String(plan.prompt_tokens),
    output_tokens: String(plan.output_tokens),
    prompt_tokens_cv: round(plan.prompt_tokens_cv, 2),
    output_tokens_cv: round(plan.output_tokens_cv, 2),
    burstiness: plan.burstiness === undefined ? "" : round(plan.burstiness, 2),
  };
}

function traceSummary(trace) {
  const lengths = (name, spread) => `${name} mean ${fmt.whole(spread.mean)} (p99 ${fmt.whole(spread.p99)})`;
  const parts = [
    `${fmt.whole(trace.requests)} requests from ${trace.first_arrival} to ${trace.last_arrival}`,
    `${fmt.whole(trace.requests_per_day)} a day, peak ×${trace.peak_to_average.toFixed(2)}`,
    trace.burstiness === null ? "burstiness not fitted (Poisson)" : `burstiness ${trace.burstiness.toFixed(2)}`,
    lengths("prompts", trace.prompt_tokens),
    lengths("outputs", trace.output_tokens),
  ];
  if (trace.prefix_cache_hit_rate !== null) parts.push(`prefix-cache hits ${(100 * trace.prefix_cache_hit_rate).toFixed(1)}%`);
  return `Read ${parts.join("; ")}.`;
}

async function readLog() {
  const file = $("request_log_file").files[0];
  const body = file || $("request_log").value;
  const errorSlot = $("request_log-error");
  errorSlot.hidden = true;
  errorSlot.replaceChildren();
  $("request_log").removeAttribute("aria-invalid");
  setText("request_log-read", "Reading the log…");
  try {
    const trace = await postBody("traces", body, { params: new URLSearchParams({ model: state.model }) });
    const plan = trace.fleet_request;
    state = { ...state, ...traceFields(plan), traffic: "one" };
    writeControls();
    syncUrl();
    setText("request_log-read", [traceSummary(trace), ...trace.warnings].join(" "));
    schedule(0);
  } catch (error) {
    setText("request_log-read", "");
    fieldError("request_log", problemText(error).textContent);
  }
}

async function copySnippet(event) {
  const button = event.currentTarget;
  const text = $(button.dataset.copy).textContent;
  const status = $("copy-snippet-status");
  if (await copyText(text, status)) status.textContent = `${button.textContent.replace(/^Copy /, "")} copied.`;
}

async function downloadCsv() {
  const status = $("download-status");
  status.textContent = "Asking the API…";
  try {
    const csv = await postText("fleet", fleetBody(state), { accept: "text/csv" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([csv], { type: "text/csv" }));
    link.download = `fleet-${state.model || "plan"}.csv`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    status.textContent = "CSV downloaded.";
  } catch (error) {
    status.textContent = `No CSV: ${error.detail || error.message}`;
  }
}

async function downloadWorkbook() {
  const status = $("download-xlsx-status");
  status.textContent = "Asking the API…";
  try {
    const blob = await postBlob("fleet", fleetBody(state), { accept: XLSX, params: new URLSearchParams({ format: "xlsx" }) });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `fleet-${state.model || "plan"}.xlsx`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    status.textContent = "Workbook downloaded.";
  } catch (error) {
    status.textContent = `No workbook: ${error.detail || error.message}`;
  }
}

function reset() {
  state = { ...DEFAULTS, traffic: "one", forecast: [], buckets: [] };
  forecastBox.value = "";
  bucketsBox.value = "";
  writeControls();
  syncUrl();
  schedule(0);
}

// --- start ------------------------------------------------------------------------------------

async function start() {
  fillPrecisions();
  try {
    const { models, gpus, engines } = await loadCatalog();
    fillModels(models);
    fillGpus(gpus);
    fillEngines(engines);
  } catch (error) {
    showError(error);
    root.dataset.status = "error";
    return;
  }
  state = fromQuery(location.search);
  if (!location.search && !catalog.models.has(state.model) && catalog.models.size) state.model = catalog.models.keys().next().value;
  writeControls();
  syncUrl();
  for (const control of Object.values(controls)) control.addEventListener("input", onInput);
  for (const radio of trafficRadios) radio.addEventListener("change", onInput);
  forecastBox.addEventListener("input", onInput);
  bucketsBox.addEventListener("input", onInput);
  gpuChoices.addEventListener("change", onInput);
  $("controls").addEventListener("submit", (event) => event.preventDefault());
  $("copy-link").addEventListener("click", () => copyLink($("copy-status")));
  $("reset").addEventListener("click", reset);
  $("download-csv").addEventListener("click", downloadCsv);
  $("download-xlsx").addEventListener("click", downloadWorkbook);
  $("read-log").addEventListener("click", readLog);
  redrawDay = initDay(() => last);
  for (const button of document.querySelectorAll("button.copy")) button.addEventListener("click", copySnippet);
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(redraw, 120);
  });
  await refresh();
}

start();

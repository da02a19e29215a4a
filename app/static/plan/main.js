// The planner's controller: controls <-> state <-> URL, one POST /v1/fleet per change
// (debounced while typing), then /v1/latency for the chosen replica and its KEDA policy, and
// rendering of the answers: one kind of replica, or (topology=disaggregated) a prefill and a
// decode pool beside the aggregated plan. Every figure shown is a field of those answers;
// nothing here estimates anything.

import { ApiProblem, getJson, postJson, postText } from "./api.js";
import { drawFleet, drawLatency } from "./charts.js";
import * as fmt from "./format.js";
import { renderOptions } from "./options.js";
import {
  AGGREGATED,
  ANY,
  DEFAULTS,
  DISAGGREGATED,
  FIELDS,
  PRECISIONS,
  fleetBody,
  forecastText,
  fromQuery,
  latencyParams,
  parseForecast,
  sweepRates,
  toQuery,
} from "./state.js";

const DEBOUNCE_MS = 350;
const MIG_SEPARATOR = "|";

const $ = (id) => document.getElementById(id);
const root = $("plan");
const controls = Object.fromEntries(FIELDS.filter((name) => $(name)).map((name) => [name, $(name)]));
const forecastBox = $("forecast");
const trafficRadios = [$("traffic-one"), $("traffic-forecast")];

const catalog = { models: new Map(), gpus: new Map(), engines: new Map() };
let state = { ...DEFAULTS, traffic: "one", forecast: [] };
let last = null; // {answer, body, latency} of the last plan rendered, for redrawing
let timer = null;
let inFlight = null;
let sequence = 0;

// --- catalog and selects -------------------------------------------------------------------

function option(value, label) {
  const node = document.createElement("option");
  node.value = value;
  node.textContent = label;
  return node;
}

function shortName(gpu) {
  return gpu.name.replace(/^(NVIDIA|AMD Instinct|AMD|Intel)\s+/, "");
}

function gpuLabel(slug, mig) {
  const gpu = catalog.gpus.get(slug);
  const name = gpu ? shortName(gpu) : slug;
  return mig ? `${name} · MIG ${mig}` : name;
}

function fillModels(models) {
  const dense = document.createElement("optgroup");
  dense.label = "Dense";
  const moe = document.createElement("optgroup");
  moe.label = "Mixture of experts";
  for (const model of models) {
    catalog.models.set(model.slug, model);
    (model.experts ? moe : dense).append(option(model.slug, model.name));
  }
  controls.model.replaceChildren(dense, moe);
}

function fillGpus(gpus) {
  const whole = document.createElement("optgroup");
  whole.label = "Whole GPUs";
  const slices = [];
  for (const gpu of gpus) {
    catalog.gpus.set(gpu.slug, gpu);
    whole.append(option(gpu.slug, gpu.name));
    if (gpu.mig_profiles?.length) {
      const group = document.createElement("optgroup");
      group.label = `${shortName(gpu)}: MIG slices`;
      for (const profile of gpu.mig_profiles) {
        group.append(option(`${gpu.slug}${MIG_SEPARATOR}${profile.name}`, `${shortName(gpu)} · ${profile.name}`));
      }
      slices.push(group);
    }
  }
  controls.gpu.replaceChildren(option(ANY, "Any: rank every GPU and MIG slice"), whole, ...slices);
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

/** A value from the URL that the catalog does not list still shows, so the API can name it. */
function ensureOption(select, value, label) {
  if (value === "" || [...select.options].some((o) => o.value === value)) return;
  select.append(option(value, label));
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
  writeTraffic();
  writeTopology();
}

/** The network between nodes only matters to two pools: shown with the disaggregated kind. */
function writeTopology() {
  $("network-field").hidden = state.topology !== DISAGGREGATED;
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
  const query = toQuery(state);
  history.replaceState(null, "", `${location.pathname}${query ? `?${query}` : ""}${location.hash}`);
}

function onInput(event) {
  state = readControls(event.target);
  if (event.target === controls.model || event.target === controls.gpu) controls.tensor_parallel.value = "";
  writeTraffic();
  writeTopology();
  syncUrl();
  const immediate = event.target.tagName === "SELECT" || event.target.type === "radio";
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
  if (isDisaggregated(answer)) {
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

const ALIASES = { mig_profile: "gpu", arrival: "burstiness", requests_per_second: "requests_per_day" };

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

function showFieldErrors(errors) {
  const unplaced = [];
  for (const [path, value] of Object.entries(errors || {})) {
    const messages = [].concat(value).join("; ");
    const head = path.split(".")[0];
    let placed = false;
    if (head === "forecast") {
      placed = /^forecast\.\d+/.test(path) ? forecastError(path, messages) : fieldError("forecast", messages, forecastBox);
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
  const title = document.createElement("strong");
  title.textContent = error.status ? `${error.status} ${error.title || "Error"}` : error.title || "Error";
  const detail = document.createElement("p");
  detail.className = "error-detail";
  detail.textContent = error.detail || error.message;
  box.replaceChildren(title, detail);
  const unplaced = error instanceof ApiProblem ? showFieldErrors(error.errors) : [];
  if (unplaced.length) {
    const list = document.createElement("ul");
    for (const [field, messages] of unplaced) {
      const item = document.createElement("li");
      const code = document.createElement("code");
      code.textContent = field;
      item.append(code, `: ${messages}`);
      list.append(item);
    }
    box.append(list);
  } else if (Object.keys(error.errors || {}).length) {
    const note = document.createElement("p");
    note.textContent = "The field at fault is marked beside it.";
    box.append(note);
  }
  box.hidden = false;
}

// --- rendering --------------------------------------------------------------------------------

function setText(id, text) {
  $(id).textContent = text;
}

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

/** Shows the parts of the page one plan kind has and hides the other's. */
function showKind(disaggregated) {
  root.dataset.topology = disaggregated ? DISAGGREGATED : AGGREGATED;
  const only = (selector, shown) => {
    for (const node of document.querySelectorAll(selector)) node.hidden = !shown;
  };
  only(".kpi-aggregated", !disaggregated);
  only(".kpi-disaggregated", disaggregated);
  only("#fleet-chart-desc .key-prefill, #fleet-chart-desc .key-decode", disaggregated);
  only("#periods-table .col-pool", disaggregated);
  for (const id of ["compare", "pools-panel", "pool-options-panel", "prefill-vllm-snippet", "decode-vllm-snippet", "keda-pools", "latency-pools"]) {
    $(id).hidden = !disaggregated;
  }
  for (const id of ["why", "options-panel", "vllm-snippet", "keda-snippet", "latency-charts", "latency-legend"]) $(id).hidden = disaggregated;
}

function renderPlan(answer, body) {
  showKind(isDisaggregated(answer));
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

function renderUncertainty(answer) {
  const node = $("uncertainty");
  const range = answer.uncertainty;
  const parts = [];
  if (range && typeof range === "object") {
    for (const [field, value] of Object.entries(range)) {
      if (Array.isArray(value) && value.length === 2) parts.push(`${field} ${fmt.count(value[0])} to ${fmt.count(value[1])}`);
    }
  }
  const basis = `Basis: ${answer.basis ?? "–"}${answer.calibration ? " (a stored calibration)" : ""}.`;
  node.textContent = parts.length
    ? `Range: ${parts.join("; ")}${answer.uncertainty_basis ? ` (${answer.uncertainty_basis})` : ""}. ${basis}`
    : `${basis} The fleet answer gives no range.`;
  node.dataset.basis = answer.basis ?? "";
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
  if (last.latency) renderLatency(last.latency, last.answer);
}

// --- actions ----------------------------------------------------------------------------------

async function copyText(text, status) {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = "Copied.";
    return true;
  } catch {
    status.textContent = "Copying was refused here: select the text and copy it.";
    return false;
  }
}

async function copyLink() {
  const status = $("copy-status");
  if (!(await copyText(location.href, status))) status.textContent = `Copy this address: ${location.href}`;
  else status.textContent = "Link copied.";
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

function reset() {
  state = { ...DEFAULTS, traffic: "one", forecast: [] };
  forecastBox.value = "";
  writeControls();
  syncUrl();
  schedule(0);
}

// --- start ------------------------------------------------------------------------------------

async function start() {
  fillPrecisions();
  try {
    const [models, gpus, engines] = await Promise.all([
      getJson("models"),
      getJson("gpus"),
      getJson("engines").catch(() => ({ items: [] })),
    ]);
    fillModels(models.items);
    fillGpus(gpus.items);
    fillEngines(engines.items);
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
  $("controls").addEventListener("submit", (event) => event.preventDefault());
  $("copy-link").addEventListener("click", copyLink);
  $("reset").addEventListener("click", reset);
  $("download-csv").addEventListener("click", downloadCsv);
  for (const button of document.querySelectorAll("button.copy")) button.addEventListener("click", copySnippet);
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(redraw, 120);
  });
  await refresh();
}

start();

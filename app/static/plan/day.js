// The planner's simulated day: the plan's replica through the hours the user gives, under the
// autoscaling policy (POST /v1/autoscaling/simulate), beside the static peak plan and, when
// asked, the recommended policy. Every figure shown is a field of that answer; the chart only
// scales and draws.

import { postJson } from "../common/api.js";
import { fillProblem } from "../common/page.js";
import * as fmt from "./format.js";

const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

// The replica's knobs /v1/autoscaling/simulate takes from the plan's request.
const REPLICA_FIELDS = [
  "model", "engine", "weight_precision", "kv_precision", "prompt_tokens", "output_tokens", "gpu_memory_utilization",
  "max_num_seqs", "max_batched_tokens", "price_per_gpu_hour_usd", "ttft_slo_ms", "tpot_slo_ms", "e2e_slo_ms",
  "slo_percentile", "arrival", "burstiness", "prompt_tokens_cv", "output_tokens_cv", "load_gb_per_s",
  "engine_startup_s", "spare_replicas", "served_model_name",
];

/** The hours typed or pasted: one number a line (or separated by commas, tabs, spaces). */
export function parseHours(text) {
  const cells = text.split(/[\s,;]+/).map((cell) => cell.trim()).filter(Boolean);
  return cells.map((cell) => Number(cell.replaceAll("_", "")));
}

/** The request for the day: the plan's replica (its chosen GPU and TP) and the panel's policy. */
export function dayBody(planBody, answer, hours, form) {
  const body = {};
  for (const name of REPLICA_FIELDS) if (planBody[name] != null) body[name] = planBody[name];
  body.gpu = answer.gpu;
  if (answer.mig_profile) body.mig_profile = answer.mig_profile;
  if (answer.replica?.tensor_parallel) body.tensor_parallel = answer.replica.tensor_parallel;
  body.forecast = hours.map((requests, hour) => ({ hour: `${String(hour).padStart(2, "0")}:00`, requests }));
  const policy = {};
  if (form.delay !== "") policy.scale_up_delay_s = Number(form.delay);
  if (form.minReplicas !== "") policy.min_replicas = Number(form.minReplicas);
  if (form.warmPool !== "") policy.warm_pool = Number(form.warmPool);
  body.policy = policy;
  if (form.recommend) {
    body.recommend = true;
    if (form.target !== "") body.max_violation_rate = Number(form.target) / 100;
  }
  return body;
}

function el(name, attributes = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function top(max) {
  const target = max > 0 ? max : 1;
  const magnitude = 10 ** Math.floor(Math.log10(target));
  return [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= target);
}

const LINES = [
  ["static", "series-static"],
  ["autoscaled", "series-autoscaled"],
  ["recommended", "series-recommended"],
];

/**
 * Requests per hour as bars; replicas serving (the most in each hour) as a line per day; the
 * share of requests missing an SLO as dots, on their own scale at the right.
 */
export function drawDay(svg, days) {
  const width = Math.max(280, Math.min(960, Math.round(svg.parentElement?.clientWidth || 880)));
  const height = 260;
  const margin = { top: 14, right: 48, bottom: 40, left: 52 };
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", "100%");
  const hours = days.autoscaled.per_hour;
  const left = margin.left;
  const right = width - margin.right;
  const bottom = height - margin.bottom;
  const band = (right - left) / hours.length;
  const requestsTop = top(Math.max(...hours.map((h) => h.requests)));
  const shown = LINES.filter(([name]) => days[name]);
  const replicasTop = top(Math.max(...shown.flatMap(([name]) => days[name].per_hour.map((h) => h.replicas_max))));
  const violationTop = top(Math.max(0.01, ...shown.flatMap(([name]) => days[name].per_hour.map((h) => h.violation_rate))));
  const y = (value, max) => bottom - (value / max) * (bottom - margin.top);
  for (let step = 0; step <= 4; step += 1) {
    const value = (replicasTop * step) / 4;
    svg.append(el("line", { x1: left, x2: right, y1: y(value, replicasTop), y2: y(value, replicasTop), class: "grid-line" }));
    svg.append(el("text", { x: left - 6, y: y(value, replicasTop) + 4, class: "tick tick-y" }, fmt.rate(value)));
    const share = (violationTop * step) / 4;
    svg.append(el("text", { x: right + 6, y: y(share, violationTop) + 4, class: "tick" }, fmt.percent(share, 1)));
  }
  svg.append(el("text", { x: (left + right) / 2, y: height - 6, class: "axis-title" }, "hour of the day"));
  svg.append(el("text", { x: 12, y: height / 2, class: "axis-title", transform: `rotate(-90 12 ${height / 2})` }, "replicas"));
  hours.forEach((hour, index) => {
    const group = el("g", { class: "hour-point" });
    group.dataset.hour = String(hour.hour);
    group.dataset.requests = String(hour.requests);
    for (const [name] of shown) {
      const row = days[name].per_hour[index];
      group.dataset[`${name}Replicas`] = String(row.replicas_max);
      group.dataset[`${name}Violations`] = String(row.violation_rate);
    }
    const height_ = bottom - y(hour.requests, requestsTop);
    group.append(el("rect", { x: left + index * band + band * 0.15, y: bottom - height_ * 0.6, width: band * 0.7, height: height_ * 0.6, class: "bar-requests" }));
    group.append(el("title", {}, `${hour.hour}:00 — ${fmt.count(hour.requests)} requests`));
    if (index % Math.ceil(hours.length / 12) === 0) {
      group.append(el("text", { x: left + (index + 0.5) * band, y: bottom + 16, class: "tick tick-x" }, String(hour.hour)));
    }
    svg.append(group);
  });
  for (const [name, css] of shown) {
    const rows = days[name].per_hour;
    const points = rows.map((row, index) => `${left + (index + 0.5) * band},${y(row.replicas_max, replicasTop)}`).join(" ");
    svg.append(el("polyline", { points, class: `line ${css}`, fill: "none" }));
    for (const [index, row] of rows.entries()) {
      if (row.violation_rate > 0) {
        svg.append(el("circle", { cx: left + (index + 0.5) * band, cy: y(row.violation_rate, violationTop), r: 3, class: `dot ${css}` }));
      }
    }
  }
  svg.dataset.hours = String(hours.length);
}

const ROWS = [
  ["static", "Static peak plan"],
  ["autoscaled", "The policy"],
  ["recommended", "Recommended"],
];

function renderSummary(days, answer) {
  const body = $("day-table").querySelector("tbody");
  body.replaceChildren();
  for (const [name, label] of ROWS) {
    const day = days[name];
    if (!day) continue;
    const row = document.createElement("tr");
    row.dataset.day = name;
    const replicas = name === "static" ? fmt.count(answer.static.replicas) : `up to ${fmt.count(Math.max(...day.per_hour.map((h) => h.replicas_max)))}`;
    for (const [key, text] of [
      ["label", label],
      ["replicas", replicas],
      ["violation_rate", fmt.percent(day.violation_rate, 2)],
      ["gpu_hours", fmt.rate(day.gpu_hours)],
      ["cost_usd", fmt.usd(day.cost_usd)],
    ]) {
      const cell = document.createElement(key === "label" ? "th" : "td");
      cell.dataset.field = key;
      cell.textContent = text;
      row.append(cell);
    }
    body.append(row);
  }
}

function policyText(answer) {
  const policy = answer.policy;
  const triggers = policy.triggers.map((t) => `${t.signal} ${fmt.rate(t.threshold)}`).join(", ");
  let text = `Scales on ${triggers}; a new replica serves ${fmt.rate(policy.scale_up_delay_s)} s after it is asked for `
    + `(${answer.cold_start_basis} by default), ${policy.min_replicas} to ${policy.max_replicas} replicas, warm pool ${policy.warm_pool}.`;
  const found = answer.recommendation;
  if (found?.policy) {
    text += ` Recommended: min_replicas ${found.policy.min_replicas}, warm pool ${found.policy.warm_pool}, thresholds x${found.policy.threshold_scale}.`;
  } else if (found) {
    text += ` ${found.status}.`;
  }
  return text;
}

// Where the API's field names put their messages.
const FIELD_IDS = {
  forecast: "day-hours",
  "policy.scale_up_delay_s": "day-delay",
  "policy.min_replicas": "day-min",
  "policy.max_replicas": "day-min",
  "policy.warm_pool": "day-warm",
  recommend: "day-recommend",
  max_violation_rate: "day-target",
};

function showFieldErrors(errors) {
  for (const id of new Set(Object.values(FIELD_IDS))) {
    const slot = $(`${id}-error`);
    slot.hidden = true;
    slot.textContent = "";
    $(id).removeAttribute("aria-invalid");
  }
  for (const [field, messages] of Object.entries(errors || {})) {
    const id = FIELD_IDS[field] ?? (field.startsWith("forecast") ? "day-hours" : null);
    if (!id) continue;
    const slot = $(`${id}-error`);
    slot.textContent = [].concat(messages).join(" ");
    slot.hidden = false;
    $(id).setAttribute("aria-invalid", "true");
  }
}

/** Wire the panel: `current()` gives {body, answer} of the plan shown (null before one). */
export function initDay(current) {
  const panel = $("day-panel");
  const error = $("day-error");
  let last = null;
  async function run() {
    const plan = current();
    error.hidden = true;
    showFieldErrors({});
    if (!plan?.answer?.replica || !plan.answer.gpu) {
      error.textContent = "No single-pool plan to simulate: plan one kind of replica first.";
      error.hidden = false;
      return;
    }
    const hours = parseHours($("day-hours").value);
    if (!hours.length || hours.some((value) => !Number.isFinite(value))) {
      error.textContent = "Give the requests of each hour: one number a line.";
      error.hidden = false;
      return;
    }
    const form = {
      delay: $("day-delay").value.trim(),
      minReplicas: $("day-min").value.trim(),
      warmPool: $("day-warm").value.trim(),
      recommend: $("day-recommend").checked,
      target: $("day-target").value.trim(),
    };
    const body = dayBody(plan.body, plan.answer, hours, form);
    panel.dataset.request = JSON.stringify(body);
    panel.dataset.status = "loading";
    panel.setAttribute("aria-busy", "true");
    try {
      const answer = await postJson("autoscaling/simulate", body);
      const days = { static: answer.static, autoscaled: answer.autoscaled, recommended: answer.recommendation?.day ?? null };
      last = days;
      $("day-results").hidden = false;
      renderSummary(days, answer);
      drawDay($("day-chart"), days);
      $("day-policy").textContent = policyText(answer);
      panel.dataset.status = "ready";
    } catch (problem) {
      $("day-results").hidden = true;
      const fields = Object.entries(problem.errors || {}).map(([field, messages]) => [field, [].concat(messages).join(" ")]);
      fillProblem(error, problem, fields);
      showFieldErrors(problem.errors);
      error.hidden = false;
      panel.dataset.status = "error";
    } finally {
      panel.setAttribute("aria-busy", "false");
    }
  }
  $("day-run").addEventListener("click", run);
  return () => {
    if (last && !$("day-results").hidden) drawDay($("day-chart"), last);
  };
}

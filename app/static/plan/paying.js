// "Paying for it": how /v1/fleet's answer says the fleet is paid for (pricing=optimize's
// committed, on-demand and spot split over the forecast), what it draws, owning it against
// renting it, and a hosted API for the same traffic. Every figure is a field of the answer;
// nothing here computes one.

import { setText } from "../common/page.js";
import { drawOwning, drawSplit } from "./charts.js";
import * as fmt from "./format.js";

export const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

const $ = (id) => document.getElementById(id);

function setValue(id, text, value) {
  const node = $(id);
  node.textContent = text;
  node.dataset.value = value ?? "";
  return node;
}

function rate(value) {
  return value == null ? "not known" : `${fmt.usd(value)}/GPU-hour`;
}

/** The prices the answer was computed with, per whole card (the request's or the catalog's). */
function pricesLine(prices) {
  if (!prices) return "";
  const interruptions = prices.spot_interruptions_per_hour;
  const parts = [
    `on demand ${rate(prices.on_demand_usd_per_hour)}`,
    `1-year committed ${rate(prices.reserved_1y_usd_per_hour)}`,
    `3-year committed ${rate(prices.reserved_3y_usd_per_hour)}`,
    `spot ${rate(prices.spot_usd_per_hour)}${interruptions == null ? " (interruption rate not known)" : ` (taken back ${fmt.percent(interruptions, 1)} of hours)`}`,
    `purchase ${prices.purchase_usd == null ? "not known" : fmt.usd(prices.purchase_usd)}`,
    `board power ${prices.power_w == null ? "not known" : `${fmt.whole(prices.power_w)} W`}`,
    `idle ${prices.idle_power_w == null ? "not known" : `${fmt.count(prices.idle_power_w)} W`}`,
  ];
  return `Prices and power used, per card: ${parts.join("; ")}.`;
}

function splitCells(row, values) {
  values.forEach(([label, text], i) => {
    const cell = document.createElement(i ? "td" : "th");
    if (!i) cell.scope = "row";
    cell.dataset.label = label;
    cell.textContent = text;
    row.append(cell);
  });
  return row;
}

function list(id, items) {
  $(id).replaceChildren(
    ...items.map((text) => {
      const item = document.createElement("li");
      item.textContent = text;
      return item;
    }),
  );
}

function renderProcurement(proc, answer) {
  const part = $("procurement");
  part.hidden = !proc;
  const kpi = setValue("procured_cost_usd", proc ? fmt.usd(proc.cost_usd) : "–", proc?.cost_usd);
  kpi.dataset.onDemandCostUsd = proc?.on_demand_cost_usd ?? "";
  kpi.dataset.savingsUsd = proc?.savings_usd ?? "";
  setText(
    "procured_note",
    proc
      ? `${fmt.usd(proc.monthly_cost_usd)} a month over ${fmt.whole(proc.horizon_months)} months; ${fmt.usd(proc.savings_usd)} less than ${fmt.usd(proc.on_demand_cost_usd)} all on demand`
      : "all on demand: choose Optimize to commit, rent and add spot",
  );
  const off = $("procurement-off");
  if (!proc) {
    off.hidden = false;
    off.textContent =
      answer.pricing === "optimize"
        ? "No split in this answer."
        : "Pricing on demand: every GPU is rented by the hour, as the monthly cost above says. Choose Optimize under “Paying for it” to see how many to commit for one or three years, how many to rent and how many spot GPUs to add.";
    return;
  }
  off.hidden = true;
  const periods = proc.periods || [];
  drawSplit($("split-chart"), periods);
  const tbody = $("split-table").tBodies[0];
  const head = ["Period", "GPUs needed", "Protected", "Committed", "On demand", "Spot", "Committed cost", "On-demand cost", "Spot cost", "Cost", "All on demand"];
  tbody.replaceChildren(
    ...periods.map((p) => {
      const row = document.createElement("tr");
      row.dataset.period = p.period;
      row.dataset.committedGpus = p.committed_gpus;
      row.dataset.onDemandGpus = p.on_demand_gpus;
      row.dataset.spotGpus = p.spot_gpus;
      row.dataset.costUsd = p.cost_usd;
      const values = [
        p.period,
        fmt.whole(p.gpus_needed),
        fmt.whole(p.gpus_protected),
        fmt.whole(p.committed_gpus),
        fmt.whole(p.on_demand_gpus),
        fmt.whole(p.spot_gpus),
        fmt.usd(p.committed_cost_usd),
        fmt.usd(p.on_demand_cost_usd),
        fmt.usd(p.spot_cost_usd),
        fmt.usd(p.cost_usd),
        fmt.usd(p.on_demand_only_cost_usd),
      ];
      return splitCells(row, values.map((text, i) => [head[i], text]));
    }),
  );
  list(
    "commitments-list",
    (proc.commitment || []).length
      ? proc.commitment.map(
          (c) => `Commit ${fmt.whole(c.gpus)} GPUs for ${c.term} from ${c.first_period} to ${c.last_period} at ${fmt.usd(c.usd_per_hour)}/GPU-hour: ${fmt.usd(c.cost_usd)} over its ${fmt.whole(c.months)} months.`,
        )
      : ["No commitment: renting on demand (and spot) is cheaper for this forecast."],
  );
  list("procurement-why", proc.why || []);
  const solver = $("procurement-solver");
  solver.dataset.solverStatus = proc.solver_status ?? "";
  solver.textContent = `Solver (HiGHS integer program): ${proc.solver_status ?? "–"}, in ${fmt.ms(proc.solve_ms)} ms; ${fmt.whole(periods.length)} periods of ${fmt.whole(proc.period_months)} month${proc.period_months === 1 ? "" : "s"}.`;
}

function renderEnergy(answer) {
  const kwh = answer.energy_kwh_per_month;
  setValue("energy_kwh_per_month", kwh == null ? "not known" : `${fmt.whole(kwh)} kWh`, kwh);
  const notes = [];
  if (answer.energy_wh_per_million_tokens != null) notes.push(`${fmt.count(answer.energy_wh_per_million_tokens)} Wh per million output tokens`);
  if (answer.co2e_kg_per_month != null) notes.push(`${fmt.whole(answer.co2e_kg_per_month)} kg CO2e a month`);
  if (answer.energy?.power_kw != null) notes.push(`${fmt.count(answer.energy.power_kw)} kW at PUE ${fmt.count(answer.energy.pue)}`);
  if (kwh != null && Array.isArray(answer.periods) && answer.periods.length) notes.push("the busiest period's fleet");
  setText("energy_note", kwh == null ? "the GPU's power figures are not known: give them under Prices and power" : notes.join("; "));
  const utilization = answer.fleet_utilization == null ? "" : ` The fleet is ${fmt.percent(answer.fleet_utilization)} busy on average.`;
  setText("energy-basis", answer.energy_basis ? `Energy: ${answer.energy_basis}.${utilization}` : "");
}

function renderOwning(owned) {
  const part = $("owning");
  part.hidden = !owned;
  const kpi = setValue("owned_monthly_cost_usd", owned ? fmt.usd(owned.owned_monthly_cost_usd) : "–", owned?.owned_monthly_cost_usd);
  kpi.dataset.breakEvenMonths = owned?.break_even_months ?? "";
  kpi.dataset.rentedMonthlyCostUsd = owned?.rented_monthly_cost_usd ?? "";
  if (!owned) {
    setText("owned_note", "not compared: give the months to write off over, electricity and hosting");
    setText("owning-why", "");
    return;
  }
  const even = owned.break_even_months == null ? "owning never pays" : `break-even after ${fmt.count(owned.break_even_months)} months`;
  setText(
    "owned_note",
    `against ${fmt.usd(owned.rented_monthly_cost_usd)} rented; ${even} (${fmt.usd(owned.amortization_usd_per_month)} write-off, ${fmt.usd(owned.electricity_usd_per_month)} electricity, ${fmt.usd(owned.hosting_usd_per_month)} hosting)`,
  );
  drawOwning($("owning-chart"), owned.months || [], owned.break_even_months);
  const against = owned.rented_basis ? ` Renting: ${owned.rented_basis}.` : "";
  setText("owning-why", `${fmt.whole(owned.gpus)} GPUs bought for ${fmt.usd(owned.purchase_usd)}: ${owned.why}.${against}`);
}

function renderApi(answer) {
  const hosted = answer.hosted_api_monthly_cost_usd;
  const kpi = setValue("hosted_api_monthly_cost_usd", hosted == null ? "–" : fmt.usd(hosted), hosted);
  kpi.dataset.breakEvenRequestsPerDay = answer.break_even_requests_per_day ?? "";
  setText(
    "api_note",
    hosted == null
      ? "not compared: give the API's prices per million input and output tokens"
      : answer.break_even_requests_per_day == null
        ? "the API is cheaper at any traffic"
        : `self-hosting cheaper from ${fmt.whole(answer.break_even_requests_per_day)} requests/day`,
  );
  setText("api-comparison", answer.hosted_api_comparison ? `Hosted API: ${answer.hosted_api_comparison}.` : "");
}

/** The panel for one fleet answer (any plan kind: pools give their energy only). */
export function renderPaying(answer) {
  const panel = $("paying-panel");
  panel.dataset.pricing = answer.pricing ?? "";
  setText("paying-prices", pricesLine(answer.prices));
  renderProcurement(answer.procurement ?? null, answer);
  renderEnergy(answer);
  renderOwning(answer.ownership ?? null);
  renderApi(answer);
}

/** Redraws the panel's charts at the page's width. */
export function drawPaying(answer) {
  if (!answer) return;
  if (answer.procurement) drawSplit($("split-chart"), answer.procurement.periods || []);
  if (answer.ownership) drawOwning($("owning-chart"), answer.ownership.months || [], answer.ownership.break_even_months);
}

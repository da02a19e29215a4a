// The ranked options (`options` of a whole-catalog /v1/fleet answer, or `alternatives` on a
// named GPU) as a table sortable by its column buttons, the cheapest option that meets the
// SLOs highlighted, and a button on each row that plans again on it.

import * as fmt from "./format.js";

// An unsized row (`sized: false`) was left at a bound: its GPUs and cost are lower bounds.
const gpusOf = (r) => r.gpus_total ?? r.gpus_total_at_least ?? null;
const costOf = (r) => r.monthly_cost_usd ?? r.monthly_cost_usd_at_least ?? null;
const atLeast = (r, text) => (r.sized === false && r.eligible ? `at least ${text}` : text);
const meets = (r) => (r.meets_slo === true ? "yes" : r.meets_slo === false ? "no" : "not sized");


const COLUMNS = [
  { key: "rank", label: "Rank", value: (r) => r.rank ?? Infinity, text: (r) => (r.rank == null ? "–" : String(r.rank)) },
  { key: "gpu", label: "GPU / MIG", value: (r, label) => label(r.gpu, r.mig_profile), text: (r, label) => label(r.gpu, r.mig_profile) },
  { key: "tensor_parallel", label: "TP", value: (r) => r.tensor_parallel ?? Infinity, text: (r) => (r.tensor_parallel == null ? "–" : String(r.tensor_parallel)) },
  { key: "weight_precision", label: "Weights", value: (r) => r.weight_precision ?? "", text: (r) => r.weight_precision ?? "–" },
  { key: "gpus_total", label: "GPUs", value: (r) => gpusOf(r) ?? Infinity, text: (r) => atLeast(r, fmt.whole(gpusOf(r))) },
  { key: "monthly_cost_usd", label: "Monthly cost", value: (r) => costOf(r) ?? Infinity, text: (r) => atLeast(r, fmt.usd(costOf(r))) },
  { key: "meets_slo", label: "Meets SLO", value: (r) => (r.meets_slo === true ? 0 : r.meets_slo == null ? 1 : 2), text: (r) => why(r) },
];

/** Whether it meets the SLOs, the reason (why it won or lost) behind a disclosure, so that a row
 * stays one line. */
function why(row) {
  if (!row.why) return meets(row);
  const details = document.createElement("details");
  details.className = "why";
  const summary = document.createElement("summary");
  summary.textContent = meets(row);
  const text = document.createElement("p");
  text.textContent = row.why;
  details.append(summary, text);
  return details;
}

// Each table keeps its own order (the aggregated ranking and each pool's).
const sorts = new WeakMap();

/** The cheapest row that meets the SLOs (the lowest rank among equal costs), or null. */
export function cheapest(rows) {
  let best = null;
  for (const row of rows) {
    if (!row.eligible || row.sized === false || row.monthly_cost_usd == null) continue;
    if (!best || row.monthly_cost_usd < best.monthly_cost_usd) best = row;
  }
  return best;
}

function compare(a, b) {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true });
}

function header(table, rerender, withAction) {
  const sort = sorts.get(table);
  const row = table.tHead.rows[0];
  row.replaceChildren();
  for (const column of COLUMNS) {
    const th = document.createElement("th");
    th.scope = "col";
    const active = sort.key === column.key;
    th.setAttribute("aria-sort", active ? (sort.descending ? "descending" : "ascending") : "none");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    button.dataset.key = column.key;
    button.append(column.label);
    const arrow = document.createElement("span");
    arrow.className = "sort-arrow";
    arrow.setAttribute("aria-hidden", "true");
    arrow.textContent = active ? (sort.descending ? " ▼" : " ▲") : " ↕";
    button.append(arrow);
    button.addEventListener("click", () => {
      sorts.set(table, { key: column.key, descending: active ? !sort.descending : false });
      rerender(column.key);
    });
    th.append(button);
    row.append(th);
  }
  if (!withAction) return;
  const action = document.createElement("th");
  action.scope = "col";
  const hidden = document.createElement("span");
  hidden.className = "visually-hidden";
  hidden.textContent = "Plan on it";
  action.append(hidden);
  row.append(action);
}

/**
 * @param {HTMLTableElement} table
 * @param {object[]} rows
 * @param {{onPick: Function|null, ranking: boolean, labelOf?: Function, pickLabel?: Function}} options
 *   without `onPick` the rows have no button; `pickLabel(name, row)` names a row's button for
 *   screen readers
 */
export function renderOptions(
  table,
  rows,
  { onPick, ranking, labelOf = (gpu, mig) => (mig ? `${gpu} · MIG ${mig}` : gpu), pickLabel = null },
) {
  if (!sorts.has(table)) sorts.set(table, { key: "rank", descending: false });
  const draw = (focusKey) => {
    const sort = sorts.get(table);
    header(table, draw, Boolean(onPick));
    const column = COLUMNS.find((c) => c.key === sort.key) ?? COLUMNS[0];
    const sorted = rows
      .map((row, index) => ({ row, index }))
      .sort((a, b) => compare(column.value(a.row, labelOf), column.value(b.row, labelOf)) * (sort.descending ? -1 : 1) || a.index - b.index)
      .map(({ row }) => row);
    const best = cheapest(rows);
    const body = table.tBodies[0];
    body.replaceChildren(
      ...sorted.map((row) => {
        const tr = document.createElement("tr");
        tr.dataset.gpu = row.gpu;
        tr.dataset.migProfile = row.mig_profile ?? "";
        tr.dataset.tensorParallel = row.tensor_parallel ?? "";
        tr.dataset.rank = row.rank ?? "";
        tr.dataset.gpusTotal = gpusOf(row) ?? "";
        tr.dataset.monthlyCostUsd = costOf(row) ?? "";
        tr.dataset.eligible = String(Boolean(row.eligible));
        tr.dataset.sized = String(row.sized !== false);
        tr.dataset.measuredGeneration = String(row.measured_generation);
        tr.dataset.meetsSlo = String(row.meets_slo);
        if (row === best) tr.classList.add("cheapest");
        if (!row.eligible) tr.classList.add("ineligible");
        for (const c of COLUMNS) {
          const cell = document.createElement(c.key === "gpu" ? "th" : "td");
          if (c.key === "gpu") cell.scope = "row";
          cell.dataset.label = c.label;
          cell.className = `col-${c.key}`;
          cell.append(c.text(row, labelOf));
          if (c.key === "gpu" && row === best) {
            const badge = document.createElement("span");
            badge.className = "badge";
            badge.textContent = "cheapest";
            cell.append(" ", badge);
          }
          if (c.key === "gpu" && row.measured_generation === false) {
            // The engine has no measured row on this GPU generation: its figures are a guess.
            const badge = document.createElement("span");
            badge.className = "badge guess";
            badge.textContent = "guess";
            badge.title = "No measured row on this GPU generation for the engine: borrowed efficiencies";
            cell.append(" ", badge);
          }
          tr.append(cell);
        }
        if (!onPick) return tr;
        const action = document.createElement("td");
        action.className = "col-action";
        const button = document.createElement("button");
        button.type = "button";
        button.className = "secondary small pick";
        const name = labelOf(row.gpu, row.mig_profile);
        button.textContent = ranking ? "Plan on it" : `Use TP ${row.tensor_parallel}`;
        const label = pickLabel
          ? pickLabel(name, row)
          : ranking
            ? `Plan on ${name}`
            : `Plan on ${name} with ${row.tensor_parallel} GPUs per replica`;
        button.setAttribute("aria-label", label);
        button.addEventListener("click", () =>
          onPick({ gpu: row.gpu, mig_profile: row.mig_profile, tensor_parallel: ranking ? null : row.tensor_parallel }),
        );
        action.append(button);
        tr.append(action);
        return tr;
      }),
    );
    if (focusKey) table.querySelector(`button.sort[data-key="${focusKey}"]`)?.focus();
  };
  draw(null);
}

// The planner's charts, as plain SVG. Only scales and drawing: every point is a row of a
// /v1/fleet `periods` list or a /v1/latency `rates` list, carried in data attributes.

import * as fmt from "./format.js";

const SVG = "http://www.w3.org/2000/svg";

function el(name, attributes = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A round upper bound for an axis and its tick step. */
function niceAxis(max, ticks = 5) {
  const target = max > 0 ? max : 1;
  const rough = target / ticks;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough);
  return { top: Math.ceil(target / step - 1e-9) * step, step };
}

function linear(domainMax, rangeStart, rangeEnd) {
  return (value) => rangeStart + (value / domainMax) * (rangeEnd - rangeStart);
}

/** The width to draw at: the figure's own, so text keeps its size on a phone. */
function widthOf(svg) {
  const width = svg.parentElement?.clientWidth || 880;
  return Math.max(280, Math.min(960, Math.round(width)));
}

function frame(svg, width, height) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", "100%");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
}

function axisTitle(svg, x, y, text, rotate = false) {
  const attributes = { x, y, class: "axis-title" };
  if (rotate) attributes.transform = `rotate(-90 ${x} ${y})`;
  svg.append(el("text", attributes, text));
}

// --- GPUs and cost by period --------------------------------------------------------------

const SERIES = [
  ["gpus_average", "series-average"],
  ["gpus_peak", "series-peak"],
  ["gpus_total", "series-total"],
];

// A disaggregated plan's rows also give each pool's GPUs with spares: two more (dashed) lines.
const POOL_SERIES = [
  ["prefill_gpus_total", "series-prefill"],
  ["decode_gpus_total", "series-decode"],
];

/**
 * GPUs (average, peak, total, and each pool's total when the rows give them) as lines and
 * monthly cost as bars, one group per period.
 * @param {SVGSVGElement} svg
 * @param {object[]} periods rows of the answer's `periods` (or one row for one figure)
 */
export function drawFleet(svg, periods) {
  // A mixed fleet's rows give its total and each pool's GPUs (`pool_gpus_total`), no average
  // or peak: a line for the total and a dashed one per pool.
  const mixPools = Math.max(0, ...periods.map((p) => (Array.isArray(p.pool_gpus_total) ? p.pool_gpus_total.length : 0)));
  const mix = periods.some((p) => Array.isArray(p.pool_gpus_total));
  const pools = !mix && periods.some((p) => p.prefill_gpus_total != null || p.decode_gpus_total != null);
  const series = (mix
    ? [
        ["gpus_total", "series-total"],
        ...Array.from({ length: mixPools }, (_, k) => [(p) => p.pool_gpus_total?.[k], `series-pool series-pool-${k % 6}`]),
      ]
    : pools
      ? [...SERIES, ...POOL_SERIES]
      : SERIES
  ).map(([key, cls]) => [typeof key === "function" ? key : (p) => p[key], cls]);
  svg.dataset.pools = String(pools);
  svg.dataset.mixPools = String(mix ? mixPools : 0);
  const width = widthOf(svg);
  const narrow = width < 520;
  const height = narrow ? 250 : 290;
  const margin = { top: 16, right: narrow ? 46 : 62, bottom: 58, left: narrow ? 38 : 50 };
  frame(svg, width, height);
  svg.dataset.points = String(periods.length);
  if (!periods.length) return;
  const left = margin.left;
  const right = width - margin.right;
  const bottom = height - margin.bottom;
  const top = margin.top;
  const band = (right - left) / periods.length;
  const cx = (i) => left + band * (i + 0.5);
  const gpuAxis = niceAxis(Math.max(...periods.map((p) => p.gpus_total ?? 0)) * 1.08, narrow ? 4 : 5);
  const costAxis = niceAxis(Math.max(...periods.map((p) => p.monthly_cost_usd ?? 0)) * 1.08, narrow ? 4 : 5);
  const y = linear(gpuAxis.top, bottom, top);
  const yCost = linear(costAxis.top, bottom, top);

  const grid = el("g", { class: "grid" });
  for (let value = 0; value <= gpuAxis.top + 1e-9; value += gpuAxis.step) {
    grid.append(el("line", { x1: left, x2: right, y1: y(value), y2: y(value) }));
    grid.append(el("text", { x: left - 6, y: y(value) + 4, class: "tick tick-y" }, fmt.whole(value)));
  }
  for (let value = 0; value <= costAxis.top + 1e-9; value += costAxis.step) {
    grid.append(el("text", { x: right + 6, y: yCost(value) + 4, class: "tick tick-cost" }, fmt.usdShort(value)));
  }
  // Period labels: as many as fit, always the first and the last.
  const every = Math.max(1, Math.ceil((periods.length * (narrow ? 46 : 58)) / (right - left)));
  periods.forEach((p, i) => {
    if (i % every !== 0) return;
    grid.append(el("text", { x: cx(i), y: bottom + 16, class: "tick tick-x" }, String(p.period)));
  });
  svg.append(grid);
  axisTitle(svg, 12, (top + bottom) / 2, "GPUs", true);
  axisTitle(svg, (left + right) / 2, height - 8, periods.length > 1 ? "forecast period" : "the traffic given");

  const bars = el("g", { class: "cost-bars" });
  const barWidth = Math.max(3, Math.min(40, band * 0.55));
  periods.forEach((p, i) => {
    const h = bottom - yCost(p.monthly_cost_usd ?? 0);
    bars.append(el("rect", { x: cx(i) - barWidth / 2, y: bottom - h, width: barWidth, height: Math.max(h, 0), class: "cost-bar" }));
  });
  svg.append(bars);

  for (const [value, cls] of series) {
    const d = periods.map((p, i) => `${i ? "L" : "M"}${cx(i).toFixed(1)},${y(value(p) ?? 0).toFixed(1)}`).join(" ");
    svg.append(el("path", { d, class: `series ${cls}` }));
  }
  const points = el("g", { class: "points" });
  periods.forEach((p, i) => {
    const group = el("g", {
      class: "period-point",
      "data-index": i,
      "data-period": p.period,
      "data-requests-per-day": p.requests_per_day ?? "",
      "data-gpus-average": p.gpus_average ?? "",
      "data-gpus-peak": p.gpus_peak ?? "",
      "data-gpus-total": p.gpus_total,
      "data-monthly-cost-usd": p.monthly_cost_usd ?? "",
      ...(pools ? { "data-prefill-gpus-total": p.prefill_gpus_total ?? "", "data-decode-gpus-total": p.decode_gpus_total ?? "" } : {}),
      ...(mix ? { "data-pool-gpus-total": (p.pool_gpus_total ?? []).join(",") } : {}),
    });
    const split = pools ? `; prefill pool ${fmt.whole(p.prefill_gpus_total)}, decode pool ${fmt.whole(p.decode_gpus_total)}` : "";
    const title = mix
      ? `${p.period}: ${fmt.whole(p.gpus_total)} GPUs with spares (${(p.pool_gpus_total ?? []).map((g, k) => `pool ${k + 1}: ${fmt.whole(g)}`).join(", ")}), ${fmt.usd(p.monthly_cost_usd)} a month`
      : `${p.period}: ${fmt.whole(p.gpus_total)} GPUs with spares (${fmt.whole(p.gpus_peak)} at peak, ${fmt.whole(p.gpus_average)} at average${split}), ${fmt.usd(p.monthly_cost_usd)} a month`;
    group.append(el("title", {}, title));
    for (const [value, cls] of series) group.append(el("circle", { cx: cx(i), cy: y(value(p) ?? 0), r: narrow ? 3 : 3.5, class: `dot ${cls}` }));
    points.append(group);
  });
  svg.append(points);
}

// --- one replica's latency against rate ---------------------------------------------------

/**
 * p50 and the SLO percentile of one latency (`ttft_ms` or `tpot_ms`) against request rate,
 * the SLO line, the planned operating point and the replica's capacity at the SLO.
 * @param {SVGSVGElement} svg
 * @param {{rows: object[], metric: string, percentile: string, slo: number|null,
 *          operating: number|null, capacity: number|null, label: string}} data
 */
export function drawLatency(svg, { rows, metric, percentile, slo, operating, capacity, label }) {
  const width = widthOf(svg);
  const narrow = width < 420;
  const height = narrow ? 220 : 250;
  const margin = { top: 14, right: 14, bottom: 44, left: narrow ? 44 : 52 };
  frame(svg, width, height);
  const stable = rows.filter((row) => row.stable && row[metric]?.p50 != null);
  svg.dataset.points = String(stable.length);
  if (!stable.length) return;
  const left = margin.left;
  const right = width - margin.right;
  const bottom = height - margin.bottom;
  const top = margin.top;
  const maxRate = Math.max(...rows.map((row) => row.request_rate));
  const x = linear(maxRate, left, right);
  // Up to the capacity the curve is what matters; past it the tail shoots up, clipped.
  const within = stable.filter((row) => capacity == null || row.request_rate <= capacity * 1.0001);
  const highest = Math.max(...(within.length ? within : stable).map((row) => row[metric][percentile] ?? row[metric].p50));
  const axis = niceAxis(Math.max(highest, slo ?? 0) * 1.15);
  const y = linear(axis.top, bottom, top);

  const grid = el("g", { class: "grid" });
  for (let value = 0; value <= axis.top + 1e-9; value += axis.step) {
    grid.append(el("line", { x1: left, x2: right, y1: y(value), y2: y(value) }));
    grid.append(el("text", { x: left - 6, y: y(value) + 4, class: "tick tick-y" }, fmt.ms(value)));
  }
  const rateAxis = niceAxis(maxRate, narrow ? 4 : 6);
  for (let value = 0; value <= maxRate + 1e-9; value += rateAxis.step) {
    grid.append(el("text", { x: x(value), y: bottom + 16, class: "tick tick-x" }, fmt.rate(value)));
  }
  svg.append(grid);
  axisTitle(svg, (left + right) / 2, height - 6, "requests per second, one replica");
  axisTitle(svg, 12, (top + bottom) / 2, `${label} (ms)`, true);

  const clipId = `${svg.id}-clip`;
  const defs = el("defs");
  const clip = el("clipPath", { id: clipId });
  clip.append(el("rect", { x: left, y: top, width: right - left, height: bottom - top }));
  defs.append(clip);
  svg.append(defs);
  const plot = el("g", { "clip-path": `url(#${clipId})` });
  for (const [key, cls] of [["p50", "series-p50"], [percentile, "series-pslo"]]) {
    const valid = stable.filter((row) => row[metric][key] != null);
    const d = valid.map((row, i) => `${i ? "L" : "M"}${x(row.request_rate).toFixed(1)},${y(row[metric][key]).toFixed(1)}`).join(" ");
    plot.append(el("path", { d, class: `series ${cls}` }));
  }
  svg.append(plot);

  let sloLabel = null;
  if (slo != null) {
    const g = el("g", { class: "slo", "data-slo-ms": slo });
    g.append(el("line", { x1: left, x2: right, y1: y(slo), y2: y(slo), "stroke-dasharray": "6 4" }));
    sloLabel = el("text", { x: right - 4, y: y(slo) - 5, class: "slo-label" }, `SLO ${fmt.ms(slo)} ms`);
    g.append(sloLabel);
    svg.append(g);
  }
  if (capacity != null && capacity <= maxRate) {
    const g = el("g", { class: "capacity", "data-rate": capacity });
    g.append(el("line", { x1: x(capacity), x2: x(capacity), y1: top, y2: bottom, "stroke-dasharray": "3 4" }));
    svg.append(g);
  }

  const points = el("g", { class: "points" });
  for (const row of stable) {
    const value = row[metric][percentile];
    const g = el("g", {
      class: "rate-point",
      "data-rate": row.request_rate,
      "data-p50": row[metric].p50,
      "data-pslo": value ?? "",
    });
    if (value != null && value <= axis.top) g.append(el("circle", { cx: x(row.request_rate), cy: y(value), r: 2.2, class: "dot series-pslo" }));
    points.append(g);
  }
  svg.append(points);

  if (operating != null) {
    const row = stable.reduce((best, r) => (Math.abs(r.request_rate - operating) < Math.abs(best.request_rate - operating) ? r : best), stable[0]);
    const value = row[metric][percentile];
    const g = el("g", { class: "operating", id: `${svg.id}-operating`, "data-rate": row.request_rate, "data-value": value ?? "" });
    const px = x(row.request_rate);
    g.append(el("line", { x1: px, x2: px, y1: top, y2: bottom }));
    if (value != null) {
      const py = y(Math.min(value, axis.top));
      g.append(el("circle", { cx: px, cy: py, r: 5.5 }));
      const leftSide = px > (left + right) / 2;
      const pointLabel = el(
        "text",
        { x: leftSide ? px - 8 : px + 8, y: Math.max(top + 12, py - 10), class: `point-label${leftSide ? " end" : ""}` },
        `${fmt.ms(value)} ms at ${fmt.rate(row.request_rate)}/s`,
      );
      g.append(pointLabel);
      svg.append(g);
      if (sloLabel) separate(sloLabel, pointLabel, { py, top, bottom, left });
    } else {
      svg.append(g);
    }
  }
}

// Space kept between two labels, px: closer than this they read as one.
const LABEL_GAP = 4;

function overlap(a, b) {
  const r = a.getBBox();
  const q = b.getBBox();
  if (!r.width || !q.width) return false; // not laid out (a hidden chart): nothing to compare
  const gap = LABEL_GAP;
  return r.x < q.x + q.width + gap && q.x < r.x + r.width + gap && r.y < q.y + q.height + gap && q.y < r.y + r.height + gap;
}

/** Keep the point's label off the SLO's: below the point, else the SLO label to the line's left end. */
function separate(sloLabel, pointLabel, { py, top, bottom, left }) {
  if (!overlap(sloLabel, pointLabel)) return;
  const below = py + 18;
  if (below < bottom - 4) {
    pointLabel.setAttribute("y", String(below));
    if (!overlap(sloLabel, pointLabel)) return;
    pointLabel.setAttribute("y", String(Math.max(top + 12, py - 10)));
  }
  sloLabel.setAttribute("x", String(left + 4));
  sloLabel.style.textAnchor = "start";
  if (overlap(sloLabel, pointLabel)) pointLabel.setAttribute("y", String(Math.min(bottom - 4, below)));
}

// --- how the fleet is paid for --------------------------------------------------------------

const SPLIT = [
  ["committed_cost_usd", "split-committed"],
  ["on_demand_cost_usd", "split-on-demand"],
  ["spot_cost_usd", "split-spot"],
];

/**
 * Each period's cost as stacked bars (committed, on demand, spot) and what renting every GPU
 * on demand would have cost as a line over them.
 * @param {SVGSVGElement} svg
 * @param {object[]} periods rows of the answer's `procurement.periods`
 */
export function drawSplit(svg, periods) {
  const width = widthOf(svg);
  const narrow = width < 520;
  const height = narrow ? 230 : 260;
  const margin = { top: 16, right: 14, bottom: 52, left: narrow ? 46 : 58 };
  frame(svg, width, height);
  svg.dataset.points = String(periods.length);
  if (!periods.length) return;
  const left = margin.left;
  const right = width - margin.right;
  const bottom = height - margin.bottom;
  const top = margin.top;
  const band = (right - left) / periods.length;
  const cx = (i) => left + band * (i + 0.5);
  const axis = niceAxis(Math.max(...periods.map((p) => Math.max(p.cost_usd ?? 0, p.on_demand_only_cost_usd ?? 0))) * 1.08, narrow ? 4 : 5);
  const y = linear(axis.top, bottom, top);
  const grid = el("g", { class: "grid" });
  for (let value = 0; value <= axis.top + 1e-9; value += axis.step) {
    grid.append(el("line", { x1: left, x2: right, y1: y(value), y2: y(value) }));
    grid.append(el("text", { x: left - 6, y: y(value) + 4, class: "tick tick-y" }, fmt.usdShort(value)));
  }
  const every = Math.max(1, Math.ceil((periods.length * (narrow ? 46 : 58)) / (right - left)));
  periods.forEach((p, i) => {
    if (i % every === 0) grid.append(el("text", { x: cx(i), y: bottom + 16, class: "tick tick-x" }, String(p.period)));
  });
  svg.append(grid);
  axisTitle(svg, 12, (top + bottom) / 2, "cost in the period", true);
  axisTitle(svg, (left + right) / 2, height - 8, "period");
  const barWidth = Math.max(3, Math.min(44, band * 0.6));
  const bars = el("g", { class: "split-bars" });
  periods.forEach((p, i) => {
    const group = el("g", {
      class: "split-period",
      "data-index": i,
      "data-period": p.period,
      "data-committed-gpus": p.committed_gpus,
      "data-on-demand-gpus": p.on_demand_gpus,
      "data-spot-gpus": p.spot_gpus,
      "data-committed-cost-usd": p.committed_cost_usd,
      "data-on-demand-cost-usd": p.on_demand_cost_usd,
      "data-spot-cost-usd": p.spot_cost_usd,
      "data-cost-usd": p.cost_usd,
      "data-on-demand-only-cost-usd": p.on_demand_only_cost_usd,
    });
    group.append(
      el(
        "title",
        {},
        `${p.period}: ${fmt.usd(p.cost_usd)} (committed ${fmt.whole(p.committed_gpus)} GPUs ${fmt.usd(p.committed_cost_usd)}, on demand ${fmt.whole(p.on_demand_gpus)} GPUs ${fmt.usd(p.on_demand_cost_usd)}, spot ${fmt.whole(p.spot_gpus)} GPUs ${fmt.usd(p.spot_cost_usd)}); every GPU on demand ${fmt.usd(p.on_demand_only_cost_usd)}`,
      ),
    );
    let base = 0;
    for (const [key, cls] of SPLIT) {
      const value = p[key] ?? 0;
      if (value > 0) {
        group.append(el("rect", { x: cx(i) - barWidth / 2, y: y(base + value), width: barWidth, height: Math.max(0, y(base) - y(base + value)), class: `split-bar ${cls}` }));
      }
      base += value;
    }
    bars.append(group);
  });
  svg.append(bars);
  const d = periods.map((p, i) => `${i ? "L" : "M"}${cx(i).toFixed(1)},${y(p.on_demand_only_cost_usd ?? 0).toFixed(1)}`).join(" ");
  svg.append(el("path", { d, class: "series series-all-on-demand" }));
  if (periods.length === 1) {
    const py = y(periods[0].on_demand_only_cost_usd ?? 0);
    svg.append(el("line", { x1: cx(0) - barWidth, x2: cx(0) + barWidth, y1: py, y2: py, class: "series series-all-on-demand" }));
  }
}

/**
 * Owning against renting: both cumulative costs month by month (the answer's
 * `ownership.months`), the break-even month marked where the answer gives one.
 * @param {SVGSVGElement} svg
 * @param {object[]} months rows of {month, owned_usd, rented_usd}
 * @param {number|null} breakEven months
 */
export function drawOwning(svg, months, breakEven) {
  const width = widthOf(svg);
  const narrow = width < 520;
  const height = narrow ? 220 : 250;
  const margin = { top: 16, right: 14, bottom: 46, left: narrow ? 46 : 58 };
  frame(svg, width, height);
  svg.dataset.points = String(months.length);
  svg.dataset.breakEvenMonths = breakEven ?? "";
  if (!months.length) return;
  const left = margin.left;
  const right = width - margin.right;
  const bottom = height - margin.bottom;
  const top = margin.top;
  const last = months[months.length - 1].month || 1;
  const x = linear(last, left, right);
  const axis = niceAxis(Math.max(...months.map((m) => Math.max(m.owned_usd, m.rented_usd))) * 1.05, narrow ? 4 : 5);
  const y = linear(axis.top, bottom, top);
  const grid = el("g", { class: "grid" });
  for (let value = 0; value <= axis.top + 1e-9; value += axis.step) {
    grid.append(el("line", { x1: left, x2: right, y1: y(value), y2: y(value) }));
    grid.append(el("text", { x: left - 6, y: y(value) + 4, class: "tick tick-y" }, fmt.usdShort(value)));
  }
  const monthAxis = niceAxis(last, narrow ? 4 : 8);
  for (let value = 0; value <= last + 1e-9; value += monthAxis.step) {
    grid.append(el("text", { x: x(value), y: bottom + 16, class: "tick tick-x" }, fmt.whole(value)));
  }
  svg.append(grid);
  axisTitle(svg, 12, (top + bottom) / 2, "paid so far", true);
  axisTitle(svg, (left + right) / 2, height - 6, "months");
  for (const [key, cls] of [["owned_usd", "series-owned"], ["rented_usd", "series-rented"]]) {
    const d = months.map((m, i) => `${i ? "L" : "M"}${x(m.month).toFixed(1)},${y(m[key]).toFixed(1)}`).join(" ");
    svg.append(el("path", { d, class: `series ${cls}`, "data-series": key }));
  }
  const points = el("g", { class: "points" });
  for (const m of months) {
    points.append(el("g", { class: "owning-month", "data-month": m.month, "data-owned-usd": m.owned_usd, "data-rented-usd": m.rented_usd }));
  }
  svg.append(points);
  if (breakEven != null && breakEven <= last) {
    const g = el("g", { class: "break-even", "data-months": breakEven });
    g.append(el("line", { x1: x(breakEven), x2: x(breakEven), y1: top, y2: bottom, "stroke-dasharray": "4 4" }));
    const leftSide = x(breakEven) > (left + right) * 0.7;
    g.append(
      el("text", { x: leftSide ? x(breakEven) - 6 : x(breakEven) + 6, y: top + 12, class: `point-label${leftSide ? " end" : ""}` }, `break-even after ${fmt.count(breakEven)} months`),
    );
    svg.append(g);
  }
}

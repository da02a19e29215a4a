// Time per token against concurrency, as plain SVG. Only scales and drawing: every y value
// is a `sweep` row of a /v1/throughput answer.

import * as fmt from "./format.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 880;
const HEIGHT = 300;
const MARGIN = { top: 20, right: 20, bottom: 46, left: 58 };

function el(name, attributes = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A round upper bound for the y axis and its tick step. */
function niceAxis(max) {
  const target = max > 0 ? max : 1;
  const rough = target / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough);
  return { top: Math.ceil(target / step) * step, step };
}

function logScale(domainMax, rangeMin, rangeMax) {
  const span = Math.log2(Math.max(domainMax, 2));
  return (value) => rangeMin + (Math.log2(Math.max(value, 1)) / span) * (rangeMax - rangeMin);
}

function linearScale(domainMax, rangeMin, rangeMax) {
  return (value) => rangeMin - (value / domainMax) * (rangeMin - rangeMax);
}

function path(rows, x, y, key) {
  return rows
    .filter((row) => row[key] != null)
    .map((row, i) => `${i ? "L" : "M"}${x(row.concurrency).toFixed(1)},${y(row[key]).toFixed(1)}`)
    .join(" ");
}

/**
 * Draw the chart into `svg`.
 * @param {SVGSVGElement} svg
 * @param {{rows: object[], top: number, current: object, crossover: number|null, maxConcurrency: number}} data
 */
export function drawChart(svg, { rows, top, current, crossover, maxConcurrency }) {
  svg.replaceChildren();
  const left = MARGIN.left;
  const right = WIDTH - MARGIN.right;
  const bottom = HEIGHT - MARGIN.bottom;
  const x = logScale(top, left, right);
  const highest = Math.max(...rows.map((row) => row.time_per_token_ms), current?.time_per_token_ms ?? 0);
  const yAxis = niceAxis(highest * 1.05);
  const y = linearScale(yAxis.top, bottom, MARGIN.top);

  const grid = el("g", { class: "grid" });
  for (let value = 0; value <= yAxis.top + 1e-9; value += yAxis.step) {
    const py = y(value);
    grid.append(el("line", { x1: left, x2: right, y1: py, y2: py }));
    grid.append(el("text", { x: left - 8, y: py + 4, class: "tick tick-y" }, fmt.ms(value).replace(/\.0+$/, "")));
  }
  for (let value = 1; value <= top; value *= 2) {
    const px = x(value);
    grid.append(el("line", { x1: px, x2: px, y1: MARGIN.top, y2: bottom, class: "grid-x" }));
    grid.append(el("text", { x: px, y: bottom + 18, class: "tick tick-x" }, fmt.whole(value)));
  }
  svg.append(grid);
  svg.append(el("text", { x: (left + right) / 2, y: HEIGHT - 6, class: "axis-title" }, "concurrent requests (log scale)"));
  svg.append(
    el("text", { x: 14, y: (MARGIN.top + bottom) / 2, class: "axis-title", transform: `rotate(-90 14 ${(MARGIN.top + bottom) / 2})` }, "ms per token"),
  );

  // Beyond the KV cache: the API's max_concurrency, drawn where it falls on the axis.
  if (maxConcurrency < top) {
    const from = maxConcurrency >= 1 ? x(maxConcurrency) : left;
    const overflow = el("g", { class: "overflow", id: "overflow-region" });
    overflow.append(el("rect", { x: from, y: MARGIN.top, width: right - from, height: bottom - MARGIN.top }));
    overflow.append(
      el("text", { x: right - 6, y: MARGIN.top + 14, class: "overflow-label" }, maxConcurrency >= 1 ? `over ${fmt.whole(maxConcurrency)}: KV cache full` : "weights do not fit"),
    );
    svg.append(overflow);
  }

  svg.append(el("path", { d: path(rows, x, y, "memory_ms"), class: "series series-memory" }));
  svg.append(el("path", { d: path(rows, x, y, "compute_ms"), class: "series series-compute" }));
  svg.append(el("path", { d: path(rows, x, y, "time_per_token_ms"), class: "series series-total" }));

  if (crossover != null && crossover <= top) {
    const px = x(crossover);
    const group = el("g", { class: "crossover", id: "crossover", "data-concurrency": crossover });
    group.append(el("line", { x1: px, x2: px, y1: MARGIN.top, y2: bottom, "stroke-dasharray": "7 5", id: "crossover-line" }));
    const anchorEnd = px > right - 150;
    group.append(
      el("text", { x: anchorEnd ? px - 8 : px + 8, y: bottom - 10, class: `crossover-label${anchorEnd ? " end" : ""}` }, `crossover ≈ ${fmt.whole(crossover)}`),
    );
    svg.append(group);
  }

  if (current && current.concurrency <= top) {
    const px = x(current.concurrency);
    const py = y(current.time_per_token_ms);
    const marker = el("g", { class: "current" });
    marker.append(el("circle", { cx: px, cy: py, r: 5.5 }));
    // Above and to the left, where the curve is lower; to the right near the left edge.
    const labelRight = px < left + 170;
    marker.append(
      el("text", { x: labelRight ? px + 10 : px - 10, y: py < MARGIN.top + 24 ? py + 24 : py - 12, class: `current-label${labelRight ? "" : " end"}` }, `${fmt.ms(current.time_per_token_ms)} ms at ${fmt.whole(current.concurrency)}`),
    );
    svg.append(marker);
  }
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
}

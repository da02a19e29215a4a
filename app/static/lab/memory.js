// The memory bar: weights, KV cache at the chosen concurrency and what is left, against the
// card's memory and the usable line (gpu_memory_utilization). Widths are scales of the
// API's byte counts.

import * as fmt from "./format.js";

/** A part of the bar, labelled in full when wide, by its size alone when narrower. */
function segment(className, share, name, bytes, title) {
  const node = document.createElement("div");
  node.className = `segment ${className}`;
  node.style.width = `${Math.max(0, share) * 100}%`;
  node.title = title;
  if (share > 0.07) {
    const text = document.createElement("span");
    text.textContent = share > 0.17 ? `${name} ${fmt.gb(bytes)}` : fmt.gb(bytes);
    node.append(text);
  }
  return node;
}

function legendItem(className, name, value) {
  const item = document.createElement("li");
  const swatch = document.createElement("span");
  swatch.className = `swatch ${className}`;
  swatch.setAttribute("aria-hidden", "true");
  const strong = document.createElement("strong");
  strong.textContent = value;
  item.append(swatch, `${name} `, strong);
  return item;
}

/**
 * @param {HTMLElement} bar
 * @param {HTMLElement} legend
 * @param {object} body a /v1/throughput (or /v1/fit) answer
 */
export function drawMemory(bar, legend, body) {
  const capacity = body.memory_gb_per_gpu * 1e9 * body.gpus;
  const weights = body.weights_bytes;
  const kv = body.kv_bytes_at_concurrency;
  const used = body.memory_used_bytes;
  const usable = body.usable_bytes;
  const scale = Math.max(capacity, used);
  const share = (bytes) => bytes / scale;

  const track = document.createElement("div");
  track.className = "track";
  const free = Math.max(0, usable - used);
  const over = Math.max(0, used - usable);
  track.append(
    segment("weights", share(weights), "weights", weights, `Weights: ${fmt.gb(weights)}`),
    segment("kv", share(kv), "KV cache", kv, `KV cache at ${body.concurrency} requests: ${fmt.gb(kv)}`),
    segment("free", share(free), "free", free, `Free for more KV cache: ${fmt.gb(free)}`),
  );

  // What does not fit: a red bracket under the bar, from the usable line to the end of use.
  const overZone = document.createElement("div");
  overZone.className = "over-zone";
  overZone.hidden = over <= 0;
  overZone.style.left = `${share(usable) * 100}%`;
  overZone.style.width = `${share(over) * 100}%`;
  const overLabel = document.createElement("span");
  overLabel.textContent = `${fmt.gb(over)} over the usable memory`;
  overZone.append(overLabel);

  const line = document.createElement("div");
  line.className = "usable-line";
  line.id = "usable-line";
  line.style.left = `${share(usable) * 100}%`;
  const lineLabel = document.createElement("span");
  lineLabel.textContent = `${fmt.percent(usable / capacity)} usable · ${fmt.gb(usable)}`;
  line.append(lineLabel);
  line.classList.toggle("label-after", share(usable) < 0.3);

  const end = document.createElement("div");
  end.className = "capacity-line";
  end.style.left = `${share(capacity) * 100}%`;

  bar.replaceChildren(track, overZone, line, end);
  bar.classList.toggle("overflowing", used > usable);
  bar.setAttribute(
    "aria-label",
    `Memory: weights ${fmt.gb(weights)}, KV cache ${fmt.gb(kv)}, ${used > usable ? `over the usable ${fmt.gb(usable)} by ${fmt.gb(over)}` : `${fmt.gb(free)} free of ${fmt.gb(usable)} usable`}, on ${fmt.gb(capacity)} of GPU memory`,
  );

  legend.replaceChildren(
    legendItem("weights", "Weights", fmt.gb(weights)),
    legendItem("kv", `KV cache at ${fmt.whole(body.concurrency)} request${body.concurrency === 1 ? "" : "s"}`, fmt.gb(kv)),
    legendItem(used > usable ? "over" : "free", used > usable ? "Short by" : "Free", fmt.gb(used > usable ? over : free)),
    legendItem("usable", "Usable", `${fmt.gb(usable)} of ${fmt.gb(capacity)}`),
  );
}

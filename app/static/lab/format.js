// Formatting only: units and digits. No figure is computed here. What the planner shows alike
// comes from ../common/format.js; the rest is the lab's own.

import { integer, numberFormat, significant3, ms as commonMs } from "../common/format.js";

export { count, percent, usd, whole } from "../common/format.js";

/** Milliseconds with three significant digits, trailing zeros kept: 6.86, 15.1, 534, 5.00. */
export function ms(value) {
  return commonMs(value, { pad: true });
}

/** A duration given in ms, in ms below a second and in seconds above: [text, unit]. */
export function duration(valueMs) {
  if (valueMs == null) return ["–", "ms"];
  if (valueMs < 1000) return [ms(valueMs), "ms"];
  const seconds = valueMs / 1000;
  return [numberFormat({ maximumSignificantDigits: 3 }).format(seconds), "s"];
}

/** A duration given in ms, in the unit given ("ms" or "s"): both ends of a range in one unit. */
export function durationIn(valueMs, unit) {
  if (valueMs == null || Number.isNaN(valueMs)) return "–";
  if (unit === "s") return numberFormat({ maximumSignificantDigits: 3 }).format(valueMs / 1000);
  return ms(valueMs);
}

/** Bytes as decimal gigabytes (the API's `_gb` is 10^9 bytes). */
export function gb(bytes) {
  if (bytes == null) return "–";
  const value = bytes / 1e9;
  return `${numberFormat({ maximumFractionDigits: value < 10 ? 2 : 1 }).format(value)} GB`;
}

/** Bytes in binary units, for per-token sizes: 131072 -> "128 KiB". */
export function binary(bytes) {
  if (bytes == null) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${numberFormat({ maximumSignificantDigits: 4 }).format(value)} ${units[unit]}`;
}

/** A FLOP count: 1.04e12 -> "1.04 TFLOP". */
export function flops(value) {
  if (value == null) return "–";
  const prefixes = ["", "k", "M", "G", "T", "P", "E"];
  let scaled = value;
  let index = 0;
  while (Math.abs(scaled) >= 1000 && index < prefixes.length - 1) {
    scaled /= 1000;
    index += 1;
  }
  return `${significant3.format(scaled)} ${prefixes[index]}FLOP`;
}

/** Any value of the API answer, for the table of every figure. */
export function raw(value) {
  if (value == null) return "null";
  if (typeof value === "number") {
    return Number.isInteger(value) ? integer.format(value) : numberFormat({ maximumSignificantDigits: 6 }).format(value);
  }
  if (Array.isArray(value)) return value.length ? value.map(raw).join(", ") : "none";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

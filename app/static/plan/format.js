// Formatting only: units and digits. No figure is computed here. What the lab shows alike
// comes from ../common/format.js (ms without trailing zeros: 5 -> "5"); the rest is the
// planner's own.

import { integer, numberFormat, significant3 } from "../common/format.js";

export { count, ms, percent, usd, whole } from "../common/format.js";

/** Requests per second: 9.96, 0.5, 120. */
export function rate(value) {
  if (value == null || Number.isNaN(value)) return "–";
  return numberFormat({ maximumSignificantDigits: 3 }).format(value);
}

/** Dollars for an axis: $12k, $1.2M. */
export function usdShort(value) {
  if (value == null || Number.isNaN(value)) return "–";
  if (value >= 1e6) return `$${numberFormat({ maximumSignificantDigits: 3 }).format(value / 1e6)}M`;
  if (value >= 1e3) return `$${numberFormat({ maximumSignificantDigits: 3 }).format(value / 1e3)}k`;
  return `$${integer.format(value)}`;
}

/** A large count, short: 1.25M, 350k. */
export function short(value) {
  if (value == null || Number.isNaN(value)) return "–";
  if (Math.abs(value) >= 1e9) return `${significant3.format(value / 1e9)}G`;
  if (Math.abs(value) >= 1e6) return `${significant3.format(value / 1e6)}M`;
  if (Math.abs(value) >= 1e4) return `${significant3.format(value / 1e3)}k`;
  return significant3.format(value);
}

/** Bytes in decimal units: 1,048,576,000 -> "1.05 GB". */
export function bytes(value) {
  if (value == null || Number.isNaN(value)) return "–";
  for (const [size, unit] of [[1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"]]) {
    if (Math.abs(value) >= size) return `${significant3.format(value / size)} ${unit}`;
  }
  return `${integer.format(value)} B`;
}

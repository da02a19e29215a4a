// Formatting only: units and digits, as both pages show them. No figure is computed here. A
// page's own format.js re-exports these beside the formatters only it uses.

const LOCALE = "en-US";

export function numberFormat(options) {
  return new Intl.NumberFormat(LOCALE, options);
}

export const significant3 = numberFormat({ maximumSignificantDigits: 3 });
export const integer = numberFormat({ maximumFractionDigits: 0 });

/** A rate or count to three significant digits: 8122.8 -> "8,120"; 145.7 -> "146". */
export function count(value) {
  if (value == null || Number.isNaN(value)) return "–";
  return significant3.format(value);
}

/** A whole number with thousands separators. */
export function whole(value) {
  if (value == null || Number.isNaN(value)) return "–";
  return integer.format(value);
}

/** Milliseconds with three significant digits: 6.86, 15.1, 534; whole from a second: 1,500.
 * With `pad`, trailing zeros stay: 5 -> "5.00" (the lab), else 5 -> "5" (the planner). */
export function ms(value, { pad = false } = {}) {
  if (value == null || Number.isNaN(value)) return "–";
  if (value >= 1000) return integer.format(value);
  return numberFormat(pad ? { minimumSignificantDigits: 3, maximumSignificantDigits: 3 } : { maximumSignificantDigits: 3 }).format(value);
}

/** US dollars: $10,950, $5.83, $0.211, $0.0042. */
export function usd(value) {
  if (value == null || Number.isNaN(value)) return "–";
  if (value >= 100) return `$${integer.format(value)}`;
  if (value >= 1) return `$${numberFormat({ minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value)}`;
  return `$${numberFormat({ maximumSignificantDigits: 3 }).format(value)}`;
}

/** A share in [0, 1] as a percentage. */
export function percent(share, digits = 0) {
  if (share == null || Number.isNaN(share)) return "–";
  return `${numberFormat({ maximumFractionDigits: digits, minimumFractionDigits: digits }).format(share * 100)}%`;
}

// Formatting only: units and digits. No figure is computed here.

const LOCALE = "en-US";

function numberFormat(options) {
  return new Intl.NumberFormat(LOCALE, options);
}

const significant3 = numberFormat({ maximumSignificantDigits: 3 });
const integer = numberFormat({ maximumFractionDigits: 0 });

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

/** Milliseconds with three significant digits: 6.86, 15.1, 534, 1,500. */
export function ms(value) {
  if (value == null || Number.isNaN(value)) return "–";
  if (value >= 1000) return integer.format(value);
  return numberFormat({ maximumSignificantDigits: 3 }).format(value);
}

/** Requests per second: 9.96, 0.5, 120. */
export function rate(value) {
  if (value == null || Number.isNaN(value)) return "–";
  return numberFormat({ maximumSignificantDigits: 3 }).format(value);
}

/** US dollars: $10,950, $5.83, $0.211. */
export function usd(value) {
  if (value == null || Number.isNaN(value)) return "–";
  if (value >= 100) return `$${integer.format(value)}`;
  if (value >= 1) return `$${numberFormat({ minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value)}`;
  return `$${numberFormat({ maximumSignificantDigits: 3 }).format(value)}`;
}

/** Dollars for an axis: $12k, $1.2M. */
export function usdShort(value) {
  if (value == null || Number.isNaN(value)) return "–";
  if (value >= 1e6) return `$${numberFormat({ maximumSignificantDigits: 3 }).format(value / 1e6)}M`;
  if (value >= 1e3) return `$${numberFormat({ maximumSignificantDigits: 3 }).format(value / 1e3)}k`;
  return `$${integer.format(value)}`;
}

/** A share in [0, 1] as a percentage. */
export function percent(share, digits = 0) {
  if (share == null || Number.isNaN(share)) return "–";
  return `${numberFormat({ maximumFractionDigits: digits, minimumFractionDigits: digits }).format(share * 100)}%`;
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

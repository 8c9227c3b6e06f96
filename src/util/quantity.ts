/**
 * Kubernetes resource quantities ("100m", "0.5", "64Mi", "1G", "1e3"), as upstream's
 * k8s.io/apimachinery/pkg/api/resource.Quantity parses them:
 *
 *   <quantity>  ::= <sign>? <number> <suffix>
 *   <number>    ::= <digits> | <digits> "." <digits>? | "." <digits>
 *   <suffix>    ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E)
 *                 | ("e" | "E") <sign>? <digits>
 *
 * Values are returned as JavaScript numbers (base units: cores for cpu, bytes for memory).
 * Above 2^53 they lose precision, which no kubelet decision depends on.
 */
import { kubeletErrorClass } from '../errors.js';

const BINARY_SUFFIX: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const DECIMAL_EXPONENT: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

const QUANTITY_RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE]?)$/;

/** Parses a quantity; returns undefined when `s` is not one. Accepts numbers as they are. */
export function tryParseQuantity(s: string | number): number | undefined {
  if (typeof s === 'number') return Number.isFinite(s) ? s : undefined;
  if (typeof s !== 'string') return undefined;
  const m = QUANTITY_RE.exec(s.trim() === s ? s : '');
  if (!m) return undefined;
  const [, sign, digits, suffix] = m as unknown as [string, string, string, string];
  let exp: number;
  let factor = 1;
  if (suffix in BINARY_SUFFIX) {
    exp = 0;
    factor = BINARY_SUFFIX[suffix]!;
  } else if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    exp = Number(suffix.slice(1));
  } else {
    exp = DECIMAL_EXPONENT[suffix]!;
  }
  // Scale through the decimal string rather than multiplying, so "0.1" * 10^3 stays exact.
  const value = Number(`${digits}e${exp}`) * factor;
  if (!Number.isFinite(value)) return undefined;
  return sign === '-' ? -value : value;
}

/** A quantity that does not parse; callers wrap it with the field it came from. */
export class QuantityError extends kubeletErrorClass('KTS_ERR_MANIFEST') {}

/** Parses a quantity or throws a QuantityError naming the bad text. */
export function parseQuantity(s: string | number): number {
  const v = tryParseQuantity(s);
  if (v === undefined) {
    throw new QuantityError(
      `${JSON.stringify(s)} is not a valid quantity (examples: "100m", "0.5", "64Mi", "1G", "1e3")`,
    );
  }
  return v;
}

/** Quantity.MilliValue(): the value in thousandths, rounded up ("100m" → 100, "0.5" → 500). */
export function parseMilliValue(s: string | number): number {
  return Math.ceil(roundNoise(parseQuantity(s) * 1000));
}

/** Quantity.Value(): the value rounded up to an integer ("100m" → 1, "64Mi" → 67108864). */
export function parseIntValue(s: string | number): number {
  return Math.ceil(roundNoise(parseQuantity(s)));
}

/** Drops binary floating-point noise (0.1*3*1000 = 300.00000000000006) before rounding up. */
function roundNoise(x: number): number {
  const r = Math.round(x);
  return Math.abs(x - r) < 1e-9 * Math.max(1, Math.abs(x)) ? r : x;
}

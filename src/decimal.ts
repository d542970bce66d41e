// Exact arithmetic on decimal text (money, prices, rates, totals) with BigInt, never JavaScript
// floats, and the plain text forms decimals are written in. The one home of these rules: catalog
// ordering and clustering, footer totals, market changes, FX bounds and analytics answers use it.

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;
/** the most decimals isDecimalText accepts (PostgreSQL's and DuckDB's widest DECIMAL) */
const MAX_SCALE = 38;

/** A decimal as integer units of 10^-scale: `-12.50` is { units: -1250n, scale: 2 }. */
export interface Scaled {
  units: bigint;
  scale: number;
}

/** Whether parseDecimal reads the text, within a size that BigInt parses at once (80 characters, 38 decimals). */
export function isDecimalText(text: string): boolean {
  const m = DECIMAL.exec(text);
  return (
    m !== null &&
    (m[2]! + (m[3] ?? '')).length > 0 &&
    (m[3] ?? '').length <= MAX_SCALE &&
    text.length <= 80
  );
}

/** A plain decimal (a sign, digits, a point; spaces around it) as units; throws on any other text. */
export function parseDecimal(text: string): Scaled {
  const m = DECIMAL.exec(text.trim());
  if (!m || (m[2]! + (m[3] ?? '')).length === 0) throw new Error(`not a decimal: ${text}`);
  const frac = m[3] ?? '';
  const units = BigInt((m[2] || '0') + frac);
  return { units: m[1] === '-' ? -units : units, scale: frac.length };
}

function rescale(value: Scaled, scale: number): bigint {
  if (scale < value.scale)
    throw new Error(`a decimal with ${value.scale} decimals does not fit ${scale}`);
  return value.units * 10n ** BigInt(scale - value.scale);
}

/** The decimal as units of 10^-scale; throws when it has more decimals than that. */
export function unitsAt(text: string, scale: number): bigint {
  return rescale(parseDecimal(text), scale);
}

/** Every value as units at one common scale: the largest number of decimals among them. */
export function atCommonScale(values: readonly string[]): { scale: number; units: bigint[] } {
  const parsed = values.map(parseDecimal);
  const scale = parsed.reduce((max, p) => Math.max(max, p.scale), 0);
  return { scale, units: parsed.map((p) => rescale(p, scale)) };
}

/** Units at `scale` as text with exactly `scale` decimals: "12.50", "-0.03", "3". */
export function fixedText(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const out = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${out}` : out;
}

/** Units at `scale` as text without trailing zeros: "12.5", "-0.03", "0" (never "-0"). */
export function shortText(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  const text = frac ? `${whole}.${frac}` : whole;
  return negative && text !== '0' ? `-${text}` : text;
}

/** a + b with the larger number of decimals of the two: "1.50" + "2" is "3.50" (a total keeps its parts' decimals). */
export function addDecimals(a: string, b: string): string {
  const { scale, units } = atCommonScale([a, b]);
  return fixedText(units[0]! + units[1]!, scale);
}

/** a − b without trailing zeros: "10.25" − "10" is "0.25". */
export function subtractDecimals(a: string, b: string): string {
  const { scale, units } = atCommonScale([a, b]);
  return shortText(units[0]! - units[1]!, scale);
}

/** -1, 0 or 1 as a is less than, equal to or greater than b, by value ("2.50" equals "2.5"). */
export function compareDecimals(a: string, b: string): number {
  const { units } = atCommonScale([a, b]);
  return units[0]! === units[1]! ? 0 : units[0]! < units[1]! ? -1 : 1;
}

/** part / whole × 100, rounded half away from zero to `digits` decimals; null when whole is 0. */
export function decimalPercent(part: string, whole: string, digits = 4): string | null {
  // both at one scale, so their ratio is the decimals' ratio
  const [x, y] = atCommonScale([part, whole]).units as [bigint, bigint];
  if (y === 0n) return null;
  // twice x/y × 100 × 10^digits, halved after the division: rounds half away from zero
  let q = (x * 100n * 10n ** BigInt(digits) * 2n) / y;
  q = q >= 0n ? (q + 1n) / 2n : (q - 1n) / 2n;
  return shortText(q, digits);
}

/** The scale of every converted (US dollar) amount an answer gives: docs/money.md. */
export const USD_SCALE = 10;

/**
 * The decimal rounded to `scale` decimals, half to even (a tie goes to the even last digit:
 * 0.125 → 0.12, 0.135 → 0.14, -0.125 → -0.12), without trailing zeros; a decimal with no more
 * decimals than that is only written shortest.
 */
export function roundHalfEven(text: string, scale: number): string {
  const { units, scale: from } = parseDecimal(text);
  if (from <= scale) return shortText(units, from);
  const unit = 10n ** BigInt(from - scale);
  const magnitude = units < 0n ? -units : units;
  let q = magnitude / unit;
  const twice = (magnitude % unit) * 2n;
  if (twice > unit || (twice === unit && q % 2n === 1n)) q += 1n;
  return shortText(units < 0n ? -q : q, scale);
}

/**
 * The decimal rounded to `scale` decimals, half away from zero (0.125 → 0.13, -0.125 → -0.13), and
 * written with exactly that many: "3" to 2 is "3.00" (a statement's total as it prints it).
 */
export function roundHalfAwayFromZero(text: string, scale: number): string {
  const { units, scale: from } = parseDecimal(text);
  if (from <= scale) return fixedText(units * 10n ** BigInt(scale - from), scale);
  const unit = 10n ** BigInt(from - scale);
  const magnitude = units < 0n ? -units : units;
  const q = (magnitude + unit / 2n) / unit;
  return fixedText(units < 0n ? -q : q, scale);
}

/** `+0012.3400` as `12.34`, `-0` as `0`: a plain decimal in its shortest form; null for any other text. */
export function shortestDecimal(text: string): string | null {
  const m = /^([+-]?)(\d{1,400})(?:\.(\d{1,400}))?$/.exec(text);
  if (!m) return null;
  const whole = m[2]!.replace(/^0+(?=\d)/, '');
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  const zero = /^0*$/.test(whole) && fraction === '';
  return `${m[1] === '-' && !zero ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A number as plain decimal text, every digit of its shortest form and never exponent notation ('' when not finite). */
export function plainNumber(n: number): string {
  if (!Number.isFinite(n)) return '';
  const s = String(n);
  const e = s.search(/e/i);
  if (e < 0) return s;
  const negative = s.startsWith('-');
  const mantissa = s.slice(negative ? 1 : 0, e);
  const exponent = Number(s.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const point = (dot < 0 ? mantissa.length : dot) + exponent;
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? '-' : '') + out.replace(/^0+(?=\d)/, '');
}

// Exact arithmetic on decimal strings (prices, yields) with BigInt: never JavaScript floats.

function split(text: string): { units: bigint; scale: number } {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = m[3] ?? '';
  return { units: BigInt(`${m[1]}${m[2]}${frac}`), scale: frac.length };
}

function scaled(units: bigint, from: number, to: number): bigint {
  return units * 10n ** BigInt(to - from);
}

function format(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative && (whole !== '0' || frac !== '') ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

export function isDecimal(text: string): boolean {
  return /^-?\d+(\.\d+)?$/.test(text.trim());
}

export function decimalSub(a: string, b: string): string {
  const x = split(a);
  const y = split(b);
  const scale = Math.max(x.scale, y.scale);
  return format(scaled(x.units, x.scale, scale) - scaled(y.units, y.scale, scale), scale);
}

/** part / whole × 100, rounded half away from zero to `digits` decimals; null when whole is 0. */
export function decimalPercent(part: string, whole: string, digits = 4): string | null {
  const x = split(part);
  const y = split(whole);
  if (y.units === 0n) return null;
  // x/y × 100 × 10^digits, with both sides brought to one scale
  const scale = Math.max(x.scale, y.scale);
  const num = scaled(x.units, x.scale, scale) * 100n * 10n ** BigInt(digits) * 2n;
  const den = scaled(y.units, y.scale, scale);
  let q = num / den;
  q = q >= 0n ? (q + 1n) / 2n : (q - 1n) / 2n;
  return format(q, digits);
}

/** A JSON number as decimal text without exponent notation. */
export function numberText(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return value.toFixed(12).replace(/\.?0+$/, '');
}

// Exact sums of decimal strings: BigInt units at the largest scale among the inputs, never floats.

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;
const MAX_SCALE = 38;

export interface ScaledDecimals {
  scale: number;
  units: bigint[];
}

export function isDecimalText(text: string): boolean {
  const m = DECIMAL.exec(text);
  return m !== null && (m[2]! + (m[3] ?? '')).length > 0 && (m[3] ?? '').length <= MAX_SCALE && text.length <= 80;
}

/** Every value as integer units at one common scale (the largest number of decimals among them). */
export function toScaled(values: readonly string[]): ScaledDecimals {
  let scale = 0;
  for (const v of values) {
    const dot = v.indexOf('.');
    if (dot >= 0) scale = Math.max(scale, v.length - dot - 1);
  }
  const units = values.map((v) => {
    const m = DECIMAL.exec(v)!;
    const units = BigInt((m[2] || '0') + (m[3] ?? '').padEnd(scale, '0'));
    return m[1] === '-' ? -units : units;
  });
  return { scale, units };
}

/** Integer units at `scale` as decimal text without trailing zeros ("12.5", "-0.03", "0"). */
export function formatScaled(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  const text = frac ? `${whole}.${frac}` : whole;
  return negative && text !== '0' ? `-${text}` : text;
}

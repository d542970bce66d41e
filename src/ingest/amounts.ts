// The normalizer's amount reader (workers/normalize.ts, AMOUNT_MACRO: parse_amount) in JavaScript,
// rule for rule, for the few amounts read outside DuckDB: a statement's own footer totals, checked
// against the sum of its rows. test/ingest/footerTotals.test.ts runs both on the same inputs.
// Character loops only (no regular expression that could backtrack on hostile cell text).
import { fixedText } from '../decimal.ts';

/** Digits after the point of the normalizer's DECIMAL(38,12). */
const SCALE = 12;
/** DECIMAL(38,12) holds |value| < 10^26, i.e. |value * 10^12| < 10^38. */
const LIMIT = 10n ** 38n;
/** Exponents beyond this make any non-zero value overflow (or round to zero): not worth a BigInt power. */
const MAX_SHIFT = 200;

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
/** White space DuckDB's VARCHAR → DECIMAL cast ignores around a number. */
const castSpace = (c: string | undefined) =>
  c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f';
/** RE2's `\s` (DuckDB's regular expressions): no vertical tab, no Unicode spaces. */
const re2Space = (c: string | undefined) =>
  c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';

/**
 * Digits with single underscores between them (`1_000`), as DuckDB's cast reads them; returns the
 * index after the run and the digits without underscores.
 */
function digitRun(s: string, from: number, to: number): { end: number; digits: string } {
  let i = from;
  let digits = '';
  while (i < to) {
    if (isDigit(s[i])) digits += s[i++];
    else if (s[i] === '_' && digits !== '' && i + 1 < to && isDigit(s[i + 1])) i++;
    else break;
  }
  return { end: i, digits };
}

function shift(m: bigint, by: number): bigint | null {
  if (m === 0n) return 0n;
  if (by > MAX_SHIFT) return null;
  if (by >= 0) return m * 10n ** BigInt(by);
  if (-by > MAX_SHIFT) return 0n;
  const d = 10n ** BigInt(-by);
  const q = m / d;
  // half away from zero, as DuckDB rounds a cast to DECIMAL
  return (m % d) * 2n >= d ? q + 1n : q;
}

/**
 * DuckDB's `TRY_CAST(s AS DECIMAL(38,12))` (cast_amount: via DECIMAL(18,12), or HUGEINT for integer
 * text, which read the same values): the value times 10^12, or null. Surrounding white space, a
 * sign, digits with single underscores between them, a point, an exponent; rounded half away from
 * zero to 12 decimals.
 */
function castAmount(s: string): bigint | null {
  let i = 0;
  let j = s.length;
  while (i < j && castSpace(s[i])) i++;
  while (j > i && castSpace(s[j - 1])) j--;
  let negative = false;
  if (s[i] === '+' || s[i] === '-') negative = s[i++] === '-';
  const whole = digitRun(s, i, j);
  i = whole.end;
  let fraction = '';
  if (s[i] === '.') {
    const run = digitRun(s, i + 1, j);
    fraction = run.digits;
    i = run.end;
  }
  if (whole.digits === '' && fraction === '') return null;
  let exponent = 0;
  if (s[i] === 'e' || s[i] === 'E') {
    i++;
    let expNegative = false;
    if (s[i] === '+' || s[i] === '-') expNegative = s[i++] === '-';
    const run = digitRun(s, i, j);
    if (run.digits === '') return null;
    i = run.end;
    const digits = run.digits.replace(/^0+/, '');
    exponent = digits.length > 6 ? 10 * MAX_SHIFT : Number(digits);
    if (expNegative) exponent = -exponent;
  }
  if (i !== j) return null;
  // DuckDB reads the whole part into the DECIMAL before it applies an exponent: more than 26
  // significant digits there overflow, whatever the exponent (`1` and 26 zeros `E-1` is NULL); of
  // the fraction it keeps 38 digits, the rest dropped before the exponent applies
  // (`0.` 37 zeros `15E39` is 10). Both bound the BigInt below, whose decimal parsing is quadratic
  // in the length: a footer total of 400,000 digits took 0.4 s.
  const wholeDigits = whole.digits.replace(/^0+/, '');
  if (wholeDigits.length > 26) return null;
  const kept = fraction.slice(0, 38);
  const mantissa = BigInt(wholeDigits + kept || '0');
  const scaled = shift(mantissa, exponent - kept.length + SCALE);
  if (scaled === null || scaled >= LIMIT) return null;
  return negative ? -scaled : scaled;
}

/**
 * amount_sign: negative when in parentheses (a currency may stand outside them: `$ (1,234.56)`), a
 * minus (or U+2212) before the first digit, or a minus after the number (with a currency after or before it).
 */
function amountSign(s: string): 1 | -1 {
  // ^[^0-9]*\( and \)[^0-9]*$ : an opening parenthesis before the first digit, a closing one after the last
  let first = 0;
  while (first < s.length && !isDigit(s[first])) first++;
  let last = s.length;
  while (last > 0 && !isDigit(s[last - 1])) last--;
  if (s.slice(0, first).includes('(') && s.slice(last).includes(')')) return -1;
  // ^[^0-9]*[-−] : a minus before the first digit
  for (let i = 0; i < first; i++) if (s[i] === '-' || s[i] === '\u2212') return -1;
  return trailingMinus(s) ? -1 : 1;
}

const numberChar = (c: string | undefined) => isDigit(c) || c === '.' || c === ',';
const paren = (c: string | undefined) => c === '(' || c === ')';

/**
 * A minus after the number (SAP's `12.50-`), also with a currency after it or before it:
 * `[0-9.,]\s*-[^0-9()]*$` (`12.50- EUR`) or `[0-9.,][^0-9()]*-\s*$` (`12.50 EUR-`).
 */
function trailingMinus(s: string): boolean {
  // the second: the last character but white space is a minus, and left of it, before any parenthesis, a digit, point or comma
  let b = s.length;
  while (b > 0 && re2Space(s[b - 1])) b--;
  if (b > 0 && s[b - 1] === '-') {
    for (let i = b - 2; i >= 0 && !paren(s[i]); i--) if (numberChar(s[i])) return true;
  }
  // the first: a minus with white space and then a digit, point or comma left of it, and neither digit nor parenthesis right of it
  for (let k = s.length - 1; k >= 0 && !isDigit(s[k]) && !paren(s[k]); k--) {
    if (s[k] !== '-') continue;
    let p = k - 1;
    while (p >= 0 && re2Space(s[p])) p--;
    if (numberChar(s[p])) return true;
  }
  return false;
}

/** amount_digits: letter runs (currency codes) dropped, then all but digits, separators and an exponent's sign. */
function amountDigits(s: string): string {
  let out = '';
  for (let i = 0; i < s.length;) {
    const letters = letterRun(s, i);
    if (letters >= 2) {
      i += letters;
      continue;
    }
    const c = s[i]!;
    if (isDigit(c) || c === '.' || c === ',' || c === 'e' || c === 'E' || c === '+' || c === '-')
      out += c;
    i++;
  }
  return out
    .replaceAll('e-', 'E~')
    .replaceAll('E-', 'E~')
    .replaceAll('+', '')
    .replaceAll('-', '')
    .replaceAll('E~', 'E-');
}

function letterRun(s: string, from: number): number {
  let i = from;
  while (i < s.length && ((s[i]! >= 'A' && s[i]! <= 'Z') || (s[i]! >= 'a' && s[i]! <= 'z'))) i++;
  return i - from;
}

/** 10^20, scaled: a percentage at or beyond it is unreadable (percent_of). */
const PERCENT_LIMIT = 10n ** BigInt(20 + SCALE);

function parseAmountSlow(s: string, decimalComma: boolean): bigint | null {
  const digits = amountDigits(s);
  let value = castAmount(
    decimalComma ? digits.replaceAll('.', '').replaceAll(',', '.') : digits.replaceAll(',', ''),
  );
  // a percentage (85%) is the fraction (0.85), rounded half away from zero
  if (value !== null && s.includes('%')) value = value < PERCENT_LIMIT ? shift(value, -2) : null;
  return value === null ? null : value * BigInt(amountSign(s));
}

/**
 * A cell read as the normalizer reads an amount (`parse_amount(cell(text), decimalComma)`): currency
 * codes and symbols, thousands separators, `(1.23)`, `1.23-`, `−1.23`, `1.2E-05`; with
 * `decimalComma` the comma is the decimal separator and points group thousands (`1.237,10`).
 * Returns the value as DuckDB prints a DECIMAL(38,12) (`-1237.100000000000`), or null when empty
 * or unreadable.
 */
export function readAmount(text: string | null | undefined, decimalComma: boolean): string | null {
  if (text === null || text === undefined) return null;
  // cell(): surrounding spaces trimmed (spaces only, as DuckDB's trim), empty is NULL
  const s = text.startsWith(' ') || text.endsWith(' ') ? trimSpaces(text) : text;
  if (s === '') return null;
  let value: bigint | null;
  if (!decimalComma) value = castAmount(s) ?? parseAmountSlow(s, false);
  else
    value =
      (s.includes('.') ? null : castAmount(s.replaceAll(',', '.'))) ?? parseAmountSlow(s, true);
  return value === null ? null : fixedText(value, SCALE);
}

function trimSpaces(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s[a] === ' ') a++;
  while (b > a && s[b - 1] === ' ') b--;
  return s.slice(a, b);
}

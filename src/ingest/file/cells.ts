// What a cell holds, judged by character loops and anchored regular expressions without nested
// quantifiers, so hostile cell text cannot make them backtrack.

export type CellKind = 'empty' | 'number' | 'date' | 'id' | 'text';

const CURRENCY_SYMBOLS = new Set(['$', '€', '£', '¥', '₽', '₹', '₩']);
const GROUPING = new Set(["'", ' ', '\u00a0', '\u202f'].map((c) => c.charCodeAt(0)));
/**
 * The characters a number can start with (a digit, a separator, a sign, an opening parenthesis,
 * `US$` or a currency symbol): any other first character makes the text no number at once, which
 * is most text cells, read for every row of a file.
 */
const NUMBER_STARTS = new Set(
  ['(', '-', '+', '\u2212', 'U', '.', ',', ...CURRENCY_SYMBOLS].map((c) => c.charCodeAt(0)),
);

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** The digits-and-separators body of a number, or null when the text is not a number. */
export function numberBody(text: string): string | null {
  let s = text.trim();
  if (s.length === 0 || s.length > 64) return null;
  const first = s.charCodeAt(0);
  if (!isDigit(first) && !NUMBER_STARTS.has(first)) return null;
  if (s.startsWith('(') && s.endsWith(')')) s = s.slice(1, -1).trim();
  if (s.endsWith('%')) s = s.slice(0, -1).trim();
  if (s.startsWith('-') || s.startsWith('+') || s.startsWith('\u2212')) s = s.slice(1).trim();
  else if (s.endsWith('-')) s = s.slice(0, -1).trim();
  if (s.startsWith('US$')) s = s.slice(3).trim();
  if (s.length > 0 && CURRENCY_SYMBOLS.has(s[0]!)) s = s.slice(1).trim();
  if (s.length > 0 && CURRENCY_SYMBOLS.has(s[s.length - 1]!)) s = s.slice(0, -1).trim();
  if (s.startsWith('-')) s = s.slice(1);
  if (s.length === 0) return null;
  let digits = 0;
  let exponent = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) {
      digits++;
      continue;
    }
    // e E
    if ((c === 0x65 || c === 0x45) && exponent < 0 && digits > 0 && i + 1 < s.length) {
      exponent = i;
      // - +
      if (s.charCodeAt(i + 1) === 0x2d || s.charCodeAt(i + 1) === 0x2b) i++;
      continue;
    }
    if (exponent >= 0) return null;
    // . ,
    if (c === 0x2e || c === 0x2c) {
      if (i === s.length - 1) return null;
      continue;
    }
    if (GROUPING.has(c) && digits > 0 && i + 1 < s.length && isDigit(s.charCodeAt(i + 1))) continue;
    return null;
  }
  if (digits === 0) return null;
  return exponent >= 0 ? s.slice(0, exponent) : s;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const ISO_DATE = /^\d{4}[-/.]\d{1,2}([-/.]\d{1,2})?([ T][0-9:.APMapmZz+ -]{0,30})?$/;
const DMY_DATE = /^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}([ T][0-9:.APMapmZz+ -]{0,30})?$/;
const PERIOD = /^(\d{4}M\d{1,2}|[1-4]Q\d{4}|\d{4}Q[1-4]|Q[1-4] \d{4}|\d{4} ?- ?Q[1-4])$/i;

export function looksDate(text: string): boolean {
  const s = text.trim();
  if (s.length < 6 || s.length > 40) return false;
  // each of the three patterns starts with a digit or a Q
  const first = s.charCodeAt(0);
  if (
    (isDigit(first) || first === 0x51 || first === 0x71) &&
    (ISO_DATE.test(s) || DMY_DATE.test(s) || PERIOD.test(s))
  )
    return true;
  // "January 2024", "Mar 2024"
  const space = s.indexOf(' ');
  if (space >= 3 && space <= 9 && s.length - space - 1 === 4) {
    const month = s.slice(0, 3).toLowerCase();
    const year = s.slice(space + 1);
    if (MONTHS.includes(month) && /^\d{4}$/.test(year)) return true;
  }
  return false;
}

const ISRC = /^[A-Za-z]{2}-?[A-Za-z0-9]{3}-?\d{2}-?\d{5}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function cellKind(text: string): CellKind {
  const s = text.trim();
  if (s === '') return 'empty';
  if (looksDate(s)) return 'date';
  if (numberBody(s) !== null) return 'number';
  if (ISRC.test(s) || UUID.test(s)) return 'id';
  return 'text';
}

type NumberStyle = 'comma' | 'dot' | 'comma?' | 'dot?' | 'integer';

function numberStyle(body: string): NumberStyle {
  const lastComma = body.lastIndexOf(',');
  const lastDot = body.lastIndexOf('.');
  if (lastComma < 0 && lastDot < 0) return 'integer';
  if (lastComma >= 0 && lastDot >= 0) return lastComma > lastDot ? 'comma' : 'dot';
  const sep = lastComma >= 0 ? ',' : '.';
  const at = Math.max(lastComma, lastDot);
  let count = 0;
  for (let k = body.indexOf(sep); k >= 0; k = body.indexOf(sep, k + 1)) count++;
  // two of the same separator are thousands groups: 1,234,567 (dot decimals) or 1.234.567 (comma decimals)
  if (count > 1) return sep === ',' ? 'dot' : 'comma';
  const after = body.length - at - 1;
  if (after === 3) return sep === ',' ? 'comma?' : 'dot?';
  return sep === ',' ? 'comma' : 'dot';
}

/**
 * Per column: does it write numbers with a decimal comma? Decided on the whole sampled column;
 * a column whose only evidence is ambiguous (1,234 or 1.234) follows the rest of the file, and
 * a semicolon-delimited file leans to the decimal comma.
 */
export function decideDecimalComma(
  columns: readonly string[][],
  delimiter: string,
): (boolean | null)[] {
  const styles = columns.map((values) => {
    const seen = { comma: 0, dot: 0, 'comma?': 0, 'dot?': 0, integer: 0 };
    for (const v of values) {
      if (looksDate(v)) continue;
      const body = numberBody(v);
      if (body !== null) seen[numberStyle(body)]++;
    }
    return seen;
  });
  const fileComma =
    styles.some((s) => s.comma > 0 && s.dot === 0) &&
    !styles.some((s) => s.dot > 0 && s.comma === 0);
  const leanComma = fileComma || delimiter === ';';
  return styles.map((s) => {
    if (s.comma + s.dot + s['comma?'] + s['dot?'] + s.integer === 0) return null;
    if (s.comma > 0 && s.dot === 0) return true;
    if (s.dot > 0) return s.comma > s.dot;
    if (s['comma?'] > 0) return leanComma;
    if (s['dot?'] > 0) return fileComma;
    return false;
  });
}

type Order = 'MDY' | 'DMY' | 'YMD';

/** Per column: the day/month order of date-like columns (null for other columns). */
export function decideDateOrders(
  columns: readonly string[][],
  names: readonly string[],
  europeanLean: boolean,
): (Order | null)[] {
  const evidence = columns.map((values, i) => {
    const e = { ymd: 0, dmy: 0, mdy: 0, ambiguous: 0, dates: 0, nonEmpty: 0 };
    const name = (names[i] ?? '').toLowerCase();
    const compactDay = name.includes('date') || name.includes('day');
    for (const raw of values) {
      const v = raw.trim();
      if (v === '') continue;
      e.nonEmpty++;
      if (ISO_DATE.test(v)) {
        e.ymd++;
        e.dates++;
        continue;
      }
      if (DMY_DATE.test(v)) {
        e.dates++;
        const parts = v.split(/[-/. T]/);
        const a = Number(parts[0]);
        const b = Number(parts[1]);
        if (a > 12 && b <= 12) e.dmy++;
        else if (b > 12 && a <= 12) e.mdy++;
        else e.ambiguous++;
        continue;
      }
      // YouTube's Day column: 20240315 typed as an integer
      if (compactDay && /^(19|20)\d{6}$/.test(v)) {
        const month = Number(v.slice(4, 6));
        const day = Number(v.slice(6, 8));
        if (month >= 1 && month <= 12 && day >= 1 && day <= 31) {
          e.ymd++;
          e.dates++;
        }
      }
    }
    return e;
  });
  const decided = evidence.map((e): Order | 'ambiguous' | null => {
    if (e.dates === 0 || e.dates * 2 < e.nonEmpty) return null;
    if (e.ymd >= e.dmy + e.mdy + e.ambiguous) return 'YMD';
    if (e.dmy > e.mdy) return 'DMY';
    if (e.mdy > e.dmy) return 'MDY';
    return 'ambiguous';
  });
  // a column that cannot tell (every value 12 or less) follows the file's other date columns
  const known = decided.filter((d): d is Order => d === 'DMY' || d === 'MDY');
  const fallback: Order =
    known.includes('DMY') && !known.includes('MDY')
      ? 'DMY'
      : known.includes('MDY')
        ? 'MDY'
        : europeanLean
          ? 'DMY'
          : 'MDY';
  return decided.map((d) => (d === 'ambiguous' ? fallback : d));
}

// The two exchange-rate file formats: the European Central Bank's reference-rate CSV (daily
// `eurofxref.csv` and historical `eurofxref-hist.csv`: a Date column, one column per currency,
// euro base, N/A where none was published) and a plain long CSV `date,currency,rate` with the
// units of the currency for one US dollar.
import cc from 'currency-codes';
import { csvHeader, csvRows, onceEach, ReferenceFileError } from '../lookups/csv.ts';

export type FxFormat = 'ecb' | 'plain';

export interface ParsedRate {
  date: string;
  currency: string;
  /** ecb: units per euro; plain: units per US dollar. Decimal text, as published. */
  value: string;
}

export interface ParsedRates {
  format: FxFormat;
  rates: ParsedRate[];
  /** codes that are not current ISO 4217 currencies (e.g. the ECB history's CYP, EEK) */
  skippedCurrencies: string[];
}

const DECIMAL = /^\d{1,12}(\.\d{1,12})?$/;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

export function isCurrencyCode(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && cc.code(code) !== undefined;
}

function validDate(y: number, m: number, d: number): string | null {
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null;
  return date.toISOString().slice(0, 10);
}

/** `2024-09-26` (historical file) or `26 September 2024` (daily file). */
export function parseEcbDate(text: string): string | null {
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (m) return validDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2}) ([A-Za-z]+) (\d{4})$/.exec(text);
  if (m) {
    const month = MONTHS.indexOf(m[2]!.toLowerCase()) + 1;
    return month > 0 ? validDate(Number(m[3]), month, Number(m[1])) : null;
  }
  return null;
}

export function detectFxFormat(text: string): FxFormat | null {
  // the header line alone: a cut after a fixed number of characters could end inside a quoted cell
  const header = csvHeader(text).map((h) => h.trim());
  if (header.map((h) => h.toLowerCase()).join(',') === 'date,currency,rate') return 'plain';
  if (header[0] === 'Date' && header.slice(1).filter((h) => h !== '').every((h) => /^[A-Z]{3}$/.test(h))) return 'ecb';
  return null;
}

export function parseFxCsv(text: string, format?: FxFormat): ParsedRates {
  const detected = detectFxFormat(text);
  const chosen = format ?? detected;
  if (!chosen || (format && detected !== format)) {
    throw new ReferenceFileError(
      format
        ? `The file is not in the ${format === 'ecb' ? 'ECB reference-rate' : 'plain date,currency,rate'} format`
        : 'Unknown exchange-rate format: expected the ECB reference-rate CSV (Date,USD,JPY,…) or date,currency,rate',
    );
  }
  return chosen === 'ecb' ? parseEcb(text) : parsePlain(text);
}

function parseEcb(text: string): ParsedRates {
  const [header, ...rows] = csvRows(text);
  const columns = header!.map((h) => h.trim());
  if (!columns.includes('USD')) throw new ReferenceFileError('The ECB file has no USD column, so no rate can be converted to a US-dollar base');
  const skipped = new Set<string>();
  const rates: ParsedRate[] = [];
  const once = onceEach('date');
  for (const [n, row] of rows.entries()) {
    const date = parseEcbDate(row[0] ?? '');
    if (!date) throw new ReferenceFileError(`Line ${n + 2}: "${row[0]}" is not a date`);
    once(date, n + 2);
    for (let i = 1; i < columns.length; i++) {
      const currency = columns[i]!;
      const value = (row[i] ?? '').trim();
      if (currency === '' || value === '' || value === 'N/A') continue;
      if (!isCurrencyCode(currency)) {
        skipped.add(currency);
        continue;
      }
      if (!DECIMAL.test(value) || /^0*(\.0*)?$/.test(value)) throw new ReferenceFileError(`Line ${n + 2}: ${currency} "${value}" is not a positive decimal rate`);
      rates.push({ date, currency, value });
    }
  }
  return { format: 'ecb', rates, skippedCurrencies: [...skipped].sort() };
}

function parsePlain(text: string): ParsedRates {
  const [, ...rows] = csvRows(text);
  const skipped = new Set<string>();
  const rates: ParsedRate[] = [];
  const once = onceEach('date and currency');
  for (const [n, row] of rows.entries()) {
    const [dateText = '', code = '', value = ''] = row.map((c) => c.trim());
    const date = parseEcbDate(dateText);
    if (!date) throw new ReferenceFileError(`Line ${n + 2}: "${dateText}" is not a date (YYYY-MM-DD)`);
    const currency = code.toUpperCase();
    if (currency === 'USD') continue;
    if (!isCurrencyCode(currency)) {
      skipped.add(currency);
      continue;
    }
    if (!DECIMAL.test(value) || /^0*(\.0*)?$/.test(value)) throw new ReferenceFileError(`Line ${n + 2}: "${value}" is not a positive decimal rate`);
    once(`${date} ${currency}`, n + 2);
    rates.push({ date, currency, value });
  }
  return { format: 'plain', rates, skippedCurrencies: [...skipped].sort() };
}

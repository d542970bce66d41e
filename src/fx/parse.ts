// The two exchange-rate file formats: the European Central Bank's reference-rate CSV (daily
// `eurofxref.csv` and historical `eurofxref-hist.csv`: a Date column, one column per currency,
// euro base, N/A where none was published) and a plain long CSV `date,currency,rate` with the
// units of the currency for one US dollar.
import cc from 'currency-codes';
import { csvHeader, csvRows, onceEach, ReferenceFileError } from '../lookups/csv.ts';
import { lastPublishableDay } from './dates.ts';
import { unitsAt } from '../decimal.ts';

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

/** A published rate: up to 12 digits before the point and 30 after (an inverse printed from a float has 17 significant digits, more decimals). */
const DECIMAL = /^\d{1,12}(\.\d{1,30})?$/;
const SCALE = 30;
const ONE = 10n ** BigInt(SCALE);
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/**
 * The smallest number of units of a currency for one US dollar that is accepted (exclusive): a
 * unit worth a million dollars or more is no currency, and analytics holds US dollars per unit as
 * DECIMAL(20,14), where such a rate would turn into no rate at all without a missing_fx_rate flag.
 */
export const MIN_PER_USD = '0.000001';
const MIN_PER_USD_UNITS = unitsAt(MIN_PER_USD, SCALE);

export function isCurrencyCode(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && cc.code(code) !== undefined;
}

function validDate(y: number, m: number, d: number): string | null {
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d)
    return null;
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
  if (
    header[0] === 'Date' &&
    header
      .slice(1)
      .filter((h) => h !== '')
      .every((h) => /^[A-Z]{3}$/.test(h))
  )
    return 'ecb';
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
  if (!columns.includes('USD'))
    throw new ReferenceFileError(
      'The ECB file has no USD column, so no rate can be converted to a US-dollar base',
    );
  // euro-based figures: a EUR column (the base itself) or a currency twice would say two rates of one currency and day
  if (columns.includes('EUR'))
    throw new ReferenceFileError(
      'The ECB file has a EUR column: its rates are units per euro, so the euro has none',
    );
  const seen = new Set<string>();
  for (const c of columns.slice(1)) {
    if (c === '') continue;
    if (seen.has(c)) throw new ReferenceFileError(`The ECB file has the column ${c} twice`);
    seen.add(c);
  }
  const skipped = new Set<string>();
  const rates: ParsedRate[] = [];
  const once = onceEach('date');
  const lastDay = lastPublishableDay();
  for (const [n, row] of rows.entries()) {
    const date = parseEcbDate(row[0] ?? '');
    if (!date) throw new ReferenceFileError(`Line ${n + 2}: "${row[0]}" is not a date`);
    if (date > lastDay) throw new ReferenceFileError(`Line ${n + 2}: ${date} is in the future`);
    once(date, n + 2);
    const day: ParsedRate[] = [];
    for (let i = 1; i < columns.length; i++) {
      const currency = columns[i]!;
      const value = (row[i] ?? '').trim();
      if (currency === '' || value === '' || value === 'N/A') continue;
      if (!isCurrencyCode(currency)) {
        skipped.add(currency);
        continue;
      }
      if (!DECIMAL.test(value) || /^0*(\.0*)?$/.test(value))
        throw new ReferenceFileError(
          `Line ${n + 2}: ${currency} "${value}" is not a positive decimal rate of at most 12 digits before the point and 30 after`,
        );
      day.push({ date, currency, value });
    }
    rates.push(...day);
    // every rate of the day becomes units per US dollar (value ÷ USD), the euro's is 1 ÷ USD: none may be MIN_PER_USD or less
    const usd = day.find((r) => r.currency === 'USD');
    if (usd) {
      const usdUnits = unitsAt(usd.value, SCALE);
      // 1 ÷ USD ≤ MIN_PER_USD
      if (usdUnits * MIN_PER_USD_UNITS >= ONE * ONE)
        throw new ReferenceFileError(
          `Line ${n + 2}: USD "${usd.value}" makes one euro worth a million US dollars or more`,
        );
      for (const r of day) {
        // value ÷ USD ≤ MIN_PER_USD
        if (r.currency !== 'USD' && unitsAt(r.value, SCALE) * ONE <= usdUnits * MIN_PER_USD_UNITS) {
          throw new ReferenceFileError(
            `Line ${n + 2}: ${r.currency} "${r.value}" makes one unit worth a million US dollars or more`,
          );
        }
      }
    }
  }
  return { format: 'ecb', rates, skippedCurrencies: [...skipped].sort() };
}

function parsePlain(text: string): ParsedRates {
  const [, ...rows] = csvRows(text);
  const skipped = new Set<string>();
  const rates: ParsedRate[] = [];
  const once = onceEach('date and currency');
  const lastDay = lastPublishableDay();
  for (const [n, row] of rows.entries()) {
    const [dateText = '', code = '', value = ''] = row.map((c) => c.trim());
    const date = parseEcbDate(dateText);
    if (!date)
      throw new ReferenceFileError(`Line ${n + 2}: "${dateText}" is not a date (YYYY-MM-DD)`);
    if (date > lastDay) throw new ReferenceFileError(`Line ${n + 2}: ${date} is in the future`);
    const currency = code.toUpperCase();
    if (currency === 'USD') continue;
    if (!isCurrencyCode(currency)) {
      skipped.add(currency);
      continue;
    }
    if (!DECIMAL.test(value) || /^0*(\.0*)?$/.test(value))
      throw new ReferenceFileError(
        `Line ${n + 2}: "${value}" is not a positive decimal rate of at most 12 digits before the point and 30 after`,
      );
    if (unitsAt(value, SCALE) <= MIN_PER_USD_UNITS) {
      throw new ReferenceFileError(
        `Line ${n + 2}: ${currency} "${value}" per US dollar makes one unit worth a million US dollars or more`,
      );
    }
    once(`${date} ${currency}`, n + 2);
    rates.push({ date, currency, value });
  }
  return { format: 'plain', rates, skippedCurrencies: [...skipped].sort() };
}

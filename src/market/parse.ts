// Market data files: price history (`symbol,date,open,high,low,close,volume` with optional
// `currency,name`, or a one-symbol download `Date,Open,High,Low,Close[,Adj Close],Volume`),
// symbols (`symbol,name,currency,exchange`), and the US Treasury's daily par yield curve CSV
// (`Date,"1 Mo","2 Mo",…,"30 Yr"`, dates MM/DD/YYYY, newest first, blank where a tenor was not
// yet published).
import { fixedText, parseDecimal } from '../decimal.ts';
import { lastPublishableDay } from '../fx/dates.ts';
import { csvRows, onceEach, ReferenceFileError } from '../lookups/csv.ts';

export const SYMBOL_RE = /^[A-Z0-9.^=-]{1,20}$/;

/** A price or yield as imported: at most 20 digits on each side of the point (PostgreSQL's numeric takes them all). */
const BOUNDED_DECIMAL = /^-?\d{1,20}(\.\d{1,20})?$/;
const isImportDecimal = (v: string) => BOUNDED_DECIMAL.test(v.trim());
/** market_prices.volume is a bigint. */
const MAX_VOLUME = 9223372036854775807n;

export interface PriceRow {
  symbol: string;
  date: string;
  open: string | null;
  high: string | null;
  low: string | null;
  close: string;
  volume: string | null;
  currency: string | null;
  name: string | null;
}

export interface SymbolRow {
  symbol: string;
  name: string | null;
  currency: string | null;
  exchange: string | null;
}

export interface YieldRow {
  date: string;
  tenor: string;
  months: string;
  value: string;
}

function isoDate(text: string): string | null {
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  let y: number, mo: number, d: number;
  if (m) [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  else if ((m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text)))
    [y, mo, d] = [Number(m[3]), Number(m[1]), Number(m[2])];
  else return null;
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCMonth() === mo - 1 && date.getUTCDate() === d
    ? date.toISOString().slice(0, 10)
    : null;
}

const cell = (v: string | undefined) => {
  const t = (v ?? '').trim();
  return t === '' || /^(null|n\/a|nan|-)$/i.test(t) ? null : t;
};

export function normalizeSymbol(text: string): string | null {
  const s = text.trim().toUpperCase();
  return SYMBOL_RE.test(s) ? s : null;
}

export function parseHistoryCsv(text: string, symbolArg?: string): PriceRow[] {
  const [header = [], ...rows] = csvRows(text);
  const cols = header.map((h) => h.trim().toLowerCase());
  const at = (name: string) => cols.indexOf(name);
  if (at('date') < 0 || at('close') < 0)
    throw new ReferenceFileError('A price history needs date and close columns');
  const fixed = symbolArg === undefined ? null : normalizeSymbol(symbolArg);
  if (symbolArg !== undefined && !fixed)
    throw new ReferenceFileError(`"${symbolArg}" is not a ticker symbol`);
  if (at('symbol') < 0 && !fixed)
    throw new ReferenceFileError('The file has no symbol column: give the symbol (--symbol)');
  const out: PriceRow[] = [];
  const once = onceEach('symbol and date');
  const lastDay = lastPublishableDay();
  for (const [n, row] of rows.entries()) {
    const symbol = fixed ?? normalizeSymbol(row[at('symbol')] ?? '');
    if (!symbol)
      throw new ReferenceFileError(`Line ${n + 2}: "${row[at('symbol')]}" is not a ticker symbol`);
    const date = isoDate((row[at('date')] ?? '').trim());
    if (!date) throw new ReferenceFileError(`Line ${n + 2}: "${row[at('date')]}" is not a date`);
    if (date > lastDay) throw new ReferenceFileError(`Line ${n + 2}: ${date} is in the future`);
    const close = cell(row[at('close')]);
    if (close === null) continue;
    const values = {
      open: cell(row[at('open')]),
      high: cell(row[at('high')]),
      low: cell(row[at('low')]),
      close,
    };
    for (const [k, v] of Object.entries(values)) {
      if (v !== null && !isImportDecimal(v))
        throw new ReferenceFileError(
          `Line ${n + 2}: ${k} "${v.slice(0, 50)}" is not a decimal of at most 20 digits each side of the point`,
        );
    }
    const volume = cell(row[at('volume')]);
    if (volume !== null && (!/^\d+$/.test(volume) || BigInt(volume) > MAX_VOLUME)) {
      throw new ReferenceFileError(
        `Line ${n + 2}: volume "${volume.slice(0, 50)}" is not a whole number up to ${MAX_VOLUME}`,
      );
    }
    once(`${symbol} ${date}`, n + 2);
    out.push({
      symbol,
      date,
      ...values,
      volume,
      currency: cell(row[at('currency')])?.toUpperCase() ?? null,
      name: cell(row[at('name')]),
    });
  }
  return out;
}

export function parseSymbolsCsv(text: string): SymbolRow[] {
  const [header = [], ...rows] = csvRows(text);
  const cols = header.map((h) => h.trim().toLowerCase());
  if (cols[0] !== 'symbol')
    throw new ReferenceFileError(
      'A symbols file starts with the header symbol,name,currency,exchange',
    );
  const once = onceEach('symbol');
  return rows.map((row, n) => {
    const symbol = normalizeSymbol(row[0] ?? '');
    if (!symbol) throw new ReferenceFileError(`Line ${n + 2}: "${row[0]}" is not a ticker symbol`);
    once(symbol, n + 2);
    return {
      symbol,
      name: cell(row[cols.indexOf('name')]),
      currency: cell(row[cols.indexOf('currency')])?.toUpperCase() ?? null,
      exchange: cell(row[cols.indexOf('exchange')]),
    };
  });
}

/** "1 Mo" → 1M (1 month), "30 Yr" → 30Y (360 months). */
export function parseTenor(label: string): { tenor: string; months: string } | null {
  const m = /^(\d+(?:\.\d+)?)\s*(mo|mos|month|months|yr|yrs|year|years)$/i.exec(label.trim());
  if (!m) return null;
  const n = m[1]!;
  if (m[2]!.toLowerCase().startsWith('m')) return { tenor: `${n}M`, months: n };
  // years × 12, exactly: the fraction's digits stay decimal
  const { units, scale } = parseDecimal(n);
  return { tenor: `${n}Y`, months: fixedText(units * 12n, scale) };
}

export function parseTreasuryCsv(text: string): YieldRow[] {
  const [header = [], ...rows] = csvRows(text);
  if ((header[0] ?? '').trim().toLowerCase() !== 'date')
    throw new ReferenceFileError(
      'Not a Treasury par yield curve file: the first column is not Date',
    );
  const tenors = header.slice(1).map((h) => parseTenor(h));
  if (!tenors.some((t) => t !== null))
    throw new ReferenceFileError(
      'Not a Treasury par yield curve file: no tenor columns like "1 Mo" or "10 Yr"',
    );
  // "1 Mo" and "1 Month" are one tenor: two columns of it would give a day two yields of it
  const tenorColumn = new Map<string, string>();
  for (const [i, t] of tenors.entries()) {
    if (!t) continue;
    const earlier = tenorColumn.get(t.tenor);
    if (earlier !== undefined)
      throw new ReferenceFileError(
        `The columns "${earlier}" and "${header[i + 1]!.trim()}" are the same tenor, ${t.tenor}`,
      );
    tenorColumn.set(t.tenor, header[i + 1]!.trim());
  }
  const out: YieldRow[] = [];
  const once = onceEach('date');
  const lastDay = lastPublishableDay();
  for (const [n, row] of rows.entries()) {
    const date = isoDate((row[0] ?? '').trim());
    if (!date) throw new ReferenceFileError(`Line ${n + 2}: "${row[0]}" is not a date`);
    if (date > lastDay) throw new ReferenceFileError(`Line ${n + 2}: ${date} is in the future`);
    once(date, n + 2);
    for (const [i, tenor] of tenors.entries()) {
      const value = cell(row[i + 1]);
      if (!tenor || value === null) continue;
      if (!isImportDecimal(value))
        throw new ReferenceFileError(
          `Line ${n + 2}: ${tenor.tenor} "${value.slice(0, 50)}" is not a decimal of at most 20 digits each side of the point`,
        );
      out.push({ date, tenor: tenor.tenor, months: tenor.months, value });
    }
  }
  return out;
}

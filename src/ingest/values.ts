// Readers for the low-cardinality values of a statement: periods, dates, countries, currencies and
// identifiers. The pipeline applies them to each DISTINCT raw value of a column (DuckDB does the
// per-row work), so they can afford to be thorough. All are total functions: unknown → null.
import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';
import {
  CADENCE_MONTHS,
  CADENCES,
  lastDay,
  periodFromDate,
  periodOf,
  periodText,
  type Cadence,
  type Period,
} from '../periods.ts';

// period arithmetic lives in src/periods.ts; the readers' importers still find it here
export { periodFromDate, periodOf, type Cadence, type Period };

const require = createRequire(import.meta.url);
countries.registerLocale(require('i18n-iso-countries/langs/en.json'));

/**
 * Locales whose country names are read (English first: a name two locales give different
 * countries keeps the earlier locale's). Registered on the first territory that is not a code.
 */
export const COUNTRY_NAME_LOCALES = [
  'en',
  'de',
  'fr',
  'es',
  'it',
  'pt',
  'nl',
  'sv',
  'da',
  'nb',
  'fi',
  'pl',
  'cs',
  'hu',
  'ro',
  'tr',
  'el',
  'ru',
  'uk',
  'ja',
  'ko',
  'zh',
] as const;

// Maps, not object literals: a cell saying `constructor` must find nothing (an object's lookup finds
// Object.prototype's members)
const MONTHS = new Map<string, number>(
  Object.entries({
    jan: 1,
    january: 1,
    janvier: 1,
    janv: 1,
    januar: 1,
    enero: 1,
    ene: 1,
    feb: 2,
    february: 2,
    fevrier: 2,
    février: 2,
    févr: 2,
    fevr: 2,
    fév: 2,
    februar: 2,
    febrero: 2,
    mar: 3,
    march: 3,
    mars: 3,
    märz: 3,
    marz: 3,
    marzo: 3,
    apr: 4,
    april: 4,
    avril: 4,
    avr: 4,
    abril: 4,
    abr: 4,
    may: 5,
    mai: 5,
    mayo: 5,
    jun: 6,
    june: 6,
    juin: 6,
    juni: 6,
    junio: 6,
    jul: 7,
    july: 7,
    juillet: 7,
    juil: 7,
    juli: 7,
    julio: 7,
    aug: 8,
    august: 8,
    aout: 8,
    août: 8,
    agosto: 8,
    ago: 8,
    sep: 9,
    sept: 9,
    september: 9,
    septembre: 9,
    septiembre: 9,
    oct: 10,
    october: 10,
    octobre: 10,
    oktober: 10,
    okt: 10,
    octubre: 10,
    nov: 11,
    november: 11,
    novembre: 11,
    noviembre: 11,
    dec: 12,
    december: 12,
    decembre: 12,
    décembre: 12,
    déc: 12,
    dezember: 12,
    dez: 12,
    diciembre: 12,
    dic: 12,
  }),
);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * Excel's two date systems: 1900 (Windows Excel and every text file: serial 1 is 1900-01-01, with
 * its 1900-02-29 bug) and 1904 (old Mac workbooks, `date1904` in xl/workbook.xml: serial 0 is
 * 1904-01-01, so a serial is 1462 days later than in the 1900 system).
 */
export type DateSystem = 1900 | 1904;

/** How the date and period readers read a cell. */
export interface DateReadOptions {
  /** the date system of the workbook the value comes from: a bare serial's meaning (default 1900) */
  dateSystem?: DateSystem;
}

/** serial 0 of the 1904 system (1904-01-01) is serial 1462 of the 1900 system (its 1900-02-29 counted) */
const DAYS_1900_TO_1904 = 1462;

/** An Excel date serial as an ISO date in the given date system (default 1900); null outside 1900-01-01..9999-12-31. */
export function excelSerialToIso(serial: number, dateSystem: DateSystem = 1900): string | null {
  const days = dateSystem === 1904 ? Math.floor(serial) + DAYS_1900_TO_1904 : Math.floor(serial);
  if (!Number.isFinite(serial) || serial < (dateSystem === 1904 ? 0 : 1) || days > 2_958_465)
    return null;
  const ms = Date.UTC(1899, 11, 30) + days * 86_400_000;
  return new Date(ms).toISOString().slice(0, 10);
}

function validDate(y: number, m: number, d: number): string | null {
  if (y < 1900 || y > 2200 || m < 1 || m > 12 || d < 1 || d > lastDay(y, m)) return null;
  return `${y}-${pad(m)}-${pad(d)}`;
}

/**
 * The order of a date's day and month: after the year (YMD, and YDM: TuneCore's older exports,
 * `2014/15/06` is 15 June) or before it (MDY, DMY). A date that only one order reads (a first
 * number above 12) is read in that order whatever the column's is.
 */
export type DateOrder = 'YMD' | 'YDM' | 'MDY' | 'DMY';

const YEAR_FIRST = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ].*)?$/;

/**
 * The order of a column's (or a statement's) year-first dates, from all its values: YDM when some
 * value reads only as year/day/month (`2014/15/06`) and none only as year/month/day
 * (`2014/06/15`), YMD the other way round, null when every value reads both ways (or none is a
 * year-first date, or both kinds occur).
 */
export function yearFirstOrder(values: Iterable<string>): 'YMD' | 'YDM' | null {
  let ymd = false;
  let ydm = false;
  for (const raw of values) {
    const m = YEAR_FIRST.exec(raw.trim());
    if (!m) continue;
    const a = +m[2]!;
    const b = +m[3]!;
    if (a > 12 && b <= 12) ydm = true;
    else if (b > 12 && a <= 12) ymd = true;
    if (ydm && ymd) return null;
  }
  return ydm ? 'YDM' : ymd ? 'YMD' : null;
}

/**
 * Whether year-first dates that every value reads both ways are each the first day of a month read
 * as year/month/day (`2024/03/01`: statements date their periods so, Believe's monthly rows among
 * them), which year/day/month never reads so (3 January): then they are read as year/month/day.
 * The other way round is no evidence (any January of daily dates, `2024/01/05`, would be the first
 * of May), so such a column still asks for its format. A value whose day and month are equal reads
 * the same both ways and decides nothing.
 */
export function firstOfMonthYearFirst(values: Iterable<string>): boolean {
  let decided = false;
  for (const raw of values) {
    const m = YEAR_FIRST.exec(raw.trim());
    if (!m) continue;
    const a = +m[2]!;
    const b = +m[3]!;
    if (a === b) continue;
    if (b !== 1) return false;
    decided = true;
  }
  return decided;
}

/**
 * A year-first date of the values written with `/` or `.` (`2014/01/06`, as TuneCore's older
 * exports wrote year/day/month) whose day and month read both ways, when no value of them reads
 * one way only; null otherwise. ISO dates (`2014-01-06`) are year/month/day and never ambiguous.
 */
export function ambiguousYearFirst(values: Iterable<string>): string | null {
  let example: string | null = null;
  for (const raw of values) {
    const s = raw.trim();
    const m = YEAR_FIRST.exec(s);
    if (!m) continue;
    const a = +m[2]!;
    const b = +m[3]!;
    if (a > 12 !== b > 12) return null;
    if (example === null && a <= 12 && b <= 12 && a !== b && /^\d{4}[/.]/.test(s)) example = s;
  }
  return example;
}

/** A year of four digits, or of two as Excel writes them (`24` is 2024, `70` is 1970). */
function twoDigitYear(y: string): number {
  return y.length === 2 ? +y + (+y < 70 ? 2000 : 1900) : +y;
}

/**
 * A calendar date from the many ways statements write one. The time part of a date-time is
 * ignored (never shifted by a time zone). Ambiguous day/month orders follow `order`. A five-digit
 * number is an Excel serial in `options.dateSystem` (default 1900), unless it is a year of
 * 1900-2200 and a quarter (BMI's `20241`); that and a range of dates (`01/07/2023 - 31/12/2023`)
 * are no date: null (parsePeriod reads them).
 */
export function parseDate(
  raw: string,
  order: DateOrder = 'YMD',
  options: DateReadOptions = {},
): string | null {
  const s = raw.trim().replace(/^"|"$/g, '');
  if (s.length === 0 || s.length > 40) return null;
  const system = options.dateSystem ?? 1900;
  if (readRange(s, order, system)) return null;
  return dateOnly(s, order, system);
}

function dateOnly(s: string, order: DateOrder, dateSystem: DateSystem): string | null {
  let m = YEAR_FIRST.exec(s);
  if (m) {
    const a = +m[2]!;
    const b = +m[3]!;
    // year/day/month when the column is so, or when only that order reads the value
    if ((order === 'YDM' && b <= 12) || (a > 12 && b <= 12)) return validDate(+m[1]!, b, a);
    return validDate(+m[1]!, a, b);
  }
  m = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{2}|\d{4})(?:[ T].*)?$/.exec(s);
  if (m) {
    let y = +m[3]!;
    if (m[3]!.length === 2) y += y < 70 ? 2000 : 1900;
    const a = +m[1]!;
    const b = +m[2]!;
    if (order === 'DMY' || a > 12) return validDate(y, b, a);
    return validDate(y, a, b);
  }
  m = /^(\d{4})(\d{2})(\d{2})$/.exec(s);
  if (m) return validDate(+m[1]!, +m[2]!, +m[3]!);
  // a year of 1900-2200 and a quarter (BMI's `20241`) is that quarter, no day: the period readers read it
  if (/^\d{5}$/.test(s) && yearQuarter(s)) return null;
  if (/^\d{5}(\.\d+)?$/.test(s)) return excelSerialToIso(Number(s), dateSystem);
  // "15 March 2024", "15-Mar-2024", and Excel's d-mmm-yy as a CSV holds it ("15-Mar-24"), "March 15, 2024"
  m =
    /^(\d{1,2})\s+([A-Za-zéûä]+)\.?\s+(\d{4})$/.exec(s) ??
    /^(\d{1,2})-([A-Za-zéûä]+)-(\d{4}|\d{2})$/.exec(s);
  if (m && MONTHS.has(m[2]!.toLowerCase()))
    return validDate(twoDigitYear(m[3]!), MONTHS.get(m[2]!.toLowerCase())!, +m[1]!);
  m = /^([A-Za-zéûä]+)\.?\s+(\d{1,2}),?\s+(\d{4})$/.exec(s);
  if (m && MONTHS.has(m[1]!.toLowerCase()))
    return validDate(+m[3]!, MONTHS.get(m[1]!.toLowerCase())!, +m[2]!);
  return null;
}

/**
 * A statement period from a period string: `2024-03`, `2024/03`, `03/2024`, `Mar 2024`,
 * `March 2024`, `2024M3`, `202403`, `Q1 2024`, `2024Q1`, `2Q2024`, `20241` (year + quarter, a year
 * of 1900-2200; other five-digit numbers are Excel serials in `options.dateSystem`, default
 * 1900), `2024 1st Quarter`, `H1 2024`, `2024H2`, `2024`; a full date gives its month; a range
 * gives the period it spans (see periodOfRange): `202307202312` (BMG, months),
 * `20240301-20240331`, `01/07/2023 - 31/12/2023`; a quarter or half naming a run, followed by words
 * only (Cargo's `2023Q4 Digital`), is that quarter or half.
 */
export function parsePeriod(
  raw: string,
  order: DateOrder = 'YMD',
  options: DateReadOptions = {},
): Period | null {
  const s = raw.trim().replace(/^"|"$/g, '');
  if (s.length === 0 || s.length > 40) return null;
  const system = options.dateSystem ?? 1900;
  const p = periodOnly(s);
  if (p !== undefined) return p;
  const range = readRange(s, order, system);
  if (range) return periodOfRange(range.start, range.end);
  const date = dateOnly(s, order, system);
  if (date) return periodOf(+date.slice(0, 4), +date.slice(5, 7), 'M');
  return namedRun(s);
}

// words that join two periods into a range: a period before one of them is no run's name
const RANGE_WORDS = new Set([
  'to',
  'thru',
  'through',
  'till',
  'until',
  'bis',
  'au',
  'al',
  'a',
  'tot',
]);

/**
 * A quarter or half that names a run: the period at the start of a cell, a space, then words only
 * (Cargo's Statement Run Name `2023Q4 Digital`). Only the forms that cannot be anything else are
 * read (`2023Q4`, `2023-Q4`, `2023 Q4`, `Q4 2023`, `Q4-2023`, `2023H2`, `H2 2023`); the words
 * hold no digit (`Q3 2024 to Q1 2024` is a range written backwards, no period) and do not start
 * with a range's joining word.
 */
function namedRun(s: string): Period | null {
  const m =
    /^(\d{4}[\s\-/]*[QH][1-4]|[QH][1-4][\s\-/]*\d{4})\s+(\p{L}[\p{L}\p{M}\s'’&.,()-]*)$/iu.exec(s);
  if (!m || RANGE_WORDS.has(m[2]!.split(/[\s.,()]/)[0]!.toLowerCase())) return null;
  return periodOnly(m[1]!) ?? null;
}

/** Five digits that are a year of 1900-2200 and a quarter digit (BMI `20241`), as that quarter. */
function yearQuarter(s: string): Period | null {
  const m = /^(\d{4})([1-4])$/.exec(s);
  return m && +m[1]! >= 1900 && +m[1]! <= 2200 ? periodOf(+m[1]!, +m[2]!, 'Q') : null;
}

/** A period written as one (no date, no range); undefined when no period format matches. */
function periodOnly(s: string): Period | null | undefined {
  let m: RegExpExecArray | null;
  if ((m = /^(\d{4})\s*[-/.]?\s*M\s*(\d{1,2})$/i.exec(s))) return periodOf(+m[1]!, +m[2]!, 'M');
  if ((m = /^(\d{4})[-/.](\d{1,2})$/.exec(s))) return periodOf(+m[1]!, +m[2]!, 'M');
  if ((m = /^(\d{1,2})[-/.](\d{4})$/.exec(s))) return periodOf(+m[2]!, +m[1]!, 'M');
  if ((m = /^(\d{4})(\d{2})$/.exec(s))) return periodOf(+m[1]!, +m[2]!, 'M');
  // year + quarter (BMI `20241`) only for a plausible year: `45352` is an Excel serial
  const quarter = yearQuarter(s);
  if (quarter) return quarter;
  if ((m = /^Q([1-4])[\s\-/]*(\d{4})$/i.exec(s))) return periodOf(+m[2]!, +m[1]!, 'Q');
  if ((m = /^(\d{4})[\s\-/]*Q([1-4])$/i.exec(s))) return periodOf(+m[1]!, +m[2]!, 'Q');
  if ((m = /^([1-4])Q[\s\-/]*(\d{4})$/i.exec(s))) return periodOf(+m[2]!, +m[1]!, 'Q');
  if ((m = /^(\d{4})\s+([1-4])(?:st|nd|rd|th)\s+quarter$/i.exec(s)))
    return periodOf(+m[1]!, +m[2]!, 'Q');
  if ((m = /^([1-4])(?:st|nd|rd|th)\s+quarter\s+(\d{4})$/i.exec(s)))
    return periodOf(+m[2]!, +m[1]!, 'Q');
  if ((m = /^H([12])[\s\-/]*(\d{4})$/i.exec(s))) return periodOf(+m[2]!, +m[1]!, 'H');
  if ((m = /^(\d{4})[\s\-/]*H([12])$/i.exec(s))) return periodOf(+m[1]!, +m[2]!, 'H');
  if ((m = /^(\d{4})$/.exec(s))) return periodOf(+m[1]!, 1, 'Y');
  if ((m = /^([A-Za-zéûä]+)\.?[\s\-/,]+(\d{4})$/.exec(s))) {
    const month = MONTHS.get(m[1]!.toLowerCase());
    return month ? periodOf(+m[2]!, month, 'M') : null;
  }
  // Excel's mmm-yy as a CSV holds it (`Mar-24`, `Sept-24`): a month, never a day (Excel writes d-mmm as `24-Mar`)
  if ((m = /^([A-Za-zéûä]+)-(\d{2})$/.exec(s))) {
    const month = MONTHS.get(m[1]!.toLowerCase());
    return month ? periodOf(twoDigitYear(m[2]!), month, 'M') : null;
  }
  if ((m = /^(\d{4})[\s\-/]+([A-Za-zéûä]+)$/.exec(s))) {
    const month = MONTHS.get(m[2]!.toLowerCase());
    return month ? periodOf(+m[1]!, month, 'M') : null;
  }
  return undefined;
}

// between the two ends of a range: a dash (`-`, `–`, `—`) or `~`, or a word (`to`, `bis`, `au`, ...)
const RANGE_SEPARATOR =
  /\s*[-\u2013\u2014~]\s*|\s+(?:to|thru|through|till|until|bis|au|al|a|tot)\s+/gi;

/**
 * The first and last day of a range: `202307202312` (BMG: from and to month), `2024030120240331`,
 * ISO `2024-03-01/2024-03-31`, or two dates or periods around a separator (`20240301-20240331`,
 * `01/07/2023 - 31/12/2023`, `Jul 2023 to Dec 2023`); a period end stands for its first (start)
 * or last (end) day. Both dates follow one day order: a first number above 12 on either side
 * makes it DMY, a second one MDY, else the column's `order`. Null when it is no range; a range
 * whose start comes after its end is returned as written (no date, no period). Serials on either
 * side are read in `dateSystem`.
 */
function readRange(
  s: string,
  order: DateOrder,
  dateSystem: DateSystem,
): { start: string; end: string } | null {
  let m = /^(\d{4})(\d{2})(\d{4})(\d{2})$/.exec(s);
  if (m) return ends(periodOf(+m[1]!, +m[2]!, 'M')?.start, periodOf(+m[3]!, +m[4]!, 'M')?.end);
  m = /^(\d{8})(\d{8})$/.exec(s);
  if (m) return ends(dateOnly(m[1]!, 'YMD', dateSystem), dateOnly(m[2]!, 'YMD', dateSystem));
  m = /^(\d{4}-\d{2}-\d{2})(?:T[^/]*)?\/(\d{4}-\d{2}-\d{2})(?:T.*)?$/.exec(s);
  if (m) return ends(dateOnly(m[1]!, 'YMD', dateSystem), dateOnly(m[2]!, 'YMD', dateSystem));
  for (const sep of s.matchAll(RANGE_SEPARATOR)) {
    const left = s.slice(0, sep.index).trim();
    const right = s.slice(sep.index + sep[0].length).trim();
    if (left.length === 0 || right.length === 0) continue;
    const sideOrder = rangeOrder(left, right, order);
    const a = periodOnly(left) ?? dateOnly(left, sideOrder, dateSystem);
    if (!a) continue;
    const b = periodOnly(right) ?? dateOnly(right, sideOrder, dateSystem);
    if (!b) continue;
    return ends(typeof a === 'string' ? a : a.start, typeof b === 'string' ? b : b.end);
  }
  return null;
}

function ends(
  start: string | null | undefined,
  end: string | null | undefined,
): { start: string; end: string } | null {
  return start && end ? { start, end } : null;
}

function rangeOrder(left: string, right: string, order: DateOrder): DateOrder {
  const dm = [left, right].map((side) => /^(\d{1,2})[-/.](\d{1,2})[-/.]\d/.exec(side));
  if (dm.some((m) => m && +m[1]! > 12)) return 'DMY';
  if (dm.some((m) => m && +m[2]! > 12)) return 'MDY';
  return order;
}

/**
 * The statement period of a range of days. A whole calendar month, quarter, half or year is that
 * period (M, Q, H, Y). Any other span takes its cadence from its length (up to 45 days M, 135 Q,
 * 270 H, longer Y) and is the period of that cadence its last day falls in (payors name a
 * period by its end, e.g. Apple's fiscal months), with the range's own first and last day as
 * start and end.
 */
export function periodOfRange(start: string, end: string): Period | null {
  if (!(start <= end)) return null;
  const [y1, m1, d1] = start.split('-').map(Number) as [number, number, number];
  const [y2, m2, d2] = end.split('-').map(Number) as [number, number, number];
  if (y1 === y2 && d1 === 1 && d2 === lastDay(y2, m2)) {
    const months = m2 - m1 + 1;
    for (const cadence of CADENCES) {
      const span = CADENCE_MONTHS[cadence];
      if (months === span && (m1 - 1) % span === 0)
        return periodOf(y1, (m1 - 1) / span + 1, cadence);
    }
  }
  const days = (Date.parse(end) - Date.parse(start)) / 86_400_000 + 1;
  const cadence: Cadence = days <= 45 ? 'M' : days <= 135 ? 'Q' : days <= 270 ? 'H' : 'Y';
  const p = periodFromDate(end, cadence);
  return p && { ...p, start, end };
}

/**
 * The period of a statement whose rows name several (a quarterly report by month, a sheet per
 * month): the quarter, half or year that holds them all, the smallest there is; null when none
 * does (rows of two calendar years), and the statement is then known by its rows' most common one.
 */
export function coveringPeriod(periods: readonly Period[]): Period | null {
  if (periods.length === 0) return null;
  const start = periods.reduce((a, p) => (p.start < a ? p.start : a), periods[0]!.start);
  const end = periods.reduce((a, p) => (p.end > a ? p.end : a), periods[0]!.end);
  for (const cadence of CADENCES) {
    const p = periodFromDate(start, cadence);
    if (p && p.end >= end) return p;
  }
  return null;
}

export function parseCadence(raw: string): Cadence | null {
  const s = raw.trim().toUpperCase();
  if (['M', 'MONTH', 'MONTHLY'].includes(s)) return 'M';
  if (['Q', 'QUARTER', 'QUARTERLY'].includes(s)) return 'Q';
  if (['H', 'HALF', 'SEMI-ANNUAL', 'SEMIANNUAL', 'HALF-YEARLY', 'BIANNUAL'].includes(s)) return 'H';
  if (['Y', 'YEAR', 'YEARLY', 'ANNUAL', 'ANNUALLY'].includes(s)) return 'Y';
  return null;
}

const currencies = new Set(Intl.supportedValuesOf('currency'));
const CURRENCY_SYMBOLS = new Map<string, string>(
  Object.entries({
    $: 'USD',
    US$: 'USD',
    '€': 'EUR',
    '£': 'GBP',
    '¥': 'JPY',
    '₩': 'KRW',
    '₹': 'INR',
    R$: 'BRL',
    A$: 'AUD',
    C$: 'CAD',
    // Believe's Russian reports write roubles with their sign
    '₽': 'RUB',
    '₺': 'TRY',
    '₴': 'UAH',
    '₪': 'ILS',
    '₦': 'NGN',
    '₱': 'PHP',
    '฿': 'THB',
    '₫': 'VND',
    zł: 'PLN',
  }),
);

/** An ISO 4217 code from a code or a symbol; also finds one in header text like `Earnings (USD)`. */
export function parseCurrency(raw: string): string | null {
  const s = raw.trim();
  const symbol = CURRENCY_SYMBOLS.get(s);
  if (symbol) return symbol;
  const upper = s.toUpperCase();
  if (/^[A-Z]{3}$/.test(upper) && currencies.has(upper)) return upper;
  // a code in parentheses first ("All Revenue (USD)": ALL is also a currency), then any word
  const bracketed = /\(([A-Z]{3})\)/.exec(upper);
  if (bracketed && currencies.has(bracketed[1]!)) return bracketed[1]!;
  for (const m of upper.matchAll(/\b([A-Z]{3})\b/g)) if (currencies.has(m[1]!)) return m[1]!;
  return null;
}

/** ISO 3166's user-assigned "unknown or unspecified": the one bucket for every multi-territory or unknown marker. */
export const MULTI_TERRITORY = 'ZZ';

const TERRITORY_ALIASES: Record<string, string> = {
  UK: 'GB',
  EL: 'GR', // EU usage for Greece
};

/**
 * Values that name no single country: worldwide, regions, "other" and "unknown" (compared as
 * nameKey: case, accents and `-_./` separators ignored). Read as MULTI_TERRITORY.
 */
export const MULTI_TERRITORY_MARKERS: readonly string[] = [
  // codes: DistroKid's OU ("outside the United States"), WW, XX, ZZ, EU, ROW
  'ou',
  'ww',
  'xx',
  'zz',
  'eu',
  'row',
  'world',
  'worldwide',
  'world wide',
  'rest of world',
  'rest of the world',
  'global',
  'international',
  'other',
  'others',
  'other countries',
  'other territories',
  'all',
  'all countries',
  'all territories',
  'multiple',
  'multiple territories',
  'various',
  'unknown',
  'unspecified',
  'europe',
  'european union',
  // localised
  'welt',
  'weltweit',
  'rest der welt',
  'sonstige',
  'andere',
  'unbekannt',
  'monde',
  'mondial',
  'reste du monde',
  'autre',
  'autres',
  'inconnu',
  'mundo',
  'mundial',
  'resto del mundo',
  'resto do mundo',
  'otros',
  'outros',
  'desconocido',
  'mondo',
  'resto del mondo',
  'altri',
  'sconosciuto',
];
const MARKERS = new Set(MULTI_TERRITORY_MARKERS);

/** Case-, accent- and spacing-insensitive form of a name. */
function nameKey(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/æ/g, 'ae')
    .replace(/œ/g, 'oe')
    .replace(/ø/g, 'o')
    .replace(/ł/g, 'l')
    .replace(/[đð]/g, 'd')
    .replace(/þ/g, 'th')
    .replace(/ı/g, 'i')
    .replace(/[\u2018\u2019`\u00b4]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * ISO 3166-1's own English short names that i18n-iso-countries lacks in any spelling (its names
 * are the common ones: `Vietnam`, `Iran`, `Bolivia`); ISO's later forms with parentheses
 * (`Iran (Islamic Republic of)`, `Congo (the Democratic Republic of the)`) read as these by looseKey.
 */
const ISO_SHORT_NAMES: Record<string, string> = {
  'Viet Nam': 'VN',
  'Bolivia, Plurinational State of': 'BO',
  'Congo, The Democratic Republic of the': 'CD',
  'Iran, Islamic Republic of': 'IR',
  "Korea, Democratic People's Republic of": 'KP',
  'Macedonia, the Former Yugoslav Republic of': 'MK',
  'Palestine, State of': 'PS',
  'Palestinian Territory, Occupied': 'PS',
  'Saint Helena, Ascension and Tristan da Cunha': 'SH',
  'Tanzania, United Republic of': 'TZ',
  'United Kingdom of Great Britain and Northern Ireland': 'GB',
  'Venezuela, Bolivarian Republic of': 'VE',
};

/**
 * Other names statements give that i18n-iso-countries lacks: the United Kingdom's nations (a UK
 * society reports `England`), `U.K.`, the SARs by their full names, the inverted Koreas, short forms.
 */
const STATEMENT_COUNTRY_NAMES: Record<string, string> = {
  'U.K.': 'GB',
  England: 'GB',
  Scotland: 'GB',
  Wales: 'GB',
  'Northern Ireland': 'GB',
  'Hong Kong SAR': 'HK',
  'Hong Kong SAR China': 'HK',
  'Macao SAR': 'MO',
  'Macau SAR': 'MO',
  'Macao SAR China': 'MO',
  'Korea, South': 'KR',
  'Korea, North': 'KP',
  Macedonia: 'MK',
  Vatican: 'VA',
};

/**
 * A name's key without the punctuation and articles that ISO's inverted forms add:
 * `Korea (the Republic of)`, `Korea, Republic of` and `Korea Republic of` are one key, as are
 * `Trinidad & Tobago` and `Trinidad and Tobago`, `St Lucia` and `Saint Lucia`.
 */
function looseKey(s: string): string {
  return ` ${nameKey(s)
    .replace(/&/g, ' and ')
    .replace(/[(),.[\]]/g, ' ')} `
    .replace(/\s+/g, '  ')
    .replace(/ the /g, ' ')
    .replace(/ st /g, ' saint ')
    .replace(/\s+/g, ' ')
    .trim();
}

let countryNames: { exact: Map<string, string>; loose: Map<string, string> } | null = null;

/**
 * Every name of every country in COUNTRY_NAME_LOCALES (and ISO_SHORT_NAMES, STATEMENT_COUNTRY_NAMES) by nameKey and by
 * looseKey; built once, on first use.
 */
function countryNameIndex(): { exact: Map<string, string>; loose: Map<string, string> } {
  if (countryNames) return countryNames;
  const exact = new Map<string, string>();
  const loose = new Map<string, string>();
  const add = (name: string, code: string) => {
    if (!exact.has(nameKey(name))) exact.set(nameKey(name), code);
    if (!loose.has(looseKey(name))) loose.set(looseKey(name), code);
  };
  for (const locale of COUNTRY_NAME_LOCALES) {
    if (!countries.langs().includes(locale))
      countries.registerLocale(require(`i18n-iso-countries/langs/${locale}.json`));
    for (const [code, names] of Object.entries(countries.getNames(locale, { select: 'all' })))
      for (const name of names) add(name, code);
    if (locale === 'en')
      for (const [name, code] of Object.entries({ ...ISO_SHORT_NAMES, ...STATEMENT_COUNTRY_NAMES }))
        add(name, code);
  }
  return (countryNames = { exact, loose });
}

/** A country by its name: exactly as an index name, else as one with ISO's punctuation and articles ignored. */
function countryByName(s: string): string | undefined {
  const index = countryNameIndex();
  return index.exact.get(nameKey(s)) ?? index.loose.get(looseKey(s));
}

/**
 * ISO 3166-1 alpha-2 from an alpha-2, alpha-3 or numeric code or a country name in any of
 * COUNTRY_NAME_LOCALES (case- and accent-insensitive); MULTI_TERRITORY (`ZZ`) for a
 * multi-territory or unknown marker; null for anything else.
 */
export function parseCountry(raw: string): string | null {
  const s = raw.trim();
  if (s.length === 0 || s.length > 80) return null;
  const upper = s.toUpperCase();
  if (Object.hasOwn(TERRITORY_ALIASES, upper)) return TERRITORY_ALIASES[upper]!;
  const key = nameKey(s);
  if (
    MARKERS.has(
      key
        .replace(/[-_./]+/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    )
  )
    return MULTI_TERRITORY;
  if (/^[A-Z]{2}$/.test(upper)) return countries.isValid(upper) ? upper : null;
  if (/^[A-Z]{3}$/.test(upper)) return countries.alpha3ToAlpha2(upper) ?? countryByName(s) ?? null;
  if (/^\d{1,3}$/.test(upper)) return countries.numericToAlpha2(upper.padStart(3, '0')) ?? null;
  return countryByName(s) ?? null;
}

/** Upper-case, separators removed, validated `^[A-Z]{2}[A-Z0-9]{3}\d{7}$`; null when invalid. */
export function normalizeIsrc(raw: string): string | null {
  const s = raw
    .trim()
    .replace(/^"|"$/g, '')
    .replace(/[\s\-_.]/g, '')
    .toUpperCase();
  return /^[A-Z]{2}[A-Z0-9]{3}\d{7}$/.test(s) ? s : null;
}

function gtinCheckDigitValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length - 1; i++) {
    const d = digits.charCodeAt(digits.length - 2 - i) - 48;
    sum += i % 2 === 0 ? d * 3 : d;
  }
  return (10 - (sum % 10)) % 10 === digits.charCodeAt(digits.length - 1) - 48;
}

/**
 * A UPC/EAN as its GTIN-13, so that one product is one value: a UPC-A (12 digits) and the EAN-13
 * written for it (`0` + the UPC) are the same product, as is a GTIN-14 with indicator digit 0, and
 * all three become the 13 digits with the leading zero restored (`036000291452`,
 * `0036000291452` and `00036000291452` are `0036000291452`). An EAN-8 stays 8 digits and a GTIN-14
 * with another indicator digit (a case of the product) stays 14. Wrappers are stripped first
 * (`"…"`, `'…'`, a leading `'`, `="…"`, Orchard's `empty:` / `Empty:` prefix), then separators; a
 * UPC that lost its leading zero (11 digits) is read only when the check digit then validates.
 * Scientific notation (`1.91774E+11`) has lost digits: null, never guessed.
 */
export function normalizeUpc(raw: string): string | null {
  // a UPC in its wrappers is a few dozen characters: a longer cell is none (and `empty:` repeated
  // a hundred thousand times would take the loop below minutes, one prefix per pass)
  if (raw.length > 100) return null;
  let s = raw.trim();
  for (let before = ''; before !== s;) {
    before = s;
    s = s
      .replace(/^empty\s*:\s*/i, '')
      .replace(/^=(?=["'\u201c\d])/, '')
      .replace(/^["'\u201c\u2018]+|["'\u201d\u2019]+$/g, '')
      .trim();
  }
  s = s.replace(/[\s-]/g, '');
  if (!/^\d{8,14}$/.test(s) || s.length === 9 || s.length === 10) return null;
  if (s.length === 8) return gtinCheckDigitValid(s) ? s : null;
  // leading zeros change no check digit: the 11-digit UPC that lost its zero is checked as 13 digits
  const gtin13 = s.length === 14 && s.startsWith('0') ? s.slice(1) : s.padStart(13, '0');
  const gtin = gtin13.length === 13 ? gtin13 : s;
  return gtinCheckDigitValid(gtin) ? gtin : null;
}

/** ISWC as `T` + 10 digits, check digit validated. */
export function normalizeIswc(raw: string): string | null {
  const s = raw
    .trim()
    .toUpperCase()
    .replace(/[\s\-.]/g, '');
  const m = /^T(\d{9})(\d)$/.exec(s);
  if (!m) return null;
  let sum = 1;
  for (let i = 0; i < 9; i++) sum += (i + 1) * (m[1]!.charCodeAt(i) - 48);
  return (10 - (sum % 10)) % 10 === +m[2]! ? s : null;
}

/**
 * A period, date or currency found in a file name (e.g. `YouTube_X_M_20240301_…`, `…_2024-03_…`).
 * Only eight-digit and ISO dates and period tokens are read, never a bare serial: a file name is no
 * cell of the workbook, so no workbook date system applies to it.
 */
export function fromFileName(
  fileName: string,
  what: 'period' | 'date' | 'currency',
): string | null {
  const base = fileName.slice(0, 255);
  if (what === 'currency') {
    for (const token of base.split(/[^A-Za-z]+/))
      if (token.length === 3 && parseCurrency(token) === token.toUpperCase())
        return token.toUpperCase();
    return null;
  }
  if (what === 'period') {
    // Apple's financial reports are named `{vendor number}_{MMYY}_{region}.txt`
    // (`80012345_0324_EU.txt`): the fiscal month they are for, which their End Date often is not
    // in (a five-week fiscal month such as January 2025, 12/29/2024-02/01/2025, ends in the next one)
    const apple = /(?:^|[^0-9])\d{8,}_(0[1-9]|1[0-2])(\d{2})_[A-Za-z]{2,3}(?=[_.\s-]|$)/.exec(base);
    if (apple) return `20${apple[2]}M${apple[1]}`;
  }
  const tokens = base.split(/[_\s.()[\]]+/).filter(Boolean);
  for (const token of tokens) {
    if (what === 'date') {
      const d =
        /^\d{8}$/.test(token) || /^\d{4}-\d{2}-\d{2}$/.test(token) ? parseDate(token) : null;
      if (d) return d;
    } else {
      const p = /^(\d{4}[-]?\d{2}|\d{4}Q[1-4]|Q[1-4]\d{4}|\d{8}|\d{4}-\d{2}-\d{2})$/i.test(token)
        ? parsePeriod(/^\d{8}$/.test(token) ? token.slice(0, 6) : token)
        : null;
      // written as the period readers read it back (`2024M03`, `2024Q1`)
      if (p) return periodText(p);
    }
  }
  return null;
}

// A mapping proposed for a statement no mapping matches (status needs_mapping): from the header
// names (synonyms and format fingerprints drawn from the statement-format field notes) and from
// sampled values (ISRC pattern, ISO currency codes, dates and periods, amounts, country codes).
//
// Matching rules that matter for real files:
// - a whole-word match beats a substring match, and a header that is exactly a synonym beats one
//   that merely contains it (The Orchard's `TRACK ARTIST` is not the title; `TRACK` is);
// - earnings prefer the net amount in the account (payout) currency over gross amounts and over
//   amounts in the sale currency (TuneCore: `Total Earned`, not `Net Sales`, whose own
//   `Net Sales Currency` column says it is in another currency);
// - a currency written into the money header (`Earnings (USD)`, `Net Revenue in USD`, `$ Amount`)
//   is a constant when no currency column exists.
// The synonyms, penalties and fingerprints are data: headerSynonyms.json, checked when this loads.
import { z } from 'zod';
import {
  headerKey,
  standardFields,
  type FieldSpec,
  type MappingFields,
  type StandardField,
} from './mappingFields.ts';
import { CADENCES } from '../periods.ts';
import synonymData from './headerSynonyms.json' with { type: 'json' };
import {
  fromFileName,
  normalizeIsrc,
  normalizeIswc,
  normalizeUpc,
  parseCountry,
  parseCurrency,
  parseDate,
  parsePeriod,
  type Cadence,
} from './values.ts';

export interface MappingSuggestion {
  fields: MappingFields;
  /** 0..1 per proposed field */
  confidence: Partial<Record<StandardField, number>>;
  /** why each field was proposed */
  reasons: Partial<Record<StandardField, string>>;
  /** the statement family recognised from fingerprint columns, if any */
  distributor: string | null;
  /** per field, the next best column and its confidence, when another column also fits (earnings) */
  runnerUp?: Partial<Record<StandardField, { column: string; confidence: number }>>;
}

type ValueKind =
  | 'amount'
  | 'quantity'
  | 'period'
  | 'currency'
  | 'country'
  | 'isrc'
  | 'upc'
  | 'iswc'
  | 'percent'
  | 'text';

interface FieldRule {
  /** synonyms, each with how strongly it names the field */
  phrases: [string, number][];
  /** words that make a header less likely to be the field */
  penalties?: [string, number][];
  kind: ValueKind;
  threshold: number;
}

const MAX_COLUMNS = 2_000;
const MAX_SAMPLE_ROWS = 200;
const MAX_CELL = 300;

// ---------------------------------------------------------------------------------------------
// Header words

const ISO_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** A currency named in a header's text: `Earnings (USD)`, `Net Revenue in USD`, `USD Amount`, `$ Amount`, `Dollars`. */
export function currencyInHeader(header: string): string | null {
  const patterns = [/\(([A-Z]{3})\)/, /\bin ([A-Z]{3})\b/, /^([A-Z]{3})[\s_]/, /[\s_]([A-Z]{3})$/];
  for (const re of patterns) {
    const m = re.exec(header.trim());
    if (m && ISO_CURRENCIES.has(m[1]!)) return m[1]!;
  }
  if (/(^|[\s(])\$/.test(header) || /\bdollars?\b/i.test(header)) return 'USD';
  if (/€|\beuros?\b/i.test(header)) return 'EUR';
  if (/£|\bpounds? sterling\b/i.test(header)) return 'GBP';
  return null;
}

/** The words of a header: camelCase split (when the header is one word), punctuation dropped, `#`, `%` and `$` kept as words. */
function words(header: string): string[] {
  let h = header.trim();
  if (!/[\s_]/.test(h)) h = h.replace(/([a-z])([A-Z])/g, '$1 $2');
  // the currency of an amount is not part of what the column is
  h = h.replace(/\(([A-Z]{3})\)/g, ' ').replace(/\bin [A-Z]{3}\b/g, ' ');
  return h
    .toLowerCase()
    .replace(/[#%$]/g, (c) => ` ${c} `)
    .split(/[^\p{L}\p{N}#%$]+/u)
    .filter(Boolean);
}

/** A column whose name says it is in the account holder's currency (`…_client_currency`). */
function inClientCurrency(column: { words: string[] }): boolean {
  return containsRun(column.words, ['client', 'currency']);
}

function containsRun(haystack: string[], needle: string[]): boolean {
  if (needle.length === 0 || needle.length > haystack.length) return false;
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

interface NameMatch {
  score: number;
  why: string;
}

/** How well a header's words name a field: exact (1), whole words inside it (0.85), a substring only (0.35); minus penalties. */
function nameScore(hw: string[], rule: FieldRule): NameMatch | null {
  let best = 0;
  let why = '';
  const joined = hw.join(' ');
  for (const [phrase, weight] of rule.phrases) {
    const pw = phrase.split(' ');
    let quality = 0;
    if (hw.length === pw.length && containsRun(hw, pw)) quality = 1;
    else if (containsRun(hw, pw)) quality = 0.85;
    else if (phrase.length >= 4 && joined.replace(/ /g, '').includes(phrase.replace(/ /g, '')))
      quality = 0.35;
    if (quality * weight > best) {
      best = quality * weight;
      why =
        quality === 1
          ? `is "${phrase}"`
          : quality === 0.85
            ? `contains the words "${phrase}"`
            : `contains "${phrase}"`;
    }
  }
  if (best === 0) return null;
  const hits: string[] = [];
  for (const [phrase, amount] of rule.penalties ?? []) {
    if (containsRun(hw, phrase.split(' '))) {
      best -= amount;
      hits.push(phrase);
    }
  }
  return { score: best, why: hits.length > 0 ? `${why}, but says "${hits.join('", "')}"` : why };
}

// ---------------------------------------------------------------------------------------------
// Sampled values

const AMOUNT_RE =
  /^[-−+]?\(?\s*[-−]?\s*(?:[A-Z]{3}\s*)?[$€£¥]?\s*[-−]?\d[\d,.' ]*(?:[eE][-+]?\d+)?\s*(?:[A-Z]{3})?\)?-?$/;

function isAmount(v: string): boolean {
  return AMOUNT_RE.test(v) && /\d/.test(v);
}

/** The share of a column's non-empty sampled values that read as the kind, or null without samples. */
function valueFit(kind: ValueKind, values: string[]): number | null {
  if (values.length === 0 || kind === 'text') return null;
  const test: (v: string) => boolean = {
    amount: isAmount,
    quantity: (v: string) => isAmount(v),
    percent: (v: string) => isAmount(v.replace(/%$/, '')),
    period: (v: string) => parsePeriod(v) !== null || parseDate(v) !== null,
    currency: (v: string) =>
      /^[A-Za-z]{3}$/.test(v.trim()) && parseCurrency(v) === v.trim().toUpperCase(),
    country: (v: string) => parseCountry(v) !== null || /^(OU|WW|XX|ZZ|EU)$/i.test(v.trim()),
    isrc: (v: string) => normalizeIsrc(v) !== null,
    upc: (v: string) => normalizeUpc(v) !== null || /^"?\d{8,14}"?$/.test(v.trim()),
    iswc: (v: string) => normalizeIswc(v) !== null || /^T[-.\d]{9,}/i.test(v.trim()),
  }[kind];
  return values.filter(test).length / values.length;
}

function numericShare(values: string[]): number {
  return values.length === 0 ? 0 : values.filter(isAmount).length / values.length;
}

// ---------------------------------------------------------------------------------------------
// The field rules: data (headerSynonyms.json), checked here when the module loads

const weighted = z.array(z.tuple([z.string().min(1), z.number().min(0).max(1)]));
const fieldRule = z.strictObject({
  kind: z.enum([
    'amount',
    'quantity',
    'period',
    'currency',
    'country',
    'isrc',
    'upc',
    'iswc',
    'percent',
    'text',
  ]),
  threshold: z.number().min(0).max(1),
  phrases: weighted.min(1),
  penalties: weighted.optional(),
});
const headerSynonyms = z.strictObject({
  $comment: z.string(),
  fields: z.partialRecord(z.enum(standardFields), fieldRule),
  statementPeriod: fieldRule,
  salesPeriod: fieldRule,
  salesStart: fieldRule,
  salesEnd: fieldRule,
  fingerprints: z.array(
    z.strictObject({
      distributor: z.string().min(1),
      columns: z.array(z.string().min(1)).min(1),
      currency: z.string().length(3).optional(),
      cadence: z.enum(CADENCES).optional(),
      source: z.string().min(1).optional(),
      payor: z.string().min(1).optional(),
      /** the day/month order the family writes dates in (its published convention) */
      dateOrder: z.enum(['MDY', 'DMY']).optional(),
    }),
  ),
  earningsFallbacks: z.record(z.string().min(1), z.array(z.string().min(1)).min(1)),
});

const synonyms = headerSynonyms.parse(synonymData);
const rules: Partial<Record<StandardField, FieldRule>> = synonyms.fields;
const STMT_PERIOD_RULE: FieldRule = synonyms.statementPeriod;
const SALES_PERIOD_RULE: FieldRule = synonyms.salesPeriod;
const SALES_START_RULE: FieldRule = synonyms.salesStart;
const SALES_END_RULE: FieldRule = synonyms.salesEnd;
/**
 * Statement families recognised by columns only they have (the fingerprints of the field notes),
 * with the currency they pay in when the file does not say.
 */
const FINGERPRINTS = synonyms.fingerprints;
/** Earnings columns (by headerKey) whose payor puts a row's amount in another column when they are empty. */
const EARNINGS_FALLBACKS = new Map(
  Object.entries(synonyms.earningsFallbacks).map(([column, fallbacks]) => [
    headerKey(column),
    fallbacks.map(headerKey),
  ]),
);

/** The day/month order a statement family is known to write its dates in, if any. */
export function familyDateOrder(distributor: string | null): 'MDY' | 'DMY' | null {
  return FINGERPRINTS.find((f) => f.distributor === distributor && f.dateOrder)?.dateOrder ?? null;
}

// ---------------------------------------------------------------------------------------------
// The suggestion

interface Column {
  index: number;
  /** the header cell as the mapping names it */
  name: string;
  words: string[];
  values: string[];
}

interface Candidate {
  column: Column;
  score: number;
  why: string;
}

const round = (n: number) => Math.round(Math.max(0, Math.min(1, n)) * 100) / 100;

function sampleNote(kind: ValueKind, values: string[], fit: number | null): string {
  if (fit === null) return '';
  const label: Record<ValueKind, string> = {
    amount: 'amounts',
    quantity: 'numbers',
    percent: 'numbers',
    period: 'dates or periods',
    currency: 'ISO currency codes',
    country: 'country codes or names',
    isrc: 'ISRCs',
    upc: 'UPC/EAN codes',
    iswc: 'ISWCs',
    text: 'text',
  };
  return `; ${Math.round(fit * values.length)}/${values.length} sampled values are ${label[kind]}`;
}

/** Scores every column for a rule, sampled values confirming or vetoing what the name says. */
function candidates(
  columns: Column[],
  rule: FieldRule,
  used: Set<number> = new Set(),
): Candidate[] {
  const out: Candidate[] = [];
  for (const column of columns) {
    if (used.has(column.index)) continue;
    const match = nameScore(column.words, rule);
    if (!match) continue;
    let score = match.score;
    const fit = valueFit(rule.kind, column.values);
    if (fit !== null) {
      if (fit >= 0.8) score *= 1.1;
      else if (fit < 0.5) score *= fit > 0 ? 0.6 : 0.2;
    } else if (
      rule.kind === 'text' &&
      column.values.length >= 3 &&
      numericShare(column.values) === 1
    ) {
      score *= 0.6;
    }
    if (score >= rule.threshold) {
      out.push({
        column,
        score,
        why: `header "${column.name}" ${match.why}${sampleNote(rule.kind, column.values, fit)}`,
      });
    }
  }
  return out.sort((a, b) => b.score - a.score || a.column.index - b.column.index);
}

/** Columns whose sampled values are clearly of a kind, whatever their header says. */
function valueOnly(columns: Column[], kind: ValueKind, used: Set<number>): Candidate | null {
  for (const column of columns) {
    if (used.has(column.index) || column.values.length < 2) continue;
    const fit = valueFit(kind, column.values);
    if (fit !== null && fit >= 0.9) {
      return {
        column,
        score: 0.5,
        why: `${sampleNote(kind, column.values, fit).slice(2)} (header "${column.name}" says nothing)`,
      };
    }
  }
  return null;
}

function dominantCadence(values: string[]): Cadence | null {
  const counts = new Map<Cadence, number>();
  for (const v of values) {
    const p = parsePeriod(v);
    if (p) counts.set(p.cadence, (counts.get(p.cadence) ?? 0) + 1);
  }
  let best: Cadence | null = null;
  for (const [c, n] of counts) if (best === null || n > counts.get(best)!) best = c;
  return best;
}

/** A suggestion in the making: the sampled columns, the ones taken, and the fields proposed so far. */
interface Draft {
  columns: Column[];
  /** the columns by headerKey */
  byKey: Map<string, Column>;
  /** the columns a field was taken from */
  used: Set<number>;
  fingerprint: (typeof FINGERPRINTS)[number] | null;
  fields: MappingFields;
  confidence: Partial<Record<StandardField, number>>;
  reasons: Partial<Record<StandardField, string>>;
  runnerUp: Partial<Record<StandardField, { column: string; confidence: number }>>;
  set(field: StandardField, spec: FieldSpec, score: number, why: string): void;
  take(c: Column): void;
}

/** The columns a mapping can name (not blank, not over-long, not repeated), with their sampled values. */
function sampledColumns(header: string[], sampleRows: string[][]): Column[] {
  const rows = sampleRows.slice(0, MAX_SAMPLE_ROWS);
  const columns: Column[] = [];
  const seen = new Set<string>();
  header.slice(0, MAX_COLUMNS).forEach((cell, index) => {
    const name = typeof cell === 'string' ? cell.trim() : '';
    const key = headerKey(name);
    // a mapping names a column by its header cell: blank, over-long and repeated cells cannot be named
    if (name === '' || name.length > MAX_CELL || seen.has(key)) return;
    seen.add(key);
    const values = rows
      .map((r) => (Array.isArray(r) && typeof r[index] === 'string' ? r[index].trim() : ''))
      .filter((v) => v !== '' && v.length <= 200);
    columns.push({ index, name, words: words(name), values });
  });
  return columns;
}

function draftOf(columns: Column[]): Draft {
  const byKey = new Map(columns.map((c) => [headerKey(c.name), c]));
  const d: Draft = {
    columns,
    byKey,
    used: new Set<number>(),
    fingerprint: FINGERPRINTS.find((f) => f.columns.every((c) => byKey.has(headerKey(c)))) ?? null,
    fields: {},
    confidence: {},
    reasons: {},
    runnerUp: {},
    set(field, spec, score, why) {
      d.fields[field] = spec;
      d.confidence[field] = round(score);
      d.reasons[field] = why;
    },
    take: (c) => d.used.add(c.index),
  };
  return d;
}

/** 1. earnings: the net amount in the payout currency (answers the candidate taken); and the gross. */
function suggestEarnings(d: Draft): Candidate | null {
  const { columns, byKey, used, take, set } = d;
  const currencyColumns = candidates(columns, rules.currency!);
  const money = candidates(columns, rules.royaltyEarnings!).map((c) => {
    // "Net Sales" next to "Net Sales Currency" is in its own (sale) currency when another currency column exists
    const own = byKey.get(`${headerKey(c.column.name)} currency`);
    if (own && currencyColumns.some((k) => k.column.index !== own.index)) {
      return {
        ...c,
        score: c.score - 0.35,
        why: `${c.why}; its own "${own.name}" column puts it in another currency than the payout`,
      };
    }
    // an amount "in the client's currency" beats its twin in the sale currency (Sonosuite's net_total)
    if (inClientCurrency(c.column))
      return {
        ...c,
        score: c.score + 0.15,
        why: `${c.why}; it is in the account holder's currency`,
      };
    return c;
  });
  money.sort((a, b) => b.score - a.score || a.column.index - b.column.index);
  const earnings = money[0] && money[0].score >= rules.royaltyEarnings!.threshold ? money[0] : null;
  if (earnings) {
    // a payor that fills one of two amount columns per row (BMI: ROYALTY AMOUNT, else CURRENT
    // ACTIVITY AMT): the first that is not empty, never both added
    const fallback = (EARNINGS_FALLBACKS.get(headerKey(earnings.column.name)) ?? [])
      .map((k) => byKey.get(k))
      .find((c) => c !== undefined && !used.has(c.index));
    if (fallback) {
      set(
        'royaltyEarnings',
        { columns: [earnings.column.name, fallback.name], pick: 'first' },
        earnings.score,
        `${earnings.why}; else "${fallback.name}" where it is empty (the payor fills one of the two)`,
      );
      take(fallback);
    } else {
      set('royaltyEarnings', { column: earnings.column.name }, earnings.score, earnings.why);
    }
    take(earnings.column);
    const next = money.find((c) => c.column !== earnings.column && !used.has(c.column.index));
    if (next)
      d.runnerUp.royaltyEarnings = { column: next.column.name, confidence: round(next.score) };
  }
  const gross = candidates(columns, rules.grossRoyaltyEarnings!, used)[0];
  if (gross) {
    set('grossRoyaltyEarnings', { column: gross.column.name }, gross.score, gross.why);
    take(gross.column);
  }

  return earnings;
}

/** The best currency column not yet taken; one whose words name the earnings column's currency is preferred. */
function currencyColumnPick(d: Draft, earnings: Candidate | null): Candidate | undefined {
  const pairedPrefix = (c: Candidate) => {
    const prefix = c.column.words.filter((w) => w !== 'currency').join(' ');
    return (
      prefix !== '' &&
      earnings !== null &&
      ` ${earnings.column.words.join(' ')} `.includes(` ${prefix} `)
    );
  };
  return candidates(d.columns, rules.currency!)
    .filter((c) => !d.used.has(c.column.index))
    .map((c) =>
      pairedPrefix(c)
        ? {
            ...c,
            score: c.score + 0.3,
            why: `${c.why}; it names the currency of "${earnings!.column.name}"`,
          }
        : c,
    )
    .sort((a, b) => b.score - a.score || a.column.index - b.column.index)[0];
}

/** The currency when nothing names it: a symbol in the sampled earnings, else the file name, else a variable. */
function suggestCurrencyFromSymbolOrFileName(
  d: Draft,
  earnings: Candidate | null,
  fileName: string,
): void {
  const symbol = earnings?.column.values
    .map((v) => /[$€£]/.exec(v)?.[0])
    .find((s) => s !== undefined);
  const fromName = fromFileName(fileName, 'currency');
  if (symbol)
    d.set(
      'currency',
      { constant: parseCurrency(symbol)! },
      0.6,
      `the sampled earnings carry the symbol ${symbol}`,
    );
  else if (fromName)
    d.set('currency', { fromFileName: 'currency' }, 0.5, `the file name names ${fromName}`);
  else
    d.set(
      'currency',
      { variable: 'currency' },
      0.1,
      'nothing in the file names the currency: give it with the upload (variable "currency")',
    );
}

/** 2. currency: a column, else the money header's text, else the family's, else the values' symbols or the file name. */
function suggestCurrency(d: Draft, earnings: Candidate | null, fileName: string): void {
  const { columns, byKey, used, take, set, fingerprint } = d;
  const currencyPick = currencyColumnPick(d, earnings);
  const headerCurrency = earnings ? currencyInHeader(earnings.column.name) : null;
  const valueCurrency = currencyPick ? null : valueOnly(columns, 'currency', used);
  // "<earnings header> Currency" names exactly the currency of the amounts taken
  const ownCurrency = earnings
    ? byKey.get(`${headerKey(earnings.column.name)} currency`)
    : undefined;
  if (ownCurrency && !used.has(ownCurrency.index)) {
    set(
      'currency',
      { column: ownCurrency.name },
      0.9,
      `header "${ownCurrency.name}" names the currency of "${earnings!.column.name}"`,
    );
    take(ownCurrency);
  } else if (
    earnings &&
    inClientCurrency(earnings.column) &&
    !(currencyPick && inClientCurrency(currencyPick.column))
  ) {
    // Sonosuite: `currency` is the sale currency; the client's, which the amounts are in, is named nowhere
    set(
      'currency',
      { variable: 'currency' },
      0.5,
      `"${earnings.column.name}" is in the account holder's currency, which no column names: give it with the upload (variable "currency")`,
    );
  } else if (currencyPick) {
    set('currency', { column: currencyPick.column.name }, currencyPick.score, currencyPick.why);
    take(currencyPick.column);
  } else if (headerCurrency) {
    set(
      'currency',
      { constant: headerCurrency },
      0.9,
      `the earnings header "${earnings!.column.name}" names ${headerCurrency}`,
    );
  } else if (valueCurrency) {
    set('currency', { column: valueCurrency.column.name }, valueCurrency.score, valueCurrency.why);
    take(valueCurrency.column);
  } else if (fingerprint?.currency) {
    set(
      'currency',
      { constant: fingerprint.currency },
      0.8,
      `${fingerprint.distributor} statements are paid in ${fingerprint.currency} and carry no currency column`,
    );
  } else {
    suggestCurrencyFromSymbolOrFileName(d, earnings, fileName);
  }
}

interface YearAndPeriodPair {
  year: Column;
  period: Column;
  cadence: Cadence;
  score: number;
}

/** A free "... year" column and its twin "... quarter|month|half" column with the same prefix, if any. */
function yearAndPeriodPair(d: Draft): YearAndPeriodPair | null {
  const { columns, used } = d;
  const yearColumn = columns.find(
    (c) => !used.has(c.index) && c.words.at(-1) === 'year' && c.words.length <= 3,
  );
  if (!yearColumn) return null;
  const prefix = yearColumn.words.slice(0, -1);
  for (const c of columns) {
    if (c === yearColumn || used.has(c.index)) continue;
    const last = c.words.at(-1);
    const cadence: Cadence | null =
      last === 'quarter' ? 'Q' : last === 'month' ? 'M' : last === 'half' ? 'H' : null;
    if (!cadence || c.words.slice(0, -1).join(' ') !== prefix.join(' ')) continue;
    const penalty = nameScore(
      prefix.length > 0 ? [...prefix, 'period'] : ['period'],
      STMT_PERIOD_RULE,
    );
    return {
      year: yearColumn,
      period: c,
      cadence,
      score: Math.min(1, (penalty?.score ?? 0.9) + 0.05),
    };
  }
  return null;
}

/** The statement period from one column; its cadence from the sampled values, the header or the family. */
function suggestPeriodFromOneColumn(d: Draft, periodPick: Candidate): void {
  const { set, take, fingerprint } = d;
  const col = periodPick.column;
  const sampled = dominantCadence(col.values);
  const named: Cadence | null = col.words.includes('quarter')
    ? 'Q'
    : col.words.includes('month')
      ? 'M'
      : null;
  const family = fingerprint?.cadence ?? null;
  // a family that states quarterly reads its dates as the quarter they fall in
  const cadence = sampled === 'M' && family ? family : (sampled ?? named ?? family ?? 'M');
  const datesWidened =
    cadence !== 'M' && (sampled === 'M' || (sampled === null && col.words.includes('date')));
  const widen = { Q: 'quarter', H: 'half', Y: 'year', M: 'month' } as const;
  const spec: FieldSpec = datesWidened
    ? { column: col.name, format: widen[cadence] }
    : { column: col.name };
  set('stmtYear', spec, periodPick.score, periodPick.why);
  set('stmtPeriod', { ...spec }, periodPick.score, periodPick.why);
  const cadenceWhy =
    cadence === family && sampled !== cadence
      ? `${fingerprint!.distributor} statements are ${cadence === 'Q' ? 'quarterly' : `of cadence ${cadence}`}`
      : sampled
        ? `the sampled values of "${col.name}" are ${cadence === 'M' ? 'months or dates' : `periods of cadence ${cadence}`}`
        : named
          ? `"${col.name}" names the cadence`
          : 'assumed monthly: nothing says otherwise';
  set(
    'stmtCadence',
    { constant: cadence },
    sampled || family ? 0.9 : named ? 0.7 : 0.4,
    cadenceWhy,
  );
  take(col);
}

/** 3. the statement period: a year column with a quarter/month column, else one period column, else the file name (answers whether a year column and a period column were paired). */
function suggestStatementPeriod(d: Draft, fileName: string): boolean {
  const { columns, used, take, set } = d;
  const pair = yearAndPeriodPair(d);
  const periodPick = candidates(columns, STMT_PERIOD_RULE, used)[0];
  if (pair && (!periodPick || pair.score >= periodPick.score)) {
    const why = `"${pair.year.name}" holds the year and "${pair.period.name}" the ${pair.cadence === 'Q' ? 'quarter' : pair.cadence === 'M' ? 'month' : 'half'}`;
    set('stmtYear', { column: pair.year.name }, pair.score, why);
    set('stmtPeriod', { column: pair.period.name }, pair.score, why);
    set('stmtCadence', { constant: pair.cadence }, pair.score, why);
    take(pair.year);
    take(pair.period);
  } else if (periodPick) {
    suggestPeriodFromOneColumn(d, periodPick);
  } else {
    const fromName = fromFileName(fileName, 'period');
    const score = fromName ? 0.6 : 0.2;
    const why = fromName
      ? `no period column; the file name holds the period ${fromName}`
      : 'no period column: the period must be in the file name';
    set('stmtYear', { fromFileName: 'period' }, score, why);
    set('stmtPeriod', { fromFileName: 'period' }, score, why);
    set('stmtCadence', { fromFileName: 'period' }, score, why);
  }
  return pair !== null;
}

/** 4. the sales period: a start/end pair (the statement's own date column may be one of them), else one sales-period column, else the statement's column when it dates each sale. */
function suggestSalesPeriod(d: Draft, paired: boolean): void {
  const { columns, byKey, used, take, set, fields } = d;
  const stmtColumn = fields.stmtYear?.column;
  const stmtCol = stmtColumn === undefined ? undefined : byKey.get(headerKey(stmtColumn));
  const usedButStmt = new Set([...used].filter((i) => i !== stmtCol?.index));
  const start = candidates(columns, SALES_START_RULE, usedButStmt)[0];
  const end = candidates(columns, SALES_END_RULE, usedButStmt)[0];
  if (start && end && start.column !== end.column) {
    set('salesPeriodStart', { column: start.column.name }, start.score, start.why);
    set('salesPeriodEnd', { column: end.column.name }, end.score, end.why);
    take(start.column);
    take(end.column);
  } else {
    const sales = candidates(columns, SALES_PERIOD_RULE, used)[0];
    if (sales) {
      set('salesPeriodStart', { column: sales.column.name }, sales.score, sales.why);
      set('salesPeriodEnd', { column: sales.column.name }, sales.score, sales.why);
      take(sales.column);
    } else if (
      stmtCol &&
      !paired &&
      !stmtCol.words.some((w) =>
        [
          'distribution',
          'statement',
          'report',
          'reporting',
          'posted',
          'accounting',
          'period',
        ].includes(w),
      )
    ) {
      const why = `no separate sales period: the statement's "${stmtColumn}" dates the sales`;
      set('salesPeriodStart', { column: stmtColumn }, 0.4, why);
      set('salesPeriodEnd', { column: stmtColumn }, 0.4, why);
    }
  }
}

/** 5. everything else, best matches first, one column per field. */
function suggestOtherFields(d: Draft): void {
  const { columns, used, take, set, fields } = d;
  const rest: { field: StandardField; candidate: Candidate }[] = [];
  for (const [field, rule] of Object.entries(rules) as [StandardField, FieldRule][]) {
    if (fields[field] || ['royaltyEarnings', 'grossRoyaltyEarnings', 'currency'].includes(field))
      continue;
    for (const candidate of candidates(columns, rule, used)) rest.push({ field, candidate });
  }
  for (const kind of ['isrc', 'country'] as const) {
    const field: StandardField = kind;
    if (!rest.some((r) => r.field === field)) {
      const byValue = valueOnly(columns, kind, used);
      if (byValue) rest.push({ field, candidate: byValue });
    }
  }
  rest.sort(
    (a, b) =>
      b.candidate.score - a.candidate.score || a.candidate.column.index - b.candidate.column.index,
  );
  for (const { field, candidate } of rest) {
    if (fields[field] || used.has(candidate.column.index)) continue;
    set(field, { column: candidate.column.name }, candidate.score, candidate.why);
    take(candidate.column);
  }
}

export function suggestMapping(
  header: string[],
  sampleRows: string[][],
  fileName: string,
): MappingSuggestion {
  const d = draftOf(sampledColumns(header, sampleRows));
  const earnings = suggestEarnings(d);
  suggestCurrency(d, earnings, fileName);
  const paired = suggestStatementPeriod(d, fileName);
  suggestSalesPeriod(d, paired);
  suggestOtherFields(d);
  // 6. what the family itself says: the store it is, the payor it is
  const { fingerprint, fields, set } = d;
  if (fingerprint?.source && !fields.source)
    set(
      'source',
      { constant: fingerprint.source },
      0.8,
      `${fingerprint.distributor} statements are its own store's sales`,
    );
  if (fingerprint?.payor && !fields.payor)
    set(
      'payor',
      { constant: fingerprint.payor },
      0.8,
      `${fingerprint.payor} pays the whole statement`,
    );
  return {
    fields: d.fields,
    confidence: d.confidence,
    reasons: d.reasons,
    distributor: fingerprint?.distributor ?? null,
    runnerUp: d.runnerUp,
  };
}

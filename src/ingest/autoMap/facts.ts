// Statement-level facts written outside the table: in the preamble above the header
// (`Statement Period,01/07/2023 - 31/12/2023`, `Currency,EUR`, `Payee,…`, `Account #,…`) or in the
// file name (`…_2024-05_…`, `…_EUR_…`). They reach a mapping as upload variables (FACT_VARIABLES),
// so a mapping reads them from every file of its layout; a variable given with the upload wins.
import {
  fromFileName,
  parseCurrency,
  parsePeriod,
  periodOfRange,
  type Cadence,
  type Period,
} from '../values.ts';
import { periodText } from '../../periods.ts';

/** Where a fact was read: the preamble's key, or the file name. */
export interface FactSource {
  from: 'preamble' | 'file_name';
  /** the preamble key, or the file name */
  where: string;
  /** the text as written */
  raw: string;
}

export interface StatementFacts {
  currency?: { value: string } & FactSource;
  /** `value` as the period readers read it back: 2024M05, 2023Q3, 2023H2, 2023 */
  period?: {
    value: string;
    year: number;
    period: number;
    cadence: Cadence;
    start: string;
    end: string;
  } & FactSource;
  payee?: { value: string } & FactSource;
  account?: { value: string } & FactSource;
}

/** The variables the facts fill, by fact: a mapping names them like any upload variable. */
export const FACT_VARIABLES = {
  currency: 'fileCurrency',
  period: 'filePeriod',
  payee: 'filePayee',
  account: 'fileAccount',
} as const;

const CURRENCY_KEY =
  /^(currency|statement currency|payment currency|payout currency|reporting currency|währung|devise|moneda|valuta)$/i;
const PERIOD_KEY =
  /^(statement period|distribution|distribution period|reporting period|royalty period|accounting period|period|sales period|distribution period|zeitraum|abrechnungszeitraum|période|periode|periodo)$/i;
const PERIOD_START_KEY = /^(period start|start date|period from|from|statement start|von|du)$/i;
const PERIOD_END_KEY = /^(period end|end date|period to|to|statement end|bis|au)$/i;
const PAYEE_KEY =
  /^(payee|payee name|member name|member|artist|artist name|client|client name|account name|beneficiary|rights ?holder|name)$/i;
const ACCOUNT_KEY =
  /^(account|account #|account no\.?|account number|account id|payee id|payee code|member number|member no\.?|member id|cae number|cae|ipi|ipi number|client id|vendor id|mitgliedsnummer)$/i;

/** A preamble line whose key matches, its value clipped (a cell may hold up to 1 MiB: a fact is short). */
function entry(
  preamble: Readonly<Record<string, string>>,
  key: RegExp,
): [string, string] | undefined {
  const found = Object.entries(preamble).find(([k, v]) => key.test(k.trim()) && v.trim() !== '');
  return found && [found[0], found[1].trim().slice(0, MAX_FACT)];
}

const MAX_FACT = 300;

function periodFact(p: Period, source: FactSource): NonNullable<StatementFacts['period']> {
  return {
    value: periodText(p),
    year: p.year,
    period: p.period,
    cadence: p.cadence,
    start: p.start,
    end: p.end,
    ...source,
  };
}

/** The statement period: a preamble period or range, else a start and an end line, else the file name. */
function periodOf(
  preamble: Readonly<Record<string, string>>,
  fileName: string,
): StatementFacts['period'] {
  const named = entry(preamble, PERIOD_KEY);
  const read = named ? parsePeriod(named[1]) : null;
  if (named && read) return periodFact(read, { from: 'preamble', where: named[0], raw: named[1] });
  const start = entry(preamble, PERIOD_START_KEY);
  const end = entry(preamble, PERIOD_END_KEY);
  if (start && end) {
    const range = parsePeriod(`${start[1].trim()} - ${end[1].trim()}`);
    const a = range ? null : parsePeriod(start[1]);
    const b = range ? null : parsePeriod(end[1]);
    const p = range ?? (a && b ? periodOfRange(a.start, b.end) : null);
    if (p)
      return periodFact(p, {
        from: 'preamble',
        where: `${start[0]} / ${end[0]}`,
        raw: `${start[1]} / ${end[1]}`,
      });
  }
  const fromName = fromFileName(fileName, 'period');
  const p = fromName ? parsePeriod(fromName) : null;
  return p ? periodFact(p, { from: 'file_name', where: fileName, raw: fromName! }) : undefined;
}

/** A currency in the file name only as an upper-case code between separators (`Statement_EUR_2024-05.csv`). */
function currencyInName(fileName: string): string | null {
  for (const token of fileName.split(/[^A-Za-z]+/))
    if (/^[A-Z]{3}$/.test(token) && parseCurrency(token) === token) return token;
  return null;
}

/** What the preamble and the file name say of the statement as a whole. */
export function statementFacts(
  preamble: Readonly<Record<string, string>>,
  fileName: string,
): StatementFacts {
  const facts: StatementFacts = {};
  const currency = entry(preamble, CURRENCY_KEY);
  const code = currency ? parseCurrency(currency[1]) : null;
  if (currency && code)
    facts.currency = { value: code, from: 'preamble', where: currency[0], raw: currency[1] };
  else {
    const inName = currencyInName(fileName);
    if (inName) facts.currency = { value: inName, from: 'file_name', where: fileName, raw: inName };
  }
  const period = periodOf(preamble, fileName);
  if (period) facts.period = period;
  const payee = entry(preamble, PAYEE_KEY);
  if (payee)
    facts.payee = {
      value: payee[1].trim().slice(0, 300),
      from: 'preamble',
      where: payee[0],
      raw: payee[1],
    };
  const account = entry(preamble, ACCOUNT_KEY);
  if (account)
    facts.account = {
      value: account[1].trim().slice(0, 300),
      from: 'preamble',
      where: account[0],
      raw: account[1],
    };
  return facts;
}

/** The upload's variables with the facts added under FACT_VARIABLES; a variable given with the upload is kept. */
export function withFactVariables(
  given: Readonly<Record<string, string>>,
  facts: StatementFacts,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [fact, variable] of Object.entries(FACT_VARIABLES) as [
    keyof StatementFacts,
    string,
  ][]) {
    const value = facts[fact]?.value;
    if (value !== undefined) out[variable] = value;
  }
  return { ...out, ...given };
}

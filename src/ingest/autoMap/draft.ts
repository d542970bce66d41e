// The mapping proposed for an unknown layout, made strict: from the suggestion (header names and
// sampled values, src/ingest/suggest.ts) and the statement's facts (facts.ts), each required field
// kept only when it is found with high confidence, every uncertainty a reason. Optional fields
// below MIN_OPTIONAL are left out rather than guessed.
import { formulaText, type FieldSpec, type MappingFields } from '../mappingFields.ts';
import { readAmount } from '../amounts.ts';
import { fieldKinds, requiredFields, type StandardField } from '../standardFields.ts';
import type { LocatedTable } from '../fileTypes.ts';
import type { MappingSuggestion } from '../suggest.ts';
import { headerIn, headerKey } from '../standardFields.ts';
import { parseDate, parsePeriod, periodOfRange, type Cadence } from '../values.ts';
import { FACT_VARIABLES, type StatementFacts } from './facts.ts';
import type { AutoMapReason } from './reasons.ts';
import { decideDayMonth, fileDayMonth } from './dateOrder.ts';

/** A required field is applied on its own only from this confidence up. */
export const HIGH_CONFIDENCE = 0.8;
/** The earnings column's confidence that is enough when no other column names money. */
const SOLE_MONEY_CONFIDENCE = 0.6;
/** Another column this close to the chosen earnings column makes the choice a question. */
const CONTESTED_MARGIN = 0.1;
/** Optional fields below this confidence are left out. */
const MIN_OPTIONAL = 0.6;

export interface Draft {
  fields: MappingFields;
  /** per field, the confidence it was taken with and why */
  basis: Partial<Record<StandardField, { confidence: number; why: string }>>;
  /** optional fields of the suggestion left out (too uncertain) */
  leftOut: StandardField[];
  reasons: AutoMapReason[];
}

const PERIOD_FIELDS = ['stmtYear', 'stmtPeriod', 'stmtCadence'] as const;

/** A header naming the royalty of one unit (older Apple reports: `Royalty Price`), not a total. */
const PER_UNIT_ROYALTY =
  /^(royalty price|royalty per unit|per unit royalty|unit royalty|royalty unit price|net unit price|unit net price)$/i;

/**
 * With no earnings column, the amount computed from the units and a column naming the royalty per
 * unit (`Units` × `Royalty Price`): both found with high confidence, the price's sampled cells
 * amounts. The proof then reads every row's product like any amount.
 */
function computedEarnings(s: MappingSuggestion, located: LocatedTable, d: Draft): boolean {
  const units = s.fields.units?.column;
  if (units === undefined || (s.confidence.units ?? 0) < HIGH_CONFIDENCE) return false;
  const price = located.header.find((h) => PER_UNIT_ROYALTY.test(h.trim()));
  if (price === undefined || headerKey(price) === headerKey(units)) return false;
  const index = located.header.indexOf(price);
  const values = located.sampleRows.map((r) => (r[index] ?? '').trim()).filter((v) => v !== '');
  if (
    values.length === 0 ||
    values.some((v) => readAmount(v, false) === null && readAmount(v, true) === null)
  )
    return false;
  d.fields.royaltyEarnings = { multiply: [units, price] };
  d.basis.royaltyEarnings = {
    confidence: Math.min(s.confidence.units ?? 0, 0.9),
    why: `no column states the earnings: each row's amount is computed as ${formulaText([units, price])} ("${price}" names the royalty per unit; ${values.length}/${values.length} sampled values are amounts)`,
  };
  // the price is not also a rate or another amount of the row
  for (const f of Object.keys(s.fields) as StandardField[])
    if (s.fields[f]?.column !== undefined && headerKey(s.fields[f]!.column!) === headerKey(price))
      d.leftOut.push(f);
  return true;
}

function earnings(s: MappingSuggestion, located: LocatedTable, d: Draft): void {
  const spec = s.fields.royaltyEarnings;
  const confidence = s.confidence.royaltyEarnings ?? 0;
  const column = spec?.column ?? spec?.columns?.join(', ');
  if (!spec) {
    if (computedEarnings(s, located, d)) return;
    d.reasons.push({
      code: 'field_missing',
      field: 'royaltyEarnings',
      message: 'No column reads as the net earnings.',
    });
    return;
  }
  const next = s.runnerUp?.royaltyEarnings;
  // a weaker name is enough for the one column of the file that names money at all
  const sole = !next && confidence >= SOLE_MONEY_CONFIDENCE;
  if (confidence < HIGH_CONFIDENCE && !sole) {
    d.reasons.push({
      code: 'field_uncertain',
      field: 'royaltyEarnings',
      column,
      message: `"${column}" is only probably the net earnings (confidence ${confidence}): ${s.reasons.royaltyEarnings}.`,
    });
    return;
  }
  if (next && next.confidence >= confidence - CONTESTED_MARGIN) {
    d.reasons.push({
      code: 'field_ambiguous',
      field: 'royaltyEarnings',
      column,
      message: `"${column}" (confidence ${confidence}) and "${next.column}" (confidence ${next.confidence}) both read as the net earnings: say which.`,
      details: { columns: [column, next.column] },
    });
    return;
  }
  d.fields.royaltyEarnings = spec;
  d.basis.royaltyEarnings = {
    confidence,
    why: `${s.reasons.royaltyEarnings ?? ''}${sole && confidence < HIGH_CONFIDENCE ? '; no other column names money' : ''}`,
  };
}

function currency(s: MappingSuggestion, facts: StatementFacts, d: Draft): void {
  const spec = s.fields.currency;
  const confidence = s.confidence.currency ?? 0;
  const fact = facts.currency;
  const strong =
    spec &&
    confidence >= HIGH_CONFIDENCE &&
    (spec.column !== undefined || spec.constant !== undefined);
  if (strong && spec.constant !== undefined && fact && fact.value !== spec.constant) {
    d.reasons.push({
      code: 'conflicting_facts',
      field: 'currency',
      message: `${s.reasons.currency}, but the ${fact.from === 'preamble' ? `preamble's "${fact.where}"` : 'file name'} says ${fact.value}.`,
    });
    return;
  }
  if (strong) {
    d.fields.currency = spec;
    d.basis.currency = { confidence, why: s.reasons.currency ?? '' };
  } else if (fact) {
    d.fields.currency = { variable: FACT_VARIABLES.currency };
    d.basis.currency = {
      confidence: fact.from === 'preamble' ? 0.95 : 0.85,
      why: `the ${fact.from === 'preamble' ? `preamble's "${fact.where}"` : 'file name'} says ${fact.value}`,
    };
  } else {
    d.reasons.push({
      code: 'field_missing',
      field: 'currency',
      message: `Nothing names the currency with confidence: ${s.reasons.currency ?? 'no column, header or preamble line names it'}.`,
    });
  }
}

function period(
  s: MappingSuggestion,
  located: LocatedTable,
  facts: StatementFacts,
  d: Draft,
): void {
  const spec = s.fields.stmtYear;
  const confidence = Math.min(s.confidence.stmtYear ?? 0, s.confidence.stmtCadence ?? 0);
  const fact = facts.period;
  // the preamble states the statement's period: it beats a column (which then dates the sales)
  if (
    fact &&
    (fact.from === 'preamble' || spec?.column === undefined || confidence < HIGH_CONFIDENCE)
  ) {
    for (const f of PERIOD_FIELDS) {
      d.fields[f] = { variable: FACT_VARIABLES.period };
      d.basis[f] = {
        confidence: fact.from === 'preamble' ? 0.95 : 0.85,
        why: `the ${fact.from === 'preamble' ? `preamble's "${fact.where}"` : 'file name'} gives the period ${fact.value}`,
      };
    }
    return;
  }
  if (spec?.column !== undefined && confidence >= HIGH_CONFIDENCE) {
    const range = rangeCadence(s, located, spec.column);
    for (const f of PERIOD_FIELDS) {
      d.fields[f] = range
        ? f === 'stmtCadence'
          ? { constant: range.cadence }
          : { column: spec.column, format: WIDEN[range.cadence] }
        : s.fields[f]!;
      d.basis[f] = range
        ? { confidence, why: range.why }
        : { confidence: s.confidence[f] ?? confidence, why: s.reasons[f] ?? '' };
    }
    return;
  }
  const sales = salesMonths(s, located);
  if (sales) {
    for (const f of PERIOD_FIELDS) {
      d.fields[f] = f === 'stmtCadence' ? { constant: sales.cadence } : { column: sales.column };
      d.basis[f] = { confidence: sales.confidence, why: sales.why };
    }
    return;
  }
  d.reasons.push({
    code: spec?.column !== undefined ? 'field_uncertain' : 'field_missing',
    field: 'stmtYear',
    ...(spec?.column !== undefined ? { column: spec.column } : {}),
    message: `The statement period is not known with confidence: ${s.reasons.stmtCadence ?? s.reasons.stmtYear ?? 'no period column, preamble line or file name gives it'}.`,
  });
}

const WIDEN = { M: 'month', Q: 'quarter', H: 'half', Y: 'year' } as const;

/**
 * A statement period read from the end date of a start/end pair whose ranges are whole quarters,
 * halves or years in every sampled row (Songtrust's Period Start/Period End): that cadence, not
 * the end date's month.
 */
function rangeCadence(
  s: MappingSuggestion,
  located: LocatedTable,
  stmtColumn: string,
): { cadence: Cadence; why: string } | null {
  const start = s.fields.salesPeriodStart?.column;
  const end = s.fields.salesPeriodEnd?.column;
  if (
    start === undefined ||
    end === undefined ||
    headerKey(end) !== headerKey(stmtColumn) ||
    headerKey(start) === headerKey(end)
  )
    return null;
  const [i, j] = [start, end].map((c) => located.header.indexOf(headerIn(located.header, c) ?? ''));
  if (i! < 0 || j! < 0) return null;
  const cadences = new Set<string>();
  for (const row of located.sampleRows) {
    const a = parseDate(row[i!] ?? '');
    const b = parseDate(row[j!] ?? '');
    const p = a && b ? periodOfRange(a, b) : null;
    // only calendar periods: a range that is none (a few days, a fiscal month) says nothing
    if (!p || p.start !== a || p.end !== b) return null;
    cadences.add(p.cadence);
  }
  const [cadence] = [...cadences] as Cadence[];
  if (cadences.size !== 1 || !cadence || cadence === 'M') return null;
  return {
    cadence,
    why: `every "${start}"-"${end}" range is a whole ${WIDEN[cadence]}: the statement is of that ${WIDEN[cadence]}`,
  };
}

/**
 * Without a statement period, a sales-period column of whole periods (`Sale Month` 2024-03) dates
 * the statement: its periods, of one cadence in every sampled row.
 */
function salesMonths(
  s: MappingSuggestion,
  located: LocatedTable,
): { column: string; cadence: Cadence; confidence: number; why: string } | null {
  const start = s.fields.salesPeriodStart?.column;
  const confidence = s.confidence.salesPeriodStart ?? 0;
  if (
    start === undefined ||
    s.fields.salesPeriodEnd?.column !== start ||
    confidence < HIGH_CONFIDENCE
  )
    return null;
  const header = headerIn(located.header, start);
  if (header === undefined) return null;
  const index = located.header.indexOf(header);
  const values = located.sampleRows.map((r) => (r[index] ?? '').trim()).filter((v) => v !== '');
  // whole periods only (no days: a date's month is no statement period)
  if (values.length === 0 || values.some((v) => parseDate(v) !== null)) return null;
  const cadences = new Set(values.map((v) => parsePeriod(v)?.cadence ?? null));
  const [cadence] = [...cadences];
  if (cadences.size !== 1 || !cadence) return null;
  return {
    column: header,
    cadence,
    confidence,
    why: `no statement period: "${header}" holds whole periods of cadence ${cadence} (${values[0]})`,
  };
}

function optional(s: MappingSuggestion, facts: StatementFacts, d: Draft): void {
  for (const [f, spec] of Object.entries(s.fields) as [StandardField, FieldSpec][]) {
    if ((requiredFields as readonly string[]).includes(f) || d.fields[f] || d.leftOut.includes(f))
      continue;
    const confidence = s.confidence[f] ?? 0;
    // a column the period now comes from elsewhere may still date the sales
    if (
      confidence < MIN_OPTIONAL &&
      !(f.startsWith('salesPeriod') && spec.column !== undefined && confidence >= 0.4)
    ) {
      d.leftOut.push(f);
      continue;
    }
    d.fields[f] = spec;
    d.basis[f] = { confidence, why: s.reasons[f] ?? '' };
  }
  if (facts.payee && !d.fields.accountName) {
    d.fields.accountName = { variable: FACT_VARIABLES.payee };
    d.basis.accountName = {
      confidence: 0.9,
      why: `the preamble's "${facts.payee.where}" names the payee`,
    };
  }
  if (facts.account && !d.fields.accountNumber) {
    d.fields.accountNumber = { variable: FACT_VARIABLES.account };
    d.basis.accountNumber = {
      confidence: 0.9,
      why: `the preamble's "${facts.account.where}" gives the account`,
    };
  }
}

/** Day/month order of every date column the draft reads: proven, or a reason naming the column. */
function dateOrders(
  located: LocatedTable,
  facts: StatementFacts,
  distributor: string | null,
  d: Draft,
): void {
  const done = new Set<string>();
  const sampled = (index: number) => located.sampleRows.map((r) => r[index] ?? '');
  const file = fileDayMonth(new Map(located.header.map((h, i) => [h, sampled(i)])));
  for (const [f, spec] of Object.entries(d.fields) as [StandardField, FieldSpec][]) {
    const kind = fieldKinds[f];
    if (
      (kind !== 'period' && kind !== 'date') ||
      spec.column === undefined ||
      spec.format !== undefined
    )
      continue;
    const header = headerIn(located.header, spec.column);
    if (header === undefined || done.has(headerKey(header))) continue;
    done.add(headerKey(header));
    const index = located.header.indexOf(header);
    const decided = decideDayMonth(sampled(index), { facts, distributor, column: header, file });
    if (decided.order === null) {
      if (decided.reason) d.reasons.push({ ...decided.reason, field: f, column: header });
      continue;
    }
    // the order is proven: every field reading the column reads it so
    for (const [g, other] of Object.entries(d.fields) as [StandardField, FieldSpec][]) {
      if (
        other.column !== undefined &&
        headerKey(other.column) === headerKey(header) &&
        other.format === undefined &&
        (fieldKinds[g] === 'date' || fieldKinds[g] === 'period')
      ) {
        d.fields[g] = { ...other, format: decided.order };
      }
    }
    for (const g of Object.keys(d.fields) as StandardField[])
      if (
        d.fields[g]?.column !== undefined &&
        headerKey(d.fields[g]!.column!) === headerKey(header)
      )
        d.basis[g] = { ...d.basis[g]!, why: `${d.basis[g]?.why ?? ''}; ${decided.why}` };
  }
}

/** The strict mapping of an unknown layout, or the reasons it cannot be one. */
export function draftAutoMapping(
  suggestion: MappingSuggestion,
  located: LocatedTable,
  facts: StatementFacts,
): Draft {
  const d: Draft = { fields: {}, basis: {}, leftOut: [], reasons: [] };
  earnings(suggestion, located, d);
  currency(suggestion, facts, d);
  period(suggestion, located, facts, d);
  optional(suggestion, facts, d);
  dateOrders(located, facts, suggestion.distributor, d);
  return d;
}

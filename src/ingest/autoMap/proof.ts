// The proof of an automatic mapping, from the statement normalized with it: values that read in
// every row (amounts, currencies, periods, countries, identifiers), and the totals the file
// states equal to the rows' sums to the last printed decimal (totals.ts).
import { readAmount } from '../amounts.ts';
import type { LocatedTable } from '../fileTypes.ts';
import { formulaText, type MappingFields, type StandardField } from '../mappingFields.ts';
import type { NormalizeOutput } from '../normalizeTypes.ts';
import { headerIn, usesDecimalComma } from '../standardFields.ts';
import type { AutoMapReason } from './reasons.ts';
import { checkTotals, type TotalCheck } from './totals.ts';

/** An identifier field taken with this confidence is that identifier, whatever its check digits say. */
const NAMED_IDENTIFIER = 0.8;

export interface Proof {
  rows: number;
  net: string | null;
  units: string | null;
  totals: TotalCheck[];
  reasons: AutoMapReason[];
}

/** Sampled data records (1-based) whose amount cell does not read. */
function unreadableAmountRows(
  located: LocatedTable,
  fields: MappingFields,
  decimalComma: Readonly<Record<string, boolean>>,
): number[] {
  const spec = fields.royaltyEarnings;
  const columns =
    spec?.columns ?? spec?.multiply ?? (spec?.column !== undefined ? [spec.column] : []);
  const comma = usesDecimalComma(spec, located.header, decimalComma);
  const indexes = columns
    .map((c) => located.header.indexOf(headerIn(located.header, c) ?? ''))
    .filter((i) => i >= 0);
  const rows: number[] = [];
  located.sampleRows.forEach((r, i) => {
    if (indexes.some((j) => (r[j] ?? '').trim() !== '' && readAmount(r[j], comma) === null))
      rows.push(i + 1);
  });
  return rows.slice(0, 10);
}

function columnOf(fields: MappingFields, f: keyof MappingFields): string | undefined {
  const spec = fields[f];
  if (spec?.multiply !== undefined) return formulaText(spec.multiply);
  return spec?.column ?? spec?.columns?.join(', ');
}

/** What the normalized rows say against the mapping. */
function valueReasons(
  out: NormalizeOutput,
  located: LocatedTable,
  fields: MappingFields,
  named: (f: StandardField) => boolean,
): AutoMapReason[] {
  return [
    ...amountReasons(out, located, fields),
    ...currencyAndPeriodReasons(out, fields),
    ...identifierReasons(out, fields, named),
    ...layoutReasons(out, fields),
  ];
}

/** No data rows, or amounts that do not read or are missing. */
function amountReasons(
  out: NormalizeOutput,
  located: LocatedTable,
  fields: MappingFields,
): AutoMapReason[] {
  const reasons: AutoMapReason[] = [];
  const { issues } = out;
  if (out.keptRows === 0)
    reasons.push({
      code: 'no_data_rows',
      message: 'The statement has no data rows to prove a mapping with.',
    });
  if (issues.invalidAmounts > 0) {
    const column = columnOf(fields, 'royaltyEarnings');
    const examples = unreadableAmountRows(
      located,
      fields,
      out.decimalComma ?? located.decimalComma,
    );
    reasons.push({
      code: 'values_unreadable',
      field: 'royaltyEarnings',
      column,
      rows: issues.invalidAmounts,
      ...(examples.length ? { examples } : {}),
      message: `${issues.invalidAmounts} rows of "${column}" are no amount.`,
    });
  }
  if (issues.missingAmounts > 0) {
    const column = columnOf(fields, 'royaltyEarnings');
    reasons.push({
      code: 'values_missing',
      field: 'royaltyEarnings',
      column,
      rows: issues.missingAmounts,
      message: `${issues.missingAmounts} rows have no amount in "${column}".`,
    });
  }
  return reasons;
}

/** Currencies that are unknown or missing, statement periods that do not read. */
function currencyAndPeriodReasons(out: NormalizeOutput, fields: MappingFields): AutoMapReason[] {
  const reasons: AutoMapReason[] = [];
  const { issues } = out;
  if (issues.unknownCurrencies.length > 0) {
    reasons.push({
      code: 'values_unreadable',
      field: 'currency',
      column: columnOf(fields, 'currency'),
      message: `Currencies not recognised: ${issues.unknownCurrencies.slice(0, 10).join(', ')}.`,
      details: { values: issues.unknownCurrencies.slice(0, 50) },
    });
  }
  const noCurrency = out.perCurrency.find((c) => c.currency === null)?.rows ?? 0;
  if (noCurrency > 0)
    reasons.push({
      code: 'values_missing',
      field: 'currency',
      column: columnOf(fields, 'currency'),
      rows: noCurrency,
      message: `${noCurrency} rows have no currency.`,
    });
  if (issues.missingStmtPeriod > 0) {
    reasons.push({
      code: 'values_unreadable',
      field: 'stmtYear',
      column: columnOf(fields, 'stmtYear'),
      rows: issues.missingStmtPeriod,
      message: `${issues.missingStmtPeriod} rows have no statement period that reads.`,
    });
  }
  return reasons;
}

/**
 * Identifiers and territories that do not read. An identifier column named as one is one: values
 * failing their check digit are the payor's data (processed with the invalid_isrc/invalid_upc
 * warnings); under a weaker name they disprove it.
 */
function identifierReasons(
  out: NormalizeOutput,
  fields: MappingFields,
  named: (f: StandardField) => boolean,
): AutoMapReason[] {
  const reasons: AutoMapReason[] = [];
  const { issues } = out;
  if (issues.invalidIsrc > 0 && !named('isrc'))
    reasons.push({
      code: 'values_unreadable',
      field: 'isrc',
      column: columnOf(fields, 'isrc'),
      rows: issues.invalidIsrc,
      message: `${issues.invalidIsrc} rows have no valid ISRC.`,
    });
  if (issues.invalidUpc > 0 && !named('upc'))
    reasons.push({
      code: 'values_unreadable',
      field: 'upc',
      column: columnOf(fields, 'upc'),
      rows: issues.invalidUpc,
      message: `${issues.invalidUpc} rows have no valid UPC/EAN.`,
    });
  if (issues.unknownCountries.length > 0) {
    reasons.push({
      code: 'values_unreadable',
      field: 'country',
      column: columnOf(fields, 'country'),
      message: `Territories not recognised: ${issues.unknownCountries.slice(0, 10).join(', ')}.`,
      details: { values: issues.unknownCountries.slice(0, 50) },
    });
  }
  return reasons;
}

/** Cells beyond the header's last column, and sales period columns of which no date reads. */
function layoutReasons(out: NormalizeOutput, fields: MappingFields): AutoMapReason[] {
  const reasons: AutoMapReason[] = [];
  if (out.issues.extraCells > 0)
    reasons.push({
      code: 'values_unreadable',
      rows: out.issues.extraCells,
      message: `${out.issues.extraCells} rows have a cell beyond the header's last column.`,
    });
  for (const f of ['salesPeriodStart', 'salesPeriodEnd'] as const) {
    const column = fields[f]?.column;
    if (
      column !== undefined &&
      (f === 'salesPeriodStart' ? out.salesPeriodStart : out.salesPeriodEnd) === null
    ) {
      reasons.push({
        code: 'values_unreadable',
        field: f,
        column,
        message: `No date of "${column}" reads.`,
      });
    }
  }
  return reasons;
}

/** The proof of a mapping from its normalized output: its reasons are empty when it holds. */
export function proveMapping(
  out: NormalizeOutput,
  located: LocatedTable,
  fields: MappingFields,
  /** per field, the confidence it was taken with (Draft.basis) */
  basis: Partial<Record<StandardField, { confidence: number }>> = {},
): Proof {
  const named = (f: StandardField) => (basis[f]?.confidence ?? 0) >= NAMED_IDENTIFIER;
  const reasons = valueReasons(out, located, fields, named);
  const totals = checkTotals(
    located,
    fields,
    { amount: out.net, units: out.units, rows: String(out.keptRows) },
    out.decimalComma ?? located.decimalComma,
  );
  for (const total of totals.filter((x) => !x.agrees)) {
    reasons.push({
      code: 'total_mismatch',
      field: total.measure === 'units' ? 'units' : 'royaltyEarnings',
      message:
        total.computed === null
          ? `The ${total.where}'s "${total.label}" states ${total.stated}, and the rows have no sum to compare it with.`
          : `The ${total.where}'s "${total.label}" states ${total.stated}; the rows sum to ${total.computed}${total.compared !== null ? ` (${total.compared} as printed)` : ''}.`,
      details: {
        where: total.where,
        label: total.label,
        measure: total.measure,
        stated: total.stated,
        computed: total.computed,
      },
    });
  }
  return { rows: out.keptRows, net: out.net, units: out.units, totals, reasons };
}

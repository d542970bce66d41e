// The numbers of a statement and the rule they are read by (a decimal point or a decimal comma):
// every number of a field must fit its rule, or the run switches rules or refuses the statement.
import { fieldKinds, standardFields, type StandardField } from '../../src/ingest/standardFields.ts';
import type { FieldSpec, MappingFields } from '../../src/ingest/mappingFields.ts';
import { byRule } from './amountMacro.ts';
import { AmountFormatError, FormatSwitch } from './errors.ts';

/** A numeric field read from the file's cells, and how to test them against a rule (see fits_amount). */
export interface FormatCheck {
  field: StandardField;
  columns: string[];
  /** the rule the field is read by now */
  decimalComma: boolean;
  /** the mapping states the rule (format decimal_comma or decimal_point): it is never switched */
  stated: boolean;
  /** an SQL condition over the raw cells c0..cN: every cell of the row fits the rule */
  fits: (decimalComma: boolean) => string;
  /**
   * an SQL condition implying fits, without its regular expressions and readings: what the survey
   * counts (cheap to plan); the rows it leaves are tested by fits (judgeFormat)
   */
  surelyFits: (decimalComma: boolean) => string;
  /** an SQL expression: the first of the row's cells that does not fit the rule */
  offending: (decimalComma: boolean) => string;
}

export function formatChecks(
  fields: MappingFields,
  cellOf: (column: string) => string,
  decimalCommaOf: (spec: FieldSpec | undefined) => boolean,
): FormatCheck[] {
  const checks: FormatCheck[] = [];
  for (const field of standardFields) {
    const kind = fieldKinds[field];
    const spec = fields[field];
    if (
      (kind !== 'amount' && kind !== 'quantity' && kind !== 'percent') ||
      !spec ||
      spec.fromFileName !== undefined
    )
      continue;
    const columns =
      spec.columns ?? spec.multiply ?? (spec.column !== undefined ? [spec.column] : []);
    if (columns.length === 0) continue;
    const cells = columns.map(cellOf);
    checks.push({
      field,
      columns,
      decimalComma: decimalCommaOf(spec),
      stated: spec.format === 'decimal_comma' || spec.format === 'decimal_point',
      fits: (dc) => `(${cells.map((c) => `${byRule('fits_amount', dc)}(${c})`).join(' AND ')})`,
      surelyFits: (dc) =>
        `(${cells.map((c) => `${byRule('surely_fits_amount', dc)}(${c})`).join(' AND ')})`,
      offending: (dc) =>
        `(CASE ${cells.map((c) => `WHEN NOT ${byRule('fits_amount', dc)}(${c}) THEN ${c}`).join(' ')} END)`,
    });
  }
  return checks;
}

/** How many offending rows a refusal lists, and the most characters of each cell it shows. */
const OFFENDING_ROWS = 20;
const OFFENDING_CHARS = 100;

/**
 * A field with numbers that may not fit the rule it is read by (surelyFits counted some): none when
 * every number fits after all. Else, when every number of it fits the
 * other rule, and the mapping states none, the run starts again with that one (FormatSwitch); else
 * the statement is refused, naming the rows that do not fit (AmountFormatError). Never is a
 * number read by a rule its separators contradict.
 */
export async function judgeFormat(
  check: FormatCheck,
  one: (sql: string) => Promise<unknown[][]>,
  kept: (cells: string) => string,
): Promise<void> {
  const cells = '*';
  const rule = (dc: boolean) => (dc ? 'a decimal comma (1.234,56)' : 'a decimal point (1,234.56)');
  const unfit = await one(
    `SELECT count(*) FILTER (WHERE NOT ${check.fits(check.decimalComma)}) FROM ${kept(cells)}`,
  );
  if (Number(unfit[0]![0]) === 0) return;
  if (!check.stated) {
    const other = await one(
      `SELECT count(*) FILTER (WHERE NOT ${check.fits(!check.decimalComma)}) FROM ${kept(cells)}`,
    );
    if (Number(other[0]![0]) === 0) throw new FormatSwitch(check.columns[0]!, !check.decimalComma);
  }
  const rows =
    await one(`SELECT count(*) OVER (), source_row, ${check.offending(check.decimalComma)} FROM ${kept(cells)}
    WHERE NOT ${check.fits(check.decimalComma)} ORDER BY source_row LIMIT ${OFFENDING_ROWS}`);
  const count = Number(rows[0]![0]);
  // a cell as written, up to a length a person reads (a hostile one may hold 90 KB)
  const shown = (v: unknown) =>
    String(v).length > OFFENDING_CHARS ? `${String(v).slice(0, OFFENDING_CHARS)}…` : String(v);
  const offending = rows.map((r) => ({ row: Number(r[1]), value: shown(r[2]) }));
  const columns = check.columns.map((c) => `"${c}"`).join(', ');
  const examples = offending
    .slice(0, 3)
    .map((o) => `row ${o.row} "${o.value}"`)
    .join(', ');
  throw new AmountFormatError(
    `The numbers of ${columns} (${check.field}) are read with ${rule(check.decimalComma)}${check.stated ? ', as the mapping states' : ''}, ` +
      `but ${count} ${count === 1 ? 'row contradicts' : 'rows contradict'} it (${examples}) and no one rule reads them all: ` +
      `correct those cells, or set the field's format to 'decimal_comma' or 'decimal_point' in the mapping if the other rule is right.`,
    {
      field: check.field,
      columns: check.columns,
      format: check.decimalComma ? 'decimal_comma' : 'decimal_point',
      count,
      rows: offending,
    },
  );
}

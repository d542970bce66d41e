// The standard fields of a normalized statement row, and the shape of a mapping's `fields`: for
// each standard field, where its value comes from (one column, several columns, a constant, the
// file name or an upload variable) and, where needed, the format to read it with.
import { z } from 'zod';
import { headerKey, requiredFields, standardFields, type StandardField } from './standardFields.ts';

export { headerKey, standardFields, type StandardField } from './standardFields.ts';

/**
 * Where one field comes from: exactly one of column, columns, constant, fromFileName, variable,
 * except that fromFileName may name a column to read where the file name has no such value.
 * - column: a header cell, matched trimmed, case- and white-space-insensitively.
 * - columns: several header cells; text values are joined with `join` (default ' '), amounts summed;
 *   with `pick: 'first'`, the value of the first of them that is not empty (an amount: not empty
 *   and no `N/A`/`-` marker), for one value in either of two columns (BMI's `ROYALTY AMOUNT` or
 *   `CURRENT ACTIVITY AMT`), where summing would count a row that fills both twice.
 * - constant: the same value on every row (e.g. currency 'USD', cadence 'M').
 * - fromFileName: a period, a date or a currency code found in the uploaded file's name; with
 *   column, that column's value when the name has none (YouTube's reports name their month, and an
 *   adjustment report's rows are days of earlier months; a renamed file still has its days).
 * - variable: a value given with the upload (`variables` of upload.uploadFile and uploadAction;
 *   mapping.processSample's, else the statement's).
 * - multiply: for an amount field only, two columns whose numbers multiplied give the amount
 *   (`["Units", "Royalty Price"]`: older Apple reports state no earnings, only units and the
 *   royalty per unit). Computed exactly in decimals (the product rounded half away from zero to 12
 *   decimals); a row with either cell empty has no amount (never 0). MAPPING_FORMULA_INVALID
 *   when it is not two different columns of an amount field.
 * format: for amounts 'decimal_point' | 'decimal_comma' (default: detected per column); for
 *   dates 'YMD' | 'YDM' | 'MDY' | 'DMY' (default: detected per column, a year-first one from the
 *   statement's values); for stmt* fields a period read from a date takes its month ('month'),
 *   quarter ('quarter'), half ('half') or year ('year'); for percentages (taxDeduction,
 *   territoryDeduction) 'percent' (a bare 30 is 30 %, 0.3) or 'fraction' (a bare 0.3 is 30 %);
 *   default: decided per column (`85%` is always 0.85).
 */
/** The name of a variable: a letter, then letters, digits or _. */
export const variableNameSchema = z
  .string()
  .max(100)
  .regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'must be a variable name: a letter, then letters, digits or _');

/**
 * Values of a statement's variables (`{ "currency": "EUR" }`), given with the upload
 * (upload.uploadFile, upload.uploadAction) or to mapping.processSample; each trimmed, at most 300
 * characters, at most 50 of them.
 */
export const variablesSchema = z
  .record(
    variableNameSchema,
    z
      .string()
      .trim()
      .max(300)
      .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters'),
  )
  .refine((v) => Object.keys(v).length <= 50, 'at most 50 variables');

/** A text encoding named for a statement file (checked against iconv-lite's by the upload procedures: ENCODING_UNKNOWN). */
export const encodingSchema = z.string().trim().min(1).max(100);

export const fieldSpecSchema = z
  .strictObject({
    column: z.string().min(1).max(300).optional(),
    columns: z.array(z.string().min(1).max(300)).min(1).max(20).optional(),
    join: z.string().max(10).optional(),
    pick: z.enum(['all', 'first']).optional(),
    constant: z.string().max(300).optional(),
    fromFileName: z.enum(['period', 'date', 'currency']).optional(),
    variable: variableNameSchema.optional(),
    multiply: z.array(z.string().min(1).max(300)).min(1).max(20).optional(),
    format: z
      .enum([
        'decimal_point',
        'decimal_comma',
        'YMD',
        'YDM',
        'MDY',
        'DMY',
        'month',
        'quarter',
        'half',
        'year',
        'percent',
        'fraction',
      ])
      .optional(),
  })
  .refine((s) => s.pick === undefined || s.columns !== undefined, {
    message: 'pick chooses among columns: give it with columns',
    path: ['pick'],
  })
  .refine((s) => s.pick !== 'first' || s.join === undefined, {
    message: "pick 'first' takes one column's value: nothing is joined",
    path: ['join'],
  })
  .refine(
    (s) =>
      [
        s.fromFileName === undefined ? s.column : undefined,
        s.columns,
        s.constant,
        s.fromFileName,
        s.variable,
        s.multiply,
      ].filter((v) => v !== undefined).length === 1,
    {
      message:
        'give exactly one of column, columns, constant, fromFileName, variable, multiply (fromFileName may also name a column to fall back on)',
    },
  );
export type FieldSpec = z.infer<typeof fieldSpecSchema>;

export const mappingFieldsSchema = z.partialRecord(z.enum(standardFields), fieldSpecSchema);
export type MappingFields = z.infer<typeof mappingFieldsSchema>;

/** Fields a complete mapping lacks among the required five. */
export function missingRequiredFields(fields: MappingFields): StandardField[] {
  return requiredFields.filter((f) => fields[f] === undefined);
}

/** The columns a mapping reads, for checking them against a statement's headers. */
export function referencedColumns(fields: MappingFields): string[] {
  const out = new Set<string>();
  for (const spec of Object.values(fields)) {
    if (!spec) continue;
    if (spec.column) out.add(spec.column);
    for (const c of spec.columns ?? []) out.add(c);
    for (const c of spec.multiply ?? []) out.add(c);
  }
  return [...out];
}

/** The fields a computed amount (multiply) may be given for: the amounts of a row. */
export const COMPUTABLE_FIELDS: readonly StandardField[] = [
  'royaltyEarnings',
  'grossRoyaltyEarnings',
];

/** What is wrong with a field's formula (multiply), or null: two different columns of an amount field. */
export function formulaProblem(field: StandardField, spec: FieldSpec): string | null {
  const factors = spec.multiply;
  if (factors === undefined) return null;
  if (!COMPUTABLE_FIELDS.includes(field))
    return `multiply computes an amount: only ${COMPUTABLE_FIELDS.join(' and ')} may be computed`;
  if (factors.length !== 2)
    return `multiply takes exactly two columns (units and the amount per unit), not ${factors.length}`;
  if (headerKey(factors[0]!) === headerKey(factors[1]!))
    return `multiply takes two different columns, not "${factors[0]}" twice`;
  if (
    spec.format !== undefined &&
    spec.format !== 'decimal_point' &&
    spec.format !== 'decimal_comma'
  )
    return `an amount is read with format decimal_point or decimal_comma, not ${spec.format}`;
  return null;
}

/** How a computed amount is written for a person: `Units × Royalty Price`. */
export const formulaText = (factors: readonly string[]): string => factors.join(' × ');

/**
 * How names compare when a mapping is matched to a file by its columns rather than by the header
 * hash: as the header hash reads them, and besides without white space and underscores
 * (`Country / Region` = `Country/Region`, `TRACK_TITLE` = `Track Title`).
 */
export function looseHeaderKey(name: string): string {
  return headerKey(name).replace(/[\s_]+/g, '');
}

/** A mapping to match a file's header against by its columns: its headers, fields and, for a library mapping, other names of its columns. */
export interface ColumnMatchCandidate {
  headers: readonly string[];
  fields: MappingFields;
  /** other names of a header (keyed by the header as the mapping writes it) */
  aliases?: Readonly<Record<string, readonly string[]>>;
}

/** How a mapping matched a file by its columns. */
export interface ColumnMatch {
  /** the mapping's fields with every column named as the file names it */
  fields: MappingFields;
  /** the mapping's columns that the file names otherwise (mapping's name → file's header cell) */
  renamed: Record<string, string>;
  /** the mapping's headers the file lacks (none of them is a column its fields read) */
  missing: string[];
  /** the file's header cells the mapping does not know */
  extra: string[];
  /** found / (mapping's headers + file's header cells − found): 1 when the two are the same columns */
  score: number;
}

/** Why a mapping does not match a file by its columns. */
export interface ColumnMismatch {
  /** columns its fields read that the file lacks */
  absent: string[];
  /** columns its fields read that more than one of the file's header cells could be */
  ambiguous: string[];
  /** the share of its headers the file has, and of the file's header cells it knows, when both are too low */
  coverage?: { mapping: number; file: number };
}

/**
 * The two must share enough columns to be one layout: at least this share of the mapping's headers
 * is in the file, or of the file's named header cells in the mapping.
 */
export const COLUMN_MATCH_MIN_COVERAGE = 0.6;

/**
 * Matches a mapping to a file's header by its columns, in any order: each header of the mapping is
 * the file's header cell of the same name or of one of its aliases (compared by looseHeaderKey).
 * It matches when every column its fields read is in the file exactly once, and the two share
 * enough columns (COLUMN_MATCH_MIN_COVERAGE) to be one layout; the fields it returns read the
 * file's own header cells.
 */
export function matchColumns(
  header: readonly string[],
  candidate: ColumnMatchCandidate,
): { match: ColumnMatch } | { mismatch: ColumnMismatch } {
  const cellsByKey = new Map<string, string[]>();
  for (const cell of header) {
    const key = looseHeaderKey(cell);
    if (key === '') continue;
    const list = cellsByKey.get(key);
    if (list) list.push(cell);
    else cellsByKey.set(key, [cell]);
  }
  const aliasesOf = new Map<string, readonly string[]>();
  for (const [name, list] of Object.entries(candidate.aliases ?? {}))
    aliasesOf.set(looseHeaderKey(name), list);
  /** the mapping's column (by looseHeaderKey) → the file's cells it could be */
  const found = new Map<string, string[]>();
  const claimed = new Set<string>();
  for (const h of candidate.headers) {
    const key = looseHeaderKey(h);
    if (key === '' || found.has(key)) continue;
    const names = [key, ...(aliasesOf.get(key) ?? []).map(looseHeaderKey)];
    const cells = [...new Set(names)].flatMap((n) => cellsByKey.get(n) ?? []);
    found.set(key, cells);
    if (cells.length === 1) claimed.add(cells[0]!);
  }
  const cellFor = (column: string): string | undefined => {
    const cells = found.get(looseHeaderKey(column));
    return cells?.length === 1 ? cells[0] : undefined;
  };
  const absent: string[] = [];
  const ambiguous: string[] = [];
  for (const column of referencedColumns(candidate.fields)) {
    const cells = found.get(looseHeaderKey(column)) ?? [];
    if (cells.length === 0) absent.push(column);
    else if (cells.length > 1) ambiguous.push(column);
  }
  const named = [...cellsByKey.values()].reduce((n, cells) => n + cells.length, 0);
  const mappingHeaders = found.size;
  const hits = [...found.values()].filter((cells) => cells.length === 1).length;
  const coverage = {
    mapping: mappingHeaders === 0 ? 0 : hits / mappingHeaders,
    file: named === 0 ? 0 : hits / named,
  };
  const enough = Math.max(coverage.mapping, coverage.file) >= COLUMN_MATCH_MIN_COVERAGE;
  if (absent.length > 0 || ambiguous.length > 0 || !enough) {
    return { mismatch: { absent, ambiguous, ...(enough ? {} : { coverage }) } };
  }
  const fields: MappingFields = {};
  const renamed: Record<string, string> = {};
  const rename = (column: string): string => {
    const cell = cellFor(column)!;
    if (headerKey(cell) !== headerKey(column)) renamed[column] = cell;
    return cell;
  };
  for (const [field, spec] of Object.entries(candidate.fields) as [
    keyof MappingFields,
    NonNullable<MappingFields[keyof MappingFields]>,
  ][]) {
    const out = { ...spec };
    if (out.column !== undefined) out.column = rename(out.column);
    if (out.columns !== undefined) out.columns = out.columns.map(rename);
    if (out.multiply !== undefined) out.multiply = out.multiply.map(rename);
    fields[field] = out;
  }
  const missing = candidate.headers.filter(
    (h) => looseHeaderKey(h) !== '' && (found.get(looseHeaderKey(h))?.length ?? 0) === 0,
  );
  const extra = header.filter((cell) => looseHeaderKey(cell) !== '' && !claimed.has(cell));
  return {
    match: { fields, renamed, missing, extra, score: hits / (mappingHeaders + named - hits) },
  };
}

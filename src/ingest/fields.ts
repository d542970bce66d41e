// The standard fields of a normalized statement row, and the shape of a mapping's `fields`: for
// each standard field, where its value comes from (one column, several columns, a constant, the
// file name or an upload variable) and, where needed, the format to read it with.
import { z } from 'zod';
import { requiredFields, standardFields, type StandardField } from './fieldNames.ts';

export { fieldKinds, headerKey, requiredFields, standardFields, type StandardField } from './fieldNames.ts';

/**
 * Where one field comes from: exactly one of column, columns, constant, fromFileName, variable,
 * except that fromFileName may name a column to read where the file name has no such value.
 * - column: a header cell, matched trimmed, case- and white-space-insensitively.
 * - columns: several header cells; text values are joined with `join` (default ' '), amounts summed.
 * - constant: the same value on every row (e.g. currency 'USD', cadence 'M').
 * - fromFileName: a period, a date or a currency code found in the uploaded file's name; with
 *   column, that column's value when the name has none (YouTube's reports name their month, and an
 *   adjustment report's rows are days of earlier months; a renamed file still has its days).
 * - variable: a value given with the upload (`variables` of upload.uploadFile and uploadAction;
 *   mapping.processSample's, else the statement's).
 * format: for amounts 'decimal_point' | 'decimal_comma' (default: detected per column); for
 *   dates 'YMD' | 'MDY' | 'DMY' (default: detected per column); for stmt* fields a period read from
 *   a date takes its month ('month'), quarter ('quarter'), half ('half') or year ('year').
 */
/** The name of a variable: a letter, then letters, digits or _. */
export const variableNameSchema = z.string().max(100).regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'must be a variable name: a letter, then letters, digits or _');

/**
 * Values of a statement's variables (`{ "currency": "EUR" }`), given with the upload
 * (upload.uploadFile, upload.uploadAction) or to mapping.processSample; each trimmed, at most 300
 * characters, at most 50 of them.
 */
export const variablesSchema = z
  .record(variableNameSchema, z.string().trim().max(300).refine((v) => !v.includes('\u0000'), 'must not contain NUL characters'))
  .refine((v) => Object.keys(v).length <= 50, 'at most 50 variables');
export type Variables = z.infer<typeof variablesSchema>;

export const fieldSpecSchema = z
  .strictObject({
    column: z.string().min(1).max(300).optional(),
    columns: z.array(z.string().min(1).max(300)).min(1).max(20).optional(),
    join: z.string().max(10).optional(),
    constant: z.string().max(300).optional(),
    fromFileName: z.enum(['period', 'date', 'currency']).optional(),
    variable: variableNameSchema.optional(),
    format: z.enum(['decimal_point', 'decimal_comma', 'YMD', 'MDY', 'DMY', 'month', 'quarter', 'half', 'year']).optional(),
  })
  .refine(
    (s) => [s.fromFileName === undefined ? s.column : undefined, s.columns, s.constant, s.fromFileName, s.variable].filter((v) => v !== undefined).length === 1,
    { message: 'give exactly one of column, columns, constant, fromFileName, variable (fromFileName may also name a column to fall back on)' },
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
  }
  return [...out];
}

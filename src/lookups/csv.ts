// Delimited text as the reference files and published rate files write it: a BOM, quoted cells,
// trailing commas and blank lines are all normal there.
import { parse } from 'csv-parse/sync';

export function csvRows(text: string): string[][] {
  return parse(text, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true }) as string[][];
}

/** Rows keyed by the header row's cells. */
export function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = csvRows(text);
  if (!header) return [];
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

export function emptyToNull(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** A reference file that cannot be imported as it is: a permanent failure, never retried. */
export class ReferenceFileError extends Error {
  override name = 'ReferenceFileError';
}

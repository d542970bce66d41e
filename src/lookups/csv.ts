// Delimited text as the reference files and published rate files write it: a BOM, quoted cells,
// trailing commas and blank lines are all normal there.
import { CsvError, parse } from 'csv-parse/sync';

/** The rows of a delimited text; one that is no readable CSV (a quote never closed) is a ReferenceFileError. */
export function csvRows(text: string): string[][] {
  try {
    return parse(text, {
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      trim: true,
    }) as string[][];
  } catch (error) {
    // a file that is no CSV stays one on every attempt: permanent, like any other unusable file
    if (error instanceof CsvError)
      throw new ReferenceFileError(`not a readable CSV file: ${error.message}`);
    throw error;
  }
}

/** The first row of a delimited text alone (a text cut anywhere after it still has one). */
export function csvHeader(text: string): string[] {
  try {
    const [header = []] = parse(text, {
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      trim: true,
      to_line: 1,
    }) as string[][];
    return header;
  } catch (error) {
    if (error instanceof CsvError)
      throw new ReferenceFileError(`not a readable CSV file: ${error.message}`);
    throw error;
  }
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

/**
 * A check that each row's key (a date, a date and currency, a symbol) comes once: a file giving
 * one twice says two things of it, and which one holds would depend on how the import batches it.
 */
export function onceEach(what: string): (key: string, line: number) => void {
  const first = new Map<string, number>();
  return (key, line) => {
    const earlier = first.get(key);
    if (earlier !== undefined)
      throw new ReferenceFileError(`Line ${line}: the same ${what} as line ${earlier}`);
    first.set(key, line);
  };
}

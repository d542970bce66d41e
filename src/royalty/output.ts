// What `royalty` prints and how it exits. Answers: a table on a terminal (cli-table3), `--json`
// (the exact JSON of the answer), `--csv` for lists (csv-stringify). Exit codes: 0 ok, 1 a server
// or network failure, 2 a usage or validation error; the server's data.code and errorCode are
// printed with the message.
import Table from 'cli-table3';
import { stringify } from 'csv-stringify/sync';
import { CommanderError } from 'commander';
import {
  errorCodeOf,
  RoyaltyClientError,
  specificCodeOf,
  TRPCClientError,
} from '../client/index.ts';
import { atCommonScale, fixedText } from '../decimal.ts';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A mistake in how the command was given (or a missing login): exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type Format = 'table' | 'json' | 'csv';

export interface OutputOptions {
  json?: boolean;
  csv?: boolean;
}

export function formatOf(options: OutputOptions): Format {
  if (options.json && options.csv) throw new UsageError('--json and --csv exclude each other');
  return options.json ? 'json' : options.csv ? 'csv' : 'table';
}

type Row = Record<string, unknown>;

/** The rows of a list answer: an array, `{ data: [...] }`, `{ items: [...] }`, `{ files: [...] }`. */
export function rowsOf(value: unknown): Row[] | undefined {
  if (Array.isArray(value))
    return value.map((v) => (typeof v === 'object' && v !== null ? (v as Row) : { value: v }));
  if (typeof value !== 'object' || value === null) return undefined;
  for (const key of ['data', 'items', 'files', 'organizations']) {
    const inner = (value as Row)[key];
    if (Array.isArray(inner)) return rowsOf(inner);
  }
  return undefined;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function columnsOf(rows: Row[], columns?: string[]): string[] {
  if (columns) return columns;
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

export function table(rows: Row[], columns?: string[]): string {
  const head = columnsOf(rows, columns);
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) t.push(head.map((c) => cell(row[c]).slice(0, 200)));
  return t.toString();
}

export function csv(rows: Row[], columns?: string[]): string {
  const head = columnsOf(rows, columns);
  return stringify([head, ...rows.map((row) => head.map((c) => cell(row[c])))]);
}

/** Prints an answer in the chosen format; `columns` picks and orders the table's and CSV's columns. */
export function print(value: unknown, format: Format, columns?: string[]): void {
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const rows = rowsOf(value);
  if (format === 'csv') {
    if (!rows) throw new UsageError('--csv prints lists; this answer is not one (use --json)');
    process.stdout.write(csv(rows, columns));
    return;
  }
  if (rows) {
    process.stdout.write(rows.length === 0 ? '(none)\n' : `${table(rows, columns)}\n`);
    const total = (value as { pagination?: { total?: number; page?: number; totalPages?: number } })
      .pagination;
    if (total?.total !== undefined && total.totalPages !== undefined && total.totalPages > 1) {
      process.stderr.write(`page ${total.page} of ${total.totalPages} (${total.total} in all)\n`);
    }
    return;
  }
  if (typeof value === 'object' && value !== null) {
    const t = new Table({ style: { head: [], border: [] } });
    for (const [key, v] of Object.entries(value)) t.push({ [key]: cell(v).slice(0, 400) });
    process.stdout.write(`${t.toString()}\n`);
    return;
  }
  process.stdout.write(`${cell(value)}\n`);
}

/** The exit code and the line to print for an error. */
export function describeFailure(error: unknown): { code: number; message: string } {
  if (error instanceof UsageError) return { code: EXIT_USAGE, message: error.message };
  if (error instanceof CommanderError)
    return { code: error.exitCode === 0 ? EXIT_OK : EXIT_USAGE, message: '' };
  // a login that could not be renewed, met while a call was under way
  if (error instanceof TRPCClientError && error.cause instanceof UsageError)
    return describeFailure(error.cause);
  if (error instanceof TRPCClientError) {
    const code = errorCodeOf(error);
    const specific = specificCodeOf(error);
    const tags = [code, specific].filter((c): c is string => c !== undefined && c !== '');
    const label = tags.length > 0 ? ` [${[...new Set(tags)].join(' ')}]` : '';
    const network =
      code === undefined
        ? ` (${(error.cause as Error | undefined)?.message ?? 'no answer from the server'})`
        : '';
    return {
      code: code === 'BAD_REQUEST' ? EXIT_USAGE : EXIT_FAILURE,
      message: `${error.message}${network}${label}`,
    };
  }
  if (error instanceof RoyaltyClientError)
    return { code: EXIT_FAILURE, message: `${error.message} [${error.errorCode}]` };
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.message ? ` (${cause.message})` : '';
  return { code: EXIT_FAILURE, message: `${(error as Error).message ?? String(error)}${detail}` };
}

/** Exact sums of decimal texts ("283.2390246069"), as the server answers money: no floating point. */
export function sumDecimals(values: string[]): string {
  const { scale, units } = atCommonScale(values);
  return fixedText(
    units.reduce((sum, u) => sum + u, 0n),
    scale,
  );
}

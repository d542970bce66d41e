// Small SQL helpers of the normalizer: values never enter SQL but as literals made here.
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, sqlLiteral } from '../../src/db/sql.ts';

export const snake = (f: string) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The quote (and escape) of DuckDB's lenient reader for a file without quoting: a control character no statement holds. */
export const NO_QUOTE = String.fromCharCode(1);

/** A SQL string literal, NUL characters dropped (a cell may hold one): values never enter SQL any other way. */
export function lit(value: string): string {
  return sqlLiteral(value.replace(/\0/g, ''));
}

export { quoteIdent as ident };

/** Promise.all that waits for every query, so none is still running when the connections close. */
export async function allOf<T>(work: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** A table of distinct raw values (v) and what the reader made of each (o). */
export async function fillLookup(
  connection: DuckDBConnection,
  table: string,
  values: string[],
  outputs: (string | number | null)[],
): Promise<void> {
  await connection.run(`CREATE TEMP TABLE ${table} (v VARCHAR, o VARCHAR)`);
  const appender = await connection.createAppender(table);
  for (const [i, v] of values.entries()) {
    const out = outputs[i] ?? null;
    appender.appendVarchar(v);
    if (out === null) appender.appendNull();
    else appender.appendVarchar(String(out));
    appender.endRow();
  }
  appender.closeSync();
}

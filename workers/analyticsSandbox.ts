// The cube.sqlQuery sandbox: a child process (not a thread) that answers exactly one caller SQL
// statement and exits. It loads the caller's rows (a Parquet file the parent wrote, holding only
// the organization's allowed rows) into a fresh in-memory DuckDB as the table
// analytics_full_view, then locks the database down before the caller's text is even parsed:
// no file system, no external access, no extensions, configuration locked, no spilling to disk.
// Only a single SELECT runs; it is interrupted at its time limit. The parent watches this
// process's memory and kills it when DuckDB allocates outside its own limit (long strings do),
// which is only safe because this is a process of its own (see docs/analytics.md, "`cube.sqlQuery`:
// threat model").
import {
  DuckDBInstance,
  StatementType,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
} from '@duckdb/node-api';
import type { SandboxJob, SandboxResult } from '../src/workers/sandboxTypes.ts';

export type { SandboxJob, SandboxResult } from '../src/workers/sandboxTypes.ts';

/** Text that JSON writes as it is, one byte a character: printable ASCII but the quote and backslash. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Characters JSON escapes (quote, backslash, control characters) and surrogates (a lone one is escaped). */
// eslint-disable-next-line no-control-regex
const ESCAPED_OR_SURROGATE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string's size in the answer's JSON: UTF-8 bytes, escapes (a control character is six) and quotes. */
function stringBytes(value: string): number {
  if (PLAIN_JSON_TEXT.test(value)) return value.length + 2;
  if (!ESCAPED_OR_SURROGATE.test(value)) return Buffer.byteLength(value) + 2;
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * About the size of a value as JSON text: a string's UTF-8 bytes with its escapes and quotes, a
 * number's digits, and a byte per separator. It bounds what the parent receives, keeps and sends
 * on (50,000 rows of 4 KB strings are 200 MB: within the row limit, too much for the API process
 * and its caller).
 */
export function resultBytes(value: unknown): number {
  if (typeof value === 'string') return stringBytes(value) + 1;
  if (value === null || typeof value !== 'object') return String(value).length + 1;
  let bytes = 2;
  if (Array.isArray(value)) for (const v of value) bytes += resultBytes(v);
  else for (const [k, v] of Object.entries(value)) bytes += stringBytes(k) + 2 + resultBytes(v);
  return bytes;
}

const firstLine = (error: unknown) =>
  String((error as Error).message ?? error)
    .split('\n')[0]!
    .slice(0, 500);

async function lockDown(c: DuckDBConnection): Promise<void> {
  await c.run('SET enable_external_access = false');
  await c.run(`SET disabled_filesystems = 'LocalFileSystem'`);
  await c.run('SET allow_community_extensions = false');
  await c.run('SET lock_configuration = true');
}

/** Exactly one statement, and a SELECT both by the parser's tree and by the prepared type. */
async function prepareSingleSelect(
  c: DuckDBConnection,
  sql: string,
): Promise<DuckDBPreparedStatement | string> {
  const extracted = await c.extractStatements(sql);
  if (extracted.count !== 1)
    return `exactly one SELECT statement is allowed; this text has ${extracted.count}`;
  const tree = (
    await c.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR))', [sql])
  ).getRows()[0]?.[0];
  const parsed = JSON.parse(String(tree)) as {
    error?: boolean;
    error_message?: string;
    statements?: unknown[];
  };
  if (parsed.error || parsed.statements?.length !== 1) return 'only a SELECT statement is allowed';
  const prepared = await extracted.prepare(0);
  if (prepared.statementType !== StatementType.SELECT) return 'only a SELECT statement is allowed';
  return prepared;
}

export async function runSandboxJob(job: SandboxJob): Promise<SandboxResult> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(job.threads),
    memory_limit: `${job.memoryMb}MB`,
    temp_directory: '',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const c = await instance.connect();
  try {
    try {
      await c.run('CREATE TABLE analytics_full_view AS SELECT * FROM read_parquet($1)', [job.file]);
    } catch (error) {
      if (/out of memory/i.test(firstLine(error))) {
        return {
          ok: false,
          errorCode: 'SQL_QUERY_RESOURCE_LIMIT',
          message: "The organization's rows do not fit the sqlQuery memory limit; use cube.query",
        };
      }
      throw error;
    }
    await lockDown(c);
    let prepared: DuckDBPreparedStatement | string;
    try {
      prepared = await prepareSingleSelect(c, job.sql);
    } catch (error) {
      return { ok: false, errorCode: 'SQL_QUERY_INVALID', message: firstLine(error) };
    }
    if (typeof prepared === 'string')
      return { ok: false, errorCode: 'SQL_QUERY_NOT_SELECT', message: prepared };
    const timer = setTimeout(() => c.interrupt(), job.timeoutMs);
    try {
      const reader = await prepared.streamAndReadUntil(job.maxRows + 1);
      if (reader.currentRowCount > job.maxRows) {
        return {
          ok: false,
          errorCode: 'SQL_QUERY_TOO_MANY_ROWS',
          message: `The result has more than ${job.maxRows} rows; add a LIMIT or aggregate`,
        };
      }
      const names = reader.columnNames();
      const types = reader.columnTypes();
      const rows = reader.getRowsJson() as unknown[][];
      if (resultBytes(rows) > job.maxResultMb * 1_048_576) {
        return {
          ok: false,
          errorCode: 'SQL_QUERY_TOO_MANY_ROWS',
          message: `The result is larger than ${job.maxResultMb} MB; select fewer rows or columns, or aggregate`,
        };
      }
      return {
        ok: true,
        schema: names.map((name, i) => ({ name, column_type: types[i]!.toString() })),
        rows,
      };
    } catch (error) {
      const message = firstLine(error);
      if (/interrupt/i.test(message))
        return {
          ok: false,
          errorCode: 'SQL_QUERY_TIMEOUT',
          message: `The statement ran longer than ${job.timeoutMs} ms`,
        };
      if (/out of memory/i.test(message))
        return { ok: false, errorCode: 'SQL_QUERY_RESOURCE_LIMIT', message };
      return { ok: false, errorCode: 'SQL_QUERY_INVALID', message };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

// One job per process: the parent sends it, gets one answer, and the process ends.
if (process.send) {
  process.once('message', (job: SandboxJob) => {
    runSandboxJob(job)
      .catch((error: unknown): SandboxResult => ({
        ok: false,
        errorCode: 'SQL_QUERY_INVALID',
        message: firstLine(error),
      }))
      .then((result) => process.send!(result, () => process.exit(0)));
  });
  process.send({ ready: true });
}

// The write stage of a normalizer run: the projection of each data row to the normalized columns,
// written to Parquet (a split statement's two parts at once, then joined) or, for a preview, to a
// table; the rows removed (repeated headers, blank rows, the footer) to CSV; and the trimmed and
// standardized variants when asked for.
import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { standardFields } from '../../src/ingest/standardFields.ts';
import {
  emptyRemovedCsv,
  normalizedColumns,
  type NormalizeInput,
} from '../../src/ingest/normalizeTypes.ts';
import type { CatalogUse } from '../duckdb.ts';
import { concatParquet } from '../parquetConcat.ts';
import { reader, rowsOf, t, type Plan } from './plan.ts';
import { allOf, ident, lit } from './sql.ts';
import { keptOf, type Part, type Split, type Survey } from './survey.ts';
import type { Lookups } from './lookups.ts';

/** The trimmed variant (header and data rows as in the file) and the standardized one (standard names, values as read). */
export async function writeVariants(plan: Plan, split: Split): Promise<void> {
  const { input, connections } = plan;
  if (input.trimmedPath) {
    const named = input.header.map((h, i) => `c${i} AS ${ident(h)}`).join(', ');
    await connections[0].run(
      `COPY (SELECT ${named} FROM ${keptOf(plan, split.drops, split.whole, plan.cells)}) TO ${lit(input.trimmedPath)} (FORMAT csv, HEADER true)`,
    );
  }
  if (input.standardizedPath) {
    const cols = standardFields
      .filter((f) => plan.fields[f] !== undefined)
      .map((f) => `${t(f)} AS ${ident(f)}`);
    await connections[0]
      .run(`COPY (SELECT source_row AS "sourceRow"${cols.length ? ', ' : ''}${cols.join(', ')} FROM ${keptOf(plan, split.drops, split.whole, plan.texts)})
      TO ${lit(input.standardizedPath)} (FORMAT csv, HEADER true)`);
  }
}

/**
 * The query of a part's normalized rows. No ORDER BY: one reader's rows keep the file's order
 * through the projections and the one-row cross join of the lists, and are written in that order
 * (the tests check source_row runs 1..n in the written file).
 */
export function projection(plan: Plan, split: Split, found: Lookups): (part: Part) => string {
  const { input } = plan;
  const columns = normalizedColumns.map((c) => {
    switch (c) {
      case 'organization_id':
        return `${lit(input.organizationId)}::UUID AS organization_id`;
      case 'statement_id':
        return `${lit(input.statementId)}::UUID AS statement_id`;
      case 'rightsholder_id':
        return `${lit(input.rightsholderId)}::UUID AS rightsholder_id`;
      case 'source_row':
        return 'CAST(kept.source_row AS BIGINT) AS source_row';
      case 'country_raw':
        return `kept.${t('country')} AS country_raw`;
      case 'isrc_raw':
        return `kept.${t('isrc')} AS isrc_raw`;
      case 'upc_raw':
        return `kept.${t('upc')} AS upc_raw`;
      default:
        return `${found.select[c] ?? 'NULL'} AS ${c}`;
    }
  });
  const from = (part: Part) =>
    `${keptOf(plan, split.drops, part, plan.texts)} kept${found.lists.length > 0 ? ' CROSS JOIN lk' : ''}`;
  return (part) => `SELECT ${columns.join(', ')} FROM ${from(part)}`;
}

/**
 * The records up to which a statement's normalized rows are held in a temporary table before
 * they are written (docs/decisions/figures-from-held-rows.md): its figures are then read from
 * memory rather than from the file. A larger one is written straight to Parquet, without
 * holding its rows.
 */
const HELD_ROWS = 50_000;

/**
 * Writes the normalized rows: to input.outPath as Parquet (a small statement's through the
 * temporary table `normalized`), else (a preview) to the table `normalized`. Answers where the
 * figures read them from.
 */
export async function writeRows(
  plan: Plan,
  split: Split,
  query: (part: Part) => string,
): Promise<string> {
  const { input, connections } = plan;
  const [connection] = connections;
  const { parts, whole } = split;
  if (!input.outPath) {
    await connection.run(`CREATE TEMP TABLE normalized AS ${query(whole)} ORDER BY source_row`);
    return 'normalized';
  }
  const options = '(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)';
  const held = parts.length === 1 && whole.rows <= HELD_ROWS;
  const progress = await watchProgress(connections, parts, input, plan.small);
  try {
    if (held) {
      // the rows held in a table, written from it, and the figures read from it (not the file)
      await connection.run(`CREATE TEMP TABLE normalized AS ${query(whole)}`);
      await connection.run(`COPY normalized TO ${lit(input.outPath)} ${options}`);
      progress.partDone(0);
    } else if (parts.length === 1) {
      await connection.run(`COPY (${query(whole)}) TO ${lit(input.outPath)} ${options}`);
      progress.partDone(0);
    } else {
      // each part written by its own connection, then joined into one file without decoding a page
      const partPaths = parts.map((_, i) => `${input.outPath}.part${i}`);
      // each query runs on the thread that calls it (libuv's, one per connection) plus DuckDB's own
      // workers: with none of those, the two parts take exactly the two cores
      await connection.run(`SET threads = 1`);
      await allOf(
        parts.map((part, i) =>
          connections[i]!.run(`COPY (${query(part)}) TO ${lit(partPaths[i]!)} ${options}`).then(
            () => progress.partDone(i),
          ),
        ),
      );
      await connection.run(`SET threads = ${input.threads ?? 2}`);
      await concatParquet(partPaths, input.outPath);
      await Promise.all(partPaths.map((p) => rm(p, { force: true })));
    }
  } finally {
    await progress.stop();
  }
  return held ? 'normalized' : `read_parquet(${lit(input.outPath)})`;
}

/** The removed rows (repeated headers, blank rows, the footer) with their record numbers, to input.removedPath as CSV. */
export async function writeRemoved(
  plan: Plan,
  split: Split,
  surveyed: Survey,
  catalog: CatalogUse,
): Promise<void> {
  const { input, connections, cells, rows } = plan;
  const [connection] = connections;
  if (!input.removedPath) return;
  const { parts } = split;
  const { drops, footer } = surveyed;
  // nothing removed (most statements): the header alone, written in this thread rather than
  // queued behind DuckDB's queries in libuv's pool
  if (drops + footer === 0) {
    writeFileSync(input.removedPath, emptyRemovedCsv(plan.width));
    return;
  }
  // (temporary, gone with the connection, unless both connections write to it: a split statement's)
  if (parts.length > 1) catalog.objectsMade();
  await connection.run(
    `CREATE ${parts.length > 1 ? '' : 'TEMP '}TABLE removed_rows (record BIGINT, reason VARCHAR, ${Array.from({ length: plan.width }, (_, i) => `c${i} VARCHAR`).join(', ')})`,
  );
  // the last part's last rows hold the footer and perhaps rows that are not data: read with
  // their record numbers by a parallel LIMIT .. OFFSET
  const last = parts[parts.length - 1]!;
  const tail = Math.min(last.rows, footer + last.drops);
  const reason = `CASE WHEN ${rows.headerMatch} THEN 'repeated_header' WHEN ${rows.allEmpty} THEN 'blank' END`;
  await connection.run(`INSERT INTO removed_rows SELECT row_number() OVER () + ${last.rowsBefore + last.rows - tail}, ${reason}, ${cells}
    FROM (SELECT * FROM ${reader(plan, last.skip, last.file)} LIMIT ${tail} OFFSET ${last.rows - tail})`);
  // the footer: the last rows there that are data to the reader
  await connection.run(`UPDATE removed_rows SET reason = 'footer' WHERE record IN (
    SELECT record FROM removed_rows WHERE reason IS NULL ORDER BY record DESC LIMIT ${footer})`);
  await connection.run(`DELETE FROM removed_rows WHERE reason IS NULL`);
  // rows that are not data further up are found by reading every part with record numbers
  const inTail = Number(
    (await rowsOf(plan, `SELECT count(*) FROM removed_rows WHERE reason <> 'footer'`))[0]![0],
  );
  if (inTail < drops) {
    await allOf(
      parts.map((part, i) =>
        connections[i]!
          .run(`INSERT INTO removed_rows SELECT rn + ${part.rowsBefore}, ${reason}, ${cells} FROM (
          SELECT row_number() OVER () AS rn, * FROM ${reader(plan, part.skip, part.file)} LIMIT ${part === last ? part.rows - tail : part.rows}) WHERE ${rows.notData}`),
      ),
    );
  }
  await connection.run(
    `COPY (SELECT record, reason, ${cells} FROM removed_rows ORDER BY record) TO ${lit(input.removedPath)} (FORMAT csv, HEADER true)`,
  );
}

/**
 * Reports the rows of the written pass done so far into `input.progress` (see NormalizeInput),
 * from DuckDB's progress of each part's query (the share of its file read, as the bar DuckDB
 * would print shows it; no bar is printed). A part's estimate is the share of its file's records
 * read, less the records above the data, within its rows; a finished part counts whole.
 * Polling reads a counter of each connection: nothing is added to the queries themselves.
 */
async function watchProgress(
  connections: readonly DuckDBConnection[],
  parts: Part[],
  input: NormalizeInput,
  small: boolean,
) {
  const shared =
    input.progress instanceof SharedArrayBuffer && input.progress.byteLength >= 8
      ? new Int32Array(input.progress, 0, 2)
      : null;
  if (!shared) return { partDone: () => {}, stop: async () => {} };
  const done = parts.map(() => 0);
  const publish = () => {
    const rows = Math.min(
      2 ** 31 - 1,
      done.reduce((n, d) => n + d, 0),
    );
    if (rows > Atomics.load(shared, 0)) Atomics.store(shared, 0, rows);
  };
  Atomics.store(
    shared,
    1,
    Math.min(
      2 ** 31 - 1,
      parts.reduce((n, p) => n + p.rows, 0),
    ),
  );
  const partDone = (i: number) => {
    done[i] = parts[i]!.rows;
    publish();
  };
  // a small file's rows are written in milliseconds, before a first poll: reported when written,
  // without the three settings a poll needs (each a query)
  if (small) return { partDone, stop: async () => {} };
  // session settings: each connection reports the progress of its own query
  for (const c of connections.slice(0, parts.length)) {
    await c.run('SET enable_progress_bar = true');
    await c.run('SET enable_progress_bar_print = false');
  }
  const finished = parts.map(() => false);
  const timer = setInterval(
    () => {
      parts.forEach((part, i) => {
        if (finished[i]) return;
        const percentage = connections[i]!.progress.percentage;
        if (!(percentage > 0)) return;
        // the first part's reader starts at the file's start (its records before the data skipped)
        const records = part.skip + part.rows;
        const read = Math.floor((Math.min(100, percentage) / 100) * records) - part.skip;
        done[i] = Math.max(done[i]!, Math.min(part.rows, Math.max(0, read)));
      });
      publish();
    },
    Math.max(20, input.progressEveryMs ?? 250),
  );
  return {
    partDone(i: number) {
      finished[i] = true;
      partDone(i);
    },
    async stop() {
      clearInterval(timer);
      // (after a failed query too: a failure here must not hide the query's own)
      for (const c of connections.slice(0, parts.length))
        await c.run('SET enable_progress_bar = false').catch(() => {});
    },
  };
}

// svc_api_call's dryRun: a mutation run for real inside one PostgreSQL transaction that is rolled
// back. The procedure validates its input, checks role and existence and does its writes (its
// activity events included) exactly as it would; what it returned, the rows it wrote per table and
// the activity it recorded are read before the rollback and described. Nothing outside that
// transaction can be rolled back, so the procedures that act outside it are declared here
// (NOT_DRY_RUNNABLE) and refused with DRY_RUN_UNSUPPORTED before they run; as a second guard, a
// dry run's graphile-worker utilities and the object store's writing methods refuse the same way.
import type { QueryConfig } from 'pg';
import type { Deps } from '../deps.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import { AppError } from '../errors.ts';

/** Mutations that act outside PostgreSQL, and what they do there. */
export const NOT_DRY_RUNNABLE: Readonly<Record<string, string>> = {
  'cube.query':
    'runs an analytics query (a read: call it without dryRun, or use svc_query_analytics)',
  'cube.queryAsync':
    'runs an analytics query (a read: call it without dryRun, or use svc_query_analytics)',
  'cube.queryPoll':
    'runs an analytics query (a read: call it without dryRun, or use svc_query_analytics)',
  'cube.sqlQuery': 'runs an analytics query (a read: call it without dryRun)',
  'cube.sqlQueryAsync': 'runs an analytics query (a read: call it without dryRun)',
  'cube.sqlQueryPoll': 'runs an analytics query (a read: call it without dryRun)',
  'export.downloadFile': 'hands out a presigned object-store URL, which cannot be taken back',
  'fileStorage.downloadStatementFile':
    'hands out a presigned object-store URL, which cannot be taken back',
  'upload.uploadFile': 'hands out presigned object-store upload URLs, which cannot be taken back',
  'upload.heartbeat': 'hands out presigned object-store upload URLs, which cannot be taken back',
  'export.trigger': 'queues the export build with the job runner',
  'mapping.updateById': "queues the re-ingestion of the mapping's statements with the job runner",
  'upload.callback': 'queues statement ingestion with the job runner',
  'upload.uploadAction':
    'queues statement ingestion with the job runner and moves objects in the object store',
  'upload.aborted': 'deletes uploaded objects from the object store',
  'file.deleteFilesByIds': 'deletes statement files from the object store',
  'rightsholder.deleteById': "deletes the rightsholder's files from the object store",
  'lookupSalesType.resolveWithAI': 'asks the AI provider (an outside request)',
  'lookupSalesType.batchResolveWithAI': 'asks the AI provider (an outside request)',
  'lookupSource.resolveWithAI': 'asks the AI provider (an outside request)',
  'lookupSource.batchResolveWithAI': 'asks the AI provider (an outside request)',
  'lookupSource.ragCreate': 'asks the AI provider for embeddings (an outside request)',
  'lookupSource.ragUpdate': 'asks the AI provider for embeddings (an outside request)',
};

export function refuseDryRun(procedure: string, why: string): AppError {
  return new AppError(
    'DRY_RUN_UNSUPPORTED',
    `${procedure} cannot be dry-run: it ${why}. Call it without dryRun to run it for real.`,
  );
}

export interface DryRunReport {
  dryRun: true;
  procedure: string;
  /** what the procedure would have answered */
  result: unknown;
  /** rows the procedure wrote, per table */
  rows: Record<string, { inserted: number; updated: number; deleted: number }>;
  /** the activity events it recorded: what changed, field by field */
  activity: {
    action: string;
    subjectType: string;
    subjectId: string;
    subjectLabel: string | null;
    changes: unknown;
  }[];
  note: string;
}

type Sql = string | QueryConfig;
const sqlText = (q: Sql) => (typeof q === 'string' ? q : q.text).trim().toUpperCase();

/**
 * The pool a dry run's procedure sees: every query on the one client holding the outer
 * transaction; a connection taken from it (withTransaction) is that client again, its BEGIN a
 * savepoint, its COMMIT the savepoint's release, its ROLLBACK a rollback to the savepoint.
 */
function transactionPool(client: PoolClient): Pool {
  let savepoints = 0;
  const nested = (): PoolClient => {
    const name = `dry_run_${++savepoints}`;
    const query = (q: Sql, values?: unknown[]) => {
      const verb = sqlText(q);
      if (/^(BEGIN|START TRANSACTION)\b/.test(verb)) return client.query(`SAVEPOINT ${name}`);
      if (/^(COMMIT|END)\b/.test(verb)) return client.query(`RELEASE SAVEPOINT ${name}`);
      if (/^ROLLBACK\b/.test(verb)) return client.query(`ROLLBACK TO SAVEPOINT ${name}`);
      return client.query(q as string, values);
    };
    return new Proxy(client, {
      get(target, prop) {
        if (prop === 'query') return query;
        if (prop === 'release') return () => {};
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === 'function'
          ? (value as (...a: unknown[]) => unknown).bind(target)
          : value;
      },
    });
  };
  const pool = {
    query: (q: Sql, values?: unknown[]) => client.query(q as string, values),
    connect: async () => nested(),
  };
  return pool as unknown as Pool;
}

/** The object store with reads only: anything that writes or hands out a URL refuses. */
function readOnlyStore(store: Deps['store'], procedure: string): Deps['store'] {
  const reads = new Set(['getBuffer', 'getStream', 'head', 'checkBucket', 'bucket', 'embedded']);
  return new Proxy(store, {
    get(target, prop) {
      if (typeof prop === 'string' && !reads.has(prop))
        throw refuseDryRun(procedure, 'writes to the object store or hands out a URL of it');
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

type Counts = Record<string, { inserted: number; updated: number; deleted: number }>;

/**
 * Rows inserted, updated and deleted per table as this connection's statistics count them so far.
 * They hold counts not yet reported from earlier transactions on the connection too: what the
 * procedure wrote is the difference of two readings.
 */
async function tableCounts(client: PoolClient): Promise<Counts> {
  const { rows } = await client.query<{
    relname: string;
    inserted: number;
    updated: number;
    deleted: number;
  }>(
    `SELECT relname, n_tup_ins::int AS inserted, n_tup_upd::int AS updated, n_tup_del::int AS deleted
     FROM pg_stat_xact_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0`,
  );
  return Object.fromEntries(
    rows.map((r) => [r.relname, { inserted: r.inserted, updated: r.updated, deleted: r.deleted }]),
  );
}

function countsWritten(before: Counts, after: Counts): Counts {
  const out: Counts = {};
  for (const table of Object.keys(after).sort()) {
    const a = after[table]!;
    const b = before[table] ?? { inserted: 0, updated: 0, deleted: 0 };
    const d = {
      inserted: a.inserted - b.inserted,
      updated: a.updated - b.updated,
      deleted: a.deleted - b.deleted,
    };
    if (d.inserted + d.updated + d.deleted > 0) out[table] = d;
  }
  return out;
}

/** The activity events recorded from `since` on: under REPEATABLE READ, this transaction's only. */
async function activitySince(client: PoolClient, since: Date): Promise<DryRunReport['activity']> {
  // REPEATABLE READ: rows committed by others since the transaction began are not seen, so every
  // event from `since` on is this transaction's own
  const { rows } = await client.query<DryRunReport['activity'][number]>(
    `SELECT action, subject_type AS "subjectType", subject_id AS "subjectId", subject_label AS "subjectLabel", changes
     FROM activity_events WHERE created_at >= $1 ORDER BY created_at`,
    [since],
  );
  return rows;
}

/**
 * Runs the procedure through run(deps) with deps whose pool is one transaction, then rolls it
 * back; the procedure's own errors (validation, role, not found) are thrown as they are.
 */
export async function dryRun(
  deps: Deps,
  procedure: string,
  run: (deps: Deps) => Promise<unknown>,
): Promise<DryRunReport> {
  const why = NOT_DRY_RUNNABLE[procedure];
  if (why) throw refuseDryRun(procedure, why);
  const client = await deps.pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const { rows } = await client.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    const before = await tableCounts(client);
    const dryDeps: Deps = {
      ...deps,
      pool: transactionPool(client),
      store: readOnlyStore(deps.store, procedure),
    };
    const result = await run(dryDeps);
    return {
      dryRun: true,
      procedure,
      result,
      rows: countsWritten(before, await tableCounts(client)),
      activity: await activitySince(client, rows[0]!.now),
      note: 'Nothing was changed: the procedure ran in a transaction that was rolled back. Call again without dryRun to make these changes.',
    };
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
}

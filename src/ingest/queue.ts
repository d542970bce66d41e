// Enqueues statement ingestion. The job key makes a second request for the same statement
// replace the queued one instead of running twice; the job itself is idempotent.
//
// One organization cannot take every job slot: its statements run in INGEST_ORG_CONCURRENCY
// queues of its own (`statement_ingest:<org>:<n>`). graphile-worker runs one job of a queue at a
// time and locks the queue in PostgreSQL, so the cap holds across every worker process. A
// statement joins the queue its job is already in (a redrive of a statement being processed then
// waits for that run instead of running beside it, which would have the two write the same
// version), else the organization's queue holding the fewest jobs.
//
// Fairness across organizations: graphile-worker takes the job of lowest priority first, then the
// oldest. A statement's priority is the number of its organization's statements already waiting,
// so the organizations' first waiting statements go before anyone's second: one that uploads 200
// at once does not hold back another's single statement until all 200 are done.
import type { Queryable } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { enqueueAll } from '../jobs/enqueue.ts';
import { TASK } from '../jobs/payloads.ts';

export const STATEMENT_INGEST_TASK = TASK.statement_ingest;

/** The organization's statement jobs as placing more of them needs them. */
interface OrgJobs {
  /** jobs not running and with attempts left */
  waiting: number;
  /** jobs (any state) in each of the organization's `slots` queues, by queue number */
  perSlot: number[];
  /** the job of each given key already there: its queue, and whether it is waiting */
  byKey: Map<string, { queueName: string; waiting: boolean }>;
}

async function orgJobs(
  db: Queryable,
  prefix: string,
  keys: readonly string[],
  slots: number,
): Promise<OrgJobs> {
  const { rows } = await db.query<{
    waiting: number;
    per_slot: number[];
    own: { key: string; queue_name: string; waiting: boolean }[] | null;
  }>(
    `WITH org_jobs AS (
       SELECT queue_name, key, locked_at IS NULL AND attempts < max_attempts AS waiting FROM graphile_worker.jobs
       WHERE task_identifier = $1 AND starts_with(queue_name, $2))
     SELECT (SELECT count(*)::int FROM org_jobs WHERE waiting) AS waiting,
       ARRAY(SELECT (SELECT count(*)::int FROM org_jobs WHERE queue_name = $2 || n) FROM generate_series(0, $4 - 1) n ORDER BY n) AS per_slot,
       (SELECT json_agg(json_build_object('key', key, 'queue_name', queue_name, 'waiting', waiting)) FROM org_jobs WHERE key = ANY ($3)) AS own`,
    [STATEMENT_INGEST_TASK, prefix, keys, slots],
  );
  const row = rows[0]!;
  return {
    waiting: row.waiting,
    perSlot: row.per_slot,
    byKey: new Map(
      (row.own ?? []).map((j) => [j.key, { queueName: j.queue_name, waiting: j.waiting }]),
    ),
  };
}

/**
 * Where each statement's job goes: the queue of its job already there, else the least busy of
 * its organization's queues (the first of the least busy); and its priority, the organization's
 * statements waiting. Placed one after another, as if each were added before the next is placed:
 * a job added to a queue makes it busier and adds one waiting, a waiting job replaced does not.
 * Returns one placement per job key, in the order the keys first come.
 */
function place(
  jobs: OrgJobs,
  prefix: string,
  keys: readonly string[],
): Map<string, { queueName: string; priority: number }> {
  const placed = new Map<string, { queueName: string; priority: number }>();
  const state = new Map(jobs.byKey);
  const perSlot = [...jobs.perSlot];
  let waiting = jobs.waiting;
  for (const key of keys) {
    const own = state.get(key);
    const slot = perSlot.indexOf(Math.min(...perSlot));
    const queueName = own?.queueName ?? `${prefix}${slot}`;
    // graphile-worker's priority is a smallint
    placed.set(key, { queueName, priority: Math.min(waiting, 32_767) });
    state.set(key, { queueName, waiting: true });
    if (own?.waiting) continue;
    waiting += 1;
    const n = queueName.slice(prefix.length);
    if (/^\d+$/.test(n) && Number(n) < perSlot.length) perSlot[Number(n)]! += 1;
  }
  return placed;
}

/**
 * Queues the statements' jobs; `reason` says why they run ('complete', 'reprocess', 'redrive',
 * 'callback', ...: logged). `db` is the pool, or a transaction the jobs are added with. The
 * organization's jobs are read once and the jobs added in one statement, whatever their number.
 */
export async function enqueueStatementIngest(
  deps: Pick<Deps, 'pool' | 'config'>,
  organizationId: string,
  statementIds: readonly string[],
  reason: string,
  db: Queryable = deps.pool,
): Promise<void> {
  if (statementIds.length === 0) return;
  const prefix = `${STATEMENT_INGEST_TASK}:${organizationId}:`;
  const keyOf = (statementId: string) => `${STATEMENT_INGEST_TASK}:${statementId}`;
  const keys = statementIds.map(keyOf);
  const slots = Math.max(1, deps.config.ingest.orgConcurrency);
  const placed = place(await orgJobs(db, prefix, [...new Set(keys)], slots), prefix, keys);
  const statementOf = new Map(statementIds.map((id) => [keyOf(id), id]));
  await enqueueAll(
    db,
    TASK.statement_ingest,
    [...placed].map(([jobKey, { queueName, priority }]) => ({
      payload: { organizationId, statementId: statementOf.get(jobKey)!, reason },
      // graphile-worker's priority is 0 when none is given
      spec: { jobKey, queueName, maxAttempts: 5, priority },
    })),
  );
}

/**
 * Whether statements of the rightsholder have their ingestion job waiting or running (a job that
 * has used up its attempts is neither): a block refresh waits for them (catalog_block_refresh).
 */
export async function ingestionsInFlight(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM statements s JOIN graphile_worker.jobs j ON j.key = $3 || ':' || s.id
     WHERE s.organization_id = $1 AND s.rightsholder_id = $2 AND s.status IN ('uploaded', 'processing') AND s.deleted_at IS NULL
       AND j.attempts < j.max_attempts
     LIMIT 1`,
    [organizationId, rightsholderId, STATEMENT_INGEST_TASK],
  );
  return (rowCount ?? 0) > 0;
}

// Which job runners are alive, across processes and machines. graphile-worker locks a job with its
// worker pool's id and, if that process dies without unlocking (SIGKILL, the kernel's OOM killer,
// a lost machine), leaves it locked until its 4-hour stale timeout: a statement would sit in
// `processing` for hours. So each runner holds, for as long as it runs, a session-level advisory
// lock named after its pool, on a connection of its own. PostgreSQL drops that lock the moment the
// connection goes, dead process included; a job locked by a pool whose lock nobody holds belongs to
// a dead runner and is unlocked for the others (its attempt stays counted, as graphile-worker's own
// stale recovery counts it: a file that kills its worker every time ends after max_attempts).
import pg from 'pg';
import type { Pool } from '../db/pool.ts';

/** the advisory locks' first key ("roy"): the second is hashtext(pool id) */
const NAMESPACE = 0x726f79;
/**
 * A job locked this recently is never recovered: a new pool's lock is taken a few milliseconds
 * after graphile-worker creates the pool, which may already be fetching jobs.
 */
export const RECOVERY_GRACE_SECONDS = 30;
const RECLAIM_DELAY_MS = 5_000;

export interface Liveness {
  /** holds the lock of a worker pool of this process (until release) */
  claim(poolId: string): Promise<void>;
  /** gives up the locks of worker pools that are gone (their jobs become a dead runner's) */
  unclaim(poolIds: string[]): Promise<void>;
  release(): Promise<void>;
}

/**
 * One connection per runner, holding the lock of each of its worker pools: its own, not one of
 * the pool's (a pool of one connection would have none left for the jobs).
 */
export function createLiveness(pool: Pool, onError: (error: unknown) => void): Liveness {
  let client: pg.Client | undefined;
  let released = false;
  const pools = new Set<string>();
  let chain: Promise<void> = Promise.resolve();
  // one statement at a time on the one connection, in order
  const serial = (step: () => Promise<void>) => {
    const next = chain.then(step);
    chain = next.catch(onError);
    return next;
  };
  const lock = (c: pg.Client, id: string) =>
    c.query('SELECT pg_advisory_lock($1::int, hashtext($2))', [NAMESPACE, id]);
  const connect = async (): Promise<pg.Client> => {
    if (client) return client;
    const c = new pg.Client({
      ...pool.options,
      application_name: 'royalty-engine job runner liveness',
    });
    // a lost connection loses the locks: take them again on a new one (meanwhile another runner
    // may take this process's jobs for a dead runner's, and run them twice; jobs are idempotent)
    c.on('error', (error) => {
      onError(error);
      if (client !== c) return;
      client = undefined;
      void c.end().catch(() => {});
      void serial(reclaim);
    });
    await c.connect();
    client = c;
    return c;
  };
  // until it works (PostgreSQL restarting), every few seconds
  const reclaim = async (): Promise<void> => {
    if (released) return;
    try {
      const c = await connect();
      for (const id of pools) await lock(c, id);
    } catch (error) {
      onError(error);
      setTimeout(() => void serial(reclaim), RECLAIM_DELAY_MS).unref();
    }
  };
  return {
    claim(poolId) {
      pools.add(poolId);
      return serial(async () => {
        if (!released) await lock(await connect(), poolId);
      });
    },
    unclaim(poolIds) {
      for (const id of poolIds) pools.delete(id);
      // on a lost connection the locks are gone already, and a new one takes only those still claimed
      return serial(async () => {
        if (client)
          for (const id of poolIds)
            await client.query('SELECT pg_advisory_unlock($1::int, hashtext($2))', [NAMESPACE, id]);
      });
    },
    release() {
      released = true;
      return serial(async () => {
        const c = client;
        client = undefined;
        // the locks end with the session
        await c?.end();
      });
    },
  };
}

/**
 * Unlocks the jobs (and job queues) of every worker pool whose lock nobody holds and that locked
 * nothing in the last `graceSeconds`; returns those pools and how many jobs they held.
 */
export async function recoverDeadRunnerJobs(
  pool: Pool,
  graceSeconds = RECOVERY_GRACE_SECONDS,
): Promise<{ pools: string[]; jobs: number }> {
  const { rows } = await pool.query<{ locked_by: string; jobs: number }>(
    `WITH held AS (
       SELECT locked_by, locked_at, 1 AS job FROM graphile_worker._private_jobs WHERE locked_by IS NOT NULL
       UNION ALL
       SELECT locked_by, locked_at, 0 FROM graphile_worker._private_job_queues WHERE locked_by IS NOT NULL
     )
     SELECT locked_by, sum(job)::int AS jobs FROM held
     GROUP BY locked_by
     HAVING max(locked_at) < now() - make_interval(secs => $2)
        AND NOT EXISTS (
          SELECT 1 FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.classid = $1::int::oid AND l.objid = (hashtext(locked_by)::bigint & 4294967295)::oid)`,
    [NAMESPACE, graceSeconds],
  );
  if (rows.length === 0) return { pools: [], jobs: 0 };
  const pools = rows.map((r) => r.locked_by);
  await pool.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [pools]);
  return { pools, jobs: rows.reduce((n, r) => n + r.jobs, 0) };
}

/** How many worker pools of live job runners (any process, any machine) this database has. */
export async function liveRunnerPools(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks l
     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = $1::int::oid
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [NAMESPACE],
  );
  return rows[0]!.n;
}

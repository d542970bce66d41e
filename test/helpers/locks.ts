// Forcing an interleaving of concurrent requests: a test holds a row lock on a connection of its
// own, starts requests that queue behind it, waits until they do, then lets them run.
import type { Pool } from 'pg';

/** How many sessions of the test database wait for a lock. */
export async function lockWaiters(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0]!.n;
}

/** Resolves once at least `n` sessions wait for a lock; throws if that never happens (5 s). */
export async function waitForLockWaiters(pool: Pool, n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await lockWaiters(pool)) >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`fewer than ${n} sessions ever waited for a lock`);
}

/**
 * Holds the organization's row lock while `calls` start one after the other (each waits for the
 * lock before the next starts, so they queue in that order), then lets them run.
 */
export async function queuedBehindOrganization<T>(
  pool: Pool,
  organizationId: string,
  calls: (() => Promise<T>)[],
): Promise<T[]> {
  const holder = await pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
    const pending: Promise<T>[] = [];
    for (const [i, call] of calls.entries()) {
      pending.push(call());
      await waitForLockWaiters(pool, i + 1);
    }
    await holder.query('COMMIT');
    return await Promise.all(pending);
  } finally {
    holder.release();
  }
}

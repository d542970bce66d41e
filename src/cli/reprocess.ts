// `npm run admin -- reprocess --org ID [filters]`: queue reprocessing of every matching statement
// and follow it to the end with counts by state. The work runs on every `worker` (and `serve`)
// process against the database, and, unless --no-local-worker, in this process too.
import type { Pool } from '../db/pool.ts';
import { enqueueStatementIngest } from '../ingest/queue.ts';
import type { Deps } from '../trpc/context.ts';

export interface ReprocessFilter {
  organizationId: string;
  rightsholderId?: string | undefined;
  distributorId?: string | undefined;
  mappingId?: string | undefined;
  statuses: string[];
  since?: string | undefined;
}

export const REPROCESSABLE = ['processed', 'failed', 'needs_mapping', 'skipped', 'bad'];

/** Marks the matching statements for processing and queues them; returns their ids. */
export async function queueReprocess(deps: Pick<Deps, 'pool' | 'jobs'>, filter: ReprocessFilter): Promise<string[]> {
  const { rows } = await deps.pool.query<{ id: string }>(
    `UPDATE statements SET status = 'uploaded', updated_at = clock_timestamp()
     WHERE organization_id = $1 AND deleted_at IS NULL AND status = ANY ($2)
       AND ($3::uuid IS NULL OR rightsholder_id = $3) AND ($4::uuid IS NULL OR distributor_id = $4)
       AND ($5::uuid IS NULL OR mapping_id = $5) AND ($6::timestamptz IS NULL OR created_at >= $6)
     RETURNING id`,
    [filter.organizationId, filter.statuses, filter.rightsholderId ?? null, filter.distributorId ?? null, filter.mappingId ?? null, filter.since ?? null],
  );
  const ids = rows.map((r) => r.id).sort();
  await enqueueStatementIngest(deps, filter.organizationId, ids, 'reprocess');
  return ids;
}

export async function countsByStatus(pool: Pool, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM statements WHERE id = ANY ($1) GROUP BY status ORDER BY status',
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

function bar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
}

/**
 * Waits until none of the statements is queued or processing, drawing progress on stderr; when
 * `signal` aborts, stops waiting and returns the counts as they are.
 */
export async function followReprocess(
  pool: Pool,
  ids: string[],
  opts: { intervalMs?: number; draw?: boolean; signal?: AbortSignal; terminal?: boolean } = {},
): Promise<Record<string, number>> {
  // on a terminal the bar is redrawn in place; elsewhere (a log file, a pipe) a line is written
  // each time the counts change, rather than a carriage return every half second
  const terminal = opts.terminal ?? process.stderr.isTTY === true;
  let last = '';
  for (;;) {
    const counts = await countsByStatus(pool, ids);
    const pending = (counts.uploaded ?? 0) + (counts.processing ?? 0);
    if (opts.draw !== false) {
      const states = Object.entries(counts)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ');
      const line = `${bar(ids.length - pending, ids.length)}  ${states}`;
      if (terminal) process.stderr.write(`\r${line}   `);
      else if (line !== last) process.stderr.write(`${line}\n`);
      last = line;
    }
    if (pending === 0 || opts.signal?.aborted) {
      if (opts.draw !== false && terminal) process.stderr.write('\n');
      return counts;
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, opts.intervalMs ?? 500);
      opts.signal?.addEventListener('abort', done, { once: true });
    });
  }
}

// `npm run admin -- reprocess --org ID [filters]`: queue reprocessing of every matching statement
// and follow it to the end with counts by state. The work runs on every `worker` (and `serve`)
// process against the database, and, unless --no-local-worker, in this process too.
import { enqueueBlockRefresh } from '../catalog/blocks.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import { enqueueStatementIngest } from '../ingest/queue.ts';
import { reprocessMatching } from '../ingest/statementStatus.ts';
import type { Deps } from '../deps.ts';

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
export async function queueReprocess(
  deps: Pick<Deps, 'pool' | 'config'>,
  filter: ReprocessFilter,
): Promise<string[]> {
  const rows = await withTransaction(deps.pool, async (db) => {
    const rows = await reprocessMatching(db, filter);
    // as upload.uploadAction reprocess: a skipped or bad statement's processed version counts again
    // at once, whatever its run ends in (failed, needs_mapping): its rightsholder's catalog follows
    const setBack = rows.filter((r) => r.before === 'skipped' || r.before === 'bad');
    if (setBack.length > 0)
      await enqueueBlockRefresh(
        db,
        filter.organizationId,
        setBack.map((r) => r.rightsholder_id),
        'statement.reprocess',
      );
    return rows;
  });
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
  opts: {
    intervalMs?: number;
    draw?: boolean;
    signal?: AbortSignal;
    terminal?: boolean;
    /** where the progress is drawn: the process's stderr unless given */
    stderr?: { write(text: string): unknown; readonly isTTY?: boolean };
  } = {},
): Promise<Record<string, number>> {
  const stderr = opts.stderr ?? process.stderr;
  // on a terminal the bar is redrawn in place; elsewhere (a log file, a pipe) a line is written
  // each time the counts change, rather than a carriage return every half second
  const terminal = opts.terminal ?? stderr.isTTY === true;
  let last = '';
  const pace = paceOf(Date.now());
  /** since when the database has not answered */
  let failing: number | undefined;
  for (;;) {
    let counts: Record<string, number>;
    try {
      counts = await countsByStatus(pool, ids);
      failing = undefined;
    } catch (error) {
      // the database restarting (the embedded one is restarted when it stops): the work goes on
      // in the workers, so the counts are asked again, for a while
      if (opts.signal?.aborted) return {};
      const now = Date.now();
      if (failing === undefined) {
        failing = now;
        stderr.write(
          `${terminal ? '\n' : ''}admin: the database does not answer (${(error as Error).message}): trying again for ${FOLLOW_OUTAGE_MS / 1000} s\n`,
        );
      } else if (now - failing > FOLLOW_OUTAGE_MS) {
        throw new DatabaseLost(
          `the database has not answered for ${FOLLOW_OUTAGE_MS / 1000} s: ${(error as Error).message}`,
        );
      }
      await pause(opts.intervalMs ?? 500, opts.signal);
      continue;
    }
    const pending = (counts.uploaded ?? 0) + (counts.processing ?? 0);
    if (opts.draw !== false) {
      const states = Object.entries(counts)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ');
      const line = `${bar(ids.length - pending, ids.length)}  ${states}`;
      const rate = pending > 0 ? pace(ids.length - pending, pending, Date.now()) : '';
      if (terminal) stderr.write(`\r${line}${rate}   `);
      else if (line !== last) stderr.write(`${line}${rate}\n`);
      last = line;
    }
    if (pending === 0 || opts.signal?.aborted) {
      if (opts.draw !== false && terminal) stderr.write('\n');
      return counts;
    }
    await pause(opts.intervalMs ?? 500, opts.signal);
  }
}

/**
 * The rate the statements are settling at since the follow began, and the time left at that rate
 * ('' until one has settled): `  12.5/s, 1 min 20 s left`.
 */
export function paceOf(startedAt: number): (done: number, pending: number, now: number) => string {
  let first: number | undefined;
  return (done, pending, now) => {
    // the statements settled before the follow began are not its rate
    first ??= done;
    const seconds = (now - startedAt) / 1000;
    const rate = seconds > 0 ? (done - first) / seconds : 0;
    if (rate <= 0) return '';
    const left = Math.ceil(pending / rate);
    const time = left >= 60 ? `${Math.floor(left / 60)} min ${left % 60} s` : `${left} s`;
    return `  ${rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)}/s, ${time} left`;
  };
}

/** how long followReprocess keeps asking a database that does not answer */
const FOLLOW_OUTAGE_MS = 60_000;

/** followReprocess gave up on the database (src/cli/admin.ts: exit 1 with its message) */
export class DatabaseLost extends Error {
  override name = 'DatabaseLost';
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

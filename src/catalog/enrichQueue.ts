// The enrichment queue: musical details in `pending` are claimed in batches (FOR UPDATE SKIP
// LOCKED, so any number of workers can drain it), looked up with the configured provider and
// settled: found, not_found, back to pending with backoff after a retryable provider error,
// failed after the last attempt or a non-retryable one. A `fetching` row whose claim is older
// than the lock timeout (a worker died) is put back to pending: nothing stays fetching.
//
// Fairness (docs/catalog.md "Enrichment queue"): each round serves the organizations with due work,
// least recently served first, each up to BATCH_PER_ORG × mdFetchMultiplier details; within an
// organization, with mdFetchFocus the rightsholders of its md priority list come first in list
// order, then the details with the highest USD earnings.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { TASK } from '../jobs/payloads.ts';
import {
  ProviderError,
  type EnrichedRecording,
  type EnrichmentProvider,
} from './enrich/provider.ts';

export interface EnrichSettings {
  /** details per organization per round, multiplied by the organization's mdFetchMultiplier */
  batchPerOrg: number;
  /** organizations served per round */
  orgsPerRound: number;
  /** provider calls at once */
  concurrency: number;
  maxAttempts: number;
  /** first retry delay; doubled per attempt, capped at maxBackoffMs */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** a fetching claim older than this is reclaimed */
  lockTimeoutMs: number;
  /** per provider call */
  callTimeoutMs: number;
}

export const defaultEnrichSettings: EnrichSettings = {
  batchPerOrg: 10,
  orgsPerRound: 20,
  concurrency: 4,
  maxAttempts: 5,
  baseBackoffMs: 30_000,
  maxBackoffMs: 6 * 3_600_000,
  lockTimeoutMs: 5 * 60_000,
  callTimeoutMs: 60_000,
};

/**
 * Queues a drain of the enrichment queue: one queued at a time (job key), drains serialized on
 * one job queue. The latest request sets when it runs; a drain postponed to a backoff while new
 * work arrived is woken by the tick within a minute.
 */
export async function enqueueEnrichment(db: Queryable, runAt?: Date): Promise<void> {
  await enqueue(
    db,
    TASK.catalog_enrich,
    {},
    {
      queueName: TASK.catalog_enrich,
      ...(runAt ? { runAt } : {}),
      maxAttempts: 3,
      jobKey: TASK.catalog_enrich,
      jobKeyMode: 'replace',
    },
  );
}

interface Claimed {
  id: string;
  organization_id: string;
  block_id: string;
  isrc: string | null;
  title: string;
  artist: string | null;
  attempts: number;
}

/**
 * Puts back fetching rows whose claim is older than the timeout; one whose claim was its last
 * attempt is failed (a lookup that kills its worker every time must not go round forever).
 */
export async function reclaimStale(
  db: Queryable,
  lockTimeoutMs: number,
  maxAttempts = defaultEnrichSettings.maxAttempts,
): Promise<number> {
  const res = await db.query(
    `UPDATE musical_details SET
       state = CASE WHEN attempts >= $2 THEN 'failed' ELSE 'pending' END,
       locked_at = NULL, locked_by = NULL, next_attempt_at = clock_timestamp(),
       last_error = CASE WHEN attempts >= $2 THEN 'claim timed out: no answer after ' || attempts || ' attempts' ELSE coalesce(last_error, 'claim timed out') END,
       updated_at = clock_timestamp()
     WHERE state = 'fetching' AND locked_at < clock_timestamp() - make_interval(secs => $1::double precision / 1000)`,
    [lockTimeoutMs, maxAttempts],
  );
  return res.rowCount ?? 0;
}

/** One fair round of claims across organizations. */
export async function claimRound(
  db: Queryable,
  settings: EnrichSettings,
  worker: string,
): Promise<Claimed[]> {
  const { rows: orgs } = await db.query<{ id: string; multiplier: number; focus: boolean }>(
    `SELECT o.id, o.md_fetch_multiplier AS multiplier, o.md_fetch_focus AS focus
     FROM organizations o LEFT JOIN catalog_fetch_turns t ON t.organization_id = o.id
     WHERE o.deleted_at IS NULL
       AND EXISTS (SELECT 1 FROM musical_details md WHERE md.organization_id = o.id AND md.state = 'pending' AND md.next_attempt_at <= clock_timestamp())
     ORDER BY t.last_served_at NULLS FIRST, o.id
     LIMIT $1`,
    [settings.orgsPerRound],
  );
  const claimed: Claimed[] = [];
  for (const org of orgs) {
    const quota = settings.batchPerOrg * Math.max(1, Math.min(100, org.multiplier));
    const { rows } = await db.query<Claimed>(
      `WITH picked AS (
         SELECT d.id, p.position, d.earnings_usd FROM musical_details d
         JOIN catalog_blocks b ON b.id = d.block_id
         LEFT JOIN rightsholder_md_priorities p ON $3::boolean AND p.organization_id = d.organization_id AND p.rightsholder_id = b.rightsholder_id
         WHERE d.organization_id = $1 AND d.state = 'pending' AND d.next_attempt_at <= clock_timestamp()
         ORDER BY p.position NULLS LAST, d.earnings_usd DESC, d.id
         LIMIT $2
         FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE musical_details md SET state = 'fetching', locked_at = clock_timestamp(), locked_by = $4, attempts = md.attempts + 1,
           updated_at = clock_timestamp()
         FROM picked WHERE md.id = picked.id
         RETURNING md.id, md.organization_id, md.block_id, md.isrc, md.title, md.artist, md.attempts, picked.position, picked.earnings_usd
       )
       SELECT id, organization_id, block_id, isrc, title, artist, attempts FROM claimed ORDER BY position NULLS LAST, earnings_usd DESC, id`,
      [org.id, quota, org.focus, worker],
    );
    if (rows.length === 0) continue;
    await db.query(
      `INSERT INTO catalog_fetch_turns (organization_id, last_served_at, served_total) VALUES ($1, clock_timestamp(), $2)
       ON CONFLICT (organization_id) DO UPDATE SET last_served_at = clock_timestamp(), served_total = catalog_fetch_turns.served_total + $2`,
      [org.id, rows.length],
    );
    claimed.push(...rows);
  }
  return claimed;
}

/**
 * A provider's text as PostgreSQL can store it: NUL removed, a lone surrogate (half of a UTF-16
 * pair) as U+FFFD. An answer carrying them would otherwise fail every attempt to record it.
 */
export function storable(text: string): string {
  return text.replaceAll('\u0000', '').replace(/[\uD800-\uDFFF]/gu, '\uFFFD');
}

function resultJson(r: EnrichedRecording): string {
  return JSON.stringify(
    {
      title: r.title,
      artist: r.artist,
      isrc: r.isrc,
      releaseTitle: r.releaseTitle,
      releaseArtist: r.releaseArtist,
      releaseDate: r.releaseDate,
      genres: r.genres,
      songWriters: r.songWriters,
      composers: r.composers,
      imageUrl: r.imageUrl,
      confidence: r.confidence,
    },
    (_key, value: unknown) => (typeof value === 'string' ? storable(value) : value),
  );
}

export function backoffMs(
  settings: EnrichSettings,
  attempts: number,
  retryAfterMs?: number,
): number {
  const exponential = Math.min(
    settings.maxBackoffMs,
    settings.baseBackoffMs * 2 ** Math.max(0, attempts - 1),
  );
  return Math.max(exponential, Math.min(settings.maxBackoffMs, retryAfterMs ?? 0));
}

type Outcome = 'found' | 'not_found' | 'retry' | 'failed' | 'lost';

/** Looks one claimed detail up and records the outcome (only if the claim is still ours). */
async function settle(
  db: Queryable,
  provider: EnrichmentProvider,
  item: Claimed,
  settings: EnrichSettings,
  worker: string,
): Promise<Outcome> {
  const owned = `id = $1 AND state = 'fetching' AND locked_by = $2`;
  try {
    const signal = AbortSignal.timeout(settings.callTimeoutMs);
    const found = await provider.lookup(
      { isrc: item.isrc, title: item.title || null, artist: item.artist },
      { signal },
    );
    const res = found
      ? await db.query(
          `UPDATE musical_details SET state = 'found', provider = $3, provider_id = $4, result = $5, fetched_at = clock_timestamp(),
             last_error = NULL, locked_at = NULL, locked_by = NULL, updated_at = clock_timestamp() WHERE ${owned}`,
          [
            item.id,
            worker,
            storable(found.provider || provider.name),
            storable(found.providerId),
            resultJson(found),
          ],
        )
      : await db.query(
          `UPDATE musical_details SET state = 'not_found', provider = $3, provider_id = NULL, result = NULL, fetched_at = clock_timestamp(),
             last_error = NULL, locked_at = NULL, locked_by = NULL, updated_at = clock_timestamp() WHERE ${owned}`,
          [item.id, worker, provider.name],
        );
    if (!res.rowCount) return 'lost';
    return found ? 'found' : 'not_found';
  } catch (error) {
    const message = storable(
      `${(error as Error).name}: ${(error as Error).message}`.slice(0, 1000),
    );
    // a timeout of our own or a network failure is worth another try; a provider says for itself
    const retryable = error instanceof ProviderError ? error.retryable : true;
    if (retryable && item.attempts < settings.maxAttempts) {
      const delay = backoffMs(
        settings,
        item.attempts,
        error instanceof ProviderError ? error.retryAfterMs : undefined,
      );
      const res = await db.query(
        `UPDATE musical_details SET state = 'pending', last_error = $3, next_attempt_at = clock_timestamp() + make_interval(secs => $4::double precision / 1000),
           locked_at = NULL, locked_by = NULL, updated_at = clock_timestamp() WHERE ${owned}`,
        [item.id, worker, message, delay],
      );
      return res.rowCount ? 'retry' : 'lost';
    }
    // a re-fetch that fails keeps the earlier result in effect (stale), with the provider and id it came from
    const res = await db.query(
      `UPDATE musical_details SET state = 'failed', provider = CASE WHEN result IS NULL THEN $3 ELSE provider END, last_error = $4,
         locked_at = NULL, locked_by = NULL, updated_at = clock_timestamp()
       WHERE ${owned}`,
      [item.id, worker, provider.name, message],
    );
    return res.rowCount ? 'failed' : 'lost';
  }
}

export interface DrainResult {
  rounds: number;
  settled: Record<Outcome, number>;
  /** blocks whose details changed state */
  blocks: string[];
  /** when the next retry is due, if any detail waits */
  nextDueAt: Date | null;
}

/** The musical details waiting for enrichment, of organizations not deleted (whose are never claimed). */
const PENDING_OF_LIVE_ORGANIZATIONS = `musical_details md JOIN organizations o ON o.id = md.organization_id AND o.deleted_at IS NULL
  WHERE md.state = 'pending'`;

/**
 * Drains the queue: rounds of fair claims until nothing is due or the time budget is spent.
 * `onBlocksAdvanced` runs after each round with the blocks whose details settled.
 */
export async function drainQueue(
  deps: Pick<Deps, 'pool'>,
  provider: EnrichmentProvider,
  opts: {
    settings?: Partial<EnrichSettings>;
    budgetMs?: number;
    onBlocksAdvanced?: (blockIds: string[]) => Promise<void>;
  } = {},
): Promise<DrainResult> {
  const settings = { ...defaultEnrichSettings, ...opts.settings };
  const worker = `${process.pid}:${randomUUID()}`;
  const deadline = Date.now() + (opts.budgetMs ?? 30_000);
  const result: DrainResult = {
    rounds: 0,
    settled: { found: 0, not_found: 0, retry: 0, failed: 0, lost: 0 },
    blocks: [],
    nextDueAt: null,
  };
  const blocks = new Set<string>();
  await reclaimStale(deps.pool, settings.lockTimeoutMs, settings.maxAttempts);
  // at least one round, whatever the budget
  while (result.rounds === 0 || Date.now() < deadline) {
    const claimed = await claimRound(deps.pool, settings, worker);
    if (claimed.length === 0) break;
    result.rounds++;
    const queue = [...claimed];
    const advanced = new Set<string>();
    const run = async () => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        const outcome = await settle(deps.pool, provider, item, settings, worker);
        result.settled[outcome]++;
        if (outcome !== 'lost') advanced.add(item.block_id);
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, queue.length) }, run));
    for (const b of advanced) blocks.add(b);
    if (advanced.size > 0 && opts.onBlocksAdvanced) await opts.onBlocksAdvanced([...advanced]);
  }
  result.blocks = [...blocks];
  // as claimRound: a deleted organization's details are never claimed, so they set no next drain
  // (a due one would queue the next drain at once, again and again)
  const next = await deps.pool.query<{ at: Date | null }>(
    `SELECT min(md.next_attempt_at) AS at FROM ${PENDING_OF_LIVE_ORGANIZATIONS}`,
  );
  result.nextDueAt = next.rows[0]?.at ?? null;
  return result;
}

/** Whether a musical detail of a live organization is due for enrichment now. */
export async function enrichmentDue(db: Queryable): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM ${PENDING_OF_LIVE_ORGANIZATIONS} AND md.next_attempt_at <= clock_timestamp() LIMIT 1`,
  );
  return rowCount !== null && rowCount > 0;
}

// The SQL of the enrichment queue as the fetching.* procedures see it: coverage, counts, the
// operators' list, and the per-block actions (re-fetch, reprocess skipped, stop).
import { inRightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { likeEscape, sortable } from '../db/sql.ts';
import type { Caller } from './musicalDetails.ts';

export interface Coverage {
  rightsholderId: string;
  rightsholderName: string;
  blockId: string | null;
  musicalDetails: number;
  resolved: number;
  byState: Record<string, number>;
  resolvedPercentage: string;
  earningsUsd: string;
  resolvedEarningsUsd: string;
  resolvedEarningsPercentage: string;
}

const STATES = ['pending', 'fetching', 'found', 'not_found', 'skipped', 'failed'];

/**
 * Per rightsholder: musical details resolved (terminal states) over all, and the USD earnings on
 * them over all, as exact percentages with 4 decimals ("0" when there is nothing).
 */
export async function coverageByRightsholders(
  db: Queryable,
  caller: Caller,
  rightsholderIds: readonly string[],
): Promise<Coverage[]> {
  const { rows } = await db.query<Coverage & { states: Record<string, number> | null }>(
    `SELECT r.id AS "rightsholderId", r.name AS "rightsholderName", b.id AS "blockId",
            coalesce(s.total, 0)::int AS "musicalDetails", coalesce(s.resolved, 0)::int AS resolved, s.states,
            CASE WHEN coalesce(s.total, 0) = 0 THEN '0' ELSE trim_scale(round(100.0 * s.resolved / s.total, 4))::text END AS "resolvedPercentage",
            coalesce(usd_answer(s.earnings), 0)::text AS "earningsUsd",
            coalesce(usd_answer(s.resolved_earnings), 0)::text AS "resolvedEarningsUsd",
            CASE WHEN coalesce(s.earnings, 0) = 0 THEN '0' ELSE trim_scale(round(100 * s.resolved_earnings / s.earnings, 4))::text END AS "resolvedEarningsPercentage"
     FROM rightsholders r
     LEFT JOIN catalog_blocks b ON b.rightsholder_id = r.id
     LEFT JOIN LATERAL (
       SELECT count(*) AS total,
              count(*) FILTER (WHERE md.state IN ('found', 'not_found', 'skipped', 'failed')) AS resolved,
              sum(md.earnings_usd) AS earnings,
              coalesce(sum(md.earnings_usd) FILTER (WHERE md.state IN ('found', 'not_found', 'skipped', 'failed')), 0) AS resolved_earnings,
              (SELECT jsonb_object_agg(state, n) FROM (SELECT state, count(*)::int AS n FROM musical_details WHERE block_id = b.id GROUP BY state) x) AS states
       FROM musical_details md WHERE md.block_id = b.id
     ) s ON TRUE
     WHERE r.organization_id = $1 AND r.id = ANY ($2::uuid[]) AND ${inRightsholderScope('r.id', '$3')}
     ORDER BY array_position($2::uuid[], r.id)`,
    [caller.organizationId, rightsholderIds, caller.rightsholderScope],
  );
  return rows.map(({ states, ...r }) => ({
    ...r,
    byState: Object.fromEntries(STATES.map((st) => [st, states?.[st] ?? 0])),
  }));
}

export async function inQueueCount(
  db: Queryable,
  caller: Caller,
): Promise<{ count: number; pending: number; fetching: number }> {
  const { rows } = await db.query<{ pending: number; fetching: number }>(
    `SELECT count(*) FILTER (WHERE md.state = 'pending')::int AS pending, count(*) FILTER (WHERE md.state = 'fetching')::int AS fetching
     FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id
     WHERE md.organization_id = $1 AND md.state IN ('pending', 'fetching') AND ${inRightsholderScope('b.rightsholder_id', '$2')}`,
    [caller.organizationId, caller.rightsholderScope],
  );
  const { pending, fetching } = rows[0]!;
  return { count: pending + fetching, pending, fetching };
}

export interface QueueBlock {
  blockId: string;
  organizationId: string;
  organizationName: string;
  rightsholderId: string;
  rightsholderName: string;
  blockState: string;
  refreshedAt: string | null;
  musicalDetails: number;
  byState: Record<string, number>;
  nextAttemptAt: string | null;
  lastError: string | null;
}

const queueSort = sortable(
  {
    organizationName: 'o.name',
    rightsholderName: 'r.name',
    blockState: 'b.state',
    refreshedAt: 'b.refreshed_at',
    musicalDetails: 's.total',
    nextAttemptAt: 's.next_at',
  },
  'b.id',
  { nullsLast: true, tiebreakFollows: true },
);
export const queueSorts = queueSort.keys;
export type QueueSort = (typeof queueSorts)[number];

/** Busiest first (pending and fetching details) unless a sortBy is given. */
function queueOrder(sortBy: QueueSort | undefined, sortOrder: 'asc' | 'desc' = 'asc'): string {
  if (!sortBy)
    return `(coalesce((s.states->>'pending')::int, 0) + coalesce((s.states->>'fetching')::int, 0)) DESC, o.name, r.name, b.id`;
  return queueSort.orderBy(sortBy, sortOrder);
}

const QUEUE_FROM =
  'FROM catalog_blocks b JOIN organizations o ON o.id = b.organization_id JOIN rightsholders r ON r.id = b.rightsholder_id';
/** Blocks of live organizations (every one, or `$1`'s) whose organization or rightsholder name contains `$2` (null: all). */
const QUEUE_WHERE = `($1::uuid IS NULL OR b.organization_id = $1) AND o.deleted_at IS NULL
    AND ($2::text IS NULL OR o.name ILIKE '%' || $2 || '%' OR r.name ILIKE '%' || $2 || '%')`;

export interface QueueFilter {
  organizationId?: string | undefined;
  search?: string | undefined;
}

/** The filter's values for QUEUE_WHERE: the search's wildcards taken literally. */
function queueParams(filter: QueueFilter): [string | null, string | null] {
  return [filter.organizationId ?? null, filter.search ? likeEscape(filter.search) : null];
}

/** How many blocks the operators' queue list holds: across organizations or in one; search by organization or rightsholder name. */
export async function countQueueBlocks(db: Queryable, filter: QueueFilter): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n ${QUEUE_FROM} WHERE ${QUEUE_WHERE}`,
    queueParams(filter),
  );
  return rows[0]!.n;
}

/** One page of the blocks with their queue state, across organizations or in one; search by organization or rightsholder name. */
export async function queueBlockPage(
  db: Queryable,
  opts: QueueFilter & {
    sortBy?: QueueSort | undefined;
    sortOrder?: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<QueueBlock[]> {
  const { rows } = await db.query<QueueBlock & { states: Record<string, number> | null }>(
    `SELECT b.id AS "blockId", b.organization_id AS "organizationId", o.name AS "organizationName", b.rightsholder_id AS "rightsholderId",
            r.name AS "rightsholderName", b.state AS "blockState", b.refreshed_at AS "refreshedAt",
            coalesce(s.total, 0)::int AS "musicalDetails", s.states, s.next_at AS "nextAttemptAt", s.last_error AS "lastError"
     ${QUEUE_FROM}
     LEFT JOIN LATERAL (
       SELECT sum(n) AS total, jsonb_object_agg(state, n) AS states,
              (SELECT min(next_attempt_at) FROM musical_details WHERE block_id = b.id AND state = 'pending') AS next_at,
              (SELECT last_error FROM musical_details WHERE block_id = b.id AND state = 'failed' ORDER BY updated_at DESC LIMIT 1) AS last_error
       FROM (SELECT state, count(*)::int AS n FROM musical_details WHERE block_id = b.id GROUP BY state) x
     ) s ON TRUE
     WHERE ${QUEUE_WHERE}
     ORDER BY ${queueOrder(opts.sortBy, opts.sortOrder)}
     LIMIT $3 OFFSET $4`,
    [...queueParams(opts), opts.limit, opts.offset],
  );
  return rows.map(({ states, ...r }) => ({
    ...r,
    refreshedAt: r.refreshedAt ? new Date(r.refreshedAt).toISOString() : null,
    nextAttemptAt: r.nextAttemptAt ? new Date(r.nextAttemptAt).toISOString() : null,
    byState: Object.fromEntries(STATES.map((st) => [st, states?.[st] ?? 0])),
  }));
}

/** found, not_found and failed details of the block back to pending (ignored titles stay skipped). */
export async function refetchBlock(db: Queryable, blockId: string): Promise<number> {
  const res = await db.query(
    `UPDATE musical_details SET state = 'pending', attempts = 0, next_attempt_at = clock_timestamp(), last_error = NULL, updated_at = clock_timestamp()
     WHERE block_id = $1 AND state IN ('found', 'not_found', 'failed') AND NOT ignored`,
    [blockId],
  );
  return res.rowCount ?? 0;
}

/** Skipped details of the block back to pending, except those whose title is ignored. */
export async function reprocessSkipped(db: Queryable, blockId: string): Promise<number> {
  const res = await db.query(
    `UPDATE musical_details SET state = 'pending', attempts = 0, next_attempt_at = clock_timestamp(), last_error = NULL, updated_at = clock_timestamp()
     WHERE block_id = $1 AND state = 'skipped' AND NOT ignored`,
    [blockId],
  );
  return res.rowCount ?? 0;
}

/** Pending details of the block, and those being fetched, become skipped. */
export async function stopBlock(db: Queryable, blockId: string): Promise<number> {
  const res = await db.query(
    `UPDATE musical_details SET state = 'skipped', locked_at = NULL, locked_by = NULL, updated_at = clock_timestamp()
     WHERE block_id = $1 AND state IN ('pending', 'fetching')`,
    [blockId],
  );
  return res.rowCount ?? 0;
}

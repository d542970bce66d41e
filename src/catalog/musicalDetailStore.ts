// The SQL of musical details as the catalog procedures read them: always within the caller's reach
// (organization and data access, detailScope), as records with their overrides laid over them.
import { inRightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import {
  effectiveValues,
  overrideFields,
  type Caller,
  type MusicalDetailRecord,
  type OverrideRow,
} from './musicalDetails.ts';
import { compileCatalogQuery, Params, type CatalogQuery } from './query.ts';

/** Musical details with their blocks, as every read below sees them (`md`, `b`). */
const DETAILS_FROM = 'FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id';

/** Filters of a read by the rules applied to a musical detail. */
export interface RuleFilters {
  hasBlockRule?: boolean;
  hasRightsholderRule?: boolean;
}

/** The base conditions of every musical-detail read: organization, data access, rule filters. */
export function detailScope(params: Params, caller: Caller, opts: RuleFilters = {}): string {
  const parts = [
    `md.organization_id = ${params.add(caller.organizationId)}::uuid`,
    inRightsholderScope('b.rightsholder_id', params.add(caller.rightsholderScope)),
  ];
  for (const [flag, ruleScope] of [
    [opts.hasBlockRule, 'block'],
    [opts.hasRightsholderRule, 'rightsholder'],
  ] as const) {
    if (!flag) continue;
    parts.push(
      `EXISTS (SELECT 1 FROM musical_detail_overrides o JOIN catalog_rules cr ON cr.id = o.rule_id
               WHERE o.musical_detail_id = md.id AND cr.scope = ${params.add(ruleScope)})`,
    );
  }
  return parts.join(' AND ');
}

const RECORD_COLUMNS = `md.id, md.block_id AS "blockId", b.rightsholder_id AS "rightsholderId", md.identity_key AS "identityKey", md.isrc,
  md.title, md.artist, md.release_title AS "releaseTitle", md.release_artist AS "releaseArtist", md.variants, md.row_count AS "rowCount",
  usd_answer(md.earnings_usd)::text AS "earningsUsd", md.rows_without_rate AS "rowsWithoutRate", md.state, md.attempts,
  CASE WHEN md.state = 'pending' THEN md.next_attempt_at END AS "nextAttemptAt", md.last_error AS "lastError",
  md.provider, md.provider_id AS "providerId", md.result, md.fetched_at AS "fetchedAt",
  (md.result IS NOT NULL AND md.state <> 'found') AS stale, md.ignored, md.cluster_id AS "clusterId",
  md.created_at AS "createdAt", md.updated_at AS "updatedAt"`;

type Row = Omit<MusicalDetailRecord, 'effective' | 'overriddenFields' | 'trail'>;

/** The overrides of these musical details, oldest first, by musical detail. */
export async function overridesOfDetails(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, OverrideRow[]>> {
  const byMd = new Map<string, OverrideRow[]>();
  if (ids.length === 0) return byMd;
  const { rows } = await db.query<OverrideRow & { mdId: string }>(
    `SELECT o.id, o.musical_detail_id AS "mdId", o.kind, o.rule_id AS "ruleId", o."values", o.created_by AS "createdBy", o.created_at AS "createdAt"
     FROM musical_detail_overrides o WHERE o.musical_detail_id = ANY ($1::uuid[]) ORDER BY o.created_at, o.id`,
    [ids],
  );
  for (const { mdId, ...o } of rows) {
    const list = byMd.get(mdId) ?? [];
    list.push({ ...o, createdAt: new Date(o.createdAt).toISOString() });
    byMd.set(mdId, list);
  }
  return byMd;
}

async function withOverrides(
  db: Queryable,
  rows: Row[],
  includeTrail: boolean,
): Promise<MusicalDetailRecord[]> {
  const byMd = await overridesOfDetails(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => {
    const trail = byMd.get(r.id) ?? [];
    const overridden = overrideFields.filter((f) => trail.some((o) => o.values[f] !== undefined));
    const record: MusicalDetailRecord = {
      ...r,
      nextAttemptAt: r.nextAttemptAt ? new Date(r.nextAttemptAt).toISOString() : null,
      fetchedAt: r.fetchedAt ? new Date(r.fetchedAt).toISOString() : null,
      createdAt: new Date(r.createdAt).toISOString(),
      updatedAt: new Date(r.updatedAt).toISOString(),
      effective: effectiveValues(r, trail),
      overriddenFields: overridden,
    };
    if (includeTrail) record.trail = trail;
    return record;
  });
}

/** The conditions of a catalog query within the caller's reach. */
function catalogQueryWhere(
  params: Params,
  caller: Caller,
  query: CatalogQuery,
  opts: RuleFilters,
): string {
  return `${detailScope(params, caller, opts)} AND ${compileCatalogQuery(query, params)}`;
}

/** How many musical details a catalog query matches. */
export async function countCatalogQuery(
  db: Queryable,
  caller: Caller,
  query: CatalogQuery,
  opts: RuleFilters,
): Promise<number> {
  const params = new Params();
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n ${DETAILS_FROM} WHERE ${catalogQueryWhere(params, caller, query, opts)}`,
    params.values,
  );
  return rows[0]!.n;
}

/** One page of the musical details a catalog query matches, highest USD earnings first. */
export async function queryMusicalDetails(
  db: Queryable,
  caller: Caller,
  query: CatalogQuery,
  opts: RuleFilters & { includeTrail: boolean; limit: number; offset: number },
): Promise<MusicalDetailRecord[]> {
  const params = new Params();
  const where = catalogQueryWhere(params, caller, query, opts);
  const limit = params.add(opts.limit);
  const offset = params.add(opts.offset);
  const { rows } = await db.query<Row>(
    `SELECT ${RECORD_COLUMNS} ${DETAILS_FROM} WHERE ${where} ORDER BY md.earnings_usd DESC, md.id LIMIT ${limit} OFFSET ${offset}`,
    params.values,
  );
  return withOverrides(db, rows, opts.includeTrail);
}

/** The count and exact USD earnings (a decimal string) of the musical details a catalog query matches. */
export async function catalogQueryTotals(
  db: Queryable,
  caller: Caller,
  query: CatalogQuery,
  opts: RuleFilters,
): Promise<{ total: number; earnings: string }> {
  const params = new Params();
  const { rows } = await db.query<{ total: number; earnings: string }>(
    `SELECT count(*)::int AS total, coalesce(usd_answer(sum(md.earnings_usd)), 0)::text AS earnings ${DETAILS_FROM} WHERE ${catalogQueryWhere(params, caller, query, opts)}`,
    params.values,
  );
  return rows[0]!;
}

/** The musical details a catalog query matches, counted by fetch state (states in order). */
export async function catalogQueryStates(
  db: Queryable,
  caller: Caller,
  query: CatalogQuery,
  opts: RuleFilters,
): Promise<{ state: string; n: number }[]> {
  const params = new Params();
  const { rows } = await db.query<{ state: string; n: number }>(
    `SELECT md.state, count(*)::int AS n ${DETAILS_FROM} WHERE ${catalogQueryWhere(params, caller, query, opts)} GROUP BY md.state ORDER BY md.state`,
    params.values,
  );
  return rows;
}

/** The ids of at most `limit` musical details a catalog query matches, highest USD earnings first. */
export async function catalogQueryTopIds(
  db: Queryable,
  caller: Caller,
  query: CatalogQuery,
  opts: RuleFilters,
  limit: number,
): Promise<string[]> {
  const params = new Params();
  const where = catalogQueryWhere(params, caller, query, opts);
  const { rows } = await db.query<{ id: string }>(
    `SELECT md.id ${DETAILS_FROM} WHERE ${where} ORDER BY md.earnings_usd DESC, md.id LIMIT ${params.add(limit)}`,
    params.values,
  );
  return rows.map((r) => r.id);
}

/** These musical details as records, highest USD earnings first; MUSICAL_DETAIL_NOT_FOUND when any is not visible to the caller (or not in the block). */
export async function visibleDetails(
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
  blockId?: string,
): Promise<MusicalDetailRecord[]> {
  // ids are uuids, in either case: one id written twice is one detail
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  const params = new Params();
  const where = detailScope(params, caller);
  const idsParam = params.add(unique);
  const blockParam = params.add(blockId ?? null);
  const { rows } = await db.query<Row>(
    `SELECT ${RECORD_COLUMNS} ${DETAILS_FROM}
     WHERE ${where} AND md.id = ANY (${idsParam}::uuid[]) AND (${blockParam}::uuid IS NULL OR md.block_id = ${blockParam}::uuid)
     ORDER BY md.earnings_usd DESC, md.id`,
    params.values,
  );
  if (rows.length !== unique.length) {
    const found = new Set(rows.map((r) => r.id));
    const missing = unique.filter((id) => !found.has(id));
    throw new AppError(
      'MUSICAL_DETAIL_NOT_FOUND',
      `Musical details not found: ${missing.slice(0, 10).join(', ')}`,
    );
  }
  return withOverrides(db, rows, false);
}

export interface ProviderCounts {
  provider: string;
  musicalDetails: number;
  found: number;
  notFound: number;
  failed: number;
}

/** Per provider the musical details were looked up with (the caller's, or one block's): their counts by outcome. */
export async function detailCountsByProvider(
  db: Queryable,
  caller: Caller,
  blockId: string | null,
): Promise<ProviderCounts[]> {
  const { rows } = await db.query<ProviderCounts>(
    `SELECT md.provider, count(*)::int AS "musicalDetails", count(*) FILTER (WHERE md.state = 'found')::int AS found,
            count(*) FILTER (WHERE md.state = 'not_found')::int AS "notFound", count(*) FILTER (WHERE md.state = 'failed')::int AS failed
     ${DETAILS_FROM}
     WHERE md.organization_id = $1 AND md.provider IS NOT NULL AND ($2::uuid IS NULL OR md.block_id = $2)
       AND ${inRightsholderScope('b.rightsholder_id', '$3')}
     GROUP BY md.provider ORDER BY md.provider`,
    [caller.organizationId, blockId, caller.rightsholderScope],
  );
  return rows;
}

/** The blocks these musical details are in (each once). */
export async function blockIdsOfDetails(db: Queryable, ids: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ block_id: string }>(
    'SELECT DISTINCT block_id FROM musical_details WHERE id = ANY ($1::uuid[])',
    [ids],
  );
  return rows.map((r) => r.block_id);
}

/**
 * The block's musical details earning the most, highest first (ties by id), each with its share
 * of the block's USD earnings in percent (4 decimals; null when the block earns nothing or less,
 * and then the minimum is not applied).
 */
export async function topDetailsOfBlock(
  db: Queryable,
  blockId: string,
  limit: number,
  minEarningsPercentage: number | null,
): Promise<{ id: string; clusterId: string | null; earningsPercentage: string | null }[]> {
  const { rows } = await db.query<{
    id: string;
    clusterId: string | null;
    earningsPercentage: string | null;
  }>(
    `WITH t AS (SELECT coalesce(sum(earnings_usd), 0) AS total FROM musical_details WHERE block_id = $1)
     SELECT md.id, md.cluster_id AS "clusterId", trim_scale(round(CASE WHEN t.total > 0 THEN 100 * md.earnings_usd / t.total END, 4))::text AS "earningsPercentage"
     FROM musical_details md, t WHERE md.block_id = $1
       AND ($3::numeric IS NULL OR t.total <= 0 OR 100 * md.earnings_usd / t.total >= $3::numeric)
     ORDER BY md.earnings_usd DESC, md.id LIMIT $2`,
    [blockId, limit, minEarningsPercentage],
  );
  return rows;
}

/** The exact USD earnings of the block's musical details (a decimal string). */
export async function detailEarningsOfBlock(db: Queryable, blockId: string): Promise<string> {
  const { rows } = await db.query<{ t: string }>(
    'SELECT coalesce(usd_answer(sum(earnings_usd)), 0)::text AS t FROM musical_details WHERE block_id = $1',
    [blockId],
  );
  return rows[0]!.t;
}

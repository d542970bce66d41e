// Reading musical details within the caller's reach, and their effective values: the fetched
// result with, field by field, the latest override that names the field laid over it.
import { rightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { compileCatalogQuery, Params, type CatalogQuery } from './query.ts';

export interface Caller {
  organizationId: string;
  userId: string;
}

export const overrideFields = ['title', 'artist', 'releaseDate', 'imageUrl', 'genres', 'albums', 'songWriters', 'fetchedComposers'] as const;
export type OverrideField = (typeof overrideFields)[number];
export type OverrideValues = Partial<Record<OverrideField, unknown>>;

export interface FetchedResult {
  title?: string;
  artist?: string;
  isrc?: string | null;
  releaseTitle?: string | null;
  releaseArtist?: string | null;
  releaseDate?: string | null;
  genres?: string[];
  songWriters?: string[];
  composers?: string[];
  imageUrl?: string | null;
  confidence?: number;
}

export interface EffectiveValues {
  title: string;
  artist: string | null;
  releaseDate: string | null;
  imageUrl: string | null;
  genres: string[];
  albums: string[];
  songWriters: string[];
  fetchedComposers: unknown[];
}

export interface OverrideRow {
  id: string;
  kind: string;
  ruleId: string | null;
  values: OverrideValues;
  createdBy: string | null;
  createdAt: string;
}

/**
 * The values a musical detail stands for: its raw title and artist, else the fetched result, with
 * each field of the latest override naming it on top (overrides in creation order).
 */
export function effectiveValues(md: { title: string; artist: string | null; result: FetchedResult | null }, overrides: readonly OverrideRow[]): EffectiveValues {
  const r = md.result;
  const base: EffectiveValues = {
    title: r?.title ?? md.title,
    artist: r?.artist ?? md.artist,
    releaseDate: r?.releaseDate ?? null,
    imageUrl: r?.imageUrl ?? null,
    genres: r?.genres ?? [],
    albums: r?.releaseTitle ? [r.releaseTitle] : [],
    songWriters: r?.songWriters ?? [],
    fetchedComposers: (r?.composers ?? []).map((name) => ({ name })),
  };
  const sorted = [...overrides].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  const out = base as unknown as Record<string, unknown>;
  const title = base.title;
  for (const o of sorted) {
    for (const field of overrideFields) {
      const value = o.values[field];
      if (value === undefined) continue;
      // a track always has a title: an empty one clears the correction, back to the fetched or raw title
      out[field] = field === 'title' && value === '' ? title : value;
    }
  }
  return base;
}

/** The block, if the caller may see it: in the organization and within their data access. */
export async function visibleBlock(db: Queryable, caller: Caller, blockId: string): Promise<{ id: string; rightsholderId: string; rightsholderName: string }> {
  const scope = await rightsholderScope(db, caller.organizationId, caller.userId);
  const { rows } = await db.query<{ id: string; rightsholderId: string; rightsholderName: string }>(
    `SELECT b.id, b.rightsholder_id AS "rightsholderId", r.name AS "rightsholderName"
     FROM catalog_blocks b JOIN rightsholders r ON r.id = b.rightsholder_id
     WHERE b.id = $1 AND b.organization_id = $2 AND ($3::uuid[] IS NULL OR b.rightsholder_id = ANY ($3::uuid[]))`,
    [blockId, caller.organizationId, scope],
  );
  if (!rows[0]) throw new AppError('BLOCK_NOT_FOUND');
  return rows[0];
}

/** The base conditions of every musical-detail read: organization, data access, rule filters. */
export function detailScope(
  params: Params,
  organizationId: string,
  scope: RightsholderScope,
  opts: { hasBlockRule?: boolean; hasRightsholderRule?: boolean } = {},
): string {
  const parts = [`md.organization_id = ${params.add(organizationId)}::uuid`];
  if (scope !== null) parts.push(`b.rightsholder_id = ANY (${params.add(scope)}::uuid[])`);
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

export interface MusicalDetailRecord {
  id: string;
  blockId: string;
  rightsholderId: string;
  identityKey: string;
  isrc: string | null;
  title: string;
  artist: string | null;
  releaseTitle: string | null;
  releaseArtist: string | null;
  variants: unknown[];
  rowCount: number;
  earningsUsd: string;
  rowsWithoutRate: number;
  state: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  provider: string | null;
  providerId: string | null;
  result: FetchedResult | null;
  fetchedAt: string | null;
  /** the result shown is from an earlier fetch: a re-fetch is queued, running, failed or was stopped */
  stale: boolean;
  ignored: boolean;
  clusterId: string | null;
  effective: EffectiveValues;
  overriddenFields: OverrideField[];
  trail?: OverrideRow[];
  createdAt: string;
  updatedAt: string;
}

const RECORD_COLUMNS = `md.id, md.block_id AS "blockId", b.rightsholder_id AS "rightsholderId", md.identity_key AS "identityKey", md.isrc,
  md.title, md.artist, md.release_title AS "releaseTitle", md.release_artist AS "releaseArtist", md.variants, md.row_count AS "rowCount",
  md.earnings_usd::text AS "earningsUsd", md.rows_without_rate AS "rowsWithoutRate", md.state, md.attempts,
  CASE WHEN md.state = 'pending' THEN md.next_attempt_at END AS "nextAttemptAt", md.last_error AS "lastError",
  md.provider, md.provider_id AS "providerId", md.result, md.fetched_at AS "fetchedAt",
  (md.result IS NOT NULL AND md.state <> 'found') AS stale, md.ignored, md.cluster_id AS "clusterId",
  md.created_at AS "createdAt", md.updated_at AS "updatedAt"`;

type Row = Omit<MusicalDetailRecord, 'effective' | 'overriddenFields' | 'trail'>;

async function withOverrides(db: Queryable, rows: Row[], includeTrail: boolean): Promise<MusicalDetailRecord[]> {
  const ids = rows.map((r) => r.id);
  const byMd = new Map<string, OverrideRow[]>();
  if (ids.length > 0) {
    const { rows: overrides } = await db.query<OverrideRow & { mdId: string }>(
      `SELECT o.id, o.musical_detail_id AS "mdId", o.kind, o.rule_id AS "ruleId", o."values", o.created_by AS "createdBy", o.created_at AS "createdAt"
       FROM musical_detail_overrides o WHERE o.musical_detail_id = ANY ($1::uuid[]) ORDER BY o.created_at, o.id`,
      [ids],
    );
    for (const { mdId, ...o } of overrides) {
      const list = byMd.get(mdId) ?? [];
      list.push({ ...o, createdAt: new Date(o.createdAt).toISOString() });
      byMd.set(mdId, list);
    }
  }
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

export async function queryMusicalDetails(
  db: Queryable,
  caller: Caller,
  query: CatalogQuery,
  opts: { hasBlockRule: boolean; hasRightsholderRule: boolean; includeTrail: boolean; limit: number; offset: number },
): Promise<{ rows: MusicalDetailRecord[]; total: number }> {
  const scope = await rightsholderScope(db, caller.organizationId, caller.userId);
  const params = new Params();
  const where = `${detailScope(params, caller.organizationId, scope, opts)} AND ${compileCatalogQuery(query, params)}`;
  const from = 'FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id';
  const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n ${from} WHERE ${where}`, params.values);
  const limit = params.add(opts.limit);
  const offset = params.add(opts.offset);
  const { rows } = await db.query<Row>(
    `SELECT ${RECORD_COLUMNS} ${from} WHERE ${where} ORDER BY md.earnings_usd DESC, md.id LIMIT ${limit} OFFSET ${offset}`,
    params.values,
  );
  return { rows: await withOverrides(db, rows, opts.includeTrail), total: total.rows[0]!.n };
}

/** These musical details as records; NOT_FOUND when any is not visible to the caller. */
export async function visibleDetails(db: Queryable, caller: Caller, ids: readonly string[], blockId?: string): Promise<MusicalDetailRecord[]> {
  // ids are uuids, in either case: one id written twice is one detail
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  const scope = await rightsholderScope(db, caller.organizationId, caller.userId);
  const params = new Params();
  const where = detailScope(params, caller.organizationId, scope);
  const idsParam = params.add(unique);
  const blockParam = params.add(blockId ?? null);
  const { rows } = await db.query<Row>(
    `SELECT ${RECORD_COLUMNS} FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id
     WHERE ${where} AND md.id = ANY (${idsParam}::uuid[]) AND (${blockParam}::uuid IS NULL OR md.block_id = ${blockParam}::uuid)
     ORDER BY md.earnings_usd DESC, md.id`,
    params.values,
  );
  if (rows.length !== unique.length) {
    const found = new Set(rows.map((r) => r.id));
    const missing = unique.filter((id) => !found.has(id));
    throw new AppError('MUSICAL_DETAIL_NOT_FOUND', `Musical details not found: ${missing.slice(0, 10).join(', ')}`);
  }
  return withOverrides(db, rows, false);
}

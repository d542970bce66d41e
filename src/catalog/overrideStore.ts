// The SQL of users' corrections of musical details (docs/catalog.md): override rows, catalog
// rules, and the titles an organization ignores. Never an update of the data itself, except the
// `ignored` mark and state an ignored title sets.
import type { Queryable } from '../db/pool.ts';
import type { Caller, MusicalDetailRecord, OverrideValues } from './musicalDetails.ts';
import { detailScope } from './musicalDetailStore.ts';
import { Params, type CatalogQuery } from './query.ts';

export type DetailOverrideKind = 'update_results' | 'bulk_override' | 'ignore';

/** An override of each of these musical details, with the same values, by `createdBy`. */
export async function insertDetailOverrides(
  db: Queryable,
  o: {
    organizationId: string;
    kind: DetailOverrideKind;
    values: OverrideValues;
    createdBy: string;
    musicalDetails: readonly Pick<MusicalDetailRecord, 'id' | 'blockId' | 'identityKey'>[];
  },
): Promise<void> {
  const mds = o.musicalDetails;
  await db.query(
    `INSERT INTO musical_detail_overrides (organization_id, block_id, identity_key, musical_detail_id, kind, "values", created_by)
     SELECT $1, t.block_id, t.identity_key, t.id, $2, $3, $4 FROM unnest($5::uuid[], $6::uuid[], $7::text[]) AS t(id, block_id, identity_key)`,
    [
      o.organizationId,
      o.kind,
      JSON.stringify(o.values),
      o.createdBy,
      mds.map((m) => m.id),
      mds.map((m) => m.blockId),
      mds.map((m) => m.identityKey),
    ],
  );
}

export interface CatalogRule {
  organizationId: string;
  scope: 'block' | 'rightsholder';
  /** the block of a block rule, else null */
  blockId: string | null;
  /** the rightsholder of a rightsholder rule, else null */
  rightsholderId: string | null;
  query: CatalogQuery;
  values: OverrideValues;
  createdBy: string;
}

/** Stores a rule (a query with override values, applied now and after every refresh); answers its id. */
export async function insertCatalogRule(db: Queryable, r: CatalogRule): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO catalog_rules (organization_id, scope, block_id, rightsholder_id, query, override_values, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [
      r.organizationId,
      r.scope,
      r.blockId,
      r.rightsholderId,
      JSON.stringify(r.query),
      JSON.stringify(r.values),
      r.createdBy,
    ],
  );
  return rows[0]!.id;
}

/** The ids of the musical details a rule has overridden. */
export async function detailIdsOfRule(db: Queryable, ruleId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT md.id FROM musical_detail_overrides o JOIN musical_details md ON md.id = o.musical_detail_id WHERE o.rule_id = $1',
    [ruleId],
  );
  return rows.map((r) => r.id);
}

/** Adds a title the organization ignores (by its normalized form); false when it was there already. */
export async function insertIgnoredTitle(
  db: Queryable,
  t: { organizationId: string; title: string; normalizedTitle: string; createdBy: string },
): Promise<boolean> {
  const res = await db.query(
    `INSERT INTO ignored_titles (organization_id, title, normalized_title, created_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization_id, normalized_title) DO NOTHING`,
    [t.organizationId, t.title, t.normalizedTitle, t.createdBy],
  );
  return (res.rowCount ?? 0) > 0;
}

/**
 * Marks the caller's musical details with these normalized titles ignored (those not yet ignored);
 * pending and in-flight ones become skipped. Answers the details marked.
 */
export async function markTitlesIgnored(
  db: Queryable,
  caller: Caller,
  normalizedTitles: readonly string[],
): Promise<{ id: string; blockId: string; identityKey: string; title: string }[]> {
  const params = new Params();
  const where = detailScope(params, caller);
  const titlesParam = params.add(normalizedTitles);
  const { rows } = await db.query<{
    id: string;
    blockId: string;
    identityKey: string;
    title: string;
  }>(
    `UPDATE musical_details md SET ignored = TRUE,
       state = CASE WHEN md.state IN ('pending', 'fetching') THEN 'skipped' ELSE md.state END,
       locked_at = NULL, locked_by = NULL, updated_at = clock_timestamp()
     FROM catalog_blocks b
     WHERE b.id = md.block_id AND ${where} AND md.normalized_title = ANY (${titlesParam}::text[]) AND NOT md.ignored
     RETURNING md.id, md.block_id AS "blockId", md.identity_key AS "identityKey", md.title`,
    params.values,
  );
  return rows;
}

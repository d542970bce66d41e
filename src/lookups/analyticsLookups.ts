// Query-time resolution for analytics. Statements keep their raw strings; analytics resolves them
// through these functions (or joins the tables they return) on normalizeLookupKey(raw), so a lookup
// change shows at once without re-ingesting anything.
import type { Queryable } from '../db/pool.ts';
import { normalizeLookupKey } from './normalize.ts';

export interface ResolvedSource {
  originalNormalized: string;
  /** the analytics `source`: collection source, else publisher source, else earnings source */
  source: string | null;
  collectionSource: string | null;
  earningsSource: string | null;
  earningsCategory: string | null;
  earningsParentCompany: string | null;
  publisherSource: string | null;
  status: string;
}

export interface ResolvedSalesType {
  originalNormalized: string;
  cleansed: string;
  primarySalesType: string | null;
  secondarySalesType: string | null;
  status: string;
}

const SOURCE_SQL = `SELECT original_normalized AS "originalNormalized",
    coalesce(collection_source, publisher_source, earnings_source) AS source,
    collection_source AS "collectionSource", earnings_source AS "earningsSource", earnings_category AS "earningsCategory",
    earnings_parent_company AS "earningsParentCompany", publisher_source AS "publisherSource", status
  FROM lookup_sources`;

const SALES_TYPE_SQL = `SELECT original_normalized AS "originalNormalized", cleansed,
    primary_sales_type AS "primarySalesType", secondary_sales_type AS "secondarySalesType", status
  FROM lookup_sales_types`;

/** Each raw string → its source lookup, or null when there is none. */
export async function resolveSourceLookups(
  db: Queryable,
  raws: readonly string[],
): Promise<Map<string, ResolvedSource | null>> {
  const keys = raws.map(normalizeLookupKey);
  const { rows } = await db.query<ResolvedSource>(
    `${SOURCE_SQL} WHERE original_normalized = ANY($1)`,
    [[...new Set(keys)]],
  );
  const byKey = new Map(rows.map((r) => [r.originalNormalized, r]));
  return new Map(raws.map((raw, i) => [raw, byKey.get(keys[i]!) ?? null]));
}

/** Each raw string → its sales-type lookup, or null when there is none. */
export async function resolveSalesTypeLookups(
  db: Queryable,
  raws: readonly string[],
): Promise<Map<string, ResolvedSalesType | null>> {
  const keys = raws.map(normalizeLookupKey);
  const { rows } = await db.query<ResolvedSalesType>(
    `${SALES_TYPE_SQL} WHERE original_normalized = ANY($1)`,
    [[...new Set(keys)]],
  );
  const byKey = new Map(rows.map((r) => [r.originalNormalized, r]));
  return new Map(raws.map((raw, i) => [raw, byKey.get(keys[i]!) ?? null]));
}

export async function resolveSource(db: Queryable, raw: string): Promise<ResolvedSource | null> {
  return (await resolveSourceLookups(db, [raw])).get(raw) ?? null;
}

/** Every source lookup, keyed by originalNormalized: a join table for the analytics engine. */
export async function sourceLookupTable(db: Queryable): Promise<ResolvedSource[]> {
  return (await db.query<ResolvedSource>(`${SOURCE_SQL} ORDER BY original_normalized`)).rows;
}

/** Every sales-type lookup, keyed by originalNormalized: a join table for the analytics engine. */
export async function salesTypeLookupTable(db: Queryable): Promise<ResolvedSalesType[]> {
  return (await db.query<ResolvedSalesType>(`${SALES_TYPE_SQL} ORDER BY original_normalized`)).rows;
}

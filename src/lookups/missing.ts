// Raw sales types and sources found in ingested statements (statement_raw_values, filled by
// ingestion) that no lookup entry resolves, across organizations, with the rows and US dollars
// they carry. Raw values are keyed once with normalizeLookupKey (lookup_raw_keys), so variants of
// one string group together and a lookup entry resolves all of them.
import type { Queryable } from '../db/pool.ts';
import { withRows } from '../ingest/statements.ts';
import { normalizeLookupKey } from './normalize.ts';
import { sortDirection } from '../db/sql.ts';

export type RawKind = 'sales_type' | 'source';

export interface MissingRawValue {
  /** the variant carrying the most money (then rows) */
  original: string;
  normalized: string;
  /** the distinct raw spellings, at most 20 */
  variants: string[];
  rowCount: number;
  /** exact decimal string; null when no statement reported a US dollar amount */
  usdAmount: string | null;
  statementCount: number;
  organizationCount: number;
}

export const missingSorts = ['usdAmount', 'rowCount'] as const;

/**
 * The raw values analytics shows: of statements with rows that are not deleted, skipped or bad
 * (withRows, as analytics reads them), in organizations that are not deleted. A deleted statement
 * keeps its raw values (it can be restored), so they are filtered here.
 */
const LIVE = `JOIN statements s ON s.id = v.statement_id AND ${withRows('s')}
     JOIN organizations o ON o.id = s.organization_id AND o.deleted_at IS NULL`;
export type MissingSort = (typeof missingSorts)[number];

/** Computes the normalized key of raw values that have none yet. */
export async function keyRawValues(db: Queryable, kind: RawKind): Promise<number> {
  let keyed = 0;
  for (;;) {
    const { rows } = await db.query<{ raw_value: string }>(
      `SELECT DISTINCT v.raw_value FROM statement_raw_values v
       WHERE v.kind = $1 AND NOT EXISTS (SELECT 1 FROM lookup_raw_keys k WHERE k.kind = v.kind AND k.raw_value = v.raw_value)
       LIMIT 5000`,
      [kind],
    );
    if (rows.length === 0) return keyed;
    const raws = rows.map((r) => r.raw_value);
    await db.query(
      `INSERT INTO lookup_raw_keys (kind, raw_value, raw_normalized)
       SELECT $1, r, k FROM unnest($2::text[], $3::text[]) AS u(r, k) ON CONFLICT DO NOTHING`,
      [kind, raws, raws.map(normalizeLookupKey)],
    );
    keyed += rows.length;
  }
}

export async function missingRawValues(
  db: Queryable,
  kind: RawKind,
  opts: {
    sortBy: MissingSort | undefined;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<{ rows: MissingRawValue[]; total: number }> {
  await keyRawValues(db, kind);
  const lookupTable = kind === 'source' ? 'lookup_sources' : 'lookup_sales_types';
  const usd = 'sum(v.usd_amount)';
  const rowsSql = 'sum(v.row_count)';
  const dir = sortDirection(opts.sortOrder);
  const order =
    opts.sortBy === 'rowCount'
      ? `${rowsSql} ${dir}, ${usd} DESC NULLS LAST`
      : opts.sortBy === 'usdAmount'
        ? `${usd} ${dir} NULLS LAST, ${rowsSql} DESC`
        : `${usd} DESC NULLS LAST, ${rowsSql} DESC`;
  const { rows } = await db.query<{
    normalized: string;
    original: string;
    variants: string[];
    row_count: string;
    usd_amount: string | null;
    statement_count: number;
    organization_count: number;
    total: number;
  }>(
    `SELECT k.raw_normalized AS normalized,
            (array_agg(v.raw_value ORDER BY v.usd_amount DESC NULLS LAST, v.row_count DESC, v.raw_value))[1] AS original,
            (array_agg(DISTINCT v.raw_value))[1:20] AS variants,
            ${rowsSql}::text AS row_count, usd_answer(${usd})::text AS usd_amount,
            count(DISTINCT v.statement_id)::int AS statement_count, count(DISTINCT v.organization_id)::int AS organization_count,
            count(*) OVER ()::int AS total
     FROM statement_raw_values v
     JOIN lookup_raw_keys k ON k.kind = v.kind AND k.raw_value = v.raw_value
     ${LIVE}
     WHERE v.kind = $1 AND k.raw_normalized <> ''
       AND NOT EXISTS (SELECT 1 FROM ${lookupTable} l WHERE l.original_normalized = k.raw_normalized)
     GROUP BY k.raw_normalized
     ORDER BY ${order}, k.raw_normalized
     LIMIT $2 OFFSET $3`,
    [kind, opts.limit, opts.offset],
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    const counted = await db.query<{ n: number }>(
      `SELECT count(DISTINCT k.raw_normalized)::int AS n FROM statement_raw_values v
       JOIN lookup_raw_keys k ON k.kind = v.kind AND k.raw_value = v.raw_value
       ${LIVE}
       WHERE v.kind = $1 AND k.raw_normalized <> ''
         AND NOT EXISTS (SELECT 1 FROM ${lookupTable} l WHERE l.original_normalized = k.raw_normalized)`,
      [kind],
    );
    total = counted.rows[0]!.n;
  }
  return {
    rows: rows.map((r) => ({
      original: r.original,
      normalized: r.normalized,
      variants: r.variants,
      rowCount: Number(r.row_count),
      usdAmount: r.usd_amount,
      statementCount: r.statement_count,
      organizationCount: r.organization_count,
    })),
    total,
  };
}

// Source gold data: curated rows describing real sources and their aliases. The built-in resolver
// matches raw strings against them; they are not what analytics joins (that is lookup_sources).
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { normalizeLookupKey } from './normalize.ts';
import { pagedRows } from './paging.ts';
import { likeContains, sortDirection } from '../db/sql.ts';

export interface GoldDataRow {
  id: string;
  rawValue: string;
  rawValueNormalized: string;
  earningsSource: string | null;
  earningsCategory: string | null;
  parentCompany: string | null;
  collectionSource: string | null;
  publisherSource: string | null;
  notes: unknown;
  createdAt: string;
  updatedAt: string;
}

export interface GoldDataFields {
  rawValue: string;
  earningsSource: string | null;
  earningsCategory: string | null;
  parentCompany: string | null;
  collectionSource: string | null;
  publisherSource: string | null;
  notes: unknown;
}

interface Row {
  id: string;
  raw_value: string;
  raw_value_normalized: string;
  earnings_source: string | null;
  earnings_category: string | null;
  parent_company: string | null;
  collection_source: string | null;
  publisher_source: string | null;
  notes: unknown;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, raw_value, raw_value_normalized, earnings_source, earnings_category, parent_company, collection_source,
  publisher_source, notes, created_at, updated_at`;

function toGold(row: Row): GoldDataRow {
  return {
    id: row.id,
    rawValue: row.raw_value,
    rawValueNormalized: row.raw_value_normalized,
    earningsSource: row.earnings_source,
    earningsCategory: row.earnings_category,
    parentCompany: row.parent_company,
    collectionSource: row.collection_source,
    publisherSource: row.publisher_source,
    notes: row.notes ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function allGoldData(db: Queryable): Promise<GoldDataRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM source_gold_data ORDER BY raw_value_normalized`,
  );
  return rows.map(toGold);
}

/** With an id: that row, changed (its raw value may change too). Without: by normalized raw value. */
export async function upsertGoldData(
  db: Queryable,
  fields: GoldDataFields,
  id?: string,
): Promise<{ row: GoldDataRow; created: boolean }> {
  const key = normalizeLookupKey(fields.rawValue);
  const values = [
    fields.rawValue,
    key,
    fields.earningsSource,
    fields.earningsCategory,
    fields.parentCompany,
    fields.collectionSource,
    fields.publisherSource,
    fields.notes === undefined || fields.notes === null ? null : JSON.stringify(fields.notes),
  ];
  if (id !== undefined) {
    const taken = await db.query(
      'SELECT 1 FROM source_gold_data WHERE raw_value_normalized = $1 AND id <> $2',
      [key, id],
    );
    if (taken.rowCount) throw new AppError('GOLD_DATA_RAW_VALUE_TAKEN');
    // the check above and a concurrent write of the same key can cross: the unique index decides
    const { rows } = await db
      .query<Row>(
        `UPDATE source_gold_data SET raw_value = $2, raw_value_normalized = $3, earnings_source = $4, earnings_category = $5,
           parent_company = $6, collection_source = $7, publisher_source = $8, notes = $9::jsonb, updated_at = now()
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, ...values],
      )
      .catch((error: unknown) => {
        if ((error as { code?: string }).code === '23505')
          throw new AppError('GOLD_DATA_RAW_VALUE_TAKEN');
        throw error;
      });
    if (!rows[0]) throw new AppError('GOLD_DATA_NOT_FOUND');
    return { row: toGold(rows[0]), created: false };
  }
  const { rows } = await db.query<Row & { created: boolean }>(
    `INSERT INTO source_gold_data (raw_value, raw_value_normalized, earnings_source, earnings_category, parent_company,
       collection_source, publisher_source, notes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
     ON CONFLICT (raw_value_normalized) DO UPDATE SET raw_value = EXCLUDED.raw_value, earnings_source = EXCLUDED.earnings_source,
       earnings_category = EXCLUDED.earnings_category, parent_company = EXCLUDED.parent_company,
       collection_source = EXCLUDED.collection_source, publisher_source = EXCLUDED.publisher_source, notes = EXCLUDED.notes, updated_at = now()
     RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    values,
  );
  return { row: toGold(rows[0]!), created: rows[0]!.created };
}

export async function deleteGoldData(db: Queryable, id: string): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM source_gold_data WHERE id = $1', [id]);
  if (!rowCount) throw new AppError('GOLD_DATA_NOT_FOUND');
}

export const goldDataSorts = [
  'rawValue',
  'earningsSource',
  'collectionSource',
  'earningsCategory',
  'updatedAt',
] as const;
export type GoldDataSort = (typeof goldDataSorts)[number];
const SORT_SQL: Record<GoldDataSort, string> = {
  rawValue: 'raw_value_normalized',
  earningsSource: 'lower(earnings_source)',
  collectionSource: 'lower(collection_source)',
  earningsCategory: 'earnings_category',
  updatedAt: 'updated_at',
};

export async function listGoldData(
  db: Queryable,
  opts: {
    search?: string | undefined;
    sortBy: GoldDataSort;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<{ rows: GoldDataRow[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.search) {
    params.push(likeContains(opts.search), likeContains(normalizeLookupKey(opts.search)));
    const [p, k] = [`$${params.length - 1}`, `$${params.length}`];
    where.push(
      `(raw_value ILIKE ${p} OR earnings_source ILIKE ${p} OR collection_source ILIKE ${p} OR publisher_source ILIKE ${p}
        OR parent_company ILIKE ${p} OR earnings_category ILIKE ${p} OR (${k} <> '%%' AND raw_value_normalized LIKE ${k}))`,
    );
  }
  const { rows, total } = await pagedRows<Row>(db, {
    columns: COLUMNS,
    from: 'source_gold_data',
    where,
    params,
    orderBy: `${SORT_SQL[opts.sortBy]} ${sortDirection(opts.sortOrder)} NULLS LAST, raw_value_normalized, id`,
    limit: opts.limit,
    offset: opts.offset,
  });
  return { rows: rows.map(toGold), total };
}

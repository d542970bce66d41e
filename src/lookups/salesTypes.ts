// Sales-type lookup entries (raw string → cleansed form and primary/secondary sales type) and the
// taxonomy they must use. Keyed by normalizeLookupKey(original): creating an entry whose key exists
// updates that entry.
import type { Pool, Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { lookupTable, type LookupEntry, type LookupListOptions } from './lookupTable.ts';

export interface SalesTypeFields {
  cleansed: string;
  primarySalesType: string | null;
  secondarySalesType: string | null;
  status: string;
  reason: unknown;
}

export type SalesTypeLookup = LookupEntry<SalesTypeFields>;

export const salesTypeSorts = [
  'original',
  'cleansed',
  'primarySalesType',
  'status',
  'createdAt',
  'updatedAt',
] as const;
export type SalesTypeSort = (typeof salesTypeSorts)[number];

const table = lookupTable<SalesTypeFields>({
  table: 'lookup_sales_types',
  fields: {
    cleansed: 'cleansed',
    primarySalesType: 'primary_sales_type',
    secondarySalesType: 'secondary_sales_type',
    status: 'status',
    reason: 'reason',
  },
  jsonFields: ['reason'],
  notFound: 'SALES_TYPE_LOOKUP_NOT_FOUND',
  searchColumns: ['cleansed', 'primary_sales_type', 'secondary_sales_type'],
  sorts: {
    original: 'original_normalized',
    cleansed: 'lower(cleansed)',
    primarySalesType: 'primary_sales_type',
    status: 'status',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
  } satisfies Record<SalesTypeSort, string>,
});

export interface TaxonomyRow {
  primarySalesType: string;
  secondarySalesType: string;
  description: string;
}

export async function listTaxonomy(db: Queryable): Promise<TaxonomyRow[]> {
  const { rows } = await db.query<{
    primary_sales_type: string;
    secondary_sales_type: string;
    description: string;
  }>(
    'SELECT primary_sales_type, secondary_sales_type, description FROM sales_type_taxonomy ORDER BY sort_order',
  );
  return rows.map((r) => ({
    primarySalesType: r.primary_sales_type,
    secondarySalesType: r.secondary_sales_type,
    description: r.description,
  }));
}

/** A primary alone must exist; a secondary must belong to the primary. */
export async function assertInTaxonomy(
  db: Queryable,
  primary: string | null,
  secondary: string | null,
): Promise<void> {
  if (primary === null && secondary === null) return;
  if (primary === null)
    throw new AppError(
      'SALES_TYPE_NOT_IN_TAXONOMY',
      'A secondary sales type needs its primary sales type',
    );
  const { rows } = await db.query<{ secondary_sales_type: string }>(
    'SELECT secondary_sales_type FROM sales_type_taxonomy WHERE primary_sales_type = $1',
    [primary],
  );
  if (rows.length === 0)
    throw new AppError(
      'SALES_TYPE_NOT_IN_TAXONOMY',
      `${primary} is not a primary sales type of the taxonomy`,
    );
  if (secondary !== null && !rows.some((r) => r.secondary_sales_type === secondary)) {
    throw new AppError(
      'SALES_TYPE_NOT_IN_TAXONOMY',
      `${secondary} is not a secondary sales type of ${primary}`,
    );
  }
}

/** Creates the entry, or replaces the one with the same normalized original (see lookupTable's upsert). */
export async function upsertSalesTypeLookup(
  db: Queryable,
  original: string,
  fields: SalesTypeFields,
  opts: { keepVerified?: boolean } = {},
): Promise<{ entry: SalesTypeLookup; created: boolean }> {
  await assertInTaxonomy(db, fields.primarySalesType, fields.secondarySalesType);
  return table.upsert(db, original, fields, opts);
}

export const getSalesTypeLookup = table.get;

export async function updateSalesTypeLookup(
  pool: Pool,
  id: string,
  patch: Partial<SalesTypeFields>,
): Promise<SalesTypeLookup> {
  return table.update(pool, id, async (current, db) => {
    const next: SalesTypeFields = {
      cleansed: patch.cleansed ?? current.cleansed,
      primarySalesType:
        patch.primarySalesType !== undefined ? patch.primarySalesType : current.primarySalesType,
      secondarySalesType:
        patch.secondarySalesType !== undefined
          ? patch.secondarySalesType
          : current.secondarySalesType,
      status: patch.status ?? current.status,
      reason: patch.reason !== undefined ? patch.reason : current.reason,
    };
    // a new primary without a secondary drops the old secondary, which belonged to the old primary
    if (
      patch.primarySalesType !== undefined &&
      patch.secondarySalesType === undefined &&
      patch.primarySalesType !== current.primarySalesType
    ) {
      next.secondarySalesType = null;
    }
    await assertInTaxonomy(db, next.primarySalesType, next.secondarySalesType);
    return next;
  });
}

export const deleteSalesTypeLookup = table.remove;

export function listSalesTypeLookups(
  db: Queryable,
  opts: LookupListOptions<SalesTypeSort>,
): Promise<{ rows: SalesTypeLookup[]; total: number }> {
  return table.list(db, opts);
}

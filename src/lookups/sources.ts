// Source lookup entries: a raw source string → collection source, earnings source and category,
// parent company, publisher source. Keyed by normalizeLookupKey(original), like sales types.
import type { Pool, Queryable } from '../db/pool.ts';
import { lookupTable, type LookupEntry, type LookupListOptions } from './lookupTable.ts';

export interface SourceResolution {
  collectionSource: string | null;
  earningsSource: string | null;
  earningsCategory: string | null;
  earningsParentCompany: string | null;
  publisherSource: string | null;
}

export interface SourceFields extends SourceResolution {
  status: string;
  reason: unknown;
}

export type SourceLookup = LookupEntry<SourceFields>;

export const sourceSorts = [
  'original',
  'earningsSource',
  'collectionSource',
  'earningsCategory',
  'status',
  'createdAt',
  'updatedAt',
] as const;
export type SourceSort = (typeof sourceSorts)[number];

const table = lookupTable<SourceFields>({
  table: 'lookup_sources',
  fields: {
    collectionSource: 'collection_source',
    earningsSource: 'earnings_source',
    earningsCategory: 'earnings_category',
    earningsParentCompany: 'earnings_parent_company',
    publisherSource: 'publisher_source',
    status: 'status',
    reason: 'reason',
  },
  jsonFields: ['reason'],
  notFound: 'SOURCE_LOOKUP_NOT_FOUND',
  searchColumns: [
    'collection_source',
    'earnings_source',
    'earnings_category',
    'earnings_parent_company',
    'publisher_source',
  ],
  sorts: {
    original: 'original_normalized',
    earningsSource: 'lower(earnings_source)',
    collectionSource: 'lower(collection_source)',
    earningsCategory: 'earnings_category',
    status: 'status',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
  } satisfies Record<SourceSort, string>,
});

/** Creates the entry, or replaces the one with the same normalized original (see lookupTable's upsert). */
export const upsertSourceLookup = table.upsert;

export const getSourceLookup = table.get;

export async function updateSourceLookup(
  pool: Pool,
  id: string,
  patch: Partial<SourceFields>,
): Promise<SourceLookup> {
  return table.update(pool, id, (current) => {
    const pick = <K extends keyof SourceFields>(k: K): SourceFields[K] =>
      patch[k] !== undefined ? (patch[k] as SourceFields[K]) : current[k];
    return {
      collectionSource: pick('collectionSource'),
      earningsSource: pick('earningsSource'),
      earningsCategory: pick('earningsCategory'),
      earningsParentCompany: pick('earningsParentCompany'),
      publisherSource: pick('publisherSource'),
      status: pick('status'),
      reason: pick('reason'),
    };
  });
}

export const deleteSourceLookup = table.remove;

export function listSourceLookups(
  db: Queryable,
  opts: LookupListOptions<SourceSort>,
): Promise<{ rows: SourceLookup[]; total: number }> {
  return table.list(db, opts);
}

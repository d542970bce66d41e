// Known payors for autocomplete: the shipped list and the payors ingestion has seen in any
// organization's statements (payors_seen, keyed by normalizeLookupKey(name), with no organization).
import type { Queryable } from '../db/pool.ts';
import { normalizeLookupKey } from './normalize.ts';
import { containsPattern, pagedRows } from './paging.ts';

export interface KnownPayor {
  name: string;
  /** distributor, label, publisher, society or store for shipped payors; null for those seen in statements */
  category: string | null;
}

const KNOWN = `(
  SELECT name_normalized, name, category FROM payors
  UNION ALL
  SELECT s.name_normalized, coalesce(s.name, s.name_normalized), NULL FROM payors_seen s
  WHERE s.name_normalized <> '' AND NOT EXISTS (SELECT 1 FROM payors p WHERE p.name_normalized = s.name_normalized)
) known`;

/** Names starting with the search come first, then those containing it. */
export async function listKnownPayors(
  db: Queryable,
  opts: { search?: string | undefined; sortOrder?: 'asc' | 'desc'; limit: number; offset: number },
): Promise<{ rows: KnownPayor[]; total: number }> {
  const key = opts.search ? normalizeLookupKey(opts.search) : '';
  const byName = opts.sortOrder === 'desc' ? 'lower(name) DESC, name DESC' : 'lower(name), name';
  if (!opts.search || opts.search.trim() === '') {
    return pagedRows<KnownPayor>(db, { columns: 'name, category', from: KNOWN, where: [], params: [], orderBy: byName, limit: opts.limit, offset: opts.offset });
  }
  const search = opts.search.trim();
  return pagedRows<KnownPayor>(db, {
    columns: 'name, category',
    from: KNOWN,
    where: ["(name ILIKE $1 OR ($2 <> '' AND name_normalized LIKE $3))"],
    params: [containsPattern(search), key, containsPattern(key)],
    orderBy: `(lower(name) LIKE $4 OR ($2 <> '' AND name_normalized LIKE $5)) DESC, ${byName}`,
    orderParams: [`${search.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`, `${key.replace(/[\\%_]/g, '\\$&')}%`],
    limit: opts.limit,
    offset: opts.offset,
  });
}

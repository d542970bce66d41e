// Known payors for autocomplete: the shipped list, the payors named in the caller's own
// organization's statements, and those named in statements of at least PUBLIC_AFTER organizations
// (statement_payors, keyed by normalizeLookupKey(name), counted per organization and spelling in
// payor_spellings); only statements analytics reads count (withRows), in organizations not
// deleted. Which organization named a payor is never told, and a payor only one or two
// organizations deal with is not shown to the others.
import type { Queryable } from '../db/pool.ts';
import { normalizeLookupKey } from './normalize.ts';
import { pagedRows } from './paging.ts';
import { likeContains, likePrefix } from '../db/sql.ts';

export interface KnownPayor {
  name: string;
  /** distributor, label, publisher, society or store for shipped payors; null for those seen in statements */
  category: string | null;
}

/** How many organizations' statements name a payor before every organization sees it. */
export const PUBLIC_AFTER = 3;

/**
 * $1: the caller's organization. From payor_spellings (migration 000028: per organization and
 * spelling, the statements with rows that name the payor so, kept by triggers), not from every
 * statement's payors: the spelling most statements use (the own organization's first; a tie goes
 * to the first in name order, as mode() chose it).
 */
const KNOWN = `(
  SELECT name_normalized, name, category FROM payors
  UNION ALL
  SELECT k.name_normalized,
    coalesce((array_agg(k.name ORDER BY k.own DESC, k.name) FILTER (WHERE k.own > 0))[1], (array_agg(k.name ORDER BY k.total DESC, k.name))[1]), NULL
  FROM (
    SELECT ps.name_normalized, ps.name, sum(ps.statements) FILTER (WHERE ps.organization_id = $1) AS own, sum(ps.statements) AS total
    FROM payor_spellings ps JOIN organizations o ON o.id = ps.organization_id AND o.deleted_at IS NULL
    WHERE NOT EXISTS (SELECT 1 FROM payors p WHERE p.name_normalized = ps.name_normalized)
    GROUP BY ps.name_normalized, ps.name
  ) k
  JOIN (
    SELECT ps.name_normalized FROM payor_spellings ps JOIN organizations o ON o.id = ps.organization_id AND o.deleted_at IS NULL
    GROUP BY ps.name_normalized
    HAVING bool_or(ps.organization_id = $1) OR count(DISTINCT ps.organization_id) >= ${PUBLIC_AFTER}
  ) shown ON shown.name_normalized = k.name_normalized
  GROUP BY k.name_normalized
) known`;

/** Names starting with the search come first, then those containing it. */
export async function listKnownPayors(
  db: Queryable,
  organizationId: string,
  opts: { search?: string | undefined; sortOrder?: 'asc' | 'desc'; limit: number; offset: number },
): Promise<{ rows: KnownPayor[]; total: number }> {
  const key = opts.search ? normalizeLookupKey(opts.search) : '';
  const byName = opts.sortOrder === 'desc' ? 'lower(name) DESC, name DESC' : 'lower(name), name';
  if (!opts.search || opts.search.trim() === '') {
    return pagedRows<KnownPayor>(db, {
      columns: 'name, category',
      from: KNOWN,
      where: [],
      params: [organizationId],
      orderBy: byName,
      limit: opts.limit,
      offset: opts.offset,
    });
  }
  const search = opts.search.trim();
  return pagedRows<KnownPayor>(db, {
    columns: 'name, category',
    from: KNOWN,
    where: ["(name ILIKE $2 OR ($3 <> '' AND name_normalized LIKE $4))"],
    params: [organizationId, likeContains(search), key, likeContains(key)],
    orderBy: `(lower(name) LIKE $5 OR ($3 <> '' AND name_normalized LIKE $6)) DESC, ${byName}`,
    orderParams: [likePrefix(search.toLowerCase()), likePrefix(key)],
    limit: opts.limit,
    offset: opts.offset,
  });
}

// The organization's ordered rightsholder list for musical-detail fetch priority, read by the
// catalog's fetch scheduling.
import { inRightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { likeEscape } from '../db/sql.ts';

export interface MdPriority {
  /** 1 = fetched first */
  position: number;
  rightsholderId: string;
  name: string;
}

/**
 * The ordering, positions counted over the live rightsholders (one removed or soft-deleted since
 * leaves no gap); `search` filters by name without renumbering, and so does `scope` (a restricted
 * caller's data-access set: the others are not shown, their places are kept).
 */
export async function listMdPriorities(
  db: Queryable,
  organizationId: string,
  search?: string,
  scope: RightsholderScope = null,
): Promise<MdPriority[]> {
  const { rows } = await db.query<MdPriority>(
    `WITH ranked AS (
       SELECT row_number() OVER (ORDER BY p.position)::int AS position, p.rightsholder_id AS "rightsholderId", r.name
       FROM rightsholder_md_priorities p
       JOIN rightsholders r ON r.id = p.rightsholder_id AND r.organization_id = p.organization_id AND r.deleted_at IS NULL
       WHERE p.organization_id = $1)
     SELECT * FROM ranked
     WHERE ($2::text IS NULL OR name ILIKE '%' || $2 || '%' ESCAPE '\\') AND ${inRightsholderScope('"rightsholderId"', '$3')}
     ORDER BY position`,
    [organizationId, search === undefined || search === '' ? null : likeEscape(search), scope],
  );
  return rows;
}

/** Every stored entry's rightsholder id, in order, soft-deleted rightsholders included (listMdPriorities leaves them out). */
export async function storedMdPriorityIds(
  db: Queryable,
  organizationId: string,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT rightsholder_id AS id FROM rightsholder_md_priorities WHERE organization_id = $1 ORDER BY position',
    [organizationId],
  );
  return rows.map((r) => r.id);
}

/** Replaces the whole ordering with `rightsholderIds`, first = highest priority. */
export async function replaceMdPriorities(
  db: Queryable,
  organizationId: string,
  rightsholderIds: readonly string[],
): Promise<void> {
  await db.query('DELETE FROM rightsholder_md_priorities WHERE organization_id = $1', [
    organizationId,
  ]);
  await db.query(
    `INSERT INTO rightsholder_md_priorities (organization_id, rightsholder_id, position)
     SELECT $1, id, ord FROM unnest($2::uuid[]) WITH ORDINALITY AS given (id, ord)`,
    [organizationId, rightsholderIds],
  );
}

/**
 * The full ordering a restricted caller's `visible` list stands for: rightsholders outside their
 * set keep their places, the caller's own fill the places theirs held, in the new order (the
 * first ones; any more go to the end).
 */
export function mergeMdPriorities(
  current: readonly string[],
  visible: readonly string[],
  scope: readonly string[],
): string[] {
  const inScope = new Set(scope);
  const next = [...visible];
  const merged: string[] = [];
  for (const id of current) {
    if (!inScope.has(id)) merged.push(id);
    else if (next.length > 0) merged.push(next.shift()!);
  }
  return [...merged, ...next];
}

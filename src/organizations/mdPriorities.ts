// The organization's ordered rightsholder list for musical-detail fetch priority, read by the
// catalog's fetch scheduling.
import type { Queryable } from '../db/pool.ts';
import { escapeLike } from './organizations.ts';

export interface MdPriority {
  /** 1 = fetched first */
  position: number;
  rightsholderId: string;
  name: string;
}

/**
 * The ordering, positions counted over the live rightsholders (one removed or soft-deleted since
 * leaves no gap); `search` filters by name without renumbering.
 */
export async function listMdPriorities(db: Queryable, organizationId: string, search?: string): Promise<MdPriority[]> {
  const { rows } = await db.query<MdPriority>(
    `WITH ranked AS (
       SELECT row_number() OVER (ORDER BY p.position)::int AS position, p.rightsholder_id AS "rightsholderId", r.name
       FROM rightsholder_md_priorities p
       JOIN rightsholders r ON r.id = p.rightsholder_id AND r.organization_id = p.organization_id AND r.deleted_at IS NULL
       WHERE p.organization_id = $1)
     SELECT * FROM ranked WHERE $2::text IS NULL OR name ILIKE '%' || $2 || '%' ESCAPE '\\' ORDER BY position`,
    [organizationId, search === undefined || search === '' ? null : escapeLike(search)],
  );
  return rows;
}

/** Replaces the whole ordering with `rightsholderIds`, first = highest priority. */
export async function replaceMdPriorities(db: Queryable, organizationId: string, rightsholderIds: readonly string[]): Promise<void> {
  await db.query('DELETE FROM rightsholder_md_priorities WHERE organization_id = $1', [organizationId]);
  await db.query(
    `INSERT INTO rightsholder_md_priorities (organization_id, rightsholder_id, position)
     SELECT $1, id, ord FROM unnest($2::uuid[]) WITH ORDINALITY AS given (id, ord)`,
    [organizationId, rightsholderIds],
  );
}

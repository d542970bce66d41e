// Per-member preferences of one organization: the rightsholder list ordering and the member's
// data-access role (the latter lives in data_access_roles, shared with src/access/dataAccess.ts).
import { rightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';

export const RIGHTSHOLDER_SORTS = ['last_updated', 'alphabetical', 'recently_created'] as const;
export type RightsholderSort = (typeof RIGHTSHOLDER_SORTS)[number];
export const DEFAULT_RIGHTSHOLDER_SORT: RightsholderSort = 'alphabetical';

function isRightsholderSort(value: unknown): value is RightsholderSort {
  return (RIGHTSHOLDER_SORTS as readonly unknown[]).includes(value);
}

/** The member's chosen rightsholder ordering in the organization; 'alphabetical' until one is set. */
export async function getRightsholderSort(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<RightsholderSort> {
  const { rows } = await db.query<{ sort: string | null }>(
    'SELECT rightsholder_sort AS sort FROM user_preferences WHERE organization_id = $1 AND user_id = $2',
    [organizationId, userId],
  );
  const sort = rows[0]?.sort;
  return isRightsholderSort(sort) ? sort : DEFAULT_RIGHTSHOLDER_SORT;
}

export async function setRightsholderSort(
  db: Queryable,
  organizationId: string,
  userId: string,
  sort: RightsholderSort,
): Promise<void> {
  await db.query(
    `INSERT INTO user_preferences (organization_id, user_id, rightsholder_sort) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, user_id) DO UPDATE SET rightsholder_sort = EXCLUDED.rightsholder_sort, updated_at = now()`,
    [organizationId, userId, sort],
  );
}

/** What a member may see: every rightsholder, or exactly the listed ones. */
export type DataAccessRole = { mode: 'all' } | { mode: 'restricted'; rightsholderIds: string[] };

/** The member's data-access role (their scope, as src/access/dataAccess.ts reads it); a member without one sees everything. */
export async function getDataAccessRole(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<DataAccessRole> {
  return dataAccessRoleOf(await rightsholderScope(db, organizationId, userId));
}

/** A rightsholder scope (ctx.org.rightsholderScope for the caller) as the data-access role it comes from. */
export function dataAccessRoleOf(scope: RightsholderScope): DataAccessRole {
  return scope === null ? { mode: 'all' } : { mode: 'restricted', rightsholderIds: scope };
}

export async function setDataAccessRole(
  db: Queryable,
  organizationId: string,
  userId: string,
  role: DataAccessRole,
): Promise<void> {
  await db.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization_id, user_id) DO UPDATE
       SET mode = EXCLUDED.mode, rightsholder_ids = EXCLUDED.rightsholder_ids, updated_at = now()`,
    [organizationId, userId, role.mode, role.mode === 'restricted' ? role.rightsholderIds : []],
  );
}

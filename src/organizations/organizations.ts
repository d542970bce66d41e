// Organizations (tenants): one small function per SQL operation.
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { retireExportsOfOrganization } from '../exports/expire.ts';
import { likeEscape, sortDirection } from '../db/sql.ts';

export type OrganizationRecord = {
  id: string;
  name: string;
  mdFetchMultiplier: number;
  mdFetchFocus: boolean;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
};

const COLUMNS = `o.id, o.name, o.md_fetch_multiplier AS "mdFetchMultiplier", o.md_fetch_focus AS "mdFetchFocus",
  o.created_at AS "createdAt", o.updated_at AS "updatedAt", o.deleted_at AS "deletedAt"`;

/**
 * The live organization, locked against concurrent changes of its membership for the rest of
 * the transaction: every member, invitation and settings change goes through this lock, so
 * guards such as "the last owner stays" cannot be raced. NO KEY UPDATE leaves inserts that
 * merely reference the organization (activity, other tables) unblocked.
 */
export async function lockOrganization(db: Queryable, id: string): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRecord>(
    `SELECT ${COLUMNS} FROM organizations o WHERE o.id = $1 AND o.deleted_at IS NULL FOR NO KEY UPDATE`,
    [id],
  );
  // deleted between the role check and this transaction
  if (!rows[0]) throw new AppError('ORGANIZATION_NOT_FOUND');
  return rows[0];
}

/** Whether the organization exists and is not deleted. */
export async function organizationIsLive(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL',
    [id],
  );
  return rowCount !== null && rowCount > 0;
}
export async function getOrganization(db: Queryable, id: string): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRecord>(
    `SELECT ${COLUMNS} FROM organizations o WHERE o.id = $1 AND o.deleted_at IS NULL`,
    [id],
  );
  if (!rows[0]) throw new AppError('ORGANIZATION_NOT_FOUND');
  return rows[0];
}

/** A new organization with `ownerUserId` as its owner. */
export async function createOrganization(
  db: Queryable,
  name: string,
  ownerUserId: string,
): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRecord>(
    `WITH o AS (INSERT INTO organizations (name) VALUES ($1) RETURNING *) SELECT ${COLUMNS} FROM o`,
    [name],
  );
  const organization = rows[0]!;
  await db.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'owner')`,
    [organization.id, ownerUserId],
  );
  return organization;
}

export interface OrganizationChanges {
  name?: string | undefined;
  mdFetchMultiplier?: number | undefined;
  mdFetchFocus?: boolean | undefined;
}

export async function updateOrganization(
  db: Queryable,
  id: string,
  changes: OrganizationChanges,
): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRecord>(
    `WITH o AS (
       UPDATE organizations SET
         name = COALESCE($2, name),
         md_fetch_multiplier = COALESCE($3, md_fetch_multiplier),
         md_fetch_focus = COALESCE($4, md_fetch_focus),
         updated_at = now()
       WHERE id = $1 RETURNING *)
     SELECT ${COLUMNS} FROM o`,
    [id, changes.name ?? null, changes.mdFetchMultiplier ?? null, changes.mdFetchFocus ?? null],
  );
  return rows[0]!;
}

/** Call it in a transaction: the organization's completed exports expire with it (their files go at once). */
export async function softDeleteOrganization(
  db: Queryable,
  id: string,
): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRecord>(
    `WITH o AS (UPDATE organizations SET deleted_at = now(), updated_at = now() WHERE id = $1 RETURNING *) SELECT ${COLUMNS} FROM o`,
    [id],
  );
  await retireExportsOfOrganization(db, id);
  return rows[0]!;
}

export const organizationSorts = ['name', 'createdAt', 'updatedAt'] as const;
export type OrganizationSort = (typeof organizationSorts)[number];

const SORT_SQL: Record<OrganizationSort, string> = {
  name: 'lower(o.name)',
  createdAt: 'o.created_at',
  updatedAt: 'o.updated_at',
};

export type OrganizationListItem = OrganizationRecord & { memberCount: number };

export async function listOrganizations(
  db: Queryable,
  args: {
    includeDeleted: boolean;
    search: string | undefined;
    sortBy: OrganizationSort;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<{ rows: OrganizationListItem[]; total: number }> {
  const where = `($1::boolean OR o.deleted_at IS NULL) AND ($2::text IS NULL OR o.name ILIKE '%' || $2 || '%' ESCAPE '\\')`;
  const params = [args.includeDeleted, args.search === undefined ? null : likeEscape(args.search)];
  const direction = sortDirection(args.sortOrder);
  const [{ rows }, count] = await Promise.all([
    db.query<OrganizationListItem>(
      `SELECT ${COLUMNS}, (SELECT count(*) FROM memberships m WHERE m.organization_id = o.id) AS "memberCount"
       FROM organizations o WHERE ${where}
       ORDER BY ${SORT_SQL[args.sortBy]} ${direction}, o.id ${direction}
       LIMIT $3 OFFSET $4`,
      [...params, args.limit, args.offset],
    ),
    db.query<{ total: number }>(
      `SELECT count(*) AS total FROM organizations o WHERE ${where}`,
      params,
    ),
  ]);
  return { rows, total: count.rows[0]!.total };
}

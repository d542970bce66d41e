// Users in PostgreSQL, as the procedures about a user (user.currentUser, apiKey.*) read them: one
// function per query.
import type { OrgRole } from '../access/roles.ts';
import type { Queryable } from '../db/pool.ts';

export interface UserOrganization {
  id: string;
  name: string;
  role: string;
}

/**
 * The organizations the user is an active member of, not deleted, by name; `within` (an API key's
 * organizations) narrows them, null does not.
 */
export async function activeOrganizationsOfUser(
  db: Queryable,
  userId: string,
  within: readonly string[] | null,
): Promise<UserOrganization[]> {
  const { rows } = await db.query<UserOrganization>(
    `SELECT o.id, o.name, m.role
     FROM memberships m JOIN organizations o ON o.id = m.organization_id
     WHERE m.user_id = $1 AND m.status = 'active' AND o.deleted_at IS NULL
       AND ($2::uuid[] IS NULL OR o.id = ANY ($2))
     ORDER BY o.name, o.id`,
    [userId, within],
  );
  return rows;
}

export interface UserRoles {
  /** the membership's role in the organization; null when not a member */
  role: OrgRole | null;
  platformRole: string | null;
}

/** The user's role in the organization and platform role; undefined when the user does not exist. */
export async function userRolesIn(
  db: Queryable,
  userId: string,
  organizationId: string,
): Promise<UserRoles | undefined> {
  const { rows } = await db.query<UserRoles>(
    `SELECT m.role, u.platform_role AS "platformRole" FROM users u LEFT JOIN memberships m ON m.user_id = u.id AND m.organization_id = $2 WHERE u.id = $1`,
    [userId, organizationId],
  );
  return rows[0];
}

/** The user's e-mail address; null when the user does not exist. */
export async function userEmail(db: Queryable, userId: string): Promise<string | null> {
  const { rows } = await db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [
    userId,
  ]);
  return rows[0]?.email ?? null;
}

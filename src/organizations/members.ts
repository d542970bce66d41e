// Members of an organization and the guard rails on changing them: nobody grants a role above
// their own or changes a member who outranks them, platform roles (c2_*) come only from platform
// operators, and an organization always keeps an active owner who sees every rightsholder.
import { rightsholderScope } from '../access/dataAccess.ts';
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { organizationAccess, type OrgAccess } from '../access/organization.ts';
import { roleRank, roleSatisfies, type OrgRole } from '../access/roles.ts';
import { lockOrganization, type OrganizationRecord } from './organizations.ts';
import { sortDirection } from '../db/sql.ts';

export type MemberStatus = 'active' | 'disabled';

export type MemberRecord = {
  userId: string;
  email: string;
  displayName: string | null;
  role: OrgRole;
  status: MemberStatus;
  joinedAt: Date;
  updatedAt: Date;
};

const COLUMNS = `u.id AS "userId", u.email, u.display_name AS "displayName", m.role, m.status,
  m.created_at AS "joinedAt", m.updated_at AS "updatedAt"`;

/** The member, or USER_NOT_FOUND: a user of another organization is as unknown as no user. */
export async function getMember(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<MemberRecord> {
  const { rows } = await db.query<MemberRecord>(
    `SELECT ${COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND m.user_id = $2`,
    [organizationId, userId],
  );
  if (!rows[0]) throw new AppError('USER_NOT_FOUND');
  return rows[0];
}

export async function isMemberByEmail(
  db: Queryable,
  organizationId: string,
  email: string,
): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND lower(u.email) = lower($2)',
    [organizationId, email],
  );
  return rows.length > 0;
}

export const memberSorts = ['email', 'name', 'role', 'status', 'joinedAt'] as const;
export type MemberSort = (typeof memberSorts)[number];

const ROLE_ORDER = `CASE m.role WHEN 'member' THEN 1 WHEN 'reader' THEN 1 WHEN 'writer' THEN 2 WHEN 'admin' THEN 3
  WHEN 'c2_customer_support' THEN 3 WHEN 'owner' THEN 4 ELSE 5 END`;

const SORT_SQL: Record<MemberSort, string> = {
  email: 'lower(u.email)',
  name: 'lower(COALESCE(u.display_name, u.email))',
  role: ROLE_ORDER,
  status: 'm.status',
  joinedAt: 'm.created_at',
};

export async function listMembers(
  db: Queryable,
  organizationId: string,
  args: { sortBy: MemberSort; sortOrder: 'asc' | 'desc'; limit: number; offset: number },
): Promise<{ rows: MemberRecord[]; total: number }> {
  const direction = sortDirection(args.sortOrder);
  const [{ rows }, count] = await Promise.all([
    db.query<MemberRecord>(
      `SELECT ${COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1
       ORDER BY ${SORT_SQL[args.sortBy]} ${direction}, u.id ${direction}
       LIMIT $2 OFFSET $3`,
      [organizationId, args.limit, args.offset],
    ),
    db.query<{ total: number }>(
      'SELECT count(*) AS total FROM memberships WHERE organization_id = $1',
      [organizationId],
    ),
  ]);
  return { rows, total: count.rows[0]!.total };
}

export async function updateMember(
  db: Queryable,
  organizationId: string,
  userId: string,
  changes: { role?: OrgRole; status?: MemberStatus },
): Promise<MemberRecord> {
  await db.query(
    `UPDATE memberships SET role = COALESCE($3, role), status = COALESCE($4, status), updated_at = now()
     WHERE organization_id = $1 AND user_id = $2`,
    [organizationId, userId, changes.role ?? null, changes.status ?? null],
  );
  return getMember(db, organizationId, userId);
}

/** Removes the membership and what only made sense with it: preferences and data-access role. */
export async function removeMember(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<void> {
  await db.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
    organizationId,
    userId,
  ]);
  await db.query('DELETE FROM user_preferences WHERE organization_id = $1 AND user_id = $2', [
    organizationId,
    userId,
  ]);
  await db.query('DELETE FROM data_access_roles WHERE organization_id = $1 AND user_id = $2', [
    organizationId,
    userId,
  ]);
}

/**
 * Locks the organization (lockOrganization) and reads the caller's standing in it again, under the
 * lock: the role and data-access scope the request was authorized with were read before the lock
 * was taken, and a membership change that committed while this one waited for it (another owner
 * demoting the caller, an admin removing, disabling or restricting them) would otherwise be
 * ignored, so two owners demoting each other at once could both win. FORBIDDEN
 * (INSUFFICIENT_ROLE, NOT_ORGANIZATION_MEMBER, MEMBER_DISABLED) when the caller no longer holds
 * `minRole`. Every guard after it must use the returned `access`, not the request's.
 */
export async function lockAsCaller(
  db: Queryable,
  principal: Principal,
  org: OrgAccess,
  minRole: OrgRole,
): Promise<{ organization: OrganizationRecord; access: OrgAccess }> {
  const organization = await lockOrganization(db, org.id);
  // the standing prefetched with the API key was read before the lock: never reuse it here
  if (principal.prefetchedOrg) principal.prefetchedOrg.used = true;
  const access = await organizationAccess(db, principal, org.id);
  if (!roleSatisfies(access.role, minRole))
    throw new AppError('INSUFFICIENT_ROLE', `This procedure needs the ${minRole} role or higher`);
  return { organization, access };
}

/** ROLE_NOT_GRANTABLE unless the caller may hand out `role`. */
export function assertMayGrant(principal: Principal, org: OrgAccess, role: OrgRole): void {
  if (role.startsWith('c2_') && principal.platformRole === null) {
    throw new AppError('ROLE_NOT_GRANTABLE', `Only a platform operator may grant ${role}`);
  }
  if (roleRank(role) > roleRank(org.role))
    throw new AppError('ROLE_NOT_GRANTABLE', `The role ${role} is above your own (${org.role})`);
}

/**
 * ROLE_NOT_GRANTABLE for a caller restricted by a data-access role: an invitation link makes a
 * member who sees every rightsholder, more than the caller may (their own second address would
 * undo the restriction). Checked wherever a link is handed out.
 */
export function assertMayInvite(org: OrgAccess): void {
  if (org.rightsholderScope !== null) {
    throw new AppError(
      'ROLE_NOT_GRANTABLE',
      'Your data-access role is restricted, and a new member sees every rightsholder: an unrestricted admin must invite',
    );
  }
}

/** MEMBER_OUTRANKS_CALLER when the member's role is above the caller's. */
export function assertMayManage(org: OrgAccess, member: MemberRecord): void {
  if (roleRank(member.role) > roleRank(org.role)) {
    throw new AppError(
      'MEMBER_OUTRANKS_CALLER',
      `The member's role (${member.role}) is above your own (${org.role})`,
    );
  }
}

/**
 * LAST_OWNER when the change would leave the organization without an active owner, or without an
 * active owner whose data-access role is unrestricted: a restricted caller grants no more than
 * they see, so once every owner is restricted nobody could grant 'all' again and the
 * organization's other rightsholders would be out of everyone's reach. `after.restricted` is the
 * member's data-access restriction after the change (unchanged when left out). Call it with the
 * organization locked (lockOrganization), so two owners cannot demote or restrict each other at
 * once.
 */
export async function assertOwnerRemains(
  db: Queryable,
  organizationId: string,
  member: MemberRecord,
  after: { role: OrgRole; status: MemberStatus; restricted?: boolean } | null,
): Promise<void> {
  const wasActiveOwner = member.role === 'owner' && member.status === 'active';
  const staysActiveOwner = after !== null && after.role === 'owner' && after.status === 'active';
  if (!wasActiveOwner) return;
  const wasRestricted = (await rightsholderScope(db, organizationId, member.userId)) !== null;
  const staysUnrestricted = staysActiveOwner && !(after.restricted ?? wasRestricted);
  if (staysActiveOwner && (wasRestricted || staysUnrestricted)) return;
  const { rows } = await db.query<{ others: number; unrestricted: number }>(
    `SELECT count(*) AS others, count(*) FILTER (WHERE d.mode IS DISTINCT FROM 'restricted') AS unrestricted
     FROM memberships m LEFT JOIN data_access_roles d ON d.organization_id = m.organization_id AND d.user_id = m.user_id
     WHERE m.organization_id = $1 AND m.role = 'owner' AND m.status = 'active' AND m.user_id <> $2`,
    [organizationId, member.userId],
  );
  if (!staysActiveOwner && rows[0]!.others === 0) {
    throw new AppError(
      'LAST_OWNER',
      'The last active owner of the organization cannot be removed, demoted or disabled',
    );
  }
  if (!wasRestricted && rows[0]!.unrestricted === 0) {
    throw new AppError(
      'LAST_OWNER',
      "The last active owner who sees every rightsholder cannot be restricted, removed, demoted or disabled: nobody else could grant 'all' again",
    );
  }
}

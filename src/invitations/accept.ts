// Accepting an invitation: the authenticated user whose e-mail address the invitation names
// joins the organization with the invited role; the token is then spent.
import { recordActivity } from '../activity/record.ts';
import type { Principal } from '../auth/principal.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { lockOrganization } from '../organizations/organizations.ts';
import type { Queryable } from '../db/pool.ts';
import {
  higherRole,
  platformRoleInOrg,
  roleRank,
  type OrgRole,
  type PlatformRole,
} from '../access/roles.ts';
import {
  assertStatus,
  findInvitationByToken,
  markAccepted,
  type InvitationRecord,
} from './invitations.ts';

export interface AcceptResult {
  invitationId: string;
  organizationId: string;
  organizationName: string;
  userId: string;
  role: OrgRole;
}

export async function acceptInvitation(
  pool: Pool,
  principal: Principal,
  token: string,
): Promise<AcceptResult> {
  return withTransaction(pool, async (db) => {
    const notFound = () =>
      new AppError(
        'INVITATION_NOT_FOUND',
        'No invitation has that token (a newer link may have replaced it)',
      );
    const found = await findInvitationByToken(db, token);
    if (!found) throw notFound();
    // the organization first, then the invitation: the same lock order as every other invitation change
    const organization = await lockOrganization(db, found.organizationId);
    // read again under the lock: a new link issued while this waited for it spent this token
    const invitation = await findInvitationByToken(db, token, { lock: true });
    if (!invitation) throw notFound();
    if (invitation.email.toLowerCase() !== principal.email.toLowerCase())
      throw new AppError('INVITATION_EMAIL_MISMATCH');
    assertStatus(invitation, ['pending']);
    await assertInviterMayGrant(db, invitation);
    const { rowCount } = await db.query(
      `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (organization_id, user_id) DO NOTHING`,
      [organization.id, principal.userId, invitation.role],
    );
    if (rowCount === 0) throw new AppError('USER_ALREADY_MEMBER');
    await markAccepted(db, invitation.id, principal.userId);
    await recordActivity(db, principal, {
      organizationId: organization.id,
      action: 'invitation.accept',
      subjectType: 'user',
      subjectId: principal.userId,
      subjectLabel: principal.email,
      changes: {
        role: { before: null, after: invitation.role },
        invitationId: { before: null, after: invitation.id },
      },
    });
    return {
      invitationId: invitation.id,
      organizationId: organization.id,
      organizationName: organization.name,
      userId: principal.userId,
      role: invitation.role,
    };
  });
}

/**
 * An invitation grants its role when it is accepted, so the one who issued it (invited_by_user_id:
 * addUser's or resendInvitation's caller) must still be able to grant it then, under the lock of
 * the organization: an active member (or a platform operator) whose role is not below it, not
 * restricted by a data-access role (a new member sees every rightsholder), and a platform operator
 * for the c2_* roles, the same rules addUser applied. Otherwise an admin demoted, removed, disabled
 * or restricted after inviting (their own second address, say) would come back through the
 * invitations they left behind. ROLE_NOT_GRANTABLE leaves the invitation pending: an admin who may
 * grant the role can resend it.
 */
async function assertInviterMayGrant(db: Queryable, invitation: InvitationRecord): Promise<void> {
  const { rows } = await db.query<{
    role: OrgRole | null;
    status: string | null;
    platform_role: PlatformRole | null;
    restricted: boolean;
  }>(
    `SELECT m.role, m.status, u.platform_role, COALESCE(d.mode = 'restricted', false) AS restricted
     FROM users u
     LEFT JOIN memberships m ON m.organization_id = $2 AND m.user_id = u.id
     LEFT JOIN data_access_roles d ON d.organization_id = $2 AND d.user_id = u.id
     WHERE u.id = $1`,
    [invitation.invitedByUserId, invitation.organizationId],
  );
  const inviter = rows[0];
  const platformRole = platformRoleInOrg(inviter?.platform_role ?? null);
  const role = inviter
    ? higherRole(inviter.status === 'active' ? inviter.role : null, platformRole)
    : null;
  const mayGrant =
    role !== null &&
    roleRank(invitation.role) <= roleRank(role) &&
    (!invitation.role.startsWith('c2_') || platformRole !== null) &&
    (platformRole !== null || !inviter!.restricted);
  if (!mayGrant) {
    throw new AppError(
      'ROLE_NOT_GRANTABLE',
      `The one who sent this invitation can no longer grant the role ${invitation.role} in the organization: ask one of its admins to resend it`,
    );
  }
}

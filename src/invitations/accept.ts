// Accepting an invitation: the authenticated user whose e-mail address the invitation names
// joins the organization with the invited role; the token is then spent.
import { recordActivity } from '../activity/record.ts';
import type { Principal } from '../auth/principal.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { lockOrganization } from '../organizations/organizations.ts';
import type { OrgRole } from '../trpc/roles.ts';
import { assertStatus, findInvitationByToken, markAccepted } from './invitations.ts';

export interface AcceptResult {
  invitationId: string;
  organizationId: string;
  organizationName: string;
  userId: string;
  role: OrgRole;
}

export async function acceptInvitation(pool: Pool, principal: Principal, token: string): Promise<AcceptResult> {
  return withTransaction(pool, async (db) => {
    const found = await findInvitationByToken(db, token);
    if (!found) throw new AppError('INVITATION_NOT_FOUND', 'No invitation has that token (a newer link may have replaced it)');
    // the organization first, then the invitation: the same lock order as every other invitation change
    const organization = await lockOrganization(db, found.organizationId);
    const invitation = (await findInvitationByToken(db, token, { lock: true }))!;
    if (invitation.email.toLowerCase() !== principal.email.toLowerCase()) throw new AppError('INVITATION_EMAIL_MISMATCH');
    assertStatus(invitation, ['pending']);
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
      changes: { role: { before: null, after: invitation.role }, invitationId: { before: null, after: invitation.id } },
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

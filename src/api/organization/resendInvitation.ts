import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import {
  assertStatus,
  createInvitation,
  findPendingInvitation,
  getInvitation,
  invitationLink,
  revokeInvitation,
} from '../../invitations/invitations.ts';
import {
  assertMayGrant,
  assertMayInvite,
  isMemberByEmail,
  lockAsCaller,
} from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const resendInvitation = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      'Resend a pending (or expired) invitation: the old one is revoked and a new one, with a fresh link and expiry, is returned.',
  },
  orgInput({ invitationId: z.uuid() }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization, access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const old = await getInvitation(db, ctx.org.id, input.invitationId, { lock: true });
    assertStatus(old, ['pending', 'expired']);
    // a new link hands out the role again
    assertMayGrant(ctx.principal, access, old.role);
    assertMayInvite(access);
    if (await isMemberByEmail(db, ctx.org.id, old.email)) throw new AppError('USER_ALREADY_MEMBER');
    // one live invitation per address: an expired one is not renewed beside a newer pending one
    const pending = await findPendingInvitation(db, ctx.org.id, old.email);
    if (pending && pending.id !== old.id) {
      throw new AppError('INVITATION_ALREADY_PENDING', undefined, {
        details: { invitationId: pending.id },
      });
    }
    const revoked = await revokeInvitation(db, old.id);
    const { invitation, token } = await createInvitation(db, {
      organizationId: ctx.org.id,
      email: old.email,
      role: old.role,
      invitedByUserId: ctx.principal.userId,
      ttlHours: ctx.deps.config.invitationTtlHours,
      replacesInvitationId: old.id,
    });
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'organization.resendInvitation',
      subjectType: 'organization',
      subjectId: ctx.org.id,
      subjectLabel: organization.name,
      changes: {
        invitation: {
          before: { id: old.id, email: old.email, role: old.role, status: old.status },
          after: {
            id: invitation.id,
            email: invitation.email,
            role: invitation.role,
            status: invitation.status,
            replaced: revoked.id,
          },
        },
      },
    });
    return {
      ...invitation,
      link: invitationLink(ctx.deps.config, token),
      revokedInvitationId: revoked.id,
    };
  }),
);

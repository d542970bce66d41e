import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  assertStatus,
  getInvitation,
  invitationLink,
  rotateInvitationToken,
} from '../../invitations/invitations.ts';
import { assertMayGrant, assertMayInvite, lockAsCaller } from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getInvitationLink = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      "A pending invitation's accept link. Only the token's hash is stored, so each call issues a new token and earlier links stop working.",
  },
  orgInput({ invitationId: z.uuid() }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization, access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const invitation = await getInvitation(db, ctx.org.id, input.invitationId, { lock: true });
    assertStatus(invitation, ['pending']);
    // the link hands out the invitation's role
    assertMayGrant(ctx.principal, access, invitation.role);
    assertMayInvite(access);
    const token = await rotateInvitationToken(db, invitation.id, ctx.principal.userId);
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'organization.getInvitationLink',
      subjectType: 'organization',
      subjectId: ctx.org.id,
      subjectLabel: organization.name,
    });
    return {
      invitationId: invitation.id,
      email: invitation.email,
      expiresAt: invitation.expiresAt,
      link: invitationLink(ctx.deps.config, token),
    };
  }),
);

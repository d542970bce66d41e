import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import {
  createInvitation,
  findPendingInvitation,
  invitationLink,
} from '../../invitations/invitations.ts';
import {
  assertMayGrant,
  assertMayInvite,
  isMemberByEmail,
  lockAsCaller,
} from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgRoles } from '../../access/roles.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const addUser = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      'Invite a person by e-mail address with a role (default member); returns the invitation and its single-use accept link.',
  },
  orgInput({ email: z.email().max(320), role: z.enum(orgRoles).default('member') }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization, access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    assertMayGrant(ctx.principal, access, input.role);
    assertMayInvite(access);
    if (await isMemberByEmail(db, ctx.org.id, input.email))
      throw new AppError('USER_ALREADY_MEMBER');
    const pending = await findPendingInvitation(db, ctx.org.id, input.email);
    if (pending) {
      throw new AppError('INVITATION_ALREADY_PENDING', undefined, {
        details: { invitationId: pending.id },
      });
    }
    const { invitation, token } = await createInvitation(db, {
      organizationId: ctx.org.id,
      email: input.email,
      role: input.role,
      invitedByUserId: ctx.principal.userId,
      ttlHours: ctx.deps.config.invitationTtlHours,
    });
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'organization.addUser',
      subjectType: 'organization',
      subjectId: ctx.org.id,
      subjectLabel: organization.name,
      changes: {
        invitation: {
          before: null,
          after: { id: invitation.id, email: invitation.email, role: invitation.role },
        },
      },
    });
    return { ...invitation, link: invitationLink(ctx.deps.config, token) };
  }),
);

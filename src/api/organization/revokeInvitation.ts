import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { assertStatus, getInvitation, revokeInvitation as revoke } from '../../invitations/invitations.ts';
import { lockAsCaller } from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const revokeInvitation = orgProcedure(
  { minRole: 'admin', scope: '', summary: 'Revoke a pending invitation; its link stops working.' },
  orgInput({ invitationId: z.uuid() }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const before = await getInvitation(db, ctx.org.id, input.invitationId, { lock: true });
    assertStatus(before, ['pending']);
    const after = await revoke(db, before.id);
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'organization.revokeInvitation',
      subjectType: 'organization',
      subjectId: ctx.org.id,
      subjectLabel: organization.name,
      changes: {
        invitation: {
          before: { id: before.id, email: before.email, role: before.role, status: before.status },
          after: { id: after.id, email: after.email, role: after.role, status: after.status },
        },
      },
    });
    return after;
  }),
);

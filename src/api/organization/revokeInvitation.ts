import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  assertStatus,
  getInvitation,
  revokeInvitation as revoke,
} from '../../invitations/invitations.ts';
import { assertMayGrant, lockAsCaller } from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const revokeInvitation = orgProcedure(
  { minRole: 'admin', scope: '', summary: 'Revoke a pending invitation; its link stops working.' },
  orgInput({ invitationId: z.uuid() }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization, access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const before = await getInvitation(db, ctx.org.id, input.invitationId, { lock: true });
    assertStatus(before, ['pending']);
    // nobody undoes what they could not have done: an invitation to a role above the caller's own
    // (or a c2_* role, for one who is not a platform operator) is revoked by those who may grant it
    assertMayGrant(ctx.principal, access, before.role);
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

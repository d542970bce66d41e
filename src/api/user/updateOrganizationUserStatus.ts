import { z } from 'zod';
import { diffFields, recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  assertMayManage,
  assertOwnerRemains,
  getMember,
  lockAsCaller,
  updateMember,
} from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const updateOrganizationUserStatus = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      "Enable or disable a member's account in the organization; a disabled member (and their API keys) is refused at once.",
  },
  orgInput({ userId: z.uuid(), status: z.enum(['active', 'disabled']) }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const before = await getMember(db, ctx.org.id, input.userId);
    assertMayManage(access, before);
    await assertOwnerRemains(db, ctx.org.id, before, { role: before.role, status: input.status });
    const after = await updateMember(db, ctx.org.id, input.userId, { status: input.status });
    const changes = diffFields(before, after, ['status']);
    if (changes) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'user.updateOrganizationUserStatus',
        subjectType: 'user',
        subjectId: after.userId,
        subjectLabel: after.email,
        changes,
      });
    }
    return after;
  }),
);

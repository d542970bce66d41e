import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  assertMayManage,
  assertOwnerRemains,
  getMember,
  lockAsCaller,
  removeMember,
} from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const removeUser = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      'Remove a member (with their preferences and data-access role in the organization); the last owner stays.',
  },
  orgInput({ userId: z.uuid() }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const member = await getMember(db, ctx.org.id, input.userId);
    assertMayManage(access, member);
    await assertOwnerRemains(db, ctx.org.id, member, null);
    await removeMember(db, ctx.org.id, input.userId);
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'organization.removeUser',
      subjectType: 'user',
      subjectId: member.userId,
      subjectLabel: member.email,
      changes: {
        role: { before: member.role, after: null },
        status: { before: member.status, after: null },
      },
    });
    return { userId: member.userId, removed: true };
  }),
);

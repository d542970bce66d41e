import { z } from 'zod';
import { diffFields, recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  assertMayGrant,
  assertMayManage,
  assertOwnerRemains,
  getMember,
  lockAsCaller,
  updateMember,
} from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgRoles } from '../../access/roles.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const updateRole = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      "Change a member's role: never above the caller's own, c2_* roles only by platform operators, and the last owner stays.",
  },
  orgInput({ userId: z.uuid(), role: z.enum(orgRoles) }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const before = await getMember(db, ctx.org.id, input.userId);
    assertMayManage(access, before);
    assertMayGrant(ctx.principal, access, input.role);
    await assertOwnerRemains(db, ctx.org.id, before, { role: input.role, status: before.status });
    const after = await updateMember(db, ctx.org.id, input.userId, { role: input.role });
    const changes = diffFields(before, after, ['role']);
    if (changes) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'organization.updateRole',
        subjectType: 'user',
        subjectId: after.userId,
        subjectLabel: after.email,
        changes,
      });
    }
    return after;
  }),
);

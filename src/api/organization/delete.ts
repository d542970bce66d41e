import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { lockAsCaller } from '../../organizations/members.ts';
import { softDeleteOrganization } from '../../organizations/organizations.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const deleteOrganization = orgProcedure(
  {
    minRole: 'owner',
    scope: '',
    summary: 'Soft-delete the organization: from then on every procedure for it answers NOT_FOUND.',
  },
  orgInput({}),
).mutation(async ({ ctx }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    await lockAsCaller(db, ctx.principal, ctx.org, 'owner');
    const organization = await softDeleteOrganization(db, ctx.org.id);
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'organization.delete',
      subjectType: 'organization',
      subjectId: ctx.org.id,
      subjectLabel: organization.name,
      changes: { deletedAt: { before: null, after: organization.deletedAt } },
    });
    return { id: organization.id, deleted: true, deletedAt: organization.deletedAt };
  }),
);

import { diffFields, recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { lockAsCaller } from '../../organizations/members.ts';
import { updateOrganization } from '../../organizations/organizations.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { name, orgInput } from '../../trpc/schemas.ts';

export const update = orgProcedure(
  { minRole: 'admin', scope: '', summary: 'Rename the organization.' },
  orgInput({ name: name(200) }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization: before } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const after = await updateOrganization(db, ctx.org.id, { name: input.name });
    const changes = diffFields(before, after, ['name']);
    if (changes) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'organization.update',
        subjectType: 'organization',
        subjectId: ctx.org.id,
        subjectLabel: after.name,
        changes,
      });
    }
    return after;
  }),
);

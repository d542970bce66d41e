import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { createOrganization } from '../../organizations/organizations.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { name } from '../../trpc/schemas.ts';

export const create = globalProcedure(
  {
    minRole: 'any',
    scope: '',
    summary:
      "Create an organization; the caller becomes its owner (an API key's scope is not widened to it).",
  },
  z.object({ name: name(200) }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const organization = await createOrganization(db, input.name, ctx.principal.userId);
    await recordActivity(db, ctx.principal, {
      organizationId: organization.id,
      action: 'organization.create',
      subjectType: 'organization',
      subjectId: organization.id,
      subjectLabel: organization.name,
    });
    return { ...organization, role: 'owner' as const };
  }),
);

import { getDataAccessRole, getRightsholderSort } from '../../organizations/preferences.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const preferences = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "The caller's preferences in the organization: rightsholderSort and their data-access role.",
  },
  orgInput({}),
).query(async ({ ctx }) => {
  const [rightsholderSort, dataAccessRole] = await Promise.all([
    getRightsholderSort(ctx.deps.pool, ctx.org.id, ctx.principal.userId),
    getDataAccessRole(ctx.deps.pool, ctx.org.id, ctx.principal.userId),
  ]);
  return {
    organizationId: ctx.org.id,
    userId: ctx.principal.userId,
    rightsholderSort,
    dataAccessRole,
  };
});

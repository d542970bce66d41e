import { dataAccessRoleOf, getRightsholderSort } from '../../organizations/preferences.ts';
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
).query(async ({ ctx }) => ({
  organizationId: ctx.org.id,
  userId: ctx.principal.userId,
  rightsholderSort: await getRightsholderSort(ctx.deps.pool, ctx.org.id, ctx.principal.userId),
  // read with the caller's role by the procedure chain
  dataAccessRole: dataAccessRoleOf(ctx.org.rightsholderScope),
}));

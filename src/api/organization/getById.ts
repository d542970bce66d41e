import { getOrganization } from '../../organizations/organizations.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getById = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary: "The organization: name, settings and the caller's role in it.",
  },
  orgInput({}),
).query(async ({ ctx }) => {
  const organization = await getOrganization(ctx.deps.pool, ctx.org.id);
  return { ...organization, role: ctx.org.role };
});

import { noInput } from '../../trpc/schemas.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { activeOrganizationsOfUser } from '../../organizations/userStore.ts';

export const currentUser = globalProcedure(
  {
    minRole: 'any',
    scope: 'cli',
    summary: 'The calling user: id, email and the organizations they belong to, with their role.',
  },
  noInput,
).query(async ({ ctx }) => {
  const { principal } = ctx;
  // An API key sees only the organizations of its scope.
  const scope = principal.apiKey?.organizationIds ?? null;
  const organizations = await activeOrganizationsOfUser(ctx.deps.pool, principal.userId, scope);
  return { id: principal.userId, email: principal.email, organizations };
});

import { noInput } from '../../trpc/schemas.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const currentUser = globalProcedure(
  { minRole: 'any', scope: 'cli', summary: 'The calling user: id, email and the organizations they belong to, with their role.' },
  noInput,
).query(async ({ ctx }) => {
  const { principal } = ctx;
  // An API key sees only the organizations of its scope.
  const scope = principal.apiKey?.organizationIds ?? null;
  const { rows } = await ctx.deps.pool.query<{ id: string; name: string; role: string }>(
    `SELECT o.id, o.name, m.role
     FROM memberships m JOIN organizations o ON o.id = m.organization_id
     WHERE m.user_id = $1 AND m.status = 'active' AND o.deleted_at IS NULL
       AND ($2::uuid[] IS NULL OR o.id = ANY ($2))
     ORDER BY o.name, o.id`,
    [principal.userId, scope],
  );
  return { id: principal.userId, email: principal.email, organizations: rows };
});

import { listMembers, memberSorts } from '../../organizations/members.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const listUsers = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary: 'Members of the organization with their role and status (sortBy email, name, role, status or joinedAt).',
  },
  orgInput({ pagination: paginationSchema(memberSorts) }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'email' });
  const { rows, total } = await listMembers(ctx.deps.pool, ctx.org.id, {
    sortBy: memberSorts.find((s) => s === page.sortBy) ?? 'email',
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

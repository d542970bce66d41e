import { listMembers, memberSorts } from '../../organizations/members.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const listUsers = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Members of the organization with their role and status (sortBy name, the default: display name else e-mail; email, role, status or joinedAt).',
  },
  orgInput({ pagination: paginationSchema(memberSorts) }),
).query(async ({ ctx, input }) => {
  // the specification's default sortBy for lists: name
  const page = resolvePage(input.pagination, { sortBy: 'name' });
  const { rows, total } = await listMembers(ctx.deps.pool, ctx.org.id, {
    sortBy: memberSorts.find((s) => s === page.sortBy) ?? 'name',
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

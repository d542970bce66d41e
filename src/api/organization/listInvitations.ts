import { z } from 'zod';
import { invitationStatuses, listInvitations as list } from '../../invitations/invitations.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const listInvitations = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Invitations of the organization in the given statuses (default [pending]), ordered by createdAt (pagination.sortOrder).',
  },
  orgInput({
    status: z
      .array(z.enum(invitationStatuses))
      .min(1)
      .max(invitationStatuses.length)
      .default(['pending']),
    pagination: paginationSchema(['createdAt']),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'createdAt' });
  const { rows, total } = await list(ctx.deps.pool, ctx.org.id, {
    statuses: [...new Set(input.status)],
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

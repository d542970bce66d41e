import { z } from 'zod';
import { listKnownPayors } from '../../lookups/payors.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const listGlobal = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "Known payors for autocomplete: the shipped list, the payors of the organization's own statements, and those named in statements of at least three organizations (never which organization). search matches anywhere, names starting with it first; by name (sortOrder desc for Z to A); the shared page sizes (300 without pagination, 200 with only page).",
  },
  orgInput({
    search: z.string().trim().max(200).optional(),
    pagination: paginationSchema(['name']),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination);
  const { rows, total } = await listKnownPayors(ctx.deps.pool, input.organizationId, {
    search: input.search || undefined,
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

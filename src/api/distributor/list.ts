import { z } from 'zod';
import { plainText } from '../../activity/inputs.ts';
import {
  distributorSorts,
  distributorSortOf,
  listDistributors,
} from '../../ingest/distributors.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const list = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "Distributors the organization sees (its own and the shared library's; source: all, organization or library), each with its mappings; search by name; sortBy name (default), createdAt, updatedAt.",
  },
  orgInput({
    pagination: paginationSchema(distributorSorts),
    source: z.enum(['all', 'organization', 'library']).default('all'),
    search: plainText(200).trim().optional(),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'name' });
  const { rows, total } = await listDistributors(ctx.deps.pool, ctx.org.id, {
    source: input.source === 'all' ? undefined : input.source,
    search: input.search || undefined,
    sortBy: distributorSortOf(page.sortBy),
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

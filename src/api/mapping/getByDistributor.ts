import { z } from 'zod';
import { getDistributor } from '../../ingest/distributors.ts';
import { listMappings, mappingSorts, mappingSortOf } from '../../ingest/mappings.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getByDistributor = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "Mappings of one distributor that the organization sees (its own and the shared library's); sortBy name (default), createdAt, updatedAt, revision.",
  },
  orgInput({ distributorId: z.uuid(), pagination: paginationSchema(mappingSorts) }),
).query(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const page = resolvePage(input.pagination, { sortBy: 'name' });
  await getDistributor(db, ctx.org.id, input.distributorId);
  const { rows, total } = await listMappings(db, ctx.org.id, {
    distributorId: input.distributorId,
    sortBy: mappingSortOf(page.sortBy),
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

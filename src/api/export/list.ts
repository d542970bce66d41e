import { z } from 'zod';
import { exportStatuses, exportTypes } from '../../exports/definitions.ts';
import { exportSorts, exportView, listExports } from '../../exports/store.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "Exports of the organization the caller may see (every rightsholder they name within the caller's data access), sortBy createdAt (default), startedAt, finishedAt, type, status, rowCount, sortOrder asc (default) or desc; filter by status and type.",
  },
  orgInput({
    pagination: paginationSchema(exportSorts),
    status: z.array(z.enum(exportStatuses)).min(1).max(exportStatuses.length).optional(),
    type: z.array(z.enum(exportTypes)).min(1).max(10).optional(),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'createdAt' });
  const { rows, total } = await listExports(ctx.deps.pool, ctx.org.id, ctx.org.rightsholderScope, {
    status: input.status,
    type: input.type,
    sortBy: page.sortBy ?? 'createdAt',
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows.map(exportView), page, total);
});

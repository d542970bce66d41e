import { z } from 'zod';
import { countUploads, listUploads, uploadSorts } from '../../ingest/uploadStore.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { dateFilter, orgInput } from '../../trpc/schemas.ts';

const isoDate = dateFilter();

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Uploads of the organization, with their files counted by status; sortBy createdAt (default), updatedAt, fileCount, sortOrder asc (default) or desc; filter by search (file name) and created date range.',
  },
  orgInput({
    pagination: paginationSchema(uploadSorts),
    filter: z
      .strictObject({
        search: z.string().max(255).optional(),
        date_start: isoDate.optional(),
        date_end: isoDate.optional(),
      })
      .optional(),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'createdAt' });
  const [rows, total] = await Promise.all([
    listUploads(ctx.deps.pool, ctx.org, input.filter, {
      ...page,
      sortBy: page.sortBy ?? 'createdAt',
    }),
    countUploads(ctx.deps.pool, ctx.org, input.filter),
  ]);
  return paginated(rows, page, total);
});

import { z } from 'zod';
import { countFiles, listFiles, type FileFilter } from '../../ingest/fileStore.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { dateFilter, orgInput } from '../../trpc/schemas.ts';
import { customNameFilter } from '../upload/inputs.ts';

const isoDate = dateFilter();

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Files (statements) of the organization, not deleted, with filters fileId, dateStart, dateEnd (created), rightsholderId, distributorId, customName and name (substrings, case-insensitive).',
  },
  orgInput({
    pagination: paginationSchema(['createdAt', 'name', 'updatedAt']),
    filters: z
      .strictObject({
        fileId: z.array(z.uuid()).max(2000).optional(),
        dateStart: isoDate.optional(),
        dateEnd: isoDate.optional(),
        rightsholderId: z.uuid().optional(),
        distributorId: z.uuid().optional(),
        customName: customNameFilter.optional(),
        name: z.string().max(255).optional(),
      })
      .optional(),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'createdAt' });
  const filter: FileFilter = input.filters ?? {};
  const [items, total] = await Promise.all([
    listFiles(ctx.deps.pool, ctx.org, filter, { ...page, sortBy: page.sortBy ?? 'createdAt' }),
    countFiles(ctx.deps.pool, ctx.org, filter),
  ]);
  return paginated(items, page, total);
});

import { z } from 'zod';
import { countQueueBlocks, queueBlockPage, queueSorts } from '../../catalog/fetchingStore.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { plainText } from '../../activity/inputs.ts';

// the queue's own page size: 10, with or without pagination
const pagination = paginationSchema(queueSorts, { limit: 10, innerLimit: 10 });

export const list = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'The enrichment queue by block (platform operators): every organization or the one named by organizationId; search by organization or rightsholder name; each block with its musical details by state, next retry and latest failure; busiest first unless pagination.sortBy (organizationName, rightsholderName, blockState, refreshedAt, musicalDetails, nextAttemptAt). pagination defaults: page 1, limit 10.',
  },
  z
    .object({
      organizationId: z.uuid().optional(),
      search: plainText(200).trim().optional(),
      pagination,
    })
    .nullish(),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input?.pagination ?? pagination.parse(undefined));
  const filter = { organizationId: input?.organizationId, search: input?.search || undefined };
  const total = await countQueueBlocks(ctx.deps.pool, filter);
  const rows = await queueBlockPage(ctx.deps.pool, {
    ...filter,
    sortBy: page.sortBy,
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

import { z } from 'zod';
import { listQueue, queueSorts } from '../../catalog/fetching.ts';
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
  const { rows, total } = await listQueue(ctx.deps.pool, {
    organizationId: input?.organizationId,
    search: input?.search || undefined,
    sortBy: page.sortBy,
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

import { z } from 'zod';
import { goldDataSorts, listGoldData } from '../../lookups/goldData.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const list = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: '',
    summary:
      'Source gold data (known sources and aliases the resolver matches); search matches the raw value and every field. Sorted by raw value unless pagination.sortBy says otherwise.',
  },
  z
    .object({
      pagination: paginationSchema(goldDataSorts),
      search: z.string().trim().max(200).optional(),
    })
    .nullish(),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input?.pagination, { sortBy: 'rawValue' });
  const { rows, total } = await listGoldData(ctx.deps.pool, {
    search: input?.search || undefined,
    sortBy: page.sortBy ?? 'rawValue',
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

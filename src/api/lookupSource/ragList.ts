import { z } from 'zod';
import { listVectorEntries } from '../../lookups/vectors.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const ragList = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'Vector entries by name (pagination.sortOrder asc, the default, or desc), with their embedding model and size; includeEmbedding adds the vectors themselves. search matches name and category.',
  },
  z
    .object({
      pagination: paginationSchema(['name']),
      search: z.string().trim().max(200).optional(),
      category: z.string().trim().min(1).max(100).optional(),
      includeEmbedding: z.boolean().default(false),
    })
    .nullish(),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input?.pagination);
  const { rows, total } = await listVectorEntries(ctx.deps.pool, {
    search: input?.search || undefined,
    category: input?.category,
    includeEmbedding: input?.includeEmbedding ?? false,
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

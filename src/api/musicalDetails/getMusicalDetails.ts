import { z } from 'zod';
import { countCatalogQuery, queryMusicalDetails } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { parseCatalogQuery } from '../../catalog/query.ts';
import { AppError } from '../../errors.ts';
import { MAX_LIMIT, paginated } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { jsonValue, orgInput } from '../../trpc/schemas.ts';

export const getMusicalDetails = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Musical details matching a catalog query (docs/catalog.md: the query language), highest USD earnings first, each with its raw variants, state, fetched result, effective values and overridden fields; includeTrail adds every override with who and when; hasBlockRule / hasRightsholderRule keep those a rule of that scope applies to. pagination { page (1), pageSize (100, at most 2000) }.',
  },
  orgInput({
    query: jsonValue(50_000, 20),
    hasBlockRule: z.boolean().default(false),
    hasRightsholderRule: z.boolean().default(false),
    includeTrail: z.boolean().default(false),
    pagination: z
      .object({
        page: z.number().int().min(1).max(1_000_000).default(1),
        pageSize: z.number().int().min(1).default(100),
      })
      .default({ page: 1, pageSize: 100 }),
  }),
).query(async ({ ctx, input }) => {
  const { page, pageSize } = input.pagination;
  // checked after parsing, as every list's limit, so that it answers with its own errorCode
  if (pageSize > MAX_LIMIT)
    throw new AppError(
      'PAGINATION_LIMIT_EXCEEDED',
      `pagination.pageSize must be at most ${MAX_LIMIT}`,
    );
  const query = parseCatalogQuery(input.query);
  const caller = callerOf(ctx.org);
  const filters = {
    hasBlockRule: input.hasBlockRule,
    hasRightsholderRule: input.hasRightsholderRule,
  };
  const total = await countCatalogQuery(ctx.deps.pool, caller, query, filters);
  const rows = await queryMusicalDetails(ctx.deps.pool, caller, query, {
    ...filters,
    includeTrail: input.includeTrail,
    limit: pageSize,
    offset: (page - 1) * pageSize,
  });
  return paginated(
    rows,
    { page, limit: pageSize, offset: (page - 1) * pageSize, sortBy: undefined, sortOrder: 'asc' },
    total,
  );
});

import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import {
  countProductsOfBlock,
  productPageOfBlock,
  productSorts,
} from '../../catalog/productStore.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getByBlock = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'The products (tracks and albums) of a catalog block, in the pagination envelope: 300 when pagination is omitted, 20 when only page is given; sortBy title (default), artist, earnings, releaseDate, musicalDetailCount, kind, createdAt; searchQuery matches title or artist (case-insensitive substring).',
  },
  orgInput({
    blockId: z.uuid(),
    pagination: paginationSchema(productSorts, { innerLimit: 20 }),
    searchQuery: z.string().max(500).optional(),
  }),
).query(async ({ ctx, input }) => {
  const block = await visibleBlock(ctx.deps.pool, callerOf(ctx.org), input.blockId);
  const page = resolvePage(input.pagination, { sortBy: 'title' });
  const total = await countProductsOfBlock(ctx.deps.pool, block.id, input.searchQuery);
  const rows = await productPageOfBlock(ctx.deps.pool, block.id, {
    search: input.searchQuery,
    sortBy: page.sortBy ?? 'title',
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});

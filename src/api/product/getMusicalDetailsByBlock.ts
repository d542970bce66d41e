import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { visibleDetails } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import {
  countLinkedDetails,
  linkedDetailPage,
  linkedDetailSorts,
  visibleProducts,
  type LinkedDetailSort,
} from '../../catalog/productStore.ts';
import { paginated } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getMusicalDetailsByBlock = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'The musical details linked to one product of the block, in the pagination envelope: pagination optional { page (1), limit (5000, at most 5000), sortBy title (default), artist, earnings, rowCount, state, createdAt, sortOrder asc (default) | desc }; each with its effective values and linkSource.',
  },
  orgInput({
    blockId: z.uuid(),
    productId: z.uuid(),
    pagination: z
      .object({
        page: z.number().int().min(1).max(1_000_000).default(1),
        limit: z.number().int().min(1).max(5_000).default(5_000),
        sortBy: z.enum(linkedDetailSorts).default('title'),
        sortOrder: z.enum(['asc', 'desc']).default('asc'),
      })
      .optional(),
  }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const block = await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const [product] = await visibleProducts(ctx.deps.pool, caller, [input.productId], {
    blockId: block.id,
  });
  const { page, limit, sortBy, sortOrder } = input.pagination ?? {
    page: 1,
    limit: 5_000,
    sortBy: 'title' as LinkedDetailSort,
    sortOrder: 'asc' as const,
  };
  const rows = await linkedDetailPage(ctx.deps.pool, product!.id, {
    sortBy,
    sortOrder,
    limit,
    offset: (page - 1) * limit,
  });
  const total = rows[0]?.total ?? (await countLinkedDetails(ctx.deps.pool, product!.id));
  const records = rows.length
    ? await visibleDetails(
        ctx.deps.pool,
        caller,
        rows.map((r) => r.id),
        block.id,
      )
    : [];
  const byId = new Map(records.map((r) => [r.id, r]));
  const data = rows.map((r) => ({ ...byId.get(r.id)!, linkSource: r.source }));
  return paginated(data, { page, limit, offset: (page - 1) * limit, sortBy, sortOrder }, total);
});

import { z } from 'zod';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { visibleProducts } from '../../catalog/productStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getProductsByIds = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Products by id, in the order asked (repeats once); PRODUCT_NOT_FOUND when any is not visible to the caller. Answers { data }.',
  },
  orgInput({ productIds: z.array(z.uuid()).min(1).max(1_000) }),
).query(async ({ ctx, input }) => ({
  data: await visibleProducts(ctx.deps.pool, callerOf(ctx.org), input.productIds),
}));

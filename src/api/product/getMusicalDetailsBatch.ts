import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { visibleProducts } from '../../catalog/productStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { linkedDetails } from './linkedDetails.ts';

export const getMusicalDetailsBatch = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'The musical details of several products of one block: { data: [{ productId, musicalDetails }] } in the order asked, each list highest USD earnings first with linkSource; PRODUCT_NOT_FOUND when a product is not in the block.',
  },
  orgInput({ productIds: z.array(z.uuid()).min(1).max(500), blockId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const block = await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const products = await visibleProducts(ctx.deps.pool, caller, input.productIds, {
    blockId: block.id,
  });
  const linked = await linkedDetails(
    ctx.deps.pool,
    caller,
    products.map((p) => p.id),
    block.id,
  );
  return {
    data: products.map((p) => ({ productId: p.id, musicalDetails: linked.get(p.id) ?? [] })),
  };
});

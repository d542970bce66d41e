import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { visibleProducts } from '../../catalog/productStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { linkedDetails } from './linkedDetails.ts';

export const getAllMusicalDetailsForProduct = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "Every musical detail linked to the product (an album: those of its tracks), highest USD earnings first, each with its effective values and linkSource ('auto' derived, 'user' linked by a correction). Answers { productId, data }.",
  },
  orgInput({ productId: z.uuid(), blockId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const block = await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const [product] = await visibleProducts(ctx.deps.pool, caller, [input.productId], {
    blockId: block.id,
  });
  const linked = await linkedDetails(ctx.deps.pool, caller, [product!.id], block.id);
  return { productId: product!.id, data: linked.get(product!.id) ?? [] };
});

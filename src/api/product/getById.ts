import { z } from 'zod';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { visibleProducts } from '../../catalog/productStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getById = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'One product (a track or an album of a catalog block) with its derived values (title, artist, ISRC, release date, genres, writers, image, USD earnings), the fields users corrected and the trail of corrections (who and when).',
  },
  orgInput({ productId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const [product] = await visibleProducts(ctx.deps.pool, callerOf(ctx.org), [input.productId], {
    includeTrail: true,
  });
  return product!;
});

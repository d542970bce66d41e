import { z } from 'zod';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { visibleProducts } from './shared.ts';

export const getById = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "One product (a track or an album of a catalog block) with its derived values (title, artist, ISRC, release date, genres, writers, image, USD earnings), the fields users corrected and the trail of corrections (who and when).",
  },
  orgInput({ productId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const [product] = await visibleProducts(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId }, [input.productId], { includeTrail: true });
  return product!;
});

import { z } from 'zod';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { recordActivity } from '../../activity/record.ts';
import { refreshProducts } from '../../catalog/products.ts';
import { imageUrl, releaseDate } from '../../catalog/overrides.ts';
import { insertProductOverride, visibleProducts } from '../../catalog/productStore.ts';
import { withTransaction } from '../../db/pool.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

const noNul = (s: string) => !s.includes('\u0000');
const value = (max = 500) =>
  z.string().trim().max(max).refine(noNul, 'must not contain NUL characters');
const names = z.array(value(300).pipe(z.string().min(1))).max(100);

export const updateById = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      "Correct a product: { productId, title?, artist?, releaseDate? (YYYY, YYYY-MM or YYYY-MM-DD; '' clears), genres?, songWriters?, imageUrl? ('' clears) }, at least one. Kept as an override with who and when, laid over the derived values on every refresh (it survives re-clustering, re-fetching and reprocessing); answers the product with its trail.",
  },
  orgInput({
    productId: z.uuid(),
    title: value().pipe(z.string().min(1)).optional(),
    artist: value().optional(),
    releaseDate: releaseDate.optional(),
    genres: names.optional(),
    songWriters: names.optional(),
    imageUrl: imageUrl.optional(),
  }).refine(
    (v) =>
      [v.title, v.artist, v.releaseDate, v.genres, v.songWriters, v.imageUrl].some(
        (x) => x !== undefined,
      ),
    {
      message: 'at least one of title, artist, releaseDate, genres, songWriters, imageUrl',
      path: ['title'],
    },
  ),
).mutation(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const { organizationId: _org, productId, ...fields } = input;
  const values = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const product = await withTransaction(ctx.deps.pool, async (db) => {
    const [before] = await visibleProducts(db, caller, [productId]);
    await insertProductOverride(db, {
      organizationId: ctx.org.id,
      blockId: before!.blockId,
      productKey: before!.stableKey,
      productId: before!.id,
      kind: 'update_by_id',
      values,
      createdBy: ctx.principal.userId,
    });
    const current = before as unknown as Record<string, unknown>;
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'product.updateById',
      subjectType: 'product',
      subjectId: before!.id,
      subjectLabel: before!.title,
      changes: Object.fromEntries(
        Object.entries(values).map(([k, v]) => [k, { before: current[k] ?? null, after: v }]),
      ),
    });
    return before!;
  });
  await refreshProducts(ctx.deps, product.blockId);
  const [after] = await visibleProducts(ctx.deps.pool, caller, [product.id], {
    includeTrail: true,
  });
  return after!;
});

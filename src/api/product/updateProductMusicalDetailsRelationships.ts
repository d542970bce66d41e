import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { lockBlock, visibleBlock } from '../../catalog/blockStore.ts';
import { visibleDetails } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import {
  existingProductIds,
  insertProductOverride,
  linksOfDetails,
  visibleProducts,
  type ProductRecord,
} from '../../catalog/productStore.ts';
import { refreshProducts } from '../../catalog/products.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

const link = z.strictObject({ productId: z.uuid(), musicalDetailId: z.uuid() });
const move = z.strictObject({
  musicalDetailId: z.uuid(),
  fromProductId: z.uuid(),
  toProductId: z.uuid(),
});

type LinkInput = z.infer<typeof link>;
type MoveInput = z.infer<typeof move>;

/** One link a request adds or removes, and the part of the request that says so. */
interface LinkChange {
  product: ProductRecord;
  md: string;
  action: 'add' | 'remove';
  verb: string;
}

export const updateProductMusicalDetailsRelationships = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Change which track product musical details belong to: { blockId, create?: [{ productId, musicalDetailId }], delete?: [{ productId, musicalDetailId }], update?: [{ musicalDetailId, fromProductId, toProductId }] } (at least one change, at most 500 each). Each is kept as an override with who and when and survives every refresh: a created link moves the musical detail to that track; a deleted one takes it out (back to its derived track, or unlinked when that was the derived one). Answers { blockId, created, deleted, updated, products } (the products involved, as they are now).',
  },
  orgInput({
    blockId: z.uuid(),
    create: z.array(link).max(500).optional(),
    delete: z.array(link).max(500).optional(),
    update: z.array(move).max(500).optional(),
  }).refine(
    (v) => (v.create?.length ?? 0) + (v.delete?.length ?? 0) + (v.update?.length ?? 0) > 0,
    { message: 'at least one change', path: ['create'] },
  ),
).mutation(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const create = input.create ?? [];
  const remove = input.delete ?? [];
  const update = input.update ?? [];
  const involved = await withTransaction(ctx.deps.pool, async (db) => {
    const block = await visibleBlock(db, caller, input.blockId);
    await lockBlock(db, block.id);
    const productIds = [
      ...create.map((c) => c.productId),
      ...remove.map((c) => c.productId),
      ...update.flatMap((u) => [u.fromProductId, u.toProductId]),
    ];
    const products = new Map(
      (await visibleProducts(db, caller, productIds, { blockId: block.id })).map((p) => [p.id, p]),
    );
    const mdIds = [...create, ...remove, ...update].map((c) => c.musicalDetailId);
    const details = new Map(
      (await visibleDetails(db, caller, mdIds, block.id)).map((m) => [m.id, m]),
    );
    const links = await linksOfDetails(db, [...details.keys()]);
    const linked = (productId: string, md: string) =>
      links.some((l) => l.productId === productId && l.musicalDetailId === md);
    const changes = linkChanges({ create, remove, update }, products, linked);
    refuseContradictions(changes);
    for (const c of changes) {
      const md = details.get(c.md.toLowerCase())!;
      await insertProductOverride(db, {
        organizationId: ctx.org.id,
        blockId: block.id,
        productKey: c.product.stableKey,
        productId: c.product.id,
        kind: 'link',
        values: { identityKey: md.identityKey, action: c.action },
        createdBy: ctx.principal.userId,
      });
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'product.updateProductMusicalDetailsRelationships',
        subjectType: 'product',
        subjectId: c.product.id,
        subjectLabel: c.product.title,
        changes: {
          musicalDetail:
            c.action === 'add' ? { before: null, after: md.id } : { before: md.id, after: null },
        },
      });
    }
    return { blockId: block.id, ids: [...products.keys()] };
  });
  await refreshProducts(ctx.deps, involved.blockId);
  const still = await existingProductIds(ctx.deps.pool, involved.ids);
  return {
    blockId: involved.blockId,
    created: create.length,
    deleted: remove.length,
    updated: update.length,
    products: await visibleProducts(
      ctx.deps.pool,
      caller,
      involved.ids.filter((id) => still.has(id)),
    ),
  };
});

/**
 * The request's links as changes, in order: each names a track, and each it deletes or moves is
 * linked now.
 */
function linkChanges(
  request: { create: LinkInput[]; remove: LinkInput[]; update: MoveInput[] },
  products: ReadonlyMap<string, ProductRecord>,
  linked: (productId: string, md: string) => boolean,
): LinkChange[] {
  const track = (id: string, path: string): ProductRecord => {
    const p = products.get(id.toLowerCase())!;
    if (p.kind !== 'track')
      throw new AppError(
        'PRODUCT_LINK_INVALID',
        `${path}: ${id} is an album; musical details are linked to tracks`,
        { details: { path } },
      );
    return p;
  };
  const changes: LinkChange[] = [];
  request.create.forEach((c, i) =>
    changes.push({
      product: track(c.productId, `create.${i}.productId`),
      md: c.musicalDetailId,
      action: 'add',
      verb: 'create',
    }),
  );
  request.remove.forEach((c, i) => {
    const p = track(c.productId, `delete.${i}.productId`);
    if (!linked(p.id, c.musicalDetailId.toLowerCase()))
      throw new AppError(
        'PRODUCT_LINK_INVALID',
        `delete.${i}: the musical detail is not linked to that product`,
        { details: { path: `delete.${i}` } },
      );
    changes.push({ product: p, md: c.musicalDetailId, action: 'remove', verb: 'delete' });
  });
  request.update.forEach((u, i) => {
    const from = track(u.fromProductId, `update.${i}.fromProductId`);
    const to = track(u.toProductId, `update.${i}.toProductId`);
    if (!linked(from.id, u.musicalDetailId.toLowerCase()))
      throw new AppError(
        'PRODUCT_LINK_INVALID',
        `update.${i}: the musical detail is not linked to fromProductId`,
        { details: { path: `update.${i}` } },
      );
    changes.push(
      { product: from, md: u.musicalDetailId, action: 'remove', verb: 'update' },
      { product: to, md: u.musicalDetailId, action: 'add', verb: 'update' },
    );
  });
  return changes;
}

/** One request says one thing of a link: adding and removing the same one is refused, not left to the order of application. */
function refuseContradictions(changes: readonly LinkChange[]): void {
  const said = new Map<string, string>();
  for (const c of changes) {
    const key = `${c.product.id}/${c.md.toLowerCase()}`;
    const other = said.get(key);
    if (other !== undefined && other !== c.action) {
      throw new AppError(
        'PRODUCT_LINK_INVALID',
        `the link of musical detail ${c.md} to product ${c.product.id} is both added and removed`,
        {
          details: { path: c.verb, productId: c.product.id, musicalDetailId: c.md },
        },
      );
    }
    said.set(key, c.action);
  }
}

import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { productCountsByKind } from '../../catalog/productStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

const TYPES = ['track', 'album'] as const;

export const getDistinctTargetTypes = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'The kinds of catalog entry musical details resolve to (in the organization, or one block with blockId): { types: [{ type: track | album, products, musicalDetails }] }, both kinds always listed.',
  },
  orgInput({ blockId: z.uuid().optional() }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  if (input.blockId) await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const rows = await productCountsByKind(ctx.deps.pool, caller, input.blockId ?? null);
  return {
    types: TYPES.map(
      (type) => rows.find((r) => r.type === type) ?? { type, products: 0, musicalDetails: 0 },
    ),
  };
});

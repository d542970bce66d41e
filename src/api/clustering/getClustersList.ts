import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { allClustersOfBlock } from '../../catalog/clusterStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getClustersList = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Every title cluster of a block (without entries), highest USD earnings first (ties by display title, then id): { blockId, data }.',
  },
  orgInput({ blockId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const block = await visibleBlock(ctx.deps.pool, callerOf(ctx.org), input.blockId);
  return { blockId: block.id, data: await allClustersOfBlock(ctx.deps.pool, block.id) };
});

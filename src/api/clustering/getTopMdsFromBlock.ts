import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { detailEarningsOfBlock, topDetailsOfBlock } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { entriesOf } from './entries.ts';

export const getTopMdsFromBlock = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "The block's musical details with the largest USD earnings, highest first (ties by id): at most limit (default 300, at most 2000), only those whose share of the block's USD earnings is at least minEarningsPercentage (0..100, percent) when given (a block earning nothing or less has no shares: earningsPercentage null, the minimum not applied). Answers { blockId, totalEarnings, data: [entry + clusterId + earningsPercentage (4 decimals)] }.",
  },
  orgInput({
    blockId: z.uuid(),
    limit: z.number().int().min(1).max(2_000).default(300),
    minEarningsPercentage: z.number().min(0).max(100).optional(),
  }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const db = ctx.deps.pool;
  const block = await visibleBlock(db, caller, input.blockId);
  const top = await topDetailsOfBlock(
    db,
    block.id,
    input.limit,
    input.minEarningsPercentage ?? null,
  );
  const totalEarnings = await detailEarningsOfBlock(db, block.id);
  const entries = await entriesOf(
    db,
    caller,
    block.id,
    top.map((r) => r.id),
  );
  return {
    blockId: block.id,
    totalEarnings,
    data: top.map((r) => ({
      ...entries.get(r.id)!,
      clusterId: r.clusterId,
      earningsPercentage: r.earningsPercentage,
    })),
  };
});

import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { clustersOfBlock, detailIdsOfCluster } from '../../catalog/clusterStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { entriesOf } from './entries.ts';

export const getCluster = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'One title cluster of a block: display title, similarity (0..1, the lowest between the display title and a member), entries, USD earnings, source (auto | user), and every musical detail in it (highest USD earnings first) with its effective and raw title and artist and whether a user moved it there.',
  },
  orgInput({ blockId: z.uuid(), clusterId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const block = await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const [cluster] = await clustersOfBlock(ctx.deps.pool, block.id, [input.clusterId]);
  const ids = await detailIdsOfCluster(ctx.deps.pool, cluster!.id);
  const entries = await entriesOf(ctx.deps.pool, caller, block.id, ids);
  return { ...cluster!, musicalDetails: ids.map((id) => entries.get(id)!) };
});

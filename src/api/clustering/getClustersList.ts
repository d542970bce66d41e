import { z } from 'zod';
import { visibleBlock } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { CLUSTER_COLUMNS, clusterRecord, type ClusterRecord } from './shared.ts';

export const getClustersList = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary: 'Every title cluster of a block (without entries), highest USD earnings first (ties by display title, then id): { blockId, data }.',
  },
  orgInput({ blockId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const block = await visibleBlock(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId }, input.blockId);
  const { rows } = await ctx.deps.pool.query<Parameters<typeof clusterRecord>[0]>(
    `SELECT ${CLUSTER_COLUMNS} FROM title_clusters c WHERE c.block_id = $1 ORDER BY c.earnings DESC, c.display_title COLLATE "C", c.id`,
    [block.id],
  );
  return { blockId: block.id, data: rows.map(clusterRecord) as ClusterRecord[] };
});

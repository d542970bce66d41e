import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import {
  clusterEarningsOfBlock,
  clustersOfBlock,
  topClustersOfBlock,
} from '../../catalog/clusterStore.ts';
import { visibleDetails } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { AppError } from '../../errors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const getTopClusters = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "The block's title clusters with the largest USD earnings: those whose share of the block's earnings is at least threshold (0..1, default 0.001), at most limit (default 300, at most 2000), highest first (when the block's earnings are zero or negative there are no shares (null) and the threshold is not applied: the limit clusters earning the most); plus, always, the wanted ones (wantedClusterIds, and the clusters of wantedMusicalDetails, musical detail ids) marked wanted. Answers { blockId, totalEarnings, data: [cluster + earningsShare (6 decimals) + wanted] }.",
  },
  orgInput({
    blockId: z.uuid(),
    wantedMusicalDetails: z.array(z.string().max(100)).max(1_000).optional(),
    wantedClusterIds: z.array(z.uuid()).max(1_000).optional(),
    limit: z.number().int().min(1).max(2_000).default(300),
    threshold: z.number().min(0).max(1).default(0.001),
  }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const db = ctx.deps.pool;
  const block = await visibleBlock(db, caller, input.blockId);
  const wantedMds = input.wantedMusicalDetails ?? [];
  const bad = wantedMds.find((id) => !UUID.test(id));
  if (bad !== undefined)
    throw new AppError(
      'MUSICAL_DETAIL_NOT_FOUND',
      `Musical details not found: ${bad.slice(0, 100)}`,
    );
  const mds = await visibleDetails(db, caller, wantedMds, block.id);
  const wantedClusters = await clustersOfBlock(db, block.id, input.wantedClusterIds ?? []);
  const wanted = new Set([
    ...wantedClusters.map((c) => c.id),
    ...mds.flatMap((m) => (m.clusterId ? [m.clusterId] : [])),
  ]);
  const top = await topClustersOfBlock(db, block.id, {
    wantedIds: [...wanted],
    threshold: input.threshold,
    limit: input.limit,
  });
  return {
    blockId: block.id,
    totalEarnings: top.totalEarnings ?? (await clusterEarningsOfBlock(db, block.id)),
    data: top.clusters,
  };
});

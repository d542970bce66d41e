import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { refreshClusters } from '../../catalog/clusters.ts';
import { lockBlock, visibleBlock } from '../../catalog/blockStore.ts';
import {
  clusterIdsOfDetails,
  clustersOfBlock,
  clusterTitlesOfBlock,
  insertClusterAssignment,
} from '../../catalog/clusterStore.ts';
import { visibleDetails } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { refreshProducts } from '../../catalog/products.ts';
import { withTransaction } from '../../db/pool.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

const change = z.union([
  z.strictObject({ musicalDetailId: z.uuid(), toClusterId: z.uuid() }),
  z.strictObject({ musicalDetailId: z.uuid(), newCluster: z.literal(true) }),
]);

export const updateClustering = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      "Move musical details between the block's title clusters: changes [{ musicalDetailId, toClusterId } | { musicalDetailId, newCluster: true }] (1..500; a musical detail named twice: the last wins). Each move is kept as an override with who and when and re-applied after every re-clustering; the clusters and products of the block are then rebuilt. Answers { blockId, moved, data: [{ musicalDetailId, clusterId }] } with the clusters the musical details are in now.",
  },
  orgInput({ blockId: z.uuid(), changes: z.array(change).min(1).max(500) }),
).mutation(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const blockId = await withTransaction(ctx.deps.pool, async (db) => {
    const block = await visibleBlock(db, caller, input.blockId);
    await lockBlock(db, block.id);
    const details = new Map(
      (
        await visibleDetails(
          db,
          caller,
          input.changes.map((c) => c.musicalDetailId),
          block.id,
        )
      ).map((m) => [m.id, m]),
    );
    const targets = new Map(
      (
        await clustersOfBlock(
          db,
          block.id,
          input.changes.flatMap((c) => ('toClusterId' in c ? [c.toClusterId] : [])),
        )
      ).map((c) => [c.id, c]),
    );
    const titleOf = await clusterTitlesOfBlock(db, block.id);
    for (const c of input.changes) {
      const md = details.get(c.musicalDetailId.toLowerCase())!;
      const target = 'toClusterId' in c ? targets.get(c.toClusterId.toLowerCase())! : null;
      const key = target ? target.stableKey : `user:${randomUUID()}`;
      const title = target ? target.displayTitle : md.effective.title || md.title;
      await insertClusterAssignment(db, {
        organizationId: ctx.org.id,
        blockId: block.id,
        identityKey: md.identityKey,
        musicalDetailId: md.id,
        clusterKey: key,
        clusterDisplayTitle: title,
        createdBy: ctx.principal.userId,
      });
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'clustering.updateClustering',
        subjectType: 'product',
        subjectId: md.id,
        subjectLabel: md.effective.title || md.title,
        changes: {
          cluster: {
            before: md.clusterId
              ? { id: md.clusterId, displayTitle: titleOf.get(md.clusterId) ?? null }
              : null,
            after: target
              ? { id: target.id, displayTitle: target.displayTitle }
              : { id: null, displayTitle: title, newCluster: true },
          },
        },
      });
    }
    return block.id;
  });
  await refreshClusters(ctx.deps, blockId);
  await refreshProducts(ctx.deps, blockId);
  const ids = [...new Set(input.changes.map((c) => c.musicalDetailId.toLowerCase()))];
  const clusterOf = await clusterIdsOfDetails(ctx.deps.pool, ids);
  return {
    blockId,
    moved: input.changes.length,
    data: ids.map((id) => ({ musicalDetailId: id, clusterId: clusterOf.get(id) ?? null })),
  };
});

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { refreshClusters } from '../../catalog/clusters.ts';
import { visibleBlock, visibleDetails } from '../../catalog/musicalDetails.ts';
import { refreshProducts } from '../../catalog/products.ts';
import { withTransaction } from '../../db/pool.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { clustersOfBlock } from './shared.ts';

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
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  const blockId = await withTransaction(ctx.deps.pool, async (db) => {
    const block = await visibleBlock(db, caller, input.blockId);
    await db.query('SELECT 1 FROM catalog_blocks WHERE id = $1 FOR UPDATE', [block.id]);
    const details = new Map((await visibleDetails(db, caller, input.changes.map((c) => c.musicalDetailId), block.id)).map((m) => [m.id, m]));
    const targets = new Map(
      (await clustersOfBlock(db, block.id, input.changes.flatMap((c) => ('toClusterId' in c ? [c.toClusterId] : [])))).map((c) => [c.id, c]),
    );
    const { rows: current } = await db.query<{ id: string; display_title: string }>('SELECT id, display_title FROM title_clusters WHERE block_id = $1', [block.id]);
    const titleOf = new Map(current.map((c) => [c.id, c.display_title]));
    for (const c of input.changes) {
      const md = details.get(c.musicalDetailId.toLowerCase())!;
      const target = 'toClusterId' in c ? targets.get(c.toClusterId.toLowerCase())! : null;
      const key = target ? target.stableKey : `user:${randomUUID()}`;
      const title = target ? target.displayTitle : md.effective.title || md.title;
      await db.query(
        `INSERT INTO cluster_assignment_overrides (organization_id, block_id, identity_key, musical_detail_id, cluster_key, cluster_display_title, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [ctx.org.id, block.id, md.identityKey, md.id, key, title, ctx.principal.userId],
      );
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'clustering.updateClustering',
        subjectType: 'product',
        subjectId: md.id,
        subjectLabel: md.effective.title || md.title,
        changes: {
          cluster: {
            before: md.clusterId ? { id: md.clusterId, displayTitle: titleOf.get(md.clusterId) ?? null } : null,
            after: target ? { id: target.id, displayTitle: target.displayTitle } : { id: null, displayTitle: title, newCluster: true },
          },
        },
      });
    }
    return block.id;
  });
  await refreshClusters(ctx.deps, blockId);
  await refreshProducts(ctx.deps, blockId);
  const ids = [...new Set(input.changes.map((c) => c.musicalDetailId.toLowerCase()))];
  const { rows } = await ctx.deps.pool.query<{ id: string; cluster_id: string | null }>('SELECT id, cluster_id FROM musical_details WHERE id = ANY ($1::uuid[])', [ids]);
  const clusterOf = new Map(rows.map((r) => [r.id, r.cluster_id]));
  return { blockId, moved: input.changes.length, data: ids.map((id) => ({ musicalDetailId: id, clusterId: clusterOf.get(id) ?? null })) };
});

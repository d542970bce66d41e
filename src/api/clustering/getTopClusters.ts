import { z } from 'zod';
import { visibleBlock, visibleDetails } from '../../catalog/musicalDetails.ts';
import { AppError } from '../../errors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { CLUSTER_COLUMNS, clusterRecord, clustersOfBlock } from './shared.ts';

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
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  const db = ctx.deps.pool;
  const block = await visibleBlock(db, caller, input.blockId);
  const wantedMds = input.wantedMusicalDetails ?? [];
  const bad = wantedMds.find((id) => !UUID.test(id));
  if (bad !== undefined) throw new AppError('MUSICAL_DETAIL_NOT_FOUND', `Musical details not found: ${bad.slice(0, 100)}`);
  const mds = await visibleDetails(db, caller, wantedMds, block.id);
  const wantedClusters = await clustersOfBlock(db, block.id, input.wantedClusterIds ?? []);
  const wanted = new Set([...wantedClusters.map((c) => c.id), ...mds.flatMap((m) => (m.clusterId ? [m.clusterId] : []))]);
  const { rows } = await db.query<Parameters<typeof clusterRecord>[0] & { share: string | null; total: string; wanted: boolean }>(
    `WITH t AS (SELECT coalesce(sum(earnings), 0) AS total FROM title_clusters WHERE block_id = $1),
     s AS (SELECT c.*, CASE WHEN t.total > 0 THEN c.earnings / t.total END AS share, t.total, c.id = ANY ($2::uuid[]) AS wanted
           FROM title_clusters c, t WHERE c.block_id = $1),
     -- a block that earns nothing or less has no shares: its top clusters are those earning the most
     top AS (SELECT id FROM s WHERE share >= $3 OR share IS NULL ORDER BY earnings DESC, id LIMIT $4)
     SELECT ${CLUSTER_COLUMNS}, trim_scale(round(c.share, 6))::text AS share, trim_scale(c.total)::text AS total, c.wanted
     FROM s c WHERE c.id IN (SELECT id FROM top) OR c.wanted
     ORDER BY c.earnings DESC, c.id`,
    [block.id, [...wanted], input.threshold, input.limit],
  );
  const total = rows[0]?.total ?? (await db.query<{ t: string }>('SELECT coalesce(trim_scale(sum(earnings)), 0)::text AS t FROM title_clusters WHERE block_id = $1', [block.id])).rows[0]!.t;
  return {
    blockId: block.id,
    totalEarnings: total,
    data: rows.map(({ share, total: _t, wanted: w, ...r }) => ({ ...clusterRecord(r), earningsShare: share, wanted: w })),
  };
});

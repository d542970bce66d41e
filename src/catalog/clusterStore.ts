// The SQL of a block's title clusters as the clustering procedures read and correct them: the
// clusters, their members, and the assignments users made (cluster_assignment_overrides).
import type { Queryable } from '../db/pool.ts';
import { sortable } from '../db/sql.ts';
import { AppError } from '../errors.ts';

export interface ClusterRecord {
  id: string;
  blockId: string;
  stableKey: string;
  displayTitle: string;
  similarity: number;
  entries: number;
  earnings: string;
  source: 'auto' | 'user';
  createdAt: string;
  updatedAt: string;
}

const CLUSTER_COLUMNS = `c.id, c.block_id AS "blockId", c.stable_key AS "stableKey", c.display_title AS "displayTitle",
  c.similarity::float8 AS similarity, c.entries, usd_answer(c.earnings)::text AS earnings, c.source, c.created_at AS "createdAt", c.updated_at AS "updatedAt"`;

type Row = Omit<ClusterRecord, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };
const clusterRecord = (r: Row): ClusterRecord => ({
  ...r,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

/** These clusters of the block, in the order asked; CLUSTER_NOT_FOUND when any is not in it. */
export async function clustersOfBlock(
  db: Queryable,
  blockId: string,
  ids: readonly string[],
): Promise<ClusterRecord[]> {
  const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
  const { rows } = await db.query<Row>(
    `SELECT ${CLUSTER_COLUMNS} FROM title_clusters c WHERE c.block_id = $1 AND c.id = ANY ($2::uuid[])`,
    [blockId, unique],
  );
  if (rows.length !== unique.length) {
    const found = new Set(rows.map((r) => r.id));
    throw new AppError(
      'CLUSTER_NOT_FOUND',
      `Clusters not found: ${unique
        .filter((id) => !found.has(id))
        .slice(0, 10)
        .join(', ')}`,
    );
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  return unique.map((id) => clusterRecord(byId.get(id)!));
}

/** Every cluster of the block, highest USD earnings first (ties by display title, then id). */
export async function allClustersOfBlock(db: Queryable, blockId: string): Promise<ClusterRecord[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${CLUSTER_COLUMNS} FROM title_clusters c WHERE c.block_id = $1 ORDER BY c.earnings DESC, c.display_title COLLATE "C", c.id`,
    [blockId],
  );
  return rows.map(clusterRecord);
}

export async function countClustersOfBlock(db: Queryable, blockId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM title_clusters WHERE block_id = $1',
    [blockId],
  );
  return rows[0]!.n;
}

const clusterSort = sortable(
  {
    entries: 'c.entries',
    titleDisplay: 'c.display_title COLLATE "C"',
    similarity: 'c.similarity',
    earnings: 'c.earnings',
  },
  'c.id',
);
export const clusterSorts = clusterSort.keys;
export type ClusterSort = (typeof clusterSorts)[number];

/** One page of the block's clusters in the order asked, ties by id. */
export async function clusterPageOfBlock(
  db: Queryable,
  blockId: string,
  opts: { sortBy: ClusterSort; sortOrder: 'asc' | 'desc'; limit: number; offset: number },
): Promise<ClusterRecord[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${CLUSTER_COLUMNS} FROM title_clusters c WHERE c.block_id = $1 ORDER BY ${clusterSort.orderBy(opts.sortBy, opts.sortOrder)} LIMIT $2 OFFSET $3`,
    [blockId, opts.limit, opts.offset],
  );
  return rows.map(clusterRecord);
}

/**
 * The same page of members of each of these clusters (highest USD earnings first, ties by id):
 * the members numbered after `offset`, at most `limit` of each, by cluster.
 */
export async function clusterMemberPages(
  db: Queryable,
  blockId: string,
  clusterIds: readonly string[],
  opts: { limit: number; offset: number },
): Promise<{ clusterId: string; id: string }[]> {
  const { rows } = await db.query<{ clusterId: string; id: string }>(
    `SELECT cluster_id AS "clusterId", id FROM (
       SELECT cluster_id, id, row_number() OVER (PARTITION BY cluster_id ORDER BY earnings_usd DESC, id) AS n
       FROM musical_details WHERE block_id = $1 AND cluster_id = ANY ($2::uuid[])) x
     WHERE n > $3 AND n <= $4 ORDER BY cluster_id, n`,
    [blockId, clusterIds, opts.offset, opts.offset + opts.limit],
  );
  return rows;
}

/** The ids of the cluster's musical details, highest USD earnings first (ties by id). */
export async function detailIdsOfCluster(db: Queryable, clusterId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM musical_details WHERE cluster_id = $1 ORDER BY earnings_usd DESC, id',
    [clusterId],
  );
  return rows.map((r) => r.id);
}

export type TopCluster = ClusterRecord & { earningsShare: string | null; wanted: boolean };

/**
 * The block's clusters whose share of its USD earnings is at least `threshold`, at most `limit`,
 * highest first, plus the wanted ones (marked); a block earning nothing or less has no shares
 * (null): its top clusters are those earning the most. `totalEarnings` is the block's, or null
 * when no cluster is answered.
 */
export async function topClustersOfBlock(
  db: Queryable,
  blockId: string,
  opts: { wantedIds: readonly string[]; threshold: number; limit: number },
): Promise<{ totalEarnings: string | null; clusters: TopCluster[] }> {
  const { rows } = await db.query<Row & { share: string | null; total: string; wanted: boolean }>(
    `WITH t AS (SELECT coalesce(sum(earnings), 0) AS total FROM title_clusters WHERE block_id = $1),
     s AS (SELECT c.*, CASE WHEN t.total > 0 THEN c.earnings / t.total END AS share, t.total, c.id = ANY ($2::uuid[]) AS wanted
           FROM title_clusters c, t WHERE c.block_id = $1),
     -- a block that earns nothing or less has no shares: its top clusters are those earning the most
     top AS (SELECT id FROM s WHERE share >= $3 OR share IS NULL ORDER BY earnings DESC, id LIMIT $4)
     SELECT ${CLUSTER_COLUMNS}, trim_scale(round(c.share, 6))::text AS share, usd_answer(c.total)::text AS total, c.wanted
     FROM s c WHERE c.id IN (SELECT id FROM top) OR c.wanted
     ORDER BY c.earnings DESC, c.id`,
    [blockId, opts.wantedIds, opts.threshold, opts.limit],
  );
  return {
    totalEarnings: rows[0]?.total ?? null,
    clusters: rows.map(({ share, total: _t, wanted, ...r }) => ({
      ...clusterRecord(r),
      earningsShare: share,
      wanted,
    })),
  };
}

/** The exact USD earnings of the block's clusters (a decimal string). */
export async function clusterEarningsOfBlock(db: Queryable, blockId: string): Promise<string> {
  const { rows } = await db.query<{ t: string }>(
    'SELECT coalesce(usd_answer(sum(earnings)), 0)::text AS t FROM title_clusters WHERE block_id = $1',
    [blockId],
  );
  return rows[0]!.t;
}

/** The display title of each of the block's clusters, by id. */
export async function clusterTitlesOfBlock(
  db: Queryable,
  blockId: string,
): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; display_title: string }>(
    'SELECT id, display_title FROM title_clusters WHERE block_id = $1',
    [blockId],
  );
  return new Map(rows.map((c) => [c.id, c.display_title]));
}

/** Of these musical details of the block, those whose latest cluster assignment a user made. */
export async function movedDetailIds(
  db: Queryable,
  blockId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const { rows } = await db.query<{ md: string }>(
    `SELECT DISTINCT ON (o.identity_key) o.musical_detail_id AS md FROM cluster_assignment_overrides o
     WHERE o.block_id = $1 AND o.musical_detail_id = ANY ($2::uuid[]) ORDER BY o.identity_key, o.created_at DESC`,
    [blockId, ids],
  );
  return new Set(rows.map((m) => m.md));
}

export interface ClusterAssignment {
  organizationId: string;
  blockId: string;
  identityKey: string;
  musicalDetailId: string;
  clusterKey: string;
  clusterDisplayTitle: string;
  createdBy: string;
}

/** Keeps a user's placing of a musical detail in a cluster, re-applied after every re-clustering. */
export async function insertClusterAssignment(db: Queryable, a: ClusterAssignment): Promise<void> {
  await db.query(
    `INSERT INTO cluster_assignment_overrides (organization_id, block_id, identity_key, musical_detail_id, cluster_key, cluster_display_title, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      a.organizationId,
      a.blockId,
      a.identityKey,
      a.musicalDetailId,
      a.clusterKey,
      a.clusterDisplayTitle,
      a.createdBy,
    ],
  );
}

/** The cluster each of these musical details is in now (null: none), by id; ids no longer present are left out. */
export async function clusterIdsOfDetails(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  const { rows } = await db.query<{ id: string; cluster_id: string | null }>(
    'SELECT id, cluster_id FROM musical_details WHERE id = ANY ($1::uuid[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.cluster_id]));
}

// Title clusters of a block (README "Catalog", "Clusters"): derived from the musical details'
// effective titles by clusterTitles in a worker thread, then the users' moves laid over them.
// Cluster ids are stable: a rebuilt cluster takes the id of the previous cluster it shares the
// most musical details with, so links and bookmarks to a cluster survive re-clustering.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import type { Deps } from '../trpc/context.ts';
import { normalizeTitle, titleSimilarity, type TitleCluster, type TitleItem } from './cluster/index.ts';
import { effectiveValues, type EffectiveValues, type FetchedResult, type OverrideRow } from './musicalDetails.ts';

export interface BlockDetail {
  id: string;
  identityKey: string;
  isrc: string | null;
  title: string;
  artist: string | null;
  releaseTitle: string | null;
  releaseArtist: string | null;
  earningsUsd: string;
  state: string;
  provider: string | null;
  providerId: string | null;
  result: FetchedResult | null;
  clusterId: string | null;
  effective: EffectiveValues;
}

/** Every musical detail of the block with its effective values (fetched result and overrides). */
export async function loadBlockDetails(db: Queryable, blockId: string): Promise<BlockDetail[]> {
  const { rows } = await db.query<Omit<BlockDetail, 'effective'>>(
    `SELECT id, identity_key AS "identityKey", isrc, title, artist, release_title AS "releaseTitle", release_artist AS "releaseArtist",
       earnings_usd::text AS "earningsUsd", state, provider, provider_id AS "providerId", result, cluster_id AS "clusterId"
     FROM musical_details WHERE block_id = $1 ORDER BY id`,
    [blockId],
  );
  const { rows: overrides } = await db.query<OverrideRow & { mdId: string }>(
    `SELECT o.id, o.musical_detail_id AS "mdId", o.kind, o.rule_id AS "ruleId", o."values", o.created_by AS "createdBy", o.created_at AS "createdAt"
     FROM musical_detail_overrides o WHERE o.block_id = $1 AND o.musical_detail_id IS NOT NULL ORDER BY o.created_at, o.id`,
    [blockId],
  );
  const byMd = new Map<string, OverrideRow[]>();
  for (const { mdId, ...o } of overrides) {
    const list = byMd.get(mdId) ?? [];
    list.push({ ...o, createdAt: new Date(o.createdAt).toISOString() });
    byMd.set(mdId, list);
  }
  return rows.map((r) => ({ ...r, effective: effectiveValues(r, byMd.get(r.id) ?? []) }));
}

/** The stable key of a cluster: the comparison key of its display title. */
export function clusterKeyOf(displayTitle: string): string {
  return normalizeTitle(displayTitle).key || 'untitled';
}

interface PlannedCluster {
  key: string;
  displayTitle: string;
  memberIds: string[];
  similarity: number;
  source: 'auto' | 'user';
  id?: string;
}

/** The latest move of each musical detail of the block (cluster_assignment_overrides). */
async function latestMoves(db: Queryable, blockId: string): Promise<Map<string, { key: string; displayTitle: string | null }>> {
  const { rows } = await db.query<{ md: string; key: string; title: string | null }>(
    `SELECT DISTINCT ON (identity_key) musical_detail_id AS md, cluster_key AS key, cluster_display_title AS title
     FROM cluster_assignment_overrides WHERE block_id = $1 ORDER BY identity_key, created_at DESC, id DESC`,
    [blockId],
  );
  return new Map(rows.filter((r) => r.md !== null).map((r) => [r.md, { key: r.key, displayTitle: r.title }]));
}

export async function refreshClusters(deps: Deps, blockId: string): Promise<void> {
  const details = await loadBlockDetails(deps.pool, blockId);
  const items: TitleItem[] = details.map((d) => ({ id: d.id, title: d.effective.title || d.title, artist: d.effective.artist, earnings: d.earningsUsd }));
  const auto =
    items.length === 0
      ? []
      : (await deps.threads.run<{ ok: true; clusters: TitleCluster[] }>('cluster', 'clusterTitlesTask', { items })).clusters;

  await withTransaction(deps.pool, async (db) => {
    const locked = await db.query('SELECT 1 FROM catalog_blocks WHERE id = $1 FOR UPDATE', [blockId]);
    if (!locked.rowCount) return; // the block is gone
    const titleOf = new Map(items.map((i) => [i.id, i.title]));
    const planned: PlannedCluster[] = [];
    const byKey = new Map<string, PlannedCluster>();
    const clusterOf = new Map<string, PlannedCluster>();
    for (const c of auto) {
      let key = clusterKeyOf(c.displayTitle);
      for (let n = 2; byKey.has(key); n++) key = `${clusterKeyOf(c.displayTitle)}#${n}`;
      const p: PlannedCluster = { key, displayTitle: c.displayTitle, memberIds: [...c.memberIds], similarity: c.similarity, source: 'auto' };
      planned.push(p);
      byKey.set(key, p);
      for (const id of p.memberIds) clusterOf.set(id, p);
    }
    // the users' moves: out of the computed cluster, into the target (created when it is gone)
    const moves = await latestMoves(db, blockId);
    const changed = new Set<PlannedCluster>();
    for (const [mdId, move] of moves) {
      const from = clusterOf.get(mdId);
      if (!from || from.key === move.key) continue;
      let to = byKey.get(move.key);
      if (!to) {
        to = { key: move.key, displayTitle: move.displayTitle ?? titleOf.get(mdId) ?? '', memberIds: [], similarity: 1, source: 'user' };
        planned.push(to);
        byKey.set(move.key, to);
      }
      from.memberIds = from.memberIds.filter((id) => id !== mdId);
      to.memberIds.push(mdId);
      clusterOf.set(mdId, to);
      changed.add(from).add(to);
    }
    const final = planned.filter((p) => p.memberIds.length > 0);
    for (const p of changed) {
      if (p.memberIds.length === 0) continue;
      p.memberIds.sort();
      p.similarity = Math.round(Math.min(1, ...p.memberIds.map((id) => titleSimilarity(p.displayTitle, titleOf.get(id) ?? ''))) * 10_000) / 10_000;
    }

    // stable ids: the previous cluster with the largest overlap, then one with the same key
    const { rows: previous } = await db.query<{ id: string; stable_key: string }>('SELECT id, stable_key FROM title_clusters WHERE block_id = $1', [blockId]);
    const previousOf = new Map(details.filter((d) => d.clusterId).map((d) => [d.id, d.clusterId!]));
    const pairs: { cluster: PlannedCluster; id: string; overlap: number }[] = [];
    for (const p of final) {
      const counts = new Map<string, number>();
      for (const id of p.memberIds) {
        const prev = previousOf.get(id);
        if (prev) counts.set(prev, (counts.get(prev) ?? 0) + 1);
      }
      for (const [id, overlap] of counts) pairs.push({ cluster: p, id, overlap });
    }
    pairs.sort((a, b) => b.overlap - a.overlap || a.cluster.key.localeCompare(b.cluster.key) || a.id.localeCompare(b.id));
    const used = new Set<string>();
    for (const { cluster, id } of pairs) {
      if (cluster.id || used.has(id)) continue;
      cluster.id = id;
      used.add(id);
    }
    const previousByKey = new Map(previous.map((r) => [r.stable_key, r.id]));
    for (const p of final) {
      if (p.id) continue;
      const same = previousByKey.get(p.key);
      if (same && !used.has(same)) {
        p.id = same;
        used.add(same);
      } else p.id = randomUUID();
    }

    // write only what changed (an unchanged block keeps its row versions, and the analytics
    // fingerprint with them); keys that move are released first, so a key may pass between ids
    await db.query('DELETE FROM title_clusters WHERE block_id = $1 AND NOT (id = ANY ($2::uuid[]))', [blockId, final.map((p) => p.id!)]);
    const previousKey = new Map(previous.map((r) => [r.id, r.stable_key]));
    const rekeyed = final.filter((p) => previousKey.has(p.id!) && previousKey.get(p.id!) !== p.key).map((p) => p.id!);
    await db.query(`UPDATE title_clusters SET stable_key = 'moving:' || id::text WHERE block_id = $1 AND id = ANY ($2::uuid[])`, [blockId, rekeyed]);
    await db.query(
      `INSERT INTO title_clusters AS c (id, organization_id, block_id, stable_key, display_title, similarity, source)
       SELECT t.id, b.organization_id, b.id, t.key, t.title, t.similarity, t.source
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::numeric[], $6::text[]) AS t(id, key, title, similarity, source)
       CROSS JOIN catalog_blocks b WHERE b.id = $1
       ON CONFLICT (id) DO UPDATE SET stable_key = EXCLUDED.stable_key, display_title = EXCLUDED.display_title,
         similarity = EXCLUDED.similarity, source = EXCLUDED.source,
         updated_at = clock_timestamp()
       WHERE (c.stable_key, c.display_title, c.similarity, c.source) IS DISTINCT FROM (EXCLUDED.stable_key, EXCLUDED.display_title, EXCLUDED.similarity, EXCLUDED.source)`,
      [blockId, final.map((p) => p.id!), final.map((p) => p.key), final.map((p) => p.displayTitle), final.map((p) => p.similarity), final.map((p) => p.source)],
    );
    const mdIds = final.flatMap((p) => p.memberIds);
    const clusterIds = final.flatMap((p) => p.memberIds.map(() => p.id!));
    await db.query(
      `UPDATE musical_details md SET cluster_id = t.cluster_id
       FROM unnest($2::uuid[], $3::uuid[]) AS t(id, cluster_id)
       WHERE md.block_id = $1 AND md.id = t.id AND md.cluster_id IS DISTINCT FROM t.cluster_id`,
      [blockId, mdIds, clusterIds],
    );
    await db.query(
      `UPDATE title_clusters c SET earnings = s.earnings, entries = s.entries
       FROM (SELECT cluster_id, coalesce(trim_scale(sum(earnings_usd)), 0) AS earnings, count(*)::int AS entries
             FROM musical_details WHERE block_id = $1 AND cluster_id IS NOT NULL GROUP BY cluster_id) s
       WHERE c.id = s.cluster_id AND (c.earnings, c.entries) IS DISTINCT FROM (s.earnings, s.entries)`,
      [blockId],
    );
  });
}

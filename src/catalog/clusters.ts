// Title clusters of a block (docs/catalog.md "Clusters of a block"): derived from the musical
// details' effective titles by clusterTitles in a worker thread, then the users' moves laid over
// them. Cluster ids are stable: a rebuilt cluster takes the id of the previous cluster it shares
// the most musical details with, so links and bookmarks to a cluster survive re-clustering.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { lockBlock } from './blockStore.ts';
import { normalizeTitle, titleSimilarity, type TitleItem } from './cluster/index.ts';
import { boundKey } from './identity.ts';
import {
  effectiveValues,
  type EffectiveValues,
  type FetchedResult,
  type OverrideRow,
} from './musicalDetails.ts';

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
  return boundKey(normalizeTitle(displayTitle).key) || 'untitled';
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
async function latestMoves(
  db: Queryable,
  blockId: string,
): Promise<Map<string, { key: string; displayTitle: string | null }>> {
  const { rows } = await db.query<{ md: string; key: string; title: string | null }>(
    `SELECT DISTINCT ON (identity_key) musical_detail_id AS md, cluster_key AS key, cluster_display_title AS title
     FROM cluster_assignment_overrides WHERE block_id = $1 ORDER BY identity_key, created_at DESC, id DESC`,
    [blockId],
  );
  return new Map(
    rows.filter((r) => r.md !== null).map((r) => [r.md, { key: r.key, displayTitle: r.title }]),
  );
}

/** The clusters planned so far: in order, by key, and each musical detail's. */
interface ClusterPlan {
  planned: PlannedCluster[];
  byKey: Map<string, PlannedCluster>;
  clusterOf: Map<string, PlannedCluster>;
}

type PreviousCluster = { id: string; stable_key: string };
type Moves = Awaited<ReturnType<typeof latestMoves>>;

export async function refreshClusters(deps: Deps, blockId: string): Promise<void> {
  await withTransaction(deps.pool, async (db) => {
    if (!(await lockBlock(db, blockId))) return; // the block is gone
    // read under the block's lock: a refresh that read before a concurrent one wrote would write
    // back titles, clusters and moves older than that one's (corrections and moves lost until the next)
    const details = await loadBlockDetails(db, blockId);
    const items: TitleItem[] = details.map((d) => ({
      id: d.id,
      title: d.effective.title || d.title,
      artist: d.effective.artist,
      earnings: d.earningsUsd,
    }));
    const auto = items.length === 0 ? [] : (await deps.threads.clusterTitles({ items })).clusters;
    const titleOf = new Map(items.map((i) => [i.id, i.title]));
    const plan = planAutoClusters(auto);
    const { rows: previous } = await db.query<PreviousCluster>(
      'SELECT id, stable_key FROM title_clusters WHERE block_id = $1',
      [blockId],
    );
    const moves = await latestMoves(db, blockId);
    const changed = applyMoves(plan, details, previous, moves, titleOf);
    const final = plan.planned.filter((p) => p.memberIds.length > 0);
    rescoreChanged(changed, titleOf);
    assignStableIds(final, details, previous);
    await writeClusters(db, blockId, final, previous);
  });
}

/** The computed clusters, each under its display title's key (`#2`, `#3`... when taken). */
function planAutoClusters(
  auto: readonly { displayTitle: string; memberIds: readonly string[]; similarity: number }[],
): ClusterPlan {
  const plan: ClusterPlan = { planned: [], byKey: new Map(), clusterOf: new Map() };
  for (const c of auto) {
    let key = clusterKeyOf(c.displayTitle);
    for (let n = 2; plan.byKey.has(key); n++) key = `${clusterKeyOf(c.displayTitle)}#${n}`;
    const p: PlannedCluster = {
      key,
      displayTitle: c.displayTitle,
      memberIds: [...c.memberIds],
      similarity: c.similarity,
      source: 'auto',
    };
    plan.planned.push(p);
    plan.byKey.set(key, p);
    for (const id of p.memberIds) plan.clusterOf.set(id, p);
  }
  return plan;
}

/**
 * The users' moves: out of the computed cluster, into the target (created when it is gone; a
 * previous cluster whose key is no longer computed continues as its successor). The clusters
 * whose members changed.
 */
function applyMoves(
  plan: ClusterPlan,
  details: readonly BlockDetail[],
  previous: readonly PreviousCluster[],
  moves: Moves,
  titleOf: ReadonlyMap<string, string>,
): Set<PlannedCluster> {
  const { planned, byKey, clusterOf } = plan;
  const successorOf = successorFinder(details, previous, moves, new Map(clusterOf));
  const changed = new Set<PlannedCluster>();
  for (const [mdId, move] of moves) {
    const from = clusterOf.get(mdId);
    if (!from) continue;
    let to = byKey.get(move.key) ?? successorOf(move.key);
    if (to === from) continue;
    if (!to) {
      to = {
        key: move.key,
        displayTitle: move.displayTitle ?? titleOf.get(mdId) ?? '',
        memberIds: [],
        similarity: 1,
        source: 'user',
      };
      planned.push(to);
      byKey.set(move.key, to);
    }
    from.memberIds = from.memberIds.filter((id) => id !== mdId);
    to.memberIds.push(mdId);
    clusterOf.set(mdId, to);
    changed.add(from).add(to);
  }
  return changed;
}

/**
 * The computed cluster that continues a previous cluster whose key is no longer computed (its
 * display title changed): the one holding most of its members that were not moved into it.
 */
function successorFinder(
  details: readonly BlockDetail[],
  previous: readonly PreviousCluster[],
  moves: Moves,
  computedOf: ReadonlyMap<string, PlannedCluster>,
): (key: string) => PlannedCluster | undefined {
  const previousByKey = new Map(previous.map((r) => [r.stable_key, r.id]));
  const successors = new Map<string, PlannedCluster | undefined>();
  return (key) => {
    if (successors.has(key)) return successors.get(key);
    const previousId = previousByKey.get(key);
    const counts = new Map<PlannedCluster, number>();
    for (const d of previousId ? details : []) {
      const computed = computedOf.get(d.id);
      if (computed && d.clusterId === previousId && moves.get(d.id)?.key !== key)
        counts.set(computed, (counts.get(computed) ?? 0) + 1);
    }
    const successor = [...counts].sort(
      ([a, x], [b, y]) => y - x || (a.key < b.key ? -1 : 1),
    )[0]?.[0];
    successors.set(key, successor);
    return successor;
  };
}

/** A changed cluster's members sorted, its similarity that of its least similar member. */
function rescoreChanged(
  changed: ReadonlySet<PlannedCluster>,
  titleOf: ReadonlyMap<string, string>,
): void {
  for (const p of changed) {
    if (p.memberIds.length === 0) continue;
    p.memberIds.sort();
    p.similarity =
      Math.round(
        Math.min(
          1,
          ...p.memberIds.map((id) => titleSimilarity(p.displayTitle, titleOf.get(id) ?? '')),
        ) * 10_000,
      ) / 10_000;
  }
}

/** Stable ids: the previous cluster with the largest overlap, then one with the same key, else new. */
function assignStableIds(
  final: readonly PlannedCluster[],
  details: readonly BlockDetail[],
  previous: readonly PreviousCluster[],
): void {
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
  // on a tie, the previous cluster with the same key: a cluster a musical detail was moved into
  // keeps its id rather than taking that of the cluster the detail left
  const previousKeyOf = new Map(previous.map((r) => [r.id, r.stable_key]));
  const sameKey = (x: { cluster: PlannedCluster; id: string }) =>
    Number(previousKeyOf.get(x.id) === x.cluster.key);
  pairs.sort(
    (a, b) =>
      b.overlap - a.overlap ||
      sameKey(b) - sameKey(a) ||
      a.cluster.key.localeCompare(b.cluster.key) ||
      a.id.localeCompare(b.id),
  );
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
}

/**
 * Writes only what changed (an unchanged block keeps its row versions, and the analytics
 * fingerprint with them); keys that move are released first, so a key may pass between ids.
 */
async function writeClusters(
  db: Queryable,
  blockId: string,
  final: readonly PlannedCluster[],
  previous: readonly PreviousCluster[],
): Promise<void> {
  await db.query('DELETE FROM title_clusters WHERE block_id = $1 AND NOT (id = ANY ($2::uuid[]))', [
    blockId,
    final.map((p) => p.id!),
  ]);
  const previousKey = new Map(previous.map((r) => [r.id, r.stable_key]));
  const rekeyed = final
    .filter((p) => previousKey.has(p.id!) && previousKey.get(p.id!) !== p.key)
    .map((p) => p.id!);
  await db.query(
    `UPDATE title_clusters SET stable_key = 'moving:' || id::text WHERE block_id = $1 AND id = ANY ($2::uuid[])`,
    [blockId, rekeyed],
  );
  await followRekeyedClusters(
    db,
    blockId,
    previous.map((r) => r.stable_key),
    final.filter((p) => rekeyed.includes(p.id!)).map((p) => [previousKey.get(p.id!)!, p.key]),
  );
  await db.query(
    `INSERT INTO title_clusters AS c (id, organization_id, block_id, stable_key, display_title, similarity, source)
     SELECT t.id, b.organization_id, b.id, t.key, t.title, t.similarity, t.source
     FROM unnest($2::uuid[], $3::text[], $4::text[], $5::numeric[], $6::text[]) AS t(id, key, title, similarity, source)
     CROSS JOIN catalog_blocks b WHERE b.id = $1
     ON CONFLICT (id) DO UPDATE SET stable_key = EXCLUDED.stable_key, display_title = EXCLUDED.display_title,
       similarity = EXCLUDED.similarity, source = EXCLUDED.source,
       updated_at = clock_timestamp()
     WHERE (c.stable_key, c.display_title, c.similarity, c.source) IS DISTINCT FROM (EXCLUDED.stable_key, EXCLUDED.display_title, EXCLUDED.similarity, EXCLUDED.source)`,
    [
      blockId,
      final.map((p) => p.id!),
      final.map((p) => p.key),
      final.map((p) => p.displayTitle),
      final.map((p) => p.similarity),
      final.map((p) => p.source),
    ],
  );
  await writeMemberships(db, blockId, final);
}

/** Each musical detail's cluster, then each cluster's earnings and entries. */
async function writeMemberships(
  db: Queryable,
  blockId: string,
  final: readonly PlannedCluster[],
): Promise<void> {
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
}

/**
 * A cluster that keeps its id under another key (its display title changed) takes along what names
 * it by key, so that the users' corrections survive re-clustering (docs/catalog.md): the moves into
 * it, its track products (their ids) and the product overrides keyed by them. A key another previous
 * cluster had is taken only when that cluster is renamed too; else what names that key stays its own.
 */
async function followRekeyedClusters(
  db: Queryable,
  blockId: string,
  previousKeys: readonly string[],
  rekeys: readonly [from: string, to: string][],
): Promise<void> {
  const renamed = new Map(rekeys);
  const taken = new Set(previousKeys);
  for (let dropped = true; dropped;) {
    dropped = false;
    for (const [from, to] of renamed) {
      if (taken.has(to) && !renamed.has(to)) {
        renamed.delete(from);
        dropped = true;
      }
    }
  }
  if (renamed.size === 0) return;
  await db.query(
    `UPDATE cluster_assignment_overrides o SET cluster_key = m.to_key FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key)
     WHERE o.block_id = $1 AND o.cluster_key = m.from_key`,
    [blockId, [...renamed.keys()], [...renamed.values()]],
  );
  // a track's stable key is `track:cluster:<cluster key>[|<version>]␟<artist>` (src/catalog/products.ts);
  // a version's former cluster (`song|live`) passing to its song keeps its tracks' keys: they name the recording
  const prefixes = [...renamed]
    .filter(([from, to]) => !from.startsWith(`${to}|`))
    .flatMap(([from, to]) =>
      ['\u001f', '|'].map(
        (sep) => [`track:cluster:${from}${sep}`, `track:cluster:${to}${sep}`] as const,
      ),
    );
  const rekey = (stableKey: string): string | null => {
    for (const [from, to] of prefixes)
      if (stableKey.startsWith(from)) return to + stableKey.slice(from.length);
    return null;
  };
  await db.query(
    `UPDATE product_overrides o SET product_key = m.to_prefix || substr(o.product_key, length(m.from_prefix) + 1)
     FROM unnest($2::text[], $3::text[]) AS m(from_prefix, to_prefix)
     WHERE o.block_id = $1 AND left(o.product_key, length(m.from_prefix)) = m.from_prefix`,
    [blockId, prefixes.map(([from]) => from), prefixes.map(([, to]) => to)],
  );
  const { rows: tracks } = await db.query<{ id: string; stable_key: string }>(
    `SELECT id, stable_key FROM products WHERE block_id = $1 AND kind = 'track'`,
    [blockId],
  );
  const moving = tracks.flatMap((p) => {
    const key = rekey(p.stable_key);
    return key === null ? [] : [{ id: p.id, key }];
  });
  if (moving.length === 0) return;
  // released first, so that two tracks may swap keys
  await db.query(
    `UPDATE products SET stable_key = 'moving:' || id::text WHERE block_id = $1 AND id = ANY ($2::uuid[])`,
    [blockId, moving.map((p) => p.id)],
  );
  await db.query(
    `UPDATE products p SET stable_key = t.key FROM unnest($2::uuid[], $3::text[]) AS t(id, key)
     WHERE p.block_id = $1 AND p.id = t.id AND NOT EXISTS (SELECT 1 FROM products o WHERE o.block_id = $1 AND o.stable_key = t.key)`,
    [blockId, moving.map((p) => p.id), moving.map((p) => p.key)],
  );
}

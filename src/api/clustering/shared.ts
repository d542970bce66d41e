// Reading a block's title clusters and their entries within the caller's reach.
import { visibleDetails, type Caller, type MusicalDetailRecord } from '../../catalog/musicalDetails.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';

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

export interface ClusterEntry {
  id: string;
  identityKey: string;
  isrc: string | null;
  title: string;
  artist: string | null;
  rawTitle: string;
  rawArtist: string | null;
  earningsUsd: string;
  rowCount: number;
  state: string;
  /** placed in this cluster by a user (clustering.updateClustering) */
  moved: boolean;
}

export const CLUSTER_COLUMNS = `c.id, c.block_id AS "blockId", c.stable_key AS "stableKey", c.display_title AS "displayTitle",
  c.similarity::float8 AS similarity, c.entries, c.earnings::text AS earnings, c.source, c.created_at AS "createdAt", c.updated_at AS "updatedAt"`;

type Row = Omit<ClusterRecord, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };
export const clusterRecord = (r: Row): ClusterRecord => ({ ...r, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() });

/** These clusters of the block, in the order asked; CLUSTER_NOT_FOUND when any is not in it. */
export async function clustersOfBlock(db: Queryable, blockId: string, ids: readonly string[]): Promise<ClusterRecord[]> {
  const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
  const { rows } = await db.query<Row>(`SELECT ${CLUSTER_COLUMNS} FROM title_clusters c WHERE c.block_id = $1 AND c.id = ANY ($2::uuid[])`, [blockId, unique]);
  if (rows.length !== unique.length) {
    const found = new Set(rows.map((r) => r.id));
    throw new AppError('CLUSTER_NOT_FOUND', `Clusters not found: ${unique.filter((id) => !found.has(id)).slice(0, 10).join(', ')}`);
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  return unique.map((id) => clusterRecord(byId.get(id)!));
}

/** Entries of musical details (by id, in the order given) with their effective title and artist. */
export async function entriesOf(db: Queryable, caller: Caller, blockId: string, ids: readonly string[]): Promise<Map<string, ClusterEntry>> {
  if (ids.length === 0) return new Map();
  const records = await visibleDetails(db, caller, ids, blockId);
  const { rows: moved } = await db.query<{ md: string }>(
    `SELECT DISTINCT ON (o.identity_key) o.musical_detail_id AS md FROM cluster_assignment_overrides o
     WHERE o.block_id = $1 AND o.musical_detail_id = ANY ($2::uuid[]) ORDER BY o.identity_key, o.created_at DESC`,
    [blockId, ids],
  );
  const movedIds = new Set(moved.map((m) => m.md));
  return new Map(records.map((r) => [r.id, entry(r, movedIds.has(r.id))]));
}

export function entry(r: MusicalDetailRecord, moved: boolean): ClusterEntry {
  return {
    id: r.id,
    identityKey: r.identityKey,
    isrc: r.isrc,
    title: r.effective.title,
    artist: r.effective.artist,
    rawTitle: r.title,
    rawArtist: r.artist,
    earningsUsd: r.earningsUsd,
    rowCount: Number(r.rowCount),
    state: r.state,
    moved,
  };
}

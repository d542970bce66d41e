// The entries of a block's title clusters as the clustering procedures answer them: musical
// details within the caller's reach, with their effective title and artist and whether a user
// placed them in their cluster.
import { movedDetailIds } from '../../catalog/clusterStore.ts';
import { visibleDetails } from '../../catalog/musicalDetailStore.ts';
import type { Caller, MusicalDetailRecord } from '../../catalog/musicalDetails.ts';
import type { Queryable } from '../../db/pool.ts';

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

/** Entries of musical details (by id, in the order given) with their effective title and artist. */
export async function entriesOf(
  db: Queryable,
  caller: Caller,
  blockId: string,
  ids: readonly string[],
): Promise<Map<string, ClusterEntry>> {
  if (ids.length === 0) return new Map();
  const records = await visibleDetails(db, caller, ids, blockId);
  const moved = await movedDetailIds(db, blockId, ids);
  return new Map(records.map((r) => [r.id, entry(r, moved.has(r.id))]));
}

function entry(r: MusicalDetailRecord, moved: boolean): ClusterEntry {
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

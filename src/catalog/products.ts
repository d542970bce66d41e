// Products of a block (docs/catalog.md "Products"): derived, never edited in place. One track
// product per recording: a song (title cluster), its artist and its version (the title's
// distinguishing tags: live, remix...), merged when enrichment says two of them are one recording
// (same provider id or ISRC); album products group the tracks by release title and release artist.
// The users' corrections are rows of product_overrides, laid over on every refresh: field values
// (`update_by_id`) and links of musical details (`link`: add or remove). A refresh depends only on
// the musical details, the clusters and those overrides, so running it twice changes nothing.
import type { Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { atCommonScale, compareDecimals } from '../decimal.ts';
import { lockBlock } from './blockStore.ts';
import { loadBlockDetails, type BlockDetail } from './clusters.ts';
import { parseTitle } from './cluster/normalize.ts';
import { sameSignature } from './cluster/similarity.ts';
import { boundKey, normalizeText } from './identity.ts';

/** Fields a product override may set. */
export const productOverrideFields = [
  'title',
  'artist',
  'releaseDate',
  'genres',
  'songWriters',
  'imageUrl',
] as const;

/** A link override: the musical detail (by identity key) added to or removed from the product. */
export interface LinkOverrideValues {
  identityKey: string;
  action: 'add' | 'remove';
}

interface ProductOverrideRow {
  id: string;
  productKey: string;
  kind: string;
  values: Record<string, unknown>;
  createdBy: string | null;
}

/**
 * 'YYYY' → YYYY-01-01, 'YYYY-MM' → YYYY-MM-01, 'YYYY-MM-DD' as is; anything else (or an impossible
 * date, year 0 included: PostgreSQL has none, and one such result would fail every derivation of
 * the block's products) is unknown.
 */
export function releaseDateOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(value.trim());
  if (!m || m[1] === '0000') return null;
  const iso = `${m[1]}-${m[2] ?? '01'}-${m[3] ?? '01'}`;
  const d = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === iso ? iso : null;
}

/** A product's title or artist: its first 500 characters (code points; an index entry of the title has a bounded size). */
const clipText = (s: string | null): string | null =>
  s === null ? null : Array.from(s).slice(0, 500).join('');

const strings = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim())
    : [];
function union(lists: string[][]): string[] {
  const seen = new Map<string, string>();
  for (const list of lists)
    for (const s of list) if (!seen.has(s.toLowerCase())) seen.set(s.toLowerCase(), s);
  return [...seen.values()];
}
function earliest(dates: (string | null)[]): string | null {
  return dates.filter((d): d is string => d !== null).sort()[0] ?? null;
}
/**
 * An artist as products compare it: normalized, without a featured-artist credit (`feat.`, `ft.`,
 * `featuring`, bracketed or not), so that a fetched `Orla Finn feat. Mara Velde` is the statement's
 * `Orla Finn`. A credit word that starts the name is part of it.
 */
export function artistKey(raw: string | null | undefined): string {
  return boundKey(normalizeText(raw).replace(/ (?:feat|ft|featuring)(?: .*)?$/, ''));
}

/**
 * A product key in its current form: the artist part of a track key (`track:cluster:<key>␟<artist>`)
 * or album key (`album:<title>␟<artist>`) as artistKey has it. Keys stored while featured credits
 * were part of the artist are moved to this form, so the products keep their ids and corrections.
 */
export function currentProductKey(key: string): string {
  const at = key.indexOf('\u001f');
  if (at < 0 || !(key.startsWith('track:cluster:') || key.startsWith('album:'))) return key;
  // a bounded artist (identity.ts boundKey: `~` and a hash) was made by artistKey already
  if (key.includes('~', at)) return key;
  return `${key.slice(0, at)}\u001f${key.slice(at + 1).replace(/ (?:feat|ft|featuring)(?: .*)?$/s, '')}`;
}

/** Moves product keys and the corrections naming them to their current form (currentProductKey). */
async function rekeyProducts(db: Queryable, blockId: string): Promise<void> {
  const { rows } = await db.query<{ key: string; product: boolean }>(
    `SELECT stable_key AS key, TRUE AS product FROM products WHERE block_id = $1
     UNION ALL SELECT DISTINCT product_key, FALSE FROM product_overrides WHERE block_id = $1`,
    [blockId],
  );
  const moves = rows.filter((r) => currentProductKey(r.key) !== r.key);
  if (moves.length === 0) return;
  const overrides = moves.filter((r) => !r.product);
  await db.query(
    `UPDATE product_overrides o SET product_key = m.to_key FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key)
     WHERE o.block_id = $1 AND o.product_key = m.from_key`,
    [blockId, overrides.map((r) => r.key), overrides.map((r) => currentProductKey(r.key))],
  );
  // one product per key: the first that moves there when none has it (the others are derived away)
  const taken = new Set(rows.filter((r) => r.product).map((r) => r.key));
  const products = moves
    .filter((r) => r.product)
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .filter((r) => {
      const to = currentProductKey(r.key);
      if (taken.has(to)) return false;
      taken.add(to);
      return true;
    });
  await db.query(
    `UPDATE products p SET stable_key = m.to_key FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key)
     WHERE p.block_id = $1 AND p.stable_key = m.from_key`,
    [blockId, products.map((r) => r.key), products.map((r) => currentProductKey(r.key))],
  );
}

class UnionFind<T> {
  private readonly parent = new Map<T, T>();
  find(x: T): T {
    let p = this.parent.get(x) ?? x;
    if (p !== x) {
      p = this.find(p);
      this.parent.set(x, p);
    }
    return p;
  }
  union(a: T, b: T): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra > rb ? ra : rb, ra > rb ? rb : ra);
  }
}

interface PlannedProduct {
  key: string;
  kind: 'track' | 'album';
  clusterId: string | null;
  parentKey: string | null;
  title: string;
  artist: string | null;
  isrc: string | null;
  releaseDate: string | null;
  genres: string[];
  songWriters: string[];
  composers: string[];
  imageUrl: string | null;
  /** musical detail id → link source and who made it */
  links: Map<string, { source: 'auto' | 'user'; createdBy: string | null }>;
}

/** Overrides laid over the derived values, field by field, in creation order. */
function applyOverrides(p: PlannedProduct, overrides: readonly ProductOverrideRow[]): void {
  for (const o of overrides) {
    if (o.kind !== 'update_by_id') continue;
    const v = o.values;
    if (typeof v.title === 'string' && v.title.trim() !== '') p.title = v.title;
    if (v.artist !== undefined)
      p.artist = typeof v.artist === 'string' && v.artist !== '' ? v.artist : null;
    if (v.releaseDate !== undefined) p.releaseDate = releaseDateOf(v.releaseDate);
    if (v.genres !== undefined) p.genres = strings(v.genres);
    if (v.songWriters !== undefined) p.songWriters = strings(v.songWriters);
    if (v.imageUrl !== undefined)
      p.imageUrl = typeof v.imageUrl === 'string' && v.imageUrl !== '' ? v.imageUrl : null;
  }
}

/** Track values from its musical details, highest USD earnings first (ties by id). */
function trackValues(
  key: string,
  clusterId: string | null,
  members: BlockDetail[],
): PlannedProduct {
  const sorted = [...members].sort(
    (a, b) => compareDecimals(b.earningsUsd, a.earningsUsd) || (a.id < b.id ? -1 : 1),
  );
  const top = sorted[0]!;
  return {
    key,
    kind: 'track',
    clusterId,
    parentKey: null,
    title: clipText(top.effective.title || top.title)!,
    artist: clipText(top.effective.artist),
    isrc: sorted.map((m) => m.isrc ?? m.result?.isrc ?? null).find((x) => x) ?? null,
    releaseDate: earliest(sorted.map((m) => releaseDateOf(m.effective.releaseDate))),
    genres: union(sorted.map((m) => strings(m.effective.genres))),
    songWriters: union(sorted.map((m) => strings(m.effective.songWriters))),
    composers: union(
      sorted.map((m) =>
        (m.effective.fetchedComposers as { name?: unknown }[]).flatMap((c) =>
          typeof c?.name === 'string' ? [c.name] : [],
        ),
      ),
    ),
    imageUrl:
      sorted.map((m) => m.effective.imageUrl).find((x) => typeof x === 'string' && x !== '') ??
      null,
    links: new Map(),
  };
}

/** The release a musical detail belongs to: corrected album, else fetched, else as written. */
function releaseOf(m: BlockDetail): { title: string; artist: string | null } | null {
  const title = strings(m.effective.albums)[0] ?? m.result?.releaseTitle ?? m.releaseTitle;
  if (!title || !normalizeText(title)) return null;
  return { title, artist: m.result?.releaseArtist ?? m.releaseArtist ?? m.effective.artist };
}

/**
 * The part of a track key naming its recording: the song's cluster key, and for a version its
 * distinguishing tags after `|` (`hallelujah|live:olympia`: the key its own cluster had while
 * clusters were recordings, so its products and their corrections keep their keys).
 */
export function recordingKey(songKey: string, signature: string): string {
  return signature ? boundKey(`${songKey}|${signature}`) : songKey;
}

/**
 * The recording signature each musical detail is grouped and keyed under: within one song and
 * artist, a signature one typo from a more common one (`remix:tieso` beside `remix:tiesto`) is that
 * one, so a misspelt remixer credit neither splits the track nor renames it; another remixer stays
 * another recording. More common: more musical details, then higher earnings, then code-unit order.
 */
function sameRecordings(
  details: readonly BlockDetail[],
  versionOf: ReadonlyMap<string, string>,
  artistOf: (m: BlockDetail) => string,
): Map<string, string> {
  const { units } = atCommonScale(details.map((m) => m.earningsUsd));
  const tally = new Map<string, Map<string, { count: number; units: bigint }>>();
  const songOf = (m: BlockDetail) => `${m.clusterId}\u001f${artistOf(m)}`;
  details.forEach((m, i) => {
    if (!m.clusterId) return;
    const song = tally.get(songOf(m)) ?? new Map<string, { count: number; units: bigint }>();
    const signature = versionOf.get(m.id)!;
    const t = song.get(signature) ?? { count: 0, units: 0n };
    t.count++;
    t.units += units[i]!;
    song.set(signature, t);
    tally.set(songOf(m), song);
  });
  const canonical = new Map<string, Map<string, string>>();
  for (const [song, signatures] of tally) {
    const ordered = [...signatures].sort(
      ([a, x], [b, y]) =>
        y.count - x.count ||
        (y.units > x.units ? 1 : y.units < x.units ? -1 : 0) ||
        (a < b ? -1 : a > b ? 1 : 0),
    );
    const chosen: string[] = [];
    const of = new Map<string, string>();
    for (const [signature] of ordered) {
      const same = chosen.find((c) => sameSignature(c, signature));
      if (same === undefined) chosen.push(signature);
      of.set(signature, same ?? signature);
    }
    canonical.set(song, of);
  }
  return new Map(
    details.map((m) => {
      const signature = versionOf.get(m.id)!;
      return [m.id, canonical.get(songOf(m))?.get(signature) ?? signature];
    }),
  );
}

export async function refreshProducts(deps: Deps, blockId: string): Promise<void> {
  await withTransaction(deps.pool, async (db) => {
    if (!(await lockBlock(db, blockId))) return;
    await derive(db, blockId);
  });
}

/** What a derivation reads: the block's musical details, its clusters' keys and the users' corrections. */
interface DeriveInputs {
  details: BlockDetail[];
  clusterKey: Map<string, string>;
  overrideRows: ProductOverrideRow[];
  /** the block's track keys as they stand, before this derivation */
  trackKeys: Set<string>;
}

/** The automatic track of each musical detail (by id): its key and its cluster. */
interface AutoTracks {
  keyOf: Map<string, string>;
  clusterOf: Map<string, string | null>;
}

type TrackMember = { m: BlockDetail; source: 'auto' | 'user'; createdBy: string | null };

async function derive(db: Queryable, blockId: string): Promise<void> {
  await rekeyProducts(db, blockId);
  const inputs = await loadDeriveInputs(db, blockId);
  const auto = autoTracks(inputs.details, inputs.clusterKey, inputs.trackKeys);
  const members = linkedMembers(inputs.details, inputs.overrideRows, auto.keyOf);
  const planned = planProducts(members, auto.clusterOf, inputs.overrideRows);
  await writeProducts(db, blockId, planned);
}

async function loadDeriveInputs(db: Queryable, blockId: string): Promise<DeriveInputs> {
  const details = await loadBlockDetails(db, blockId);
  const { rows: clusters } = await db.query<{ id: string; stable_key: string }>(
    'SELECT id, stable_key FROM title_clusters WHERE block_id = $1',
    [blockId],
  );
  const clusterKey = new Map(clusters.map((c) => [c.id, c.stable_key]));
  const { rows: overrideRows } = await db.query<ProductOverrideRow>(
    `SELECT id, product_key AS "productKey", kind, "values", created_by AS "createdBy" FROM product_overrides
     WHERE block_id = $1 ORDER BY created_at, id`,
    [blockId],
  );
  const { rows: tracks } = await db.query<{ stable_key: string }>(
    `SELECT stable_key FROM products WHERE block_id = $1 AND kind = 'track'`,
    [blockId],
  );
  return { details, clusterKey, overrideRows, trackKeys: new Set(tracks.map((r) => r.stable_key)) };
}

/**
 * 1. groups: a song (cluster), version and artist each (clusters group titles only; one title by
 * two artists is two tracks; a musical detail without a cluster stands alone), joined by shared
 * recordings; a track's key is the smallest of its members' keys that names a track already
 * (a line joining a track keeps its id and corrections), else the smallest (cluster key, else
 * the identity key); its cluster is that key's.
 */
function autoTracks(
  details: readonly BlockDetail[],
  clusterKey: ReadonlyMap<string, string>,
  trackKeys: ReadonlySet<string>,
): AutoTracks {
  const artistOf = (m: BlockDetail) => artistKey(m.effective.artist);
  const versionOf = new Map(
    details.map((m) => [m.id, parseTitle(m.effective.title || m.title).signature]),
  );
  const recordingOf = sameRecordings(details, versionOf, artistOf);
  const songKeyOf = (m: BlockDetail) =>
    recordingKey(clusterKey.get(m.clusterId!)!, recordingOf.get(m.id)!);
  const groupOf = (m: BlockDetail) =>
    m.clusterId && clusterKey.has(m.clusterId)
      ? `c:${m.clusterId}|${recordingOf.get(m.id)}\u001f${artistOf(m)}`
      : `m:${m.id}`;
  const keyOf = new Map<string, string>();
  const clusterOf = new Map<string, string | null>();
  const hasCluster = (m: BlockDetail) => m.clusterId !== null && clusterKey.has(m.clusterId);
  const memberKey = (m: BlockDetail) =>
    hasCluster(m)
      ? `track:cluster:${songKeyOf(m)}\u001f${artistOf(m)}`
      : `track:md:${m.identityKey}`;
  for (const members of groupsBySharedRecording(details, groupOf).values()) {
    const keyed = members
      .map((m) => ({ m, key: memberKey(m) }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const chosen = keyed.find((k) => trackKeys.has(k.key)) ?? keyed[0]!;
    const key = chosen.key;
    const cluster =
      keyed.find((k) => k.key === key && hasCluster(k.m))?.m.clusterId ??
      keyed.find((k) => hasCluster(k.m))?.m.clusterId ??
      null;
    for (const m of members) {
      keyOf.set(m.id, key);
      clusterOf.set(m.id, cluster);
    }
  }
  return { keyOf, clusterOf };
}

/** The musical details by group root, groups sharing a recording (provider id or ISRC) joined. */
function groupsBySharedRecording(
  details: readonly BlockDetail[],
  groupOf: (m: BlockDetail) => string,
): Map<string, BlockDetail[]> {
  const uf = new UnionFind<string>();
  const byRecording = new Map<string, string>();
  for (const m of details) {
    const g = groupOf(m);
    // the recording of the result in effect: the latest found one, also while a re-fetch is pending or after it failed
    // (the values shown come from it too)
    const recordings = [
      m.result && m.provider && m.providerId ? `p:${m.provider}:${m.providerId}` : null,
      m.isrc ? `i:${m.isrc}` : null,
      m.result?.isrc ? `i:${m.result.isrc.replace(/[^A-Za-z0-9]/g, '').toUpperCase()}` : null,
    ];
    for (const r of recordings) {
      if (!r) continue;
      const other = byRecording.get(r);
      if (other) uf.union(other, g);
      else byRecording.set(r, g);
    }
  }
  const groups = new Map<string, BlockDetail[]>();
  for (const m of details) {
    const root = uf.find(groupOf(m));
    const list = groups.get(root) ?? [];
    list.push(m);
    groups.set(root, list);
  }
  return groups;
}

/** 2. the members of each track key: the automatic track, with the users' links laid over. */
function linkedMembers(
  details: readonly BlockDetail[],
  overrideRows: readonly ProductOverrideRow[],
  autoKeyOf: ReadonlyMap<string, string>,
): Map<string, TrackMember[]> {
  const { userLink, removed } = userLinks(details, overrideRows);
  const autoKeys = new Set(autoKeyOf.values());
  const members = new Map<string, TrackMember[]>();
  for (const m of details) {
    const user = userLink.get(m.id);
    let key: string | undefined;
    let source: 'auto' | 'user' = 'auto';
    let createdBy: string | null = null;
    if (user && autoKeys.has(user.key)) {
      key = user.key;
      source = 'user';
      createdBy = user.createdBy;
    } else if (!removed.get(m.id)?.has(autoKeyOf.get(m.id)!)) key = autoKeyOf.get(m.id);
    if (!key) continue; // unlinked by the user
    const list = members.get(key) ?? [];
    list.push({ m, source, createdBy });
    members.set(key, list);
  }
  return members;
}

/** The users' links, in creation order: add moves a musical detail to a track; remove takes it out. */
function userLinks(
  details: readonly BlockDetail[],
  overrideRows: readonly ProductOverrideRow[],
): {
  userLink: Map<string, { key: string; createdBy: string | null }>;
  removed: Map<string, Set<string>>;
} {
  const byIdentity = new Map(details.map((m) => [m.identityKey, m]));
  const userLink = new Map<string, { key: string; createdBy: string | null }>();
  const removed = new Map<string, Set<string>>();
  for (const o of overrideRows) {
    if (o.kind !== 'link') continue;
    const v = o.values as unknown as LinkOverrideValues;
    const m = byIdentity.get(v.identityKey);
    if (!m) continue;
    if (v.action === 'add') {
      // a link the user made replaces whatever they took the musical detail out of before
      userLink.set(m.id, { key: o.productKey, createdBy: o.createdBy });
      removed.delete(m.id);
    } else {
      if (userLink.get(m.id)?.key === o.productKey) userLink.delete(m.id);
      const set = removed.get(m.id) ?? new Set<string>();
      set.add(o.productKey);
      removed.set(m.id, set);
    }
  }
  return { userLink, removed };
}

/** The tracks of one album: its release and its tracks' musical details. */
interface PlannedAlbum {
  tracks: PlannedProduct[];
  mds: BlockDetail[];
  release: { title: string; artist: string | null };
}

/** 3. tracks, then albums over them, each with the users' corrections laid over. */
function planProducts(
  members: ReadonlyMap<string, TrackMember[]>,
  autoClusterOf: ReadonlyMap<string, string | null>,
  overrideRows: readonly ProductOverrideRow[],
): PlannedProduct[] {
  const overridesByKey = new Map<string, ProductOverrideRow[]>();
  for (const o of overrideRows)
    overridesByKey.set(o.productKey, [...(overridesByKey.get(o.productKey) ?? []), o]);
  const planned: PlannedProduct[] = [];
  const albums = new Map<string, PlannedAlbum>();
  for (const [key, list] of [...members.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const autoMembers = list.filter((x) => x.source === 'auto');
    const cluster =
      autoMembers.length > 0
        ? autoClusterOf.get(autoMembers[0]!.m.id)!
        : (autoClusterOf.get(list[0]!.m.id) ?? null);
    const track = trackValues(
      key,
      cluster,
      list.map((x) => x.m),
    );
    for (const x of list) track.links.set(x.m.id, { source: x.source, createdBy: x.createdBy });
    applyOverrides(track, overridesByKey.get(key) ?? []);
    planned.push(track);
    addToAlbum(albums, track, list);
  }
  for (const [key, album] of albums) {
    const p = albumValues(key, album);
    applyOverrides(p, overridesByKey.get(key) ?? []);
    planned.push(p);
  }
  return planned;
}

/** Puts a track under the album of its top-earning musical detail that names a release, if any. */
function addToAlbum(
  albums: Map<string, PlannedAlbum>,
  track: PlannedProduct,
  list: readonly TrackMember[],
): void {
  const sorted = [...list.map((x) => x.m)].sort(
    (a, b) => compareDecimals(b.earningsUsd, a.earningsUsd) || (a.id < b.id ? -1 : 1),
  );
  const release = sorted.map(releaseOf).find((r) => r !== null);
  if (!release) return;
  const albumKey = `album:${boundKey(normalizeText(release.title))}\u001f${artistKey(release.artist)}`;
  track.parentKey = albumKey;
  const album = albums.get(albumKey) ?? { tracks: [], mds: [], release };
  album.tracks.push(track);
  album.mds.push(...sorted);
  albums.set(albumKey, album);
}

function albumValues(key: string, album: PlannedAlbum): PlannedProduct {
  return {
    key,
    kind: 'album',
    clusterId: null,
    parentKey: null,
    title: clipText(album.release.title)!,
    artist: clipText(album.release.artist),
    isrc: null,
    releaseDate: earliest(album.tracks.map((t) => t.releaseDate)),
    genres: union(album.tracks.map((t) => t.genres)),
    songWriters: union(album.tracks.map((t) => t.songWriters)),
    composers: union(album.tracks.map((t) => t.composers)),
    imageUrl: album.tracks.map((t) => t.imageUrl).find((x) => x !== null) ?? null,
    links: new Map(album.mds.map((m) => [m.id, { source: 'auto' as const, createdBy: null }])),
  };
}

/** 4. write: upsert by stable key (ids survive), drop the rest, links by difference. */
async function writeProducts(
  db: Queryable,
  blockId: string,
  planned: readonly PlannedProduct[],
): Promise<void> {
  await upsertProducts(db, blockId, planned);
  await db.query(
    'DELETE FROM products WHERE block_id = $1 AND NOT (stable_key = ANY ($2::text[]))',
    [blockId, planned.map((p) => p.key)],
  );
  const { rows: current } = await db.query<{ id: string; stable_key: string }>(
    'SELECT id, stable_key FROM products WHERE block_id = $1',
    [blockId],
  );
  const idOf = new Map(current.map((r) => [r.stable_key, r.id]));
  // parents
  await db.query(
    `UPDATE products p SET parent_id = t.parent_id FROM unnest($2::uuid[], $3::uuid[]) AS t(id, parent_id)
     WHERE p.block_id = $1 AND p.id = t.id AND p.parent_id IS DISTINCT FROM t.parent_id`,
    [
      blockId,
      planned.map((p) => idOf.get(p.key)!),
      planned.map((p) => (p.parentKey ? idOf.get(p.parentKey)! : null)),
    ],
  );
  // corrections follow their product by key
  await db.query(
    `UPDATE product_overrides o SET product_id = p.id FROM products p
     WHERE o.block_id = $1 AND p.block_id = o.block_id AND p.stable_key = o.product_key AND o.product_id IS DISTINCT FROM p.id`,
    [blockId],
  );
  await writeProductLinks(db, blockId, planned, idOf);
  await db.query(
    `UPDATE products p SET earnings = s.earnings, musical_detail_count = s.n
     FROM (SELECT p2.id, coalesce(trim_scale(sum(md.earnings_usd)), 0) AS earnings, count(md.id)::int AS n
           FROM products p2 LEFT JOIN product_musical_details pmd ON pmd.product_id = p2.id
           LEFT JOIN musical_details md ON md.id = pmd.musical_detail_id
           WHERE p2.block_id = $1 GROUP BY p2.id) s
     WHERE p.id = s.id AND (p.earnings, p.musical_detail_count) IS DISTINCT FROM (s.earnings, s.n)`,
    [blockId],
  );
}

async function upsertProducts(
  db: Queryable,
  blockId: string,
  planned: readonly PlannedProduct[],
): Promise<void> {
  await db.query(
    `INSERT INTO products AS p (organization_id, block_id, kind, stable_key, cluster_id, title, artist, isrc, release_date, genres, song_writers, composers, image_url)
     SELECT b.organization_id, b.id, t.kind, t.key, t.cluster_id, t.title, t.artist, t.isrc, t.release_date, t.genres::text[], t.song_writers::text[], t.composers::text[], t.image_url
     FROM unnest($2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::date[], $9::jsonb[], $10::jsonb[], $11::jsonb[], $12::text[])
       AS t0(kind, key, cluster_id, title, artist, isrc, release_date, genres, song_writers, composers, image_url)
     CROSS JOIN LATERAL (SELECT t0.kind, t0.key, t0.cluster_id, t0.title, t0.artist, t0.isrc, t0.release_date, t0.image_url,
         ARRAY(SELECT jsonb_array_elements_text(t0.genres)) AS genres, ARRAY(SELECT jsonb_array_elements_text(t0.song_writers)) AS song_writers,
         ARRAY(SELECT jsonb_array_elements_text(t0.composers)) AS composers) t
     CROSS JOIN catalog_blocks b WHERE b.id = $1
     ON CONFLICT (block_id, stable_key) DO UPDATE SET kind = EXCLUDED.kind, cluster_id = EXCLUDED.cluster_id, title = EXCLUDED.title,
       artist = EXCLUDED.artist, isrc = EXCLUDED.isrc, release_date = EXCLUDED.release_date, genres = EXCLUDED.genres,
       song_writers = EXCLUDED.song_writers, composers = EXCLUDED.composers, image_url = EXCLUDED.image_url, updated_at = clock_timestamp()
     WHERE (p.kind, p.cluster_id, p.title, p.artist, p.isrc, p.release_date, p.genres, p.song_writers, p.composers, p.image_url)
       IS DISTINCT FROM (EXCLUDED.kind, EXCLUDED.cluster_id, EXCLUDED.title, EXCLUDED.artist, EXCLUDED.isrc, EXCLUDED.release_date,
                         EXCLUDED.genres, EXCLUDED.song_writers, EXCLUDED.composers, EXCLUDED.image_url)`,
    [
      blockId,
      planned.map((p) => p.kind),
      planned.map((p) => p.key),
      planned.map((p) => p.clusterId),
      planned.map((p) => p.title),
      planned.map((p) => p.artist),
      planned.map((p) => p.isrc),
      planned.map((p) => p.releaseDate),
      planned.map((p) => JSON.stringify(p.genres)),
      planned.map((p) => JSON.stringify(p.songWriters)),
      planned.map((p) => JSON.stringify(p.composers)),
      planned.map((p) => p.imageUrl),
    ],
  );
}

/** The product ↔ musical detail links: those no longer planned deleted, the new ones inserted. */
async function writeProductLinks(
  db: Queryable,
  blockId: string,
  planned: readonly PlannedProduct[],
  idOf: ReadonlyMap<string, string>,
): Promise<void> {
  const link = {
    product: [] as string[],
    md: [] as string[],
    source: [] as string[],
    createdBy: [] as (string | null)[],
  };
  for (const p of planned) {
    for (const [md, l] of p.links) {
      link.product.push(idOf.get(p.key)!);
      link.md.push(md);
      link.source.push(l.source);
      link.createdBy.push(l.createdBy);
    }
  }
  await db.query(
    `DELETE FROM product_musical_details pmd USING products p
     WHERE p.id = pmd.product_id AND p.block_id = $1
       AND NOT EXISTS (SELECT 1 FROM unnest($2::uuid[], $3::uuid[], $4::text[]) AS t(product_id, md_id, source)
                       WHERE t.product_id = pmd.product_id AND t.md_id = pmd.musical_detail_id AND t.source = pmd.source)`,
    [blockId, link.product, link.md, link.source],
  );
  await db.query(
    `INSERT INTO product_musical_details (organization_id, product_id, musical_detail_id, source, created_by)
     SELECT b.organization_id, t.product_id, t.md_id, t.source, t.created_by
     FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::uuid[]) AS t(product_id, md_id, source, created_by) CROSS JOIN catalog_blocks b
     WHERE b.id = $1
     ON CONFLICT (product_id, musical_detail_id) DO NOTHING`,
    [blockId, link.product, link.md, link.source, link.createdBy],
  );
}

// The catalog as analytics reads it: for each musical detail of the organization (by rightsholder
// and identity key) its effective track values, its track product and that product's album, and
// the song (docs/songs.md): the track's title cluster by its artist, named by the cluster's
// display title (a title correction of the track wins), dated by the earliest release of its
// tracks, with the version kind of the musical detail's title.
// store.ts copies these into the organization's database (table `catalog`), keyed by the raw
// identity of the rows, and the freshness fingerprint covers the tables they come from, so a
// correction shows in the next query.
import type { Queryable } from '../db/pool.ts';
import {
  effectiveValues,
  type FetchedResult,
  type OverrideRow,
} from '../catalog/musicalDetails.ts';
import { releaseDateOf } from '../catalog/products.ts';
import { versionKind, type VersionKind } from '../catalog/cluster/normalize.ts';

export interface CatalogEntry {
  mdId: string;
  /** enrichment finished: found, not found, skipped or failed */
  resolved: boolean;
  trackTitle: string | null;
  trackArtist: string | null;
  releaseTitle: string | null;
  releaseArtist: string | null;
  releaseDate: string | null;
  releaseReleaseDate: string | null;
  productId: string | null;
  productTitle: string | null;
  productArtist: string | null;
  /** the song's: the earliest release date of its tracks */
  productReleaseDate: string | null;
  productVersion: VersionKind;
}

const TERMINAL = new Set(['found', 'not_found', 'skipped', 'failed']);

interface Row {
  rightsholder_id: string;
  id: string;
  identity_key: string;
  title: string;
  artist: string | null;
  release_title: string | null;
  release_artist: string | null;
  result: FetchedResult | null;
  state: string;
  product_id: string | null;
  product_title: string | null;
  product_artist: string | null;
  product_release_date: string | null;
  product_retitled: boolean | null;
  song_title: string | null;
  /** the track's song by its artist: block, cluster and the artist part of its stable key */
  song_key: string | null;
  album_title: string | null;
  album_artist: string | null;
  album_release_date: string | null;
}

/** Keyed by `<rightsholder id>\u001f<identity key>`. */
export async function catalogEntries(
  db: Queryable,
  organizationId: string,
): Promise<Map<string, CatalogEntry>> {
  // a song's release date is the earliest of its tracks' by the same artist: grouped once here
  // and matched by key, not looked up per musical detail (no index serves that look-up, and a
  // catalog of 20,000 musical details took two minutes)
  const songKey = (p: string) =>
    `${p}block_id || E'\x1f' || ${p}cluster_id || E'\x1f' || split_part(${p}stable_key, E'\x1f', 2)`;
  const [{ rows }, { rows: overrides }, { rows: songs }] = await Promise.all([
    db.query<Row>(
      `SELECT b.rightsholder_id, md.id, md.identity_key, md.title, md.artist, md.release_title, md.release_artist, md.result, md.state,
         tp.id AS product_id, tp.title AS product_title, tp.artist AS product_artist, tp.release_date::text AS product_release_date,
         EXISTS (SELECT 1 FROM product_overrides o WHERE o.product_id = tp.id AND o.kind = 'update_by_id' AND o."values" ? 'title') AS product_retitled,
         tc.display_title AS song_title, ${songKey('tp.')} AS song_key,
         al.title AS album_title, al.artist AS album_artist, al.release_date::text AS album_release_date
       FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id
       LEFT JOIN LATERAL (SELECT p.id, p.block_id, p.cluster_id, p.stable_key, p.title, p.artist, p.release_date, p.parent_id FROM product_musical_details pmd
                          JOIN products p ON p.id = pmd.product_id
                          WHERE pmd.musical_detail_id = md.id AND p.kind = 'track' ORDER BY p.id LIMIT 1) tp ON TRUE
       LEFT JOIN title_clusters tc ON tc.id = coalesce(tp.cluster_id, md.cluster_id)
       LEFT JOIN products al ON al.id = tp.parent_id
       WHERE md.organization_id = $1`,
      [organizationId],
    ),
    db.query<OverrideRow & { mdId: string }>(
      `SELECT o.id, o.musical_detail_id AS "mdId", o.kind, o.rule_id AS "ruleId", o."values", o.created_by AS "createdBy", o.created_at AS "createdAt"
       FROM musical_detail_overrides o WHERE o.organization_id = $1 AND o.musical_detail_id IS NOT NULL ORDER BY o.created_at, o.id`,
      [organizationId],
    ),
    db.query<{ key: string; release_date: string | null }>(
      `SELECT ${songKey('')} AS key, min(release_date)::text AS release_date
       FROM products WHERE organization_id = $1 AND kind = 'track' AND cluster_id IS NOT NULL GROUP BY 1`,
      [organizationId],
    ),
  ]);
  const songDates = new Map(songs.map((r) => [r.key, r.release_date]));
  const byMd = new Map<string, OverrideRow[]>();
  for (const { mdId, ...o } of overrides) {
    const list = byMd.get(mdId) ?? [];
    list.push({ ...o, createdAt: new Date(o.createdAt).toISOString() });
    byMd.set(mdId, list);
  }
  const out = new Map<string, CatalogEntry>();
  for (const r of rows) {
    const eff = effectiveValues(r, byMd.get(r.id) ?? []);
    const albums = Array.isArray(eff.albums)
      ? eff.albums.filter((a): a is string => typeof a === 'string' && a !== '')
      : [];
    const releaseDate = releaseDateOf(eff.releaseDate);
    const trackReleaseDate = r.product_id ? r.product_release_date : releaseDate;
    const songDate = r.song_key === null ? null : (songDates.get(r.song_key) ?? null);
    const songReleaseDate = r.product_id ? (songDate ?? r.product_release_date) : releaseDate;
    out.set(`${r.rightsholder_id}\u001f${r.identity_key}`, {
      mdId: r.id,
      resolved: TERMINAL.has(r.state),
      trackTitle: eff.title || r.title || null,
      trackArtist: eff.artist,
      releaseTitle: r.album_title ?? albums[0] ?? r.result?.releaseTitle ?? r.release_title,
      releaseArtist: r.album_title ? r.album_artist : (r.result?.releaseArtist ?? r.release_artist),
      releaseDate,
      releaseReleaseDate: r.album_title
        ? (r.album_release_date ?? trackReleaseDate)
        : trackReleaseDate,
      productId: r.product_id,
      productTitle:
        (r.product_retitled ? r.product_title : null) ??
        r.song_title ??
        r.product_title ??
        (eff.title || r.title || null),
      productArtist: r.product_id ? r.product_artist : eff.artist,
      productReleaseDate: songReleaseDate,
      productVersion: versionKind(eff.title || r.title || ''),
    });
  }
  return out;
}

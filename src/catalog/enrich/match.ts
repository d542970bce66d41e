// Title and artist matching shared by the providers: how a statement's "SUMMER NIGHTS" or
// "Summer Nights (feat. X) - 2019 Remaster" is compared with a catalog recording's title.
// Deliberately small and local (the clustering module has the full title normalization); a
// provider only needs: same title exactly, same title but another version, or merely similar.
import { parseTitle, type ParsedTitle } from '../cluster/normalize.ts';
import { DEFAULT_THRESHOLD, parsedSimilarity, sameWordsReordered } from '../cluster/similarity.ts';
import { foldCase } from '../identity.ts';

const VERSION_WORDS =
  /\b(remaster(ed)?|live|radio|edit|acoustic|instrumental|remix|mix|extended|demo|version|vinyl|deluxe|mono|stereo|explicit|clean|single|album|original|session|unplugged|karaoke|cover|reprise)\b/;

/** Lower case, no diacritics, apostrophes dropped, `&` as `and`, punctuation as spaces. */
export function foldText(raw: string | null | undefined): string {
  if (!raw) return '';
  return foldCase(raw)
    .replace(/['’ʼ`´]/g, '')
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export interface TitleKey {
  /** the whole title, folded, without featured-artist credits */
  full: string;
  /** without version tags: `(Live)`, `- 2019 Remaster`, `[Radio Edit]` */
  base: string;
  /** whether version tags were removed */
  versioned: boolean;
  /**
   * the kinds of version that make another recording, as the clustering tells them
   * (`acoustic+live`, `remix`; '' for the original, a remaster, a feat. credit)
   */
  versions: string;
  /** the title as the clustering parses it: whether two titles are one song is its rule */
  song: ParsedTitle;
}

const FEAT =
  /[([]\s*(feat\.?|ft\.?|featuring|with)\s[^)\]]*[)\]]|\s(feat\.?|ft\.?|featuring)\s.*$/gi;

export function titleKey(raw: string | null | undefined): TitleKey {
  const noFeat = (raw ?? '').replace(FEAT, ' ');
  const full = foldText(noFeat);
  let base = noFeat;
  // bracketed parts and " - …" suffixes that name a version
  base = base.replace(/[([]([^)\]]*)[)\]]/g, (m, inner: string) =>
    VERSION_WORDS.test(foldText(inner)) ? ' ' : m,
  );
  base = base.replace(/\s[-–—]\s(.*)$/u, (m, tail: string) =>
    VERSION_WORDS.test(foldText(tail)) ? ' ' : m,
  );
  const folded = foldText(base);
  const song = parseTitle(raw ?? '');
  return {
    full,
    base: folded || full,
    versioned: folded !== '' && folded !== full,
    versions: song.signatureKinds,
    song,
  };
}

const ARTIST_STOP = new Set(['the', 'and', 'feat', 'ft', 'featuring', 'with', 'x', 'vs']);

function artistTokens(raw: string): Set<string> {
  return new Set(
    foldText(raw)
      .split(' ')
      .filter((w) => w !== '' && !ARTIST_STOP.has(w)),
  );
}

/** 1 for the same artist; 0.9 when one credit contains the other ("A feat. B" and "A"); else 0. */
export function artistScore(query: string, candidate: string): number {
  if (foldText(query) === foldText(candidate)) return 1;
  const a = artistTokens(query);
  const b = artistTokens(candidate);
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const w of small) if (!large.has(w)) return 0;
  return 0.9;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  const t = ` ${s} `;
  for (let i = 0; i < t.length - 1; i++) {
    const g = t.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient over character bigrams, 0..1. */
export function dice(a: string, b: string): number {
  if (a === b) return 1;
  const x = bigrams(a);
  const y = bigrams(b);
  let common = 0;
  let total = 0;
  for (const [g, n] of x) {
    common += Math.min(n, y.get(g) ?? 0);
    total += n;
  }
  for (const n of y.values()) total += n;
  return total === 0 ? 0 : (2 * common) / total;
}

/**
 * 1: the same title; 0.85: the same title in another version that is the same recording (the
 * original preferred over a remastered one), 0.8 the other way; below: merely similar titles,
 * scaled down; at most 0.5 for another kind of version (live, acoustic, remix…: another recording).
 */
export function titleScore(query: TitleKey, candidate: TitleKey): number {
  if (query.full !== '' && query.full === candidate.full) return 1;
  // a live, acoustic, instrumental, remixed… line and the original (or another kind of version)
  // are two recordings, which the clustering keeps apart: a candidate, never a lookup's answer
  if (query.versions !== candidate.versions) return Math.min(0.5, sameOrSimilar(query, candidate));
  return sameOrSimilar(query, candidate);
}

/** A merely similar title that the clustering calls another song scores at most this: a search candidate, never a lookup's answer. */
const OTHER_SONG_SCORE = 0.5;

function sameOrSimilar(query: TitleKey, candidate: TitleKey): number {
  if (query.base !== '' && query.base === candidate.base) return candidate.versioned ? 0.8 : 0.85;
  const d = dice(query.base, candidate.base);
  if (d < 0.5) return 0;
  // bigrams ignore word order and endings ("Canyon Blues" / "Blue Canyon", "Summer Nights" /
  // "Summer Night"): a typo of the title is the clustering's call (docs/songs.md); the same words
  // in another order ("Streets of Silver" / "Silver Streets") may name the recording too
  const sameSong =
    parsedSimilarity(query.song, candidate.song) >= DEFAULT_THRESHOLD ||
    sameWordsReordered(query.song, candidate.song);
  return sameSong ? 0.7 * d : Math.min(OTHER_SONG_SCORE, 0.7 * d);
}

/**
 * How sure a title (and artist) match is, 0..1. Without an artist a title alone is weak; with
 * another artist weaker still (kept as a search candidate, never good enough for a lookup).
 */
export function matchConfidence(title: number, artist: number | null): number {
  if (title === 0) return 0;
  if (artist === null) return round(title * 0.6);
  if (artist === 0) return round(title * 0.3);
  return round(title * artist);
}

export function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/**
 * MusicBrainz dates are YYYY, YYYY-MM or YYYY-MM-DD; the catalog keeps a full date. A date that is
 * no real calendar day from year 1 on ("0000", "2019-02-30", "2019-13") is unknown: PostgreSQL has
 * no year 0, and an impossible day would be shown as a release date.
 */
export function fullDate(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const m = /^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?$/.exec(raw.trim());
  if (!m) return null;
  const iso = `${m[1]}-${m[2] ?? '01'}-${m[3] ?? '01'}`;
  if (m[1] === '0000') return null;
  const d = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === iso ? iso : null;
}

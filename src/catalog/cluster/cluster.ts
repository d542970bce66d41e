// Grouping titles into clusters without comparing every pair.
//
// Clusters are songs (docs/songs.md): every version of a title is the title.
// 1. Items with the same normalized key (base without spaces) merge at once.
// 2. Distinct keys are compared only when a blocking key says they may match: (a) symmetric-deletion keys, 32-bit hashes of the compact
//    base and of the base with one character deleted (any two bases one typo apart share one),
//    (b) token-drop keys, the base with one whole token removed ("Welcome to Jungle"), and (c) a
//    sorted neighbourhood over the compact bases and over their reversals (two typos far apart).
//    The hashes are sorted in a Float64Array; runs of equal hashes are the candidate blocks.
//    (d) a title in another script and its romanization share their romanized key (romanize.ts).
// 3. A candidate pair at or above the threshold is joined in a union-find over the keys.
import { cleanTitle, parseTitle, type ParsedTitle } from './normalize.ts';
import { romanKey, type JapaneseReader } from './romanize.ts';
import { DEFAULT_THRESHOLD, parsedSimilarity } from './similarity.ts';
import { atCommonScale, isDecimalText, shortText } from '../../decimal.ts';

export interface TitleItem {
  id: string;
  title: string;
  artist: string | null;
  /** exact decimal string, USD */
  earnings: string;
}

export interface TitleCluster {
  displayTitle: string;
  /** sorted ascending */
  memberIds: string[];
  /** 0..1: the lowest similarity between the display title and any member title (1 when all share one key) */
  similarity: number;
  /** exact decimal sum of the members' earnings */
  earnings: string;
}

export interface ClusterOptions {
  threshold?: number;
  /** reads Japanese kanji (romanize.ts japaneseReader); without it kanji are spelled as any-ascii has them */
  readJapanese?: JapaneseReader;
}

const BASE = 131;
const IDX_BITS = 2 ** 21;
/** blocks (runs of one hash) larger than this compare each key with its next few only */
const FULL_BLOCK = 24;
const BLOCK_WINDOW = 8;
/** sorted-neighbourhood window */
const WINDOW = 4;
const MAX_DELETION_LENGTH = 120;
export const MAX_ITEMS = 2_000_000;

class UnionFind {
  private readonly parent: Int32Array;
  constructor(n: number) {
    this.parent = new Int32Array(n).map((_, i) => i);
  }
  find(x: number): number {
    const p = this.parent;
    while (p[x] !== x) {
      p[x] = p[p[x]!]!;
      x = p[x]!;
    }
    return x;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    // the smaller index becomes the root: the result does not depend on the order of the unions
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

/** Prefix hashes, suffix hashes and powers of the base, reused from title to title (grown on demand). */
let prefix = new Int32Array(256);
let suffix = new Int32Array(256);
let pow = new Int32Array(256);

/** Hashes of s, of s with each character deleted, and of s with each token removed (mod 2^32), as blocking entries of key k. */
function pushBlockingEntries(p: ParsedTitle, k: number, out: number[]): void {
  const s = p.key;
  const n = s.length;
  if (prefix.length <= n) {
    prefix = new Int32Array(2 * n + 2);
    suffix = new Int32Array(2 * n + 2);
    pow = new Int32Array(2 * n + 2);
  }
  pow[0] = 1;
  prefix[0] = 0;
  suffix[n] = 0;
  for (let i = 0; i < n; i++) {
    prefix[i + 1] = (Math.imul(prefix[i]!, BASE) + s.charCodeAt(i)) | 0;
    pow[i + 1] = Math.imul(pow[i]!, BASE);
  }
  for (let i = n - 1; i >= 0; i--)
    suffix[i] = (Math.imul(s.charCodeAt(i), pow[n - 1 - i]!) + suffix[i + 1]!) | 0;
  const push = (from: number, to: number) =>
    out.push(((Math.imul(prefix[from]!, pow[n - to]!) + suffix[to]!) >>> 0) * IDX_BITS + k);
  out.push((prefix[n]! >>> 0) * IDX_BITS + k);
  if (n >= 4 && n <= MAX_DELETION_LENGTH) for (let i = 0; i < n; i++) push(i, i + 1);
  if (p.tokens.length >= 3 && p.tokens.length <= 16) {
    let at = 0;
    for (const t of p.tokens) {
      push(at, at + t.length);
      at += t.length;
    }
  }
}

function sortedCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The entries of sorted without repeats (one key's equal hashes, as "aab" without either "a"). */
function distinctSorted(entries: number[]): Float64Array {
  const sorted = Float64Array.from(entries).sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++)
    if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i]!;
  return sorted.subarray(0, n);
}

/** Joins the keys (indices of `parsed`, in ascending key order) that are similar enough. */
function linkKeys(parsed: readonly ParsedTitle[], uf: UnionFind, threshold: number): void {
  // the score cannot exceed 2 × min(weights) / (sum of weights): a cheap bound before the score
  const weights = Float64Array.from(parsed, (p) => p.tokens.reduce((w, t) => w + t.length + 1, 0));
  const tryPair = (a: number, b: number) => {
    if (a === b || uf.find(a) === uf.find(b)) return;
    const wa = weights[a]!;
    const wb = weights[b]!;
    if ((2 * Math.min(wa, wb)) / (wa + wb) < threshold * 0.9) return;
    if (parsedSimilarity(parsed[a]!, parsed[b]!) >= threshold) uf.union(a, b);
  };
  // (a) + (b): hashed blocking keys, sorted; equal hashes form a block
  const entries: number[] = [];
  parsed.forEach((p, k) => pushBlockingEntries(p, k, entries));
  const sorted = distinctSorted(entries);
  for (let start = 0; start < sorted.length;) {
    const h = Math.floor(sorted[start]! / IDX_BITS);
    let end = start + 1;
    while (end < sorted.length && Math.floor(sorted[end]! / IDX_BITS) === h) end++;
    const size = end - start;
    for (let i = start; i < end; i++) {
      const last = size <= FULL_BLOCK ? end : Math.min(end, i + 1 + BLOCK_WINDOW);
      for (let j = i + 1; j < last; j++) tryPair(sorted[i]! % IDX_BITS, sorted[j]! % IDX_BITS);
    }
    start = end;
  }
  // (c): sorted neighbourhood over the compact bases (the keys are in that order) and their reversals
  const n = parsed.length;
  const reversed = parsed.map((p) => [...p.key].reverse().join(''));
  const byReversed = Int32Array.from(parsed, (_p, k) => k).sort(
    (x, y) => sortedCodeUnits(reversed[x]!, reversed[y]!) || x - y,
  );
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j <= i + WINDOW && j < n; j++) {
      tryPair(i, j);
      tryPair(byReversed[i]!, byReversed[j]!);
    }
  }
}

function validate(items: readonly TitleItem[]): void {
  if (!Array.isArray(items)) throw new TypeError('items must be an array');
  // blocking entries pack a 32-bit hash and a key index below 2^21 into one exact double
  if (items.length > MAX_ITEMS) throw new RangeError(`at most ${MAX_ITEMS} items per clustering`);
  const ids = new Set<string>();
  items.forEach((item, i) => {
    if (typeof item !== 'object' || item === null)
      throw new TypeError(`items[${i}] must be an object`);
    if (typeof item.id !== 'string' || item.id.length === 0)
      throw new TypeError(`items[${i}].id must be a non-empty string`);
    if (ids.has(item.id))
      throw new TypeError(`items[${i}].id ${JSON.stringify(item.id.slice(0, 100))} is not unique`);
    ids.add(item.id);
    if (typeof item.title !== 'string') throw new TypeError(`items[${i}].title must be a string`);
    if (item.artist !== null && item.artist !== undefined && typeof item.artist !== 'string')
      throw new TypeError(`items[${i}].artist must be a string or null`);
    if (typeof item.earnings !== 'string' || !isDecimalText(item.earnings))
      throw new TypeError(`items[${i}].earnings must be a decimal string`);
  });
}

/** 2: mixed case as people write a name; 1: one case throughout (or none); 0: ALL CAPS. */
const casing = (s: string): number =>
  s === s.toUpperCase() ? (s === s.toLowerCase() ? 1 : 0) : s === s.toLowerCase() ? 1 : 2;
const byUnits = (a: bigint, b: bigint): number => (b > a ? 1 : b < a ? -1 : 0);

/**
 * The song's name: its most common normalized spelling (by musical details, then earnings), so a
 * one-letter typo never outvotes the common spelling; written as people write it (mixed case
 * before one case, ALL CAPS last), then its most common, highest-earning form.
 */
function songDisplayTitle(
  members: readonly { title: string; base: string; units: bigint }[],
): string {
  const spellings = new Map<
    string,
    { count: number; units: bigint; forms: Map<string, { count: number; units: bigint }> }
  >();
  for (const m of members) {
    const base = m.base;
    const s = spellings.get(base) ?? { count: 0, units: 0n, forms: new Map() };
    s.count++;
    s.units += m.units;
    const f = s.forms.get(m.title) ?? { count: 0, units: 0n };
    f.count++;
    f.units += m.units;
    s.forms.set(m.title, f);
    spellings.set(base, s);
  }
  const [, common] = [...spellings].sort(
    ([a, x], [b, y]) => y.count - x.count || byUnits(x.units, y.units) || sortedCodeUnits(a, b),
  )[0]!;
  return [...common.forms].sort(
    ([a, x], [b, y]) =>
      casing(b) - casing(a) ||
      y.count - x.count ||
      byUnits(x.units, y.units) ||
      sortedCodeUnits(a, b),
  )[0]![0];
}

/** (d): titles in another script joined with their romanization (or with each other) on the romanized key. */
function linkRomanized(parsed: readonly ParsedTitle[], uf: UnionFind): void {
  const byRoman = new Map<string, number>();
  parsed.forEach((p, r) => {
    if (!p.roman) return;
    const other = byRoman.get(p.roman);
    if (other === undefined) byRoman.set(p.roman, r);
    else uf.union(other, r);
  });
  if (byRoman.size === 0) return;
  parsed.forEach((p, r) => {
    const other = p.roman ? undefined : byRoman.get(romanKey(p.key));
    if (other !== undefined) uf.union(other, r);
  });
}

/**
 * Groups titles into clusters: deterministic (the same clusters, display titles and order for any
 * order of the input), every item in exactly one cluster. Order: earnings descending, then size
 * descending, then display title, then first member id.
 */
export function clusterTitles(items: TitleItem[], options: ClusterOptions = {}): TitleCluster[] {
  validate(items);
  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError('threshold must be in (0, 1]');
  if (items.length === 0) return [];

  const keys = rankedKeys(items, options.readJapanese);
  const uf = new UnionFind(keys.byRank.length);
  linkKeys(keys.byRank, uf, threshold);
  linkRomanized(keys.byRank, uf);

  const { scale, units } = atCommonScale(items.map((i) => i.earnings));
  const clusters = new Map<number, number[]>();
  items.forEach((_item, i) => {
    const root = uf.find(keys.itemRank[i]!);
    const c = clusters.get(root);
    if (c) c.push(i);
    else clusters.set(root, [i]);
  });

  const names = new SongNames();
  const out = [...clusters.values()].map((members) =>
    describeCluster(members, items, keys, { scale, units }, names),
  );
  out.sort(
    (a, b) =>
      (b.units > a.units ? 1 : b.units < a.units ? -1 : 0) ||
      b.memberIds.length - a.memberIds.length ||
      sortedCodeUnits(a.displayTitle, b.displayTitle) ||
      sortedCodeUnits(a.memberIds[0]!, b.memberIds[0]!),
  );
  return out.map(({ displayTitle, memberIds, similarity, earnings }) => ({
    displayTitle,
    memberIds,
    similarity,
    earnings,
  }));
}

/** The distinct title keys in key order, and each item's key by that rank. */
interface RankedKeys {
  /** one representative parse per key (the smallest base), by rank */
  byRank: ParsedTitle[];
  /** each item's key rank */
  itemRank: Int32Array;
}

/**
 * Normalizes each distinct raw title once, one representative parse per key (the smallest base);
 * the keys ranked in key order, so that union-find roots do not depend on the input order.
 */
function rankedKeys(
  items: readonly TitleItem[],
  readJapanese: ClusterOptions['readJapanese'],
): RankedKeys {
  const byRaw = new Map<string, ParsedTitle>();
  const keyIndex = new Map<string, number>();
  const parsed: ParsedTitle[] = [];
  const itemKey = new Int32Array(items.length);
  items.forEach((item, i) => {
    let p = byRaw.get(item.title);
    if (!p) {
      p = parseTitle(item.title, readJapanese);
      byRaw.set(item.title, p);
    }
    let k = keyIndex.get(p.key);
    if (k === undefined) {
      k = parsed.length;
      keyIndex.set(p.key, k);
      parsed.push(p);
    } else if (p.base < parsed[k]!.base) parsed[k] = p;
    itemKey[i] = k;
  });
  const keyOrder = [...keyIndex.keys()].sort(sortedCodeUnits);
  const rank = new Int32Array(parsed.length);
  keyOrder.forEach((key, r) => (rank[keyIndex.get(key)!] = r));
  const byRank: ParsedTitle[] = new Array<ParsedTitle>(parsed.length);
  parsed.forEach((p, k) => (byRank[rank[k]!] = p));
  const itemRank = new Int32Array(items.length);
  itemKey.forEach((k, i) => (itemRank[i] = rank[k]!));
  return { byRank, itemRank };
}

/** The song's name of each distinct raw title, and the parse of each distinct song name, once. */
class SongNames {
  private readonly cleaned = new Map<string, string>();
  private readonly parsedNames = new Map<string, ParsedTitle>();

  songTitleOf(raw: string): string {
    let title = this.cleaned.get(raw);
    if (title === undefined) {
      title = cleanTitle(raw, 'song');
      this.cleaned.set(raw, title);
    }
    return title;
  }

  parseName(title: string): ParsedTitle {
    let p = this.parsedNames.get(title);
    if (p === undefined) {
      p = parseTitle(title);
      this.parsedNames.set(title, p);
    }
    return p;
  }
}

/** A cluster of items: its display title, members, similarity and earnings. */
function describeCluster(
  members: readonly number[],
  items: readonly TitleItem[],
  keys: RankedKeys,
  earnings: { scale: number; units: bigint[] },
  songNames: SongNames,
): TitleCluster & { units: bigint } {
  const { units } = earnings;
  let sum = 0n;
  const memberKeys = new Set<number>();
  const names = new Set<string>();
  for (const i of members) {
    sum += units[i]!;
    memberKeys.add(keys.itemRank[i]!);
    names.add(songNames.songTitleOf(items[i]!.title));
  }
  // one spelling throughout (most clusters): it is the name, nothing to vote on
  const displayTitle =
    names.size === 1
      ? names.values().next().value!
      : songDisplayTitle(
          members.map((i) => {
            const title = songNames.songTitleOf(items[i]!.title);
            return { title, base: songNames.parseName(title).base, units: units[i]! };
          }),
        );
  let similarity = 1;
  if (memberKeys.size > 1) {
    const display = songNames.parseName(displayTitle);
    for (const k of memberKeys)
      similarity = Math.min(similarity, parsedSimilarity(display, keys.byRank[k]!));
  }
  return {
    displayTitle,
    memberIds: members.map((i) => items[i]!.id).sort(sortedCodeUnits),
    similarity: Math.round(similarity * 10_000) / 10_000,
    earnings: shortText(sum, earnings.scale),
    units: sum,
  };
}

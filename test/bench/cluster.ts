// npm run bench:cluster [-- --sizes 10000,100000]
// Title clustering of 10,000 and 100,000 synthetic musical details through the real piscina
// worker (workers/cluster.ts), three rounds each (medians), against two yardsticks in the same
// run: a plain pass over the same titles (NFKC, lower case, words, grouped in a Map: the floor),
// alternated with the clustering rounds, and the naive all-pairs comparison with the same
// similarity on a 1,500-title sample (titles parsed once, as the clustering does), extrapolated
// quadratically to each size: what the blocking avoids.
//
// Quality first: precision and recall of "same song" on the HELD-OUT half of the labelled pairs of
// fixtures/catalog/song-pairs.tsv (test/bench/songPairs.ts; the tune half is
// test/catalog/clusterQuality.test.ts), with the Japanese reader as the worker uses it.
//
// The details are realistic and seeded: titles of 1-5 words from a 700-word vocabulary, each song
// seen as several variants (case, feat. credits, remaster tags with years, typos, live versions,
// remixes by different remixers, radio edits, instrumentals, sped up / slowed), with 6-decimal earnings.
import { parseArgs } from 'node:util';
import { createThreadPool } from '../../src/workers/threadPool.ts';
import type { TitleItem } from '../../src/catalog/cluster/index.ts';
import { parseTitle } from '../../src/catalog/cluster/normalize.ts';
import { parsedSimilarity } from '../../src/catalog/cluster/similarity.ts';
import { clusterTitles } from '../../src/catalog/cluster/index.ts';
import { japaneseReader } from '../../src/catalog/cluster/romanize.ts';
import { readLabelledPairs, scorePairs } from './songPairs.ts';
import { ARTISTS as ALL_ARTISTS, prng, REMIXERS as ALL_REMIXERS, SONG_WORDS } from './seeded.ts';
import path from 'node:path';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '10000,100000' } } });
const SIZES = values.sizes.split(',').map(Number);

const SYLLABLES = [
  'la',
  'mo',
  'ri',
  'ta',
  'ne',
  'so',
  'ka',
  'vi',
  'lo',
  'de',
  'ma',
  'ru',
  'shi',
  'ven',
  'tor',
  'bel',
  'car',
  'din',
  'fer',
  'gal',
  'hon',
  'jas',
  'kel',
  'lum',
  'mir',
  'nor',
  'pel',
  'quin',
  'ros',
  'sal',
];
const COMMON = ['love', 'night', 'summer', ...SONG_WORDS, 'sky', 'moon', 'city', 'road', 'girl'];
const SMALL = ['the', 'of', 'me', 'you', 'in', 'my', 'on', 'to', 'a', 'your'];
const ARTISTS = ALL_ARTISTS.slice(0, 8);
const REMIXERS = ALL_REMIXERS.slice(0, 8);

function vocabulary(rand: () => number): string[] {
  const words = new Set<string>(COMMON);
  while (words.size < 700) {
    let w = '';
    const n = 2 + Math.floor(rand() * 2);
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

function typo(title: string, rand: () => number): string {
  const i = 1 + Math.floor(rand() * (title.length - 2));
  if (title[i] === ' ' || title[i + 1] === ' ') return title;
  return rand() < 0.5
    ? title.slice(0, i) + title.slice(i + 1)
    : title.slice(0, i) + title[i + 1] + title[i] + title.slice(i + 2);
}

export function syntheticDetails(count: number, seed = 7): TitleItem[] {
  const rand = prng(seed);
  const words = vocabulary(rand);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const items: TitleItem[] = [];
  while (items.length < count) {
    const n = 1 + Math.floor(rand() * 5);
    const parts: string[] = [];
    for (let i = 0; i < n; i++)
      parts.push(i > 0 && rand() < 0.25 ? pick(SMALL) : rand() < 0.3 ? pick(COMMON) : pick(words));
    const base = parts.map(cap).join(' ');
    const variants = 1 + Math.floor(rand() * 6);
    for (let v = 0; v < variants && items.length < count; v++) {
      const r = rand();
      let title = base;
      if (r < 0.15) title = base.toUpperCase();
      else if (r < 0.3) title = `${base} (feat. ${pick(ARTISTS)})`;
      else if (r < 0.42) title = `${base} - ${1990 + Math.floor(rand() * 35)} Remaster`;
      else if (r < 0.52) title = typo(base, rand);
      else if (r < 0.6)
        title = `${base} - Live at ${pick(['Wembley', 'the Olympia', 'Red Rocks', 'Glastonbury'])}`;
      else if (r < 0.7) title = `${base} (${pick(REMIXERS)} Remix)`;
      else if (r < 0.76) title = `${base} - Radio Edit`;
      else if (r < 0.8) title = `${base} (Instrumental)`;
      else if (r < 0.84) title = `${base} (${pick(['Sped Up', 'Slowed + Reverb'])})`;
      const earnings = `${Math.floor(rand() * 5000)}.${String(Math.floor(rand() * 1e6)).padStart(6, '0')}`;
      items.push({
        id: `md-${String(items.length).padStart(7, '0')}`,
        title,
        artist: pick(ARTISTS),
        earnings,
      });
    }
  }
  return items;
}

async function quality(): Promise<void> {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
  const readJapanese = await japaneseReader();
  const heldOut = (await readLabelledPairs(root)).filter((p) => p.split === 'held-out');
  const s = scorePairs(heldOut, (items) => clusterTitles(items, { readJapanese }));
  console.log(
    `held-out pairs ${s.pairs}: precision ${s.precision.toFixed(4)}, recall ${s.recall.toFixed(4)}` +
      ` (true same ${s.tp}, false same ${s.fp}, false different ${s.fn}, true different ${s.tn})`,
  );
  for (const m of s.misses) console.log(`  ${m}`);
}

const ROUNDS = 3;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** The yardstick: one plain pass over the same titles (NFKC, lower case, words), grouped by the result; the number of groups. */
function plainPass(items: readonly TitleItem[]): number {
  const groups = new Map<string, number>();
  for (const item of items) {
    const key = item.title
      .normalize('NFKC')
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .join(' ');
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return groups.size;
}

async function main(): Promise<void> {
  await quality();
  const pool = createThreadPool({
    maxThreads: 1,
    maxQueue: 8,
    idleTimeoutMs: 60_000,
    maxOldGenerationMb: 2048,
    warm: 0,
  });
  try {
    // warm the worker (tsx registration, module load) so the figures are clustering alone
    await pool.clusterTitles({ items: syntheticDetails(100) });
    const times = new Map<number, number>();
    for (const size of SIZES) {
      const items = syntheticDetails(size);
      // alternated, three rounds each, medians: the machine's load moves both alike
      const runs: number[] = [];
      const plainRuns: number[] = [];
      let clusters = 0;
      let groups = 0;
      for (let round = 0; round < ROUNDS; round++) {
        let t0 = performance.now();
        clusters = (await pool.clusterTitles({ items })).clusters.length;
        runs.push(performance.now() - t0);
        t0 = performance.now();
        groups = plainPass(items);
        plainRuns.push(performance.now() - t0);
      }
      const ms = median(runs);
      const plainMs = median(plainRuns);
      times.set(size, ms);
      console.log(
        `${size} details: ${(ms / 1000).toFixed(2)} s through the worker (median of ${runs.map((r) => (r / 1000).toFixed(2)).join(', ')}), ${clusters} clusters` +
          ` | yardstick plain pass: ${plainMs.toFixed(0)} ms, ${groups} groups; ratio ${(ms / plainMs).toFixed(1)}`,
      );
    }
    const sample = syntheticDetails(1500).map((i) => parseTitle(i.title));
    const t0 = performance.now();
    let compared = 0;
    for (let i = 0; i < sample.length; i++)
      for (let j = i + 1; j < sample.length; j++, compared++)
        parsedSimilarity(sample[i]!, sample[j]!);
    const pairMs = (performance.now() - t0) / compared;
    for (const size of SIZES) {
      console.log(
        `yardstick all-pairs at ${size}: ${((pairMs * size * (size - 1)) / 2 / 1000).toFixed(0)} s (extrapolated from ${compared} pairs at ${(pairMs * 1000).toFixed(1)} µs each)`,
      );
    }
    if (times.has(10_000) && times.has(100_000))
      console.log(`ratio 100k / 10k: ${(times.get(100_000)! / times.get(10_000)!).toFixed(1)}`);
  } finally {
    await pool.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

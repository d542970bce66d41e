// npx tsx test/bench/songPairs.ts  → writes fixtures/catalog/song-pairs.tsv
// The labelled title pairs of the song-level clustering (docs/songs.md, "Measured"): seeded and
// built from the variant patterns statements print, never from the matcher. A positive pair is
// a song's title beside one of its printed variants (credits, versions, spellings, scripts); a
// hard negative is a song's title beside a near title of another song (one letter, one word,
// another part or volume, another number), both possibly versioned. Each song and its pairs fall
// wholly in one half, `tune` or `held-out`, by a seeded draw: the matcher is tuned on one and
// reported on the other (npm run bench:cluster).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TitleCluster, TitleItem } from '../../src/catalog/cluster/index.ts';
import { ARTISTS, prng, REMIXERS, SONG_WORDS } from './seeded.ts';

export interface LabelledPair {
  a: string;
  b: string;
  label: 'same' | 'different';
  pattern: string;
  split: 'tune' | 'held-out';
}

const WORDS = [
  'summer',
  'night',
  ...SONG_WORDS,
  'river',
  'moon',
  'city',
  'road',
  'girl',
  'paradise',
  'shadow',
  'thunder',
  'ocean',
  'forever',
  'morning',
  'midnight',
  'highway',
  'garden',
  'silver',
  'stranger',
  'lighthouse',
  'keeper',
  'electric',
  'velvet',
  'desert',
  'winter',
  'echo',
  'mirror',
  'golden',
  'honey',
  'sunset',
  'horizon',
  'broken',
  'wonder',
  'kingdom',
  'freedom',
  'satellite',
  'diamond',
  'harbor',
  'lonely',
  'crystal',
  'fever',
  'shelter',
  'island',
  'thousand',
  'wander',
];
const SMALL = ['the', 'of', 'me', 'you', 'in', 'my', 'on', 'your', 'for', 'with'];
const VENUES = [
  'Wembley',
  'the Olympia',
  'Red Rocks',
  'Glastonbury',
  'Paléo',
  'the Royal Albert Hall',
  'Budokan',
];

// titles in another script beside their romanization, as statements print both
const SCRIPTS: [string, string][] = [
  ['Звезда', 'Zvezda'],
  ['Любовь', 'Lyubov'],
  ['Ночь', 'Noch'],
  ['Город', 'Gorod'],
  ['Весна', 'Vesna'],
  ['Море', 'More'],
  ['Дождь', 'Dozhd'],
  ['Αγάπη', 'Agapi'],
  ['Θάλασσα', 'Thalassa'],
  ['Καλοκαίρι', 'Kalokairi'],
  ['Αγάπη μου', 'Agapi mou'],
  ['Όνειρο', 'Oneiro'],
  ['봄날', 'Bomnal'],
  ['사랑', 'Sarang'],
  ['하늘', 'Haneul'],
  ['별', 'Byeol'],
  ['바다', 'Bada'],
  ['우리', 'Uri'],
  ['さくら', 'Sakura'],
  ['ありがとう', 'Arigatou'],
  ['サヨナラ', 'Sayonara'],
  ['ひかり', 'Hikari'],
  ['夏の終わり', 'Natsu no Owari'],
  ['夜に駆ける', 'Yoru ni Kakeru'],
  ['東京', 'Tokyo'],
  ['花火', 'Hanabi'],
  ['青い空', 'Aoi Sora'],
  ['恋', 'Koi'],
];
// near titles of different songs, as real catalogs hold them
const CONFUSABLE: [string, string][] = [
  ['Stay', 'Stray'],
  ['Love', 'Lover'],
  ['Hello', 'Hello Again'],
  ['Intro', 'Outro'],
  ['22', '2002'],
  ['Home', 'Hope'],
  ['Bad Guy', 'Bad Guys'],
  ['Butter', 'Better'],
  ['Closer', 'Close'],
  ['Run', 'Ran'],
  ['Angel', 'Angels'],
  ['Hurt', 'Hurts'],
  ['Sorry', 'Worry'],
  ['Fire', 'Fired'],
  ['Alive', 'Alone'],
  ['Believe', 'Believer'],
  ['Dreams', 'Dreamer'],
  ['Faded', 'Fade'],
  ['Halo', 'Hello'],
  ['Heaven', 'Seven'],
  ['Lights', 'Nights'],
  ['Magic', 'Manic'],
  ['One', 'Once'],
  ['Rain', 'Rainy'],
  ['Shine', 'Shiny'],
  ['Smile', 'Smiles'],
  ['Wild', 'Mild'],
  ['Young', 'Younger'],
  ['7 Years', '17 Years'],
  ['1999', '1989'],
  ['Lose Yourself', 'Lose Myself'],
  ['Let It Be', 'Let It Go'],
  ['Summer Love', 'Summer Lover'],
  ['Bad Blood', 'Bad Bloods'],
  ['Night Fever', 'Night Fevers'],
  ['Born to Run', 'Born to Ran'],
  ['Take Me Home', 'Take Me Hope'],
  ['Love Me', 'Love Me Do'],
  ['Hold On', 'Hold On Tight'],
  ['Dancing Queen', 'Dancing Queens'],
  ['Blue Monday', 'Blue Sunday'],
  ['Girls Like You', 'Girls Like Us'],
];
// spellings of one song that no rule names: a dropped article, a split word, a typo
const HARD_SAME: [string, string][] = [
  ['Welcome to the Jungle', 'Welcome to Jungle'],
  ['Everybody', 'Every Body'],
  ['Bohemian Rhapsody', 'Bohemian Rapsody'],
  ['Seven Nation Army', 'Seven Nations Army'],
  ['Smells Like Teen Spirit', 'Smells Like Teen Sprit'],
  ['Hotel California', 'Hotel Califronia'],
  ['Another One Bites the Dust', 'Another One Bites The Dust!'],
  ["Sweet Child o' Mine", "Sweet Child O' Mine"],
  ["Don't Stop Me Now", 'Dont Stop Me Now'],
  ["Livin' on a Prayer", 'Living on a Prayer'],
  ['Goodbye Yellow Brick Road', 'Good Bye Yellow Brick Road'],
  ['Mr. Brightside', 'Mister Brightside'],
  ['Dr. Feelgood', 'Doctor Feelgood'],
];

const cap = (w: string) => (w === '' ? w : w.charAt(0).toUpperCase() + w.slice(1));
const titleCase = (words: string[]) =>
  words.map((w, i) => (i > 0 && SMALL.includes(w) ? w : cap(w))).join(' ');

type Variant = (
  title: string,
  pick: <T>(xs: readonly T[]) => T,
  rand: () => number,
) => [pattern: string, variant: string] | null;

const PART_FORMS = [
  (n: number) => `Pt. ${n}`,
  (n: number) => `Part ${n}`,
  (n: number) => `Part ${['Zero', 'One', 'Two', 'Three', 'Four'][n]}`,
  (n: number) => `Pt. ${['', 'I', 'II', 'III', 'IV'][n]}`,
  (n: number) => `(Part ${n})`,
];

function typo(title: string, rand: () => number): string | null {
  const words = title.split(' ');
  const long = words.map((w, i) => [w, i] as const).filter(([w]) => w.length >= 6);
  if (long.length === 0 || words.length < 2) return null;
  const [w, i] = long[Math.floor(rand() * long.length)]!;
  const at = 1 + Math.floor(rand() * (w.length - 2));
  words[i] =
    rand() < 0.5
      ? w.slice(0, at) + w.slice(at + 1)
      : w.slice(0, at) + w[at + 1] + w[at] + w.slice(at + 2);
  return words.join(' ');
}

const VARIANTS: Variant[] = [
  (t) => ['all caps', t.toUpperCase()],
  (t) => ['lower case', t.toLowerCase()],
  (t, pick) => [
    'feat. in brackets',
    `${t} (${pick(['feat.', 'ft.', 'Feat.', 'featuring', 'with', 'w/', 'avec', 'x'])} ${pick(ARTISTS)})`,
  ],
  (t, pick) => [
    'feat. inline',
    `${t} ${pick(['feat.', 'ft.', 'featuring', 'w/'])} ${pick(ARTISTS)}`,
  ],
  (t, pick) => ['feat. after a dash', `${t} - ${pick(['feat.', 'with'])} ${pick(ARTISTS)}`],
  (t, pick, r) => [
    'remaster',
    pick([
      `${t} - ${1995 + Math.floor(r() * 30)} Remaster`,
      `${t} (Remastered ${1995 + Math.floor(r() * 30)})`,
      `${t} - Remastered`,
    ]),
  ],
  (t, pick) => ['mono / stereo', `${t} (${pick(['Mono', 'Stereo Mix', 'Mono Version'])})`],
  (t, pick) => ['edit', pick([`${t} - Radio Edit`, `${t} (Single Version)`, `${t} [Radio Edit]`])],
  (t, pick) => ['extended', pick([`${t} (Extended Mix)`, `${t} - Extended Version`])],
  (t, pick) => [
    'remix',
    pick([`${t} (${pick(REMIXERS)} Remix)`, `${t} - ${pick(REMIXERS)} Remix`, `${t} (Remix)`]),
  ],
  (t, pick) => [
    'vip / club / dub',
    pick([`${t} (VIP)`, `${t} - VIP Mix`, `${t} (Club Mix)`, `${t} - Dub Mix`, `${t} (Dub)`]),
  ],
  (t, pick) => [
    'live',
    pick([`${t} - Live`, `${t} (Live at ${pick(VENUES)})`, `${t} - Live from ${pick(VENUES)}`]),
  ],
  (t, pick) => [
    'acoustic',
    pick([`${t} (Acoustic)`, `${t} - Acoustic Version`, `${t} (Unplugged)`]),
  ],
  (t, pick) => ['instrumental', pick([`${t} (Instrumental)`, `${t} - Instrumental Version`])],
  (t, pick) => ['a cappella', pick([`${t} (A Cappella)`, `${t} - Acapella`])],
  (t, pick) => [
    'sped up / slowed',
    pick([`${t} (Sped Up)`, `${t} - Sped Up Version`, `${t} (Slowed + Reverb)`, `${t} - Slowed`]),
  ],
  (t, pick) => ['demo', pick([`${t} (Demo)`, `${t} - Demo Version`])],
  (t, pick) => [
    're-recording',
    pick([`${t} (Re-Recorded)`, `${t} (Taylor's Version)`, `${t} - Re-Recorded Version`]),
  ],
  (t, pick) => [
    'language version',
    pick([`${t} (Spanish Version)`, `${t} - English Version`, `${t} (French Version)`]),
  ],
  (t, pick) => [
    'clean / explicit',
    pick([`${t} (Clean)`, `${t} (Explicit)`, `${t} - Clean Version`]),
  ],
  (t, _p, r) => {
    const v = typo(t, r);
    return v ? ['one-letter typo', v] : null;
  },
  (t) => (/ and /i.test(t) ? ['& for and', t.replace(/ and /i, ' & ')] : null),
  (t) => (/\bnight\b/i.test(t) ? ['nite', t.replace(/night/i, 'Nite')] : null),
  (t, pick) => [
    'diacritics / forms',
    pick([
      t.normalize('NFD'),
      t.replace(/[A-Za-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)),
      `  ${t.replace(/ /g, '  ')} `,
    ]),
  ],
  (t, pick) => [pick(['versions combined']), `${t} (${pick(REMIXERS)} Remix) [Radio Edit]`],
];

/** A near title of another song: one word changed, one added, or (for parts) another number. */
function nearTitle(
  words: string[],
  pick: <T>(xs: readonly T[]) => T,
  rand: () => number,
): [string, string] {
  const r = rand();
  if (r < 0.4 || words.length === 1)
    return ['one more word', titleCase([...words, pick(WORDS.filter((w) => !words.includes(w)))])];
  if (r < 0.8) {
    const i = Math.floor(rand() * words.length);
    const other = [...words];
    other[i] = pick(WORDS.filter((w) => w !== words[i] && !words.includes(w)));
    return ['one word changed', titleCase(other)];
  }
  return ['one word dropped', titleCase(words.slice(0, -1))];
}

export function labelledPairs(seed = 31): LabelledPair[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const out: LabelledPair[] = [];
  const split = (): LabelledPair['split'] => (rand() < 0.5 ? 'tune' : 'held-out');
  const versioned = (t: string) => (rand() < 0.5 ? t : (pick(VARIANTS)(t, pick, rand)?.[1] ?? t));
  // generated songs: up to 4 variants each, two near titles of other songs
  for (let s = 0; s < 360; s++) {
    const n = 1 + Math.floor(rand() * 4);
    const words: string[] = [];
    while (words.length < n) {
      // a small word inside a title, never at its end
      const w =
        words.length > 0 && words.length < n - 1 && rand() < 0.2 ? pick(SMALL) : pick(WORDS);
      if (!words.includes(w)) words.push(w);
    }
    if (words.length >= 2 && rand() < 0.15) words.splice(1, 0, 'and');
    const title = titleCase(words);
    const half = split();
    const used = new Set<string>();
    for (let v = 0; v < 4 && used.size < 4; v++) {
      const variant = pick(VARIANTS)(title, pick, rand);
      if (!variant || variant[1] === title || used.has(variant[0])) continue;
      used.add(variant[0]);
      out.push({ a: title, b: variant[1], label: 'same', pattern: variant[0], split: half });
    }
    for (let k = 0; k < 2; k++) {
      const [pattern, near] = nearTitle(words, pick, rand);
      if (near && near.toLowerCase() !== title.toLowerCase())
        out.push({
          a: versioned(title),
          b: versioned(near),
          label: 'different',
          pattern,
          split: half,
        });
    }
  }
  // parts and volumes: any notation of one part is the part; another number is another part
  for (let s = 0; s < 120; s++) {
    const base = titleCase([pick(WORDS), pick(WORDS)]);
    const part = 1 + Math.floor(rand() * 3);
    const other = part === 3 ? 2 : part + 1;
    const [fa, fb] = [pick(PART_FORMS), pick(PART_FORMS)];
    const sep = (f: string) => (f.startsWith('(') ? ' ' : pick([' ', ', ', ' - ']));
    const half = split();
    const a = `${base}${sep(fa(part))}${fa(part)}`;
    out.push({
      a,
      b: `${base}${sep(fb(part))}${fb(part)}`,
      label: 'same',
      pattern: 'part notation',
      split: half,
    });
    out.push({
      a,
      b: versioned(`${base}${sep(fb(other))}${fb(other)}`),
      label: 'different',
      pattern: 'another part',
      split: half,
    });
    const vol = pick(['Vol.', 'Volume']);
    out.push({
      a: `${base} ${vol} ${part}`,
      b: `${base} Vol. ${other}`,
      label: 'different',
      pattern: 'another volume',
      split: half,
    });
  }
  // spellings and conjunctions of several languages
  const SPELLED: [string, string, string][] = [
    ["'Til the End of Time", 'Until the End of Time', "'til"],
    ['Till I Collapse', "'Til I Collapse", 'till'],
    ['Until Dawn', 'Til Dawn', 'until'],
    ['Toi et moi', 'Toi & moi', 'et'],
    ['Tú y yo', 'Tu & Yo', 'y'],
    ["Rock 'n' Roll Queen", 'Rock and Roll Queen', "'n'"],
    ['Saturday Night', 'Saturday Nite', 'nite'],
    ['Café de Flore', 'Cafe de Flore', 'diacritics'],
    ['Corazón', 'Corazon', 'diacritics'],
    ['Über Alles', 'Uber Alles', 'diacritics'],
    ['Mañana', 'Manana', 'diacritics'],
    ['Ça ira', 'Ca ira', 'diacritics'],
    ['Déjà vu', 'Deja Vu', 'diacritics'],
    ['Straße', 'Strasse', 'special letter'],
    ['Sin ti y sin mí', 'Sin Ti & Sin Mi', 'y'],
    ["Rock 'n' Roll", 'Rock n Roll', "'n'"],
    ['Love and War', 'Love & War', '&'],
    ['Night and Day', 'Nite & Day', 'nite and &'],
  ];
  for (const [a, b, pattern] of SPELLED) {
    const half = split();
    out.push({ a, b, label: 'same', pattern, split: half });
    out.push({
      a: versioned(a),
      b: b.toUpperCase(),
      label: 'same',
      pattern: `${pattern}, versioned`,
      split: half,
    });
  }
  SCRIPTS.forEach(([native, roman], i) => {
    const half = split();
    out.push({ a: native, b: roman, label: 'same', pattern: 'romanization', split: half });
    out.push({
      a: versioned(native),
      b: `${roman} (${pick(['feat.', 'with'])} ${pick(ARTISTS)})`,
      label: 'same',
      pattern: 'romanization, versioned',
      split: half,
    });
    const [otherNative, otherRoman] =
      SCRIPTS[(i + 1 + Math.floor(rand() * (SCRIPTS.length - 1))) % SCRIPTS.length]!;
    out.push({
      a: native,
      b: pick([otherNative, otherRoman]),
      label: 'different',
      pattern: 'another song in another script',
      split: half,
    });
  });
  for (const [a, b] of CONFUSABLE) {
    const half = split();
    out.push({ a, b, label: 'different', pattern: 'near title', split: half });
    out.push({
      a: versioned(a),
      b: versioned(b),
      label: 'different',
      pattern: 'near title, versioned',
      split: half,
    });
    out.push({ a, b: versioned(a), label: 'same', pattern: 'short title, versioned', split: half });
  }
  for (const [a, b] of HARD_SAME) {
    const half = split();
    out.push({ a, b, label: 'same', pattern: 'unnamed spelling', split: half });
    out.push({
      a: versioned(a),
      b: versioned(b),
      label: 'same',
      pattern: 'unnamed spelling, versioned',
      split: half,
    });
  }
  return out;
}

export function pairsTsv(pairs: readonly LabelledPair[]): string {
  const clean = (s: string) => s.replace(/[\t\n\r]/g, ' ');
  return [
    '# Labelled title pairs of the song-level clustering, written by test/bench/songPairs.ts (seed 31): do not edit by hand.',
    '# a<TAB>b<TAB>same|different<TAB>pattern<TAB>tune|held-out. "same" = one song (every version joined); labels say what is true.',
    ...pairs.map((p) => [clean(p.a), clean(p.b), p.label, p.pattern, p.split].join('\t')),
    '',
  ].join('\n');
}

export async function readLabelledPairs(root: string): Promise<LabelledPair[]> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(path.join(root, 'fixtures', 'catalog', 'song-pairs.tsv'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [a, b, label, pattern, split] = line.split('\t');
      return {
        a: a!,
        b: b!,
        label: label as LabelledPair['label'],
        pattern: pattern!,
        split: split as LabelledPair['split'],
      };
    });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
  const pairs = labelledPairs();
  await writeFile(path.join(root, 'fixtures', 'catalog', 'song-pairs.tsv'), pairsTsv(pairs));
  const count = (f: (p: LabelledPair) => boolean) => pairs.filter(f).length;
  console.log(
    `${pairs.length} pairs: ${count((p) => p.label === 'same')} same, ${count((p) => p.label === 'different')} different; ${count((p) => p.split === 'tune')} tune, ${count((p) => p.split === 'held-out')} held-out`,
  );
}

const DISTRACTORS = ['Summer Nights', 'Love Me Do (Live)', 'Intro', 'Part 3', 'Hello (Remix)'];

export interface PairScore {
  pairs: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: number;
  recall: number;
  misses: string[];
}

/**
 * A pair is predicted "same" when clusterTitles puts both titles in one cluster, clustered with a
 * few distractors: the decision the clustering itself makes.
 */
export function scorePairs(
  pairs: readonly LabelledPair[],
  cluster: (items: TitleItem[]) => TitleCluster[],
): PairScore {
  const s: PairScore = {
    pairs: pairs.length,
    tp: 0,
    fp: 0,
    fn: 0,
    tn: 0,
    precision: 0,
    recall: 0,
    misses: [],
  };
  for (const p of pairs) {
    const items: TitleItem[] = [
      { id: 'a', title: p.a, artist: null, earnings: '1' },
      { id: 'b', title: p.b, artist: null, earnings: '1' },
      ...DISTRACTORS.map((title, i) => ({ id: `d${i}`, title, artist: null, earnings: '1' })),
    ];
    const together = cluster(items).some(
      (c) => c.memberIds.includes('a') && c.memberIds.includes('b'),
    );
    if (together && p.label === 'same') s.tp++;
    else if (together) {
      s.fp++;
      s.misses.push(`false same: ${p.a} | ${p.b} (${p.pattern})`);
    } else if (p.label === 'same') {
      s.fn++;
      s.misses.push(`false different: ${p.a} | ${p.b} (${p.pattern})`);
    } else s.tn++;
  }
  s.precision = s.tp / (s.tp + s.fp);
  s.recall = s.tp / (s.tp + s.fn);
  return s;
}

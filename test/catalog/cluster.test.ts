// The title-clustering engine (src/catalog/cluster): exact normalizations, exact clusters with
// their display titles and earnings to the last decimal, determinism under any input order,
// edge and hostile input, and the same clustering through the real piscina worker.
import t from 'tap';
import {
  clusterTitles,
  normalizeTitle,
  titleSimilarity,
  DEFAULT_THRESHOLD,
  type TitleItem,
} from '../../src/catalog/cluster/index.ts';
import { versionKind } from '../../src/catalog/cluster/normalize.ts';
import { osaDistance, sameSignature } from '../../src/catalog/cluster/similarity.ts';
import { createThreadPool } from '../../src/workers/threadPool.ts';
import { AppError } from '../../src/errors.ts';

const item = (id: string, title: string, earnings = '0'): TitleItem => ({
  id,
  title,
  artist: null,
  earnings,
});

t.test('normalizeTitle', async (t) => {
  t.same(normalizeTitle('Summer Nights (feat. Lana Grey) - 2019 Remaster'), {
    key: 'summernights',
    base: 'summer nights',
    versionTags: ['remaster'],
    featured: ['lana grey'],
  });
  t.same(normalizeTitle('SUMMER NIGHTS'), {
    key: 'summernights',
    base: 'summer nights',
    versionTags: [],
    featured: [],
  });
  t.same(normalizeTitle('Señorita ft. Camila & Shawn'), {
    key: 'senorita',
    base: 'senorita',
    versionTags: [],
    featured: ['camila', 'shawn'],
  });
  t.same(normalizeTitle('Closer (with Halsey)'), {
    key: 'closer',
    base: 'closer',
    versionTags: [],
    featured: ['halsey'],
  });
  t.same(normalizeTitle('Dancing with Myself'), {
    key: 'dancingwithmyself',
    base: 'dancing with myself',
    versionTags: [],
    featured: [],
  });
  // words that name Object.prototype's members are words like any other
  t.same(normalizeTitle('The Constructor'), {
    key: 'theconstructor',
    base: 'the constructor',
    versionTags: [],
    featured: [],
  });
  t.same(normalizeTitle('Part Constructor'), {
    key: 'partconstructor',
    base: 'part constructor',
    versionTags: [],
    featured: [],
  });
  // the key is the song's: a version keeps its tags beside it
  t.same(normalizeTitle('Hallelujah - Live at the Olympia'), {
    key: 'hallelujah',
    base: 'hallelujah',
    versionTags: ['live:olympia'],
    featured: [],
  });
  t.same(normalizeTitle('Titanium (Alesso Remix) [Radio Edit]'), {
    key: 'titanium',
    base: 'titanium',
    versionTags: ['edit', 'remix:alesso'],
    featured: [],
  });
  t.same(normalizeTitle('Blinding Lights (Slowed + Reverb)').versionTags, ['slowed']);
  t.same(normalizeTitle('Blinding Lights - Sped Up').versionTags, ['sped up']);
  t.same(normalizeTitle('Levitating (Instrumental)').versionTags, ['instrumental']);
  t.same(normalizeTitle('Levitating (Karaoke Version)').versionTags, ['karaoke']);
  t.same(normalizeTitle('Creep - Demo Version').versionTags, ['demo']);
  t.same(normalizeTitle('Wonderwall (Acoustic Version)').versionTags, ['acoustic']);
  t.same(normalizeTitle('Animals - Extended Mix').versionTags, ['extended']);
  t.same(normalizeTitle('Creep (Explicit)'), {
    key: 'creep',
    base: 'creep',
    versionTags: ['explicit'],
    featured: [],
  });
  t.same(normalizeTitle('Love Story (Taylor’s Version)'), {
    key: 'lovestory',
    base: 'love story',
    versionTags: ['version:taylors'],
    featured: [],
  });
  t.same(
    normalizeTitle('Another Brick in the Wall, Pt. II').base,
    'another brick in the wall part 2',
  );
  t.same(normalizeTitle("Rock 'n' Roll").base, 'rock and roll');
  t.same(normalizeTitle('Straße Łódź Smörgåsbord').base, 'strasse lodz smorgasbord');
  t.same(normalizeTitle('夜に駆ける').base, '夜に駆ける', 'kana keep their voicing marks');
  t.same(
    normalizeTitle('봄날 (Spring Day)').key,
    '봄날',
    'a Latin translation of a Korean title is dropped',
  );
  t.same(normalizeTitle('Fire 🔥').key, 'fire');
  t.same(normalizeTitle('🔥🔥').key, '🔥🔥', 'a title of emoji only is compared as written');
  t.same(normalizeTitle(''), { key: '', base: '', versionTags: [], featured: [] });
});

t.test('titleSimilarity', async (t) => {
  t.equal(DEFAULT_THRESHOLD, 0.88);
  t.equal(titleSimilarity('Summer Nights', 'SUMMER NIGHTS (feat. X)'), 1);
  t.ok(
    titleSimilarity('Summer Nights', 'Summer Nigths') >= DEFAULT_THRESHOLD,
    'a transposition is a typo',
  );
  t.ok(
    titleSimilarity('Love Me', 'Love Me Do') < DEFAULT_THRESHOLD,
    'another word is another title',
  );
  t.ok(titleSimilarity('Part 1', 'Part 2') < DEFAULT_THRESHOLD);
  t.equal(titleSimilarity('Intro', 'Outro'), 0);
  t.equal(titleSimilarity('Hey Jude', 'Hey Jude - Live'), 1, 'a live version is the song');
  t.equal(titleSimilarity('Bohemian Rhapsody', 'Bohemian Rhapsody - Remastered 2011'), 1);
  t.equal(osaDistance('nights', 'nigths', 2), 1);
  t.equal(osaDistance('abc', 'xyz', 1), 2, 'stops above max');
});

t.test('sameSignature: one recording despite a one-letter typo in its credit', async (t) => {
  t.equal(sameSignature('remix:tiesto', 'remix:tiseto'), true, 'a transposition');
  t.equal(sameSignature('remix:tiesto', 'remix:tisto'), true, 'a dropped letter');
  t.equal(sameSignature('live:wembley+remix:tiesto', 'live:wembley+remix:tiseto'), true);
  t.equal(sameSignature('remix:tiesto', 'remix:alesso'), false, 'another remixer');
  t.equal(sameSignature('remix:kygo', 'remix:kyga'), false, 'a short name: another name');
  t.equal(sameSignature('live:2019', 'live:2018'), false, 'another number');
  t.equal(sameSignature('remix:tiesto', 'live:tiesto'), false, 'another kind');
  t.equal(sameSignature('remix', 'remix:tiesto'), false);
  t.equal(sameSignature('', ''), true);
});

t.test('clusterTitles: exact clusters, display titles, earnings', async (t) => {
  const items = [
    item('md-1', 'Summer Nights (feat. Lana Grey) - 2019 Remaster', '10.10'),
    item('md-2', 'SUMMER NIGHTS', '0.000000000001'),
    item('md-3', 'Summer Nights', '5.5'),
    item('md-4', 'Summer Nigths', '0.01'),
    item('md-5', 'Summer Nights - Live at Wembley', '100'),
    item('md-6', 'Love Me', '1'),
    item('md-7', 'Love Me Do', '1'),
    item('md-8', 'Love Me Do - Remastered 2009', '-0.25'),
    item('md-9', 'Summer Nights (Tiësto Remix)', '3'),
    item('md-10', 'Summer Nights - Tiesto Remix', '3'),
  ];
  // a cluster is the song: its live version and remixes join it
  t.same(clusterTitles(items), [
    {
      displayTitle: 'Summer Nights',
      memberIds: ['md-1', 'md-10', 'md-2', 'md-3', 'md-4', 'md-5', 'md-9'],
      similarity: 0.9583,
      earnings: '121.610000000001',
    },
    { displayTitle: 'Love Me', memberIds: ['md-6'], similarity: 1, earnings: '1' },
    { displayTitle: 'Love Me Do', memberIds: ['md-7', 'md-8'], similarity: 1, earnings: '0.75' },
  ]);
});

t.test(
  'the display title: the most frequent clean variant, then the highest-earning; not all capitals',
  async (t) => {
    const c = clusterTitles([
      item('a', 'HELLO WORLD', '1000'),
      item('b', 'HELLO WORLD', '1000'),
      item('c', 'Hello World (feat. X)', '1'),
      item('d', 'hello world', '2'),
      item('e', 'Hello World - 2011 Remaster', '1'),
    ]);
    t.equal(c.length, 1);
    t.equal(
      c[0]!.displayTitle,
      'Hello World',
      'two members read "Hello World" once cleaned; capitals come last',
    );
    t.equal(c[0]!.earnings, '2004');
  },
);

t.test('earnings are summed exactly, to any scale', async (t) => {
  const items = Array.from({ length: 1000 }, (_, i) => item(`id-${i}`, 'Same Title', '0.1'));
  items.push(item('big', 'Same Title', '12345678901234567890.123456789012'));
  const [c] = clusterTitles(items);
  t.equal(c!.earnings, '12345678901234567990.123456789012');
  t.same(clusterTitles([item('a', 'x', '-1.50'), item('b', 'x', '1.5')])[0]!.earnings, '0');
});

t.test('deterministic: the same result for any input order', async (t) => {
  const titles = [
    'Summer Nights',
    'summer nigths',
    'Love Me',
    'Love Me Do',
    'Hey Jude',
    'Hey Jude - Live',
    'Hey Jdue',
    'Part 1',
    'Part 2',
    'Pt. 1',
    'Everybody',
    'Every Body',
  ];
  const items = titles.map((title, i) => item(`m${i}`, title, String(i)));
  const first = clusterTitles(items);
  for (let seed = 1; seed <= 5; seed++) {
    const shuffled = [...items].sort(
      (a, b) =>
        ((a.id.charCodeAt(1) * seed * 7919) % 13) - ((b.id.charCodeAt(1) * seed * 7919) % 13) ||
        a.id.localeCompare(b.id) * (seed % 2 ? 1 : -1),
    );
    t.same(clusterTitles(shuffled), first);
  }
  t.same(
    first.map((c) => [...c.memberIds].sort()),
    [['m10', 'm11'], ['m7', 'm9'], ['m4', 'm5', 'm6'], ['m8'], ['m3'], ['m2'], ['m0', 'm1']],
  );
});

t.test(
  'one song however a statement prints it: credits, conjunctions, spellings, parts, scripts',
  async (t) => {
    const same: [string, string][] = [
      ["'Til the End", 'Until the End'],
      ['Till the End', 'Til The End'],
      ['Toi et moi', 'Toi & moi'],
      ['Tú y yo', 'Tu & Yo'],
      ["Rock 'n' Roll", 'Rock and Roll'],
      ['Saturday Nite', 'Saturday Night'],
      ['Summer w/ Lana Grey', 'Summer'],
      ['Summer (x Lana Grey)', 'Summer (avec Lana Grey)'],
      ['Suite Pt. 1', 'Suite, Part One'],
      ['Suite Pt. I', 'Suite Part 1'],
      ['Suite Pt1', 'Suite (Part 1)'],
      ['Ｓｕｍｍｅｒ Ｒａｉｎ', 'Summer Rain'],
      ['Cafe\u0301 de Flore', 'Café de Flore'],
      ['CAFE DE FLORE', 'café de flore'],
      ['Звезда', 'Zvezda'],
      ['Αγάπη μου', 'Agapi mou'],
      ['봄날', 'Bomnal'],
      ['さくら', 'Sakura'],
      ['Animals - Extended Mix', 'Animals (Radio Edit)'],
      ['Animals (VIP)', 'Animals - Club Mix'],
      ['Animals (Dub Mix)', 'Animals (Alesso Remix)'],
      ['Creep (Live at the Olympia)', 'Creep - Acoustic'],
      ['Creep (Instrumental)', 'Creep (A Cappella)'],
      ['Creep (Sped Up)', 'Creep (Slowed + Reverb)'],
      ['Creep - Demo', 'Creep (Re-Recorded)'],
      ['Creep (Spanish Version)', 'Creep (Clean)'],
    ];
    for (const [a, b] of same) t.equal(titleSimilarity(a, b), 1, `${a} / ${b}`);
    const apart: [string, string][] = [
      ['Stay', 'Stray'],
      ['Love', 'Lover'],
      ['Hello', 'Hello Again'],
      ['Intro', 'Outro'],
      ['22', '2002'],
      ['Vol. 1', 'Vol. 2'],
      ['Suite Part 1', 'Suite Pt. 2'],
      ['Until the End', 'Until the Night'],
    ];
    for (const [a, b] of apart)
      t.ok(titleSimilarity(a, b) < DEFAULT_THRESHOLD, `${a} / ${b} apart`);
    t.same(
      [
        'Animals (VIP)',
        'Animals - Live',
        'Animals (Spanish Version)',
        'Love Story (Taylor’s Version)',
        'Animals - 2011 Remaster',
        'Animals (Mono)',
        'Animals (feat. X)',
        'Animals (Sped Up)',
      ].map(versionKind),
      ['remix', 'live', 'language', 're-recording', 'remaster', 'mono', 'original', 'sped up'],
    );
  },
);

t.test(
  'the song display title: common spelling, no version or credit, the casing people use',
  async (t) => {
    const c = clusterTitles([
      item('a', 'Lighthous Keeper', '900'),
      item('b', 'Lighthouse Keeper (Remastered 2011)', '1'),
      item('c', 'LIGHTHOUSE KEEPER', '50'),
      item('d', 'Lighthouse Keeper - Live', '1'),
      item('e', 'Lighthouse Keeper (feat. Bea Moreno)', '1'),
    ]);
    t.same(c, [
      {
        displayTitle: 'Lighthouse Keeper',
        memberIds: ['a', 'b', 'c', 'd', 'e'],
        similarity: 0.97,
        earnings: '953',
      },
    ]);
  },
);

t.test('empty input, one item, bad input', async (t) => {
  t.same(clusterTitles([]), []);
  t.same(clusterTitles([item('only', '  Only  Title  ', '1.230')]), [
    { displayTitle: 'Only Title', memberIds: ['only'], similarity: 1, earnings: '1.23' },
  ]);
  t.throws(() => clusterTitles([item('a', 'x', '1e5')]), {
    name: 'TypeError',
    message: 'items[0].earnings must be a decimal string',
  });
  t.throws(() => clusterTitles([item('a', 'x'), item('a', 'y')]), { name: 'TypeError' });
  t.throws(() => clusterTitles([item('a', 'x')], { threshold: 2 }), { name: 'RangeError' });
});

t.test('hostile input: 100 KB title, odd unicode, emoji', async (t) => {
  const huge = 'Summer '.repeat(15_000);
  const weird = 'Z\u0351\u0352\u0353a\u0300\u0301lgo\u200d\u202e txt \uFFFD\uD834\uDD1E';
  const started = Date.now();
  const c = clusterTitles([
    item('huge-1', huge, '1'),
    item('huge-2', `${huge}x`, '1'),
    item('weird', weird, '1'),
    item('emoji-1', '🔥🔥', '1'),
    item('emoji-2', '🔥🔥', '2'),
    item('emoji-3', '🔥', '4'),
    item('lone', '\uD800', '1'),
  ]);
  t.ok(Date.now() - started < 2000, 'a 100 KB title costs no more than a long one');
  t.same(
    c.map((x) => x.memberIds),
    [['emoji-3'], ['emoji-1', 'emoji-2'], ['huge-1', 'huge-2'], ['weird'], ['lone']],
  );
  const hugeCluster = c.find((x) => x.memberIds.includes('huge-1'))!;
  t.equal(
    Array.from(hugeCluster.displayTitle).length,
    500,
    'display titles are cut to 500 characters',
  );
  t.equal(
    normalizeTitle(huge).base.length < 1100,
    true,
    'normalization reads the first 1,000 characters',
  );
  t.ok(normalizeTitle(weird).key.length > 0);
});

t.test('through the real piscina worker', async (t) => {
  const pool = createThreadPool({
    maxThreads: 1,
    maxQueue: 8,
    idleTimeoutMs: 2000,
    maxOldGenerationMb: 256,
    warm: 0,
  });
  t.teardown(() => pool.close());
  const items = [
    item('a', 'Summer Nights (feat. X)', '1.5'),
    item('b', 'SUMMER NIGHTS', '2.25'),
    item('c', 'Summer Nights (Live)', '1'),
  ];
  const expected = clusterTitles(items);
  const { clusters } = await pool.clusterTitles({ items });
  t.same(clusters, expected);
  t.same(expected[0], {
    displayTitle: 'Summer Nights',
    memberIds: ['a', 'b', 'c'],
    similarity: 1,
    earnings: '4.75',
  });
  const task = await pool.clusterTitles({ items, threshold: 0.9 });
  t.same(task.clusters, expected);
  const error = await pool
    .clusterTitles({ items: [item('a', 'x', 'ten')] })
    .catch((e: unknown) => e);
  t.ok(error instanceof AppError);
  t.match(error, {
    errorCode: 'VALIDATION_FAILED',
    message: 'items[0].earnings must be a decimal string',
  });
});

// normalizeLookupKey: the key every lookup table, ingestion and analytics share; and the built-in
// embedding the vector entries use.
import t from 'tap';
import { cosine, hashedNgramEmbedding } from '../../src/ai/embedding.ts';
import { baseTokens, normalizeLookupKey, tidyLabel } from '../../src/lookups/normalize.ts';

t.test(
  'case, accents, punctuation, white space and trailing tiers or company forms fold away',
  async (t) => {
    const cases: [string, string][] = [
      ['SPOTIFY PREMIUM', 'spotify'],
      ['  Spotify   AB ', 'spotify'],
      ['Spotify Premium Family Plan', 'spotify'],
      ['Apple Music - Subscription', 'apple music'],
      ['Deezer Premium+', 'deezer'],
      ['YouTube Ad-Supported', 'youtube'],
      ['Broadcast Music, Inc.', 'broadcast music'],
      ['B.M.I.', 'bmi'],
      ['The MLC', 'mlc'],
      ['Claro Música', 'claro musica'],
      ['Sony/ATV Music Publishing', 'sony atv music publishing'],
      ['R&B Radio', 'r and b radio'],
      ["Artist's Cut", 'artists cut'],
      ['Free', 'free'],
      ['Ad-Supported', 'ad supported'],
      ['Premium Streams', 'premium streams'],
      ['!!!', ''],
      ['Ｓｐｏｔｉｆｙ', 'spotify'],
    ];
    for (const [raw, key] of cases) t.equal(normalizeLookupKey(raw), key, raw);
    t.equal(
      normalizeLookupKey(normalizeLookupKey('Tidal HiFi Plus')),
      normalizeLookupKey('Tidal HiFi Plus'),
      'idempotent',
    );
    t.same(
      baseTokens('Amazon Music Unlimited'),
      ['amazon', 'music', 'unlimited'],
      'base tokens keep the tiers for rules',
    );
  },
);

t.test('tidyLabel turns shouting into title case and leaves the rest', async (t) => {
  t.equal(tidyLabel('STREAM - PREMIUM'), 'Stream - Premium');
  t.equal(tidyLabel('  iTunes   Match '), 'iTunes Match');
  t.equal(tidyLabel('123'), '123');
});

t.test(
  'the hashed n-gram embedding: deterministic, unit length, close for misspellings only',
  async (t) => {
    const a = hashedNgramEmbedding('Spotify');
    t.same(a, hashedNgramEmbedding('SPOTIFY premium'), 'the same normalized text embeds the same');
    t.equal(a.length, 256);
    t.ok(Math.abs(Math.sqrt(a.reduce((s, v) => s + v * v, 0)) - 1) < 1e-6);
    t.ok(cosine(a, hashedNgramEmbedding('Spotfy')) > 0.55);
    t.ok(cosine(hashedNgramEmbedding('Sound Cloud'), hashedNgramEmbedding('SoundCloud')) > 0.8);
    t.ok(cosine(a, hashedNgramEmbedding('Deezer')) < 0.3);
    t.equal(cosine(hashedNgramEmbedding(''), a), 0);
  },
);

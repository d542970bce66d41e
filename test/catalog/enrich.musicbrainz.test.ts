// The MusicBrainz provider against a local server speaking the web service's JSON format
// (test/helpers/musicbrainzServer.ts): lookups by ISRC and by title and artist, Lucene escaping
// of hostile strings, the User-Agent and fmt=json on every request, one request per interval,
// and each failure as the ProviderError the catalog's retry logic expects.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createProvider } from '../../src/catalog/enrich/index.ts';
import {
  escapeLucene,
  MusicBrainzProvider,
  recordingQuery,
  retryAfterMs,
} from '../../src/catalog/enrich/musicbrainz.ts';
import { ProviderError } from '../../src/catalog/enrich/provider.ts';
import { startMusicBrainzServer, type MusicBrainzServer } from '../helpers/musicbrainzServer.ts';
import { repoRoot } from '../setup/paths.ts';

const UA = 'royalty-engine-tests/1.0 ( tests@example.org )';
const INTERVAL = 50;

const server = await startMusicBrainzServer();
t.teardown(() => server.close());

function provider(
  srv: MusicBrainzServer = server,
  extra: Partial<{
    timeoutMs: number;
    minIntervalMs: number;
    userAgent: string;
    maxBodyBytes: number;
  }> = {},
): MusicBrainzProvider {
  return new MusicBrainzProvider({
    baseUrl: srv.url,
    userAgent: UA,
    minIntervalMs: INTERVAL,
    timeoutMs: 2000,
    ...extra,
  });
}

/** The requests made while fn ran. */
async function during<T>(
  srv: MusicBrainzServer,
  fn: () => Promise<T>,
): Promise<{ result: T; requests: MusicBrainzServer['requests'] }> {
  const from = srv.requests.length;
  const result = await fn();
  return { result, requests: srv.requests.slice(from) };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const MIDNIGHT_DRIVE = {
  provider: 'musicbrainz',
  providerId: '3e1f6d2a-8b4c-4d7e-9a05-6c2b8e4f1a93',
  title: 'Midnight Drive',
  artist: 'Bright Harbour',
  isrc: 'USRC12250611',
  releaseTitle: 'Midnight Drive',
  releaseArtist: 'Bright Harbour',
  releaseDate: '2019-05-01',
  genres: ['indie pop', 'pop'],
  songWriters: ['Mara Velde'],
  composers: ['Orla Finn', 'Ines Calder'],
  imageUrl: 'https://coverartarchive.org/release/9c4e6a8b-0d3f-4b5c-8e7a-1f3b5d7e9a2c/front-250',
  confidence: 1,
};

t.test(
  'lookup by ISRC: the ISRC resource, then the recording with genres and writers',
  async (t) => {
    const { result, requests } = await during(server, () =>
      provider().lookup({ isrc: 'us-rc1-22-50611', title: 'Midnight Drive', artist: null }),
    );
    t.same(result, MIDNIGHT_DRIVE);
    t.same(
      requests.map((r) => [r.method, r.path, r.params]),
      [
        ['GET', '/ws/2/isrc/USRC12250611', { inc: 'artist-credits+releases', fmt: 'json' }],
        [
          'GET',
          '/ws/2/recording/3e1f6d2a-8b4c-4d7e-9a05-6c2b8e4f1a93',
          {
            inc: 'artist-credits+releases+isrcs+genres+tags+work-rels+work-level-rels+artist-rels',
            fmt: 'json',
          },
        ],
      ],
    );
    t.ok(
      requests.every((r) => r.userAgent === UA),
      'the configured User-Agent on every request',
    );
  },
);

t.test('an artist credit with a join phrase, a year-only date', async (t) => {
  const hit = await provider().lookup({ isrc: 'GBQZ42166801', title: null, artist: null });
  t.same(hit && { ...hit }, {
    provider: 'musicbrainz',
    providerId: 'a1c3e5a7-b9d2-4f4a-8c6e-d8f0a2b4c6e8',
    title: 'Ember (feat. Mara Velde)',
    artist: 'Orla Finn feat. Mara Velde',
    isrc: 'GBQZ42166801',
    releaseTitle: 'Ember',
    releaseArtist: 'Orla Finn',
    releaseDate: '2021-01-01',
    genres: ['folk', 'singer-songwriter'],
    songWriters: ['Orla Finn'],
    composers: [],
    imageUrl: 'https://coverartarchive.org/release/4b9d1f3a-5c8e-4a0b-9d2f-6e8a0c2d4f7b/front-250',
    confidence: 1,
  });
});

t.test('an unknown ISRC: 404 is "not found", then title and artist are searched', async (t) => {
  const alone = await during(server, () =>
    provider().lookup({ isrc: 'GBAAA0000001', title: null, artist: null }),
  );
  t.equal(alone.result, null);
  t.same(
    alone.requests.map((r) => r.path),
    ['/ws/2/isrc/GBAAA0000001'],
  );

  const withTitle = await during(server, () =>
    provider().lookup({ isrc: 'GBAAA0000001', title: 'MIDNIGHT DRIVE', artist: 'bright harbour' }),
  );
  t.same(
    withTitle.requests.map((r) => r.path),
    [
      '/ws/2/isrc/GBAAA0000001',
      '/ws/2/recording',
      '/ws/2/recording/3e1f6d2a-8b4c-4d7e-9a05-6c2b8e4f1a93',
    ],
  );
  t.same(withTitle.requests[1]!.params, {
    query: 'recording:"MIDNIGHT DRIVE" AND artist:"bright harbour"',
    limit: '5',
    fmt: 'json',
  });
  t.same(withTitle.result, { ...MIDNIGHT_DRIVE, isrc: 'USRC12250611', confidence: 0.95 });

  // a title alone held by two artists is ambiguous
  const ambiguous = await during(server, () =>
    provider().lookup({ isrc: null, title: 'Midnight Drive', artist: null }),
  );
  t.equal(ambiguous.result, null);
  t.same(ambiguous.requests[0]!.clauses, [{ field: 'recording', value: 'Midnight Drive' }]);
  // another artist's song is not this one
  t.equal(
    await provider().lookup({ isrc: null, title: 'Midnight Drive', artist: 'Nobody Known' }),
    null,
  );
  // another kind of version is another recording: an acoustic line is neither the studio nor the live one
  t.equal(
    await provider().lookup({
      isrc: null,
      title: 'Midnight Drive (Acoustic)',
      artist: 'Bright Harbour',
    }),
    null,
  );
  t.equal(
    (
      await provider().lookup({
        isrc: null,
        title: 'Midnight Drive - Live',
        artist: 'Bright Harbour',
      })
    )?.providerId,
    '6b3d5f7a-9c2e-4a4b-8d6f-8e0a2c4e6b8d',
  );
});

t.test('search: candidates ranked, best first', async (t) => {
  const found = await provider().search({
    isrc: null,
    title: 'Midnight Drive',
    artist: null,
    limit: 10,
  });
  t.same(
    found.map((f) => [f.providerId, f.title, f.artist, f.releaseDate, f.confidence]),
    [
      ['8d5f7b9c-1e4a-4c6d-9f8b-0a2c4e6a8d0f', 'Midnight Drive', 'Kestrel Road', '2011-03-01', 0.6],
      [
        '3e1f6d2a-8b4c-4d7e-9a05-6c2b8e4f1a93',
        'Midnight Drive',
        'Bright Harbour',
        '2019-05-01',
        0.6,
      ],
      [
        '6b3d5f7a-9c2e-4a4b-8d6f-8e0a2c4e6b8d',
        'Midnight Drive (Live)',
        'Bright Harbour',
        '2022-09-30',
        0.3,
      ],
    ],
  );
  const withArtist = await during(server, () =>
    provider().search({ isrc: null, title: 'Midnight Drive', artist: 'Bright Harbour', limit: 2 }),
  );
  t.same(withArtist.requests[0]!.params, {
    query: 'recording:"Midnight Drive" AND artist:"Bright Harbour"',
    limit: '2',
    fmt: 'json',
  });
  t.same(
    withArtist.result.map((f) => [f.title, f.confidence]),
    [
      ['Midnight Drive', 0.95],
      ['Midnight Drive (Live)', 0.5],
    ],
  );
  // search answers carry no genres or writers (those need the recording itself)
  t.same(withArtist.result[0]!.genres, []);
  const byIsrc = await during(server, () =>
    provider().search({ isrc: 'usrc12250611', title: 'Midnight Drive', artist: 'Bright Harbour' }),
  );
  t.equal(
    byIsrc.requests[0]!.params.query,
    'isrc:USRC12250611 OR (recording:"Midnight Drive" AND artist:"Bright Harbour")',
  );
  t.same(
    byIsrc.result.map((f) => [f.isrc, f.confidence]),
    [
      ['USRC12250611', 1],
      ['USRC12299001', 0.5],
    ],
  );
  t.same(
    await provider().search({ isrc: null, title: '', artist: 'x' }),
    [],
    'nothing to search: no request',
  );
});

t.test('hostile strings are escaped: the server reads exactly the text given', async (t) => {
  t.equal(
    escapeLucene('a"b\\c:d(e)f OR g && h || !i{j}[k]^l~m*n?o/p+q-r'),
    'a\\"b\\\\c\\:d\\(e\\)f OR g \\&\\& h \\|\\| \\!i\\{j\\}\\[k\\]\\^l\\~m\\*n\\?o\\/p\\+q\\-r',
  );
  const title = 'He said "Hi": (Part 1) OR 1=1 && more!';
  const artist = 'AC/DC-ish & Co. (Tribute)';
  const { result, requests } = await during(server, () =>
    provider().lookup({ isrc: null, title, artist }),
  );
  t.same(requests[0]!.clauses, [
    { field: 'recording', value: title },
    { field: 'artist', value: artist },
  ]);
  t.equal(result?.providerId, 'c2e4a6c8-d0f3-4b5d-9e7f-a9b1c3d5e7f9');
  t.equal(result?.title, title);
  t.equal(result?.confidence, 0.95);
  t.equal(result?.imageUrl, null, 'no front cover in the Cover Art Archive');

  for (const hostile of [
    'x" OR artist:"*',
    '\\',
    '"',
    'OR 1=1',
    '*:*',
    "'; DROP TABLE recording; --",
    'a\nb\tc\u0000d',
    ')))(((',
    'NOT AND OR',
  ]) {
    const r = await during(server, () =>
      provider().search({ isrc: null, title: hostile, artist: hostile }),
    );
    t.same(r.result, [], `${JSON.stringify(hostile)}: nothing found`);
    t.same(
      r.requests[0]!.clauses,
      [
        { field: 'recording', value: hostile.replace(/[\p{Cc}\s]+/gu, ' ').trim() },
        { field: 'artist', value: hostile.replace(/[\p{Cc}\s]+/gu, ' ').trim() },
      ],
      `${JSON.stringify(hostile)}: two clauses, read back verbatim`,
    );
  }
  t.equal(recordingQuery({ isrc: null, title: '   ', artist: 'x' }), null);
  // an ISRC that is not one never reaches the URL
  const bad = await during(server, () =>
    provider().lookup({ isrc: '../../recording/x?inc=', title: null, artist: null }),
  );
  t.equal(bad.result, null);
  t.same(bad.requests, []);
});

t.test('one request per interval per process, measured at the server', async (t) => {
  const a = provider();
  const b = provider(); // another instance in the same process shares the spacing
  await a.search({ isrc: null, title: 'warm up', artist: null });
  const { requests } = await during(server, () =>
    Promise.all([
      a.lookup({ isrc: 'USRC12250611', title: null, artist: null }),
      b.lookup({ isrc: 'GBQZ42466801', title: null, artist: null }),
      a.search({ isrc: null, title: 'Ember', artist: null }),
    ]),
  );
  t.equal(requests.length, 5);
  const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
  // spaced when sent; measured on arrival, where one request's way may take a few ms less than the
  // one before it (49.9 ms was seen on a busy machine): unspaced requests would arrive ~0 ms apart
  t.ok(
    gaps.every((g) => g >= INTERVAL * 0.9),
    `gaps ${gaps.map((g) => g.toFixed(1)).join(', ')} ms`,
  );
  t.ok(
    requests.at(-1)!.at - requests[0]!.at >= INTERVAL * (requests.length - 1) - 5,
    'the requests together take at least their intervals',
  );
  t.ok(
    requests.every((r) => r.userAgent === UA && r.params.fmt === 'json'),
    'User-Agent and fmt=json on every request',
  );
});

t.test(
  '503 and 429: retryable, with the Retry-After hint, and the next request waits for it',
  async (t) => {
    server.failNext(1, 503, { retryAfter: '1' });
    const e = await rejection(
      provider().lookup({ isrc: 'USRC12250611', title: null, artist: null }),
    );
    t.ok(e instanceof ProviderError);
    t.match(e, { retryable: true, retryAfterMs: 1000, message: /busy \(HTTP 503\)/ });
    const before = server.requests.at(-1)!.at;
    await provider().lookup({ isrc: 'GBAAA0000001', title: null, artist: null });
    t.ok(server.requests.at(-1)!.at - before >= 1000, 'the pause is honoured');

    server.failNext(1, 429, { retryAfter: new Date(Date.now() + 3000).toUTCString() });
    const e2 = await rejection(
      provider({ ...server }, { minIntervalMs: 51 }).search({
        isrc: null,
        title: 'Ember',
        artist: null,
      }),
    );
    t.match(e2, { retryable: true });
    t.ok(
      (e2 as ProviderError).retryAfterMs! > 1000 && (e2 as ProviderError).retryAfterMs! <= 3000,
      'an HTTP date',
    );
    t.equal(retryAfterMs('120'), 120_000);
    t.equal(
      retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:30 GMT')),
      30_000,
    );
    t.equal(retryAfterMs('soon'), undefined);
    t.equal(retryAfterMs(null), undefined);

    server.failNext(1, 500);
    t.match(
      await rejection(
        provider({ ...server }, { minIntervalMs: 52 }).lookup({
          isrc: 'USRC12250611',
          title: null,
          artist: null,
        }),
      ),
      {
        retryable: true,
        retryAfterMs: undefined,
        message: /HTTP 500/,
      },
    );
  },
);

t.test(
  'a pause longer than a request may take: the callers waiting are answered at once, retryable after the pause',
  async (t) => {
    // a long Retry-After (maintenance): a caller is not kept waiting for it until its own time runs out
    // (the queue would then count a timeout and retry long before the service is back, or give up)
    // a server of its own: the pause holds every later request of this process to it
    const paused = await startMusicBrainzServer();
    t.teardown(() => paused.close());
    const mb = provider(paused);
    paused.failNext(1, 503, { retryAfter: '600' });
    t.match(await rejection(mb.lookup({ isrc: 'USRC12250611', title: null, artist: null })), {
      retryable: true,
      retryAfterMs: 600_000,
    });
    const from = paused.requests.length;
    const started = performance.now();
    const waiting = await Promise.all(
      ['USRC12250611', 'GBQZ42166801'].map((isrc) =>
        rejection(
          mb.lookup({ isrc, title: null, artist: null }, { signal: AbortSignal.timeout(5_000) }),
        ),
      ),
    );
    t.ok(performance.now() - started < 1_000, 'answered at once');
    for (const e of waiting) {
      t.ok(e instanceof ProviderError, String(e));
      t.match(e, { retryable: true, message: /asked for a pause/ });
      t.ok(
        (e as ProviderError).retryAfterMs! > 590_000 &&
          (e as ProviderError).retryAfterMs! <= 600_000,
        'retry once the pause is over',
      );
    }
    t.equal(paused.requests.length, from, 'nothing was sent during the pause');
  },
);

t.test('400 and other refusals: not retryable, with the service message', async (t) => {
  server.failNext(1, 400, {
    body: JSON.stringify({ error: 'Invalid query', help: 'see the docs' }),
  });
  const e = await rejection(
    provider({ ...server }, { minIntervalMs: 53 }).search({ isrc: null, title: 'x', artist: null }),
  );
  t.ok(e instanceof ProviderError);
  t.match(e, { retryable: false, retryAfterMs: undefined, message: /HTTP 400\): Invalid query/ });
  // the server refuses an anonymous client
  const anonymous = await rejection(
    provider({ ...server }, { minIntervalMs: 54, userAgent: 'node' }).lookup({
      isrc: 'USRC12250611',
      title: null,
      artist: null,
    }),
  );
  t.match(anonymous, {
    retryable: false,
    message: /HTTP 403\): Please provide a meaningful User-Agent/,
  });
});

t.test(
  'a server that does not answer: timeout, retryable; a cancelled caller: its own reason',
  async (t) => {
    server.hangNext(1);
    const started = performance.now();
    const e = await rejection(
      provider({ ...server }, { minIntervalMs: 55, timeoutMs: 300 }).lookup({
        isrc: 'USRC12250611',
        title: null,
        artist: null,
      }),
    );
    const took = performance.now() - started;
    t.ok(e instanceof ProviderError);
    t.match(e, { retryable: true, message: /did not answer within 300 ms/ });
    t.ok(took >= 290 && took < 2000, `gave up after ${took.toFixed(0)} ms`);

    server.hangNext(1);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('shutting down')), 100);
    const cancelled = await rejection(
      provider({ ...server }, { minIntervalMs: 56, timeoutMs: 5000 }).lookup(
        { isrc: 'USRC12250611', title: null, artist: null },
        { signal: ac.signal },
      ),
    );
    t.notOk(cancelled instanceof ProviderError);
    t.match(cancelled, /shutting down/);
  },
);

t.test('an answer larger than a response may hold is refused, not read into memory', async (t) => {
  // a body over the cap (the provider also stops reading a chunked one once it passes the cap)
  server.failNext(1, 200, { body: JSON.stringify({ recordings: [], filler: 'x'.repeat(5_000) }) });
  t.match(
    await rejection(
      provider({ ...server }, { minIntervalMs: 61, maxBodyBytes: 1_024 }).search({
        isrc: null,
        title: 'Ember',
        artist: null,
      }),
    ),
    {
      retryable: false,
      message: /more than the 1024 (bytes )?a response may hold/,
    },
  );
  // within the cap: answered as ever
  const ok = await provider({ ...server }, { minIntervalMs: 62, maxBodyBytes: 1_000_000 }).lookup({
    isrc: 'USRC12250611',
    title: null,
    artist: null,
  });
  t.ok(ok, 'a normal answer within the cap');
});

t.test('an unreadable answer: not retryable, never a crash', async (t) => {
  server.malformedNext(1);
  t.match(
    await rejection(
      provider({ ...server }, { minIntervalMs: 57 }).lookup({
        isrc: 'USRC12250611',
        title: null,
        artist: null,
      }),
    ),
    {
      retryable: false,
      message: /malformed JSON/,
    },
  );
  server.failNext(1, 200, { body: '{"recordings": 5}' });
  t.match(
    await rejection(
      provider({ ...server }, { minIntervalMs: 58 }).search({
        isrc: null,
        title: 'Ember',
        artist: null,
      }),
    ),
    {
      retryable: false,
      message: /unexpected shape \(recordings/,
    },
  );
});

t.test('a server that is gone: retryable', async (t) => {
  const gone = await startMusicBrainzServer();
  await gone.close();
  const e = await rejection(
    provider(gone).lookup({ isrc: 'USRC12250611', title: null, artist: null }),
  );
  t.ok(e instanceof ProviderError);
  t.match(e, { retryable: true, message: /unreachable/ });
});

t.test(
  'configuration: createProvider, the User-Agent from name, version and contact',
  async (t) => {
    const config = loadConfig({
      ENRICHMENT_PROVIDER: 'musicbrainz',
      MUSICBRAINZ_URL: `${server.url}/`,
      MUSICBRAINZ_CONTACT: 'ops@example.org',
      MUSICBRAINZ_MIN_INTERVAL_MS: '59',
      ENRICHMENT_TIMEOUT_MS: '4000',
    });
    t.same(config.enrichment, {
      provider: 'musicbrainz',
      timeoutMs: 4000,
      musicbrainz: {
        baseUrl: server.url,
        userAgent: 'royalty-engine/0.1.0 ( ops@example.org )',
        minIntervalMs: 59,
      },
    });
    const p = createProvider(config);
    t.equal(p.name, 'musicbrainz');
    const { result, requests } = await during(server, () =>
      p.lookup({ isrc: 'USRC12250611', title: null, artist: null }),
    );
    t.equal(result?.providerId, MIDNIGHT_DRIVE.providerId);
    t.ok(requests.every((r) => r.userAgent === 'royalty-engine/0.1.0 ( ops@example.org )'));

    t.same(loadConfig({}).enrichment, {
      provider: 'offline',
      timeoutMs: 15_000,
      musicbrainz: {
        baseUrl: 'https://musicbrainz.org',
        userAgent: 'royalty-engine/0.1.0 ( contact not configured )',
        minIntervalMs: 1000,
      },
    });
    t.equal(
      loadConfig({
        ENRICHMENT_PROVIDER: 'musicbrainz',
        MUSICBRAINZ_USER_AGENT: 'Label/2.0 ( a@b.c )',
      }).enrichment.musicbrainz.userAgent,
      'Label/2.0 ( a@b.c )',
    );
    t.throws(() => loadConfig({ ENRICHMENT_PROVIDER: 'musicbrainz' }), ConfigError);
    t.throws(() => loadConfig({ ENRICHMENT_PROVIDER: 'musicbrainz' }), /MUSICBRAINZ_CONTACT/);
    t.throws(() => loadConfig({ ENRICHMENT_PROVIDER: 'lastfm' }), /ENRICHMENT_PROVIDER/);
    t.throws(() => loadConfig({ MUSICBRAINZ_URL: 'ftp://x' }), /MUSICBRAINZ_URL/);
    t.throws(
      () => loadConfig({ MUSICBRAINZ_MIN_INTERVAL_MS: '-1' }),
      /MUSICBRAINZ_MIN_INTERVAL_MS/,
    );
    const reference = readFileSync(
      path.join(repoRoot, 'docs', 'reference', 'configuration.md'),
      'utf8',
    );
    for (const v of [
      'ENRICHMENT_PROVIDER',
      'MUSICBRAINZ_URL',
      'MUSICBRAINZ_USER_AGENT',
      'MUSICBRAINZ_CONTACT',
      'MUSICBRAINZ_MIN_INTERVAL_MS',
      'ENRICHMENT_TIMEOUT_MS',
    ]) {
      t.match(
        reference,
        new RegExp(`^\\| \`${v}\` \\|`, 'm'),
        `${v} in the configuration reference`,
      );
    }
  },
);

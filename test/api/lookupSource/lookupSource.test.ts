// lookupSource.*: entries keyed by the normalized original, the missing report, vector entries
// with their embeddings, built-in resolution, and the OpenAI-compatible provider against a local
// server that speaks the chat-completions and embeddings wire format.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import t from 'tap';
import { resolveSource } from '../../../src/lookups/analyticsLookups.ts';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data, reportRawValue } from '../../lookups/helpers.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Source Org');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;
const db = srv.deps.pool;

t.test('every procedure needs a platform operator', async (t) => {
  const calls: [string, 'GET' | 'POST', unknown][] = [
    ['lookupSource.batchResolveWithAI', 'POST', { sources: ['Spotify'] }],
    ['lookupSource.create', 'POST', { original: 'x', status: 'verified' }],
    ['lookupSource.delete', 'POST', { id: randomUUID() }],
    ['lookupSource.getSourceLookup', 'GET', { original: 'Spotify' }],
    ['lookupSource.list', 'GET', {}],
    ['lookupSource.missingSources', 'GET', {}],
    ['lookupSource.ragCreate', 'POST', { name: 'x', category: 'y' }],
    ['lookupSource.ragDelete', 'POST', { id: randomUUID() }],
    ['lookupSource.ragList', 'GET', {}],
    ['lookupSource.ragUpdate', 'POST', { id: randomUUID(), name: 'x', category: 'y' }],
    ['lookupSource.resolveWithAI', 'POST', { original: 'Spotify' }],
    ['lookupSource.update', 'POST', { id: randomUUID() }],
  ];
  for (const [path, method, input] of calls) {
    isError(t, await owner.client.call(method, path, input), 'FORBIDDEN', 'PLATFORM_ROLE_REQUIRED');
    isError(t, await srv.anonymous.call(method, path, input), 'UNAUTHORIZED', 'AUTH_REQUIRED');
  }
});

t.test('the gold data ships as verified source lookups', async (t) => {
  const spotify = data(await op.query('lookupSource.getSourceLookup', { original: 'SPOTIFY AB' }));
  t.match(spotify, {
    original: 'Spotify',
    originalNormalized: 'spotify',
    collectionSource: null,
    earningsSource: 'Spotify',
    earningsCategory: 'streaming',
    earningsParentCompany: 'Spotify Technology S.A.',
    publisherSource: null,
    status: 'verified',
    reason: { origin: 'gold data' },
  });
  const ascap = data(await op.query('lookupSource.getSourceLookup', { original: 'ascap' }));
  t.match(ascap, {
    collectionSource: 'ASCAP',
    earningsSource: null,
    earningsCategory: 'performance',
  });
});

t.test('create, update, get, list and delete; analytics sees a change at once', async (t) => {
  const created = data(
    await op.mutate('lookupSource.create', {
      original: 'Qobuz Hi-Res Store',
      earningsSource: 'Qobuz',
      earningsCategory: 'download',
      status: 'verified',
      reason: 'checked on the statement',
    }),
  );
  t.match(created, {
    originalNormalized: 'qobuz hi res store',
    earningsSource: 'Qobuz',
    collectionSource: null,
    reason: 'checked on the statement',
    created: true,
  });
  t.match(await resolveSource(db, 'QOBUZ HI-RES STORE'), {
    source: 'Qobuz',
    earningsSource: 'Qobuz',
    earningsCategory: 'download',
  });

  const updated = data(
    await op.mutate('lookupSource.update', {
      id: created.id,
      earningsCategory: 'streaming',
      earningsParentCompany: 'Xandrie',
      status: 'reviewed',
    }),
  );
  t.match(updated, {
    earningsSource: 'Qobuz',
    earningsCategory: 'streaming',
    earningsParentCompany: 'Xandrie',
    status: 'reviewed',
    reason: 'checked on the statement',
  });
  t.match(
    await resolveSource(db, 'Qobuz Hi Res Store'),
    { earningsCategory: 'streaming', earningsParentCompany: 'Xandrie', status: 'reviewed' },
    'no re-ingestion needed',
  );
  const collection = data(
    await op.mutate('lookupSource.update', { id: created.id, collectionSource: 'SoundExchange' }),
  );
  t.equal(collection.collectionSource, 'SoundExchange');
  t.match(
    await resolveSource(db, 'Qobuz Hi Res Store'),
    { source: 'SoundExchange' },
    'the collection source comes first',
  );

  const listed = data(await op.query('lookupSource.list', { search: 'xandrie' }));
  t.same(
    listed.data.map((r: any) => r.id),
    [created.id],
  );
  const reviewed = data(await op.query('lookupSource.list', { status: ['reviewed'] }));
  t.equal(reviewed.pagination.total, 1);
  // status is any JSON value: null filters nothing, like an absent one
  t.equal(
    data(await op.query('lookupSource.list', { status: null })).pagination.total,
    data(await op.query('lookupSource.list', {})).pagination.total,
  );
  // a search without a letter or digit matches literally (its normalized form is empty), not every entry
  for (const search of ['%', '_', '\\', '!!!'])
    t.equal(data(await op.query('lookupSource.list', { search })).pagination.total, 0, search);
  const page = data(
    await op.query('lookupSource.list', {
      pagination: { page: 2, limit: 5, sortBy: 'earningsSource', sortOrder: 'desc' },
    }),
  );
  t.equal(page.data.length, 5);
  t.same(page.pagination, {
    page: 2,
    limit: 5,
    total: 181,
    totalPages: 37,
    hasNext: true,
    hasPrev: true,
  });

  t.same(data(await op.mutate('lookupSource.delete', { id: created.id })), {
    id: created.id,
    deleted: true,
  });
  t.equal(await resolveSource(db, 'Qobuz Hi Res Store'), null);
  isError(
    t,
    await op.mutate('lookupSource.delete', { id: created.id }),
    'NOT_FOUND',
    'SOURCE_LOOKUP_NOT_FOUND',
  );
  isError(
    t,
    await op.mutate('lookupSource.update', { id: created.id, status: 'x' }),
    'NOT_FOUND',
    'SOURCE_LOOKUP_NOT_FOUND',
  );
  isError(
    t,
    await op.query('lookupSource.getSourceLookup', { id: created.id }),
    'NOT_FOUND',
    'SOURCE_LOOKUP_NOT_FOUND',
  );
  isError(
    t,
    await op.mutateUnchecked('lookupSource.create', { original: 'x' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test(
  "resolveWithAI answers a string's own entry when its key normalized again is another entry's",
  async (t) => {
    const plain = data(
      await op.mutate('lookupSource.create', {
        original: 'Blorp Radio',
        earningsSource: 'Blorp',
        status: 'verified',
      }),
    );
    const band = data(
      await op.mutate('lookupSource.create', {
        original: 'The The Blorp Radio',
        earningsSource: 'The The Radio',
        status: 'verified',
      }),
    );
    t.same([plain.originalNormalized, band.originalNormalized], ['blorp radio', 'the blorp radio']);
    const res = data(
      await op.mutate('lookupSource.batchResolveWithAI', {
        sources: ['The The Blorp Radio', 'blorp radio'],
      }),
    );
    t.same(
      res.results.map((r: any) => [r.method, r.entry.id, r.proposal.earningsSource]),
      [
        ['lookup', band.id, 'The The Radio'],
        ['lookup', plain.id, 'Blorp'],
      ],
    );
    for (const e of [plain, band]) await op.mutate('lookupSource.delete', { id: e.id });
  },
);

t.test('missingSources aggregates raw sources without a lookup across organizations', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const [a, b] = [randomUUID(), randomUUID()];
  await reportRawValue(db, {
    organizationId: owner.organizationId,
    statementId: a,
    kind: 'source',
    raw: 'Spotify Premium',
    rows: 900,
    usd: '1000.00',
  });
  await reportRawValue(db, {
    organizationId: owner.organizationId,
    statementId: a,
    kind: 'source',
    raw: 'Obscure Radio FM',
    rows: 4,
    usd: '0.0004',
  });
  await reportRawValue(db, {
    organizationId: other.organizationId,
    statementId: b,
    kind: 'source',
    raw: 'Kiosk Music Box',
    rows: 40,
    usd: '12.34',
  });
  await reportRawValue(db, {
    organizationId: other.organizationId,
    statementId: b,
    kind: 'source',
    raw: 'OBSCURE RADIO F.M.',
    rows: 6,
    usd: '0.0006',
  });
  const missing = data(
    await op.query('lookupSource.missingSources', { pagination: { page: 1, limit: 10 } }),
  );
  t.same(missing.data, [
    {
      original: 'Kiosk Music Box',
      normalized: 'kiosk music box',
      variants: ['Kiosk Music Box'],
      rowCount: 40,
      usdAmount: '12.34',
      statementCount: 1,
      organizationCount: 1,
    },
    {
      original: 'OBSCURE RADIO F.M.',
      normalized: 'obscure radio fm',
      variants: ['OBSCURE RADIO F.M.', 'Obscure Radio FM'],
      rowCount: 10,
      usdAmount: '0.001',
      statementCount: 2,
      organizationCount: 2,
    },
  ]);
  t.equal(
    missing.pagination.total,
    2,
    '"Spotify Premium" resolves through the shipped "Spotify" entry',
  );
});

t.test('vector entries: create embeds, update re-embeds, list, delete', async (t) => {
  const shipped = data(await op.query('lookupSource.ragList', { search: 'soundexchange' }));
  t.same(
    shipped.data.map((e: any) => [e.name, e.category]),
    [['SoundExchange', 'radio']],
  );
  const created = data(
    await op.mutate('lookupSource.ragCreate', { name: 'Kiosk Music Box', category: 'streaming' }),
  );
  t.match(created, {
    name: 'Kiosk Music Box',
    category: 'streaming',
    embeddingModel: 'hashed-ngram-v1-256',
    dimensions: 256,
  });
  t.equal(created.embedding.length, 256);
  const norm = Math.sqrt(created.embedding.reduce((s: number, v: number) => s + v * v, 0));
  t.ok(Math.abs(norm - 1) < 1e-5, 'unit length');
  isError(
    t,
    await op.mutate('lookupSource.ragCreate', { name: 'KIOSK music box', category: 'streaming' }),
    'CONFLICT',
    'RAG_ENTRY_EXISTS',
  );
  // a name with nothing to match on is refused as input
  for (const name of ['---', '!!!', ' * ']) {
    isError(
      t,
      await op.mutate('lookupSource.ragCreate', { name, category: 'streaming' }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
    isError(
      t,
      await op.mutate('lookupSource.ragUpdate', { id: created.id, name, category: 'streaming' }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
  }

  const resolved = data(
    await op.mutate('lookupSource.resolveWithAI', { original: 'Kiosk Musicbox Europe' }),
  );
  t.match(resolved, {
    method: 'vector',
    proposal: { earningsSource: 'Kiosk Music Box', earningsCategory: 'streaming' },
  });

  const updated = data(
    await op.mutate('lookupSource.ragUpdate', {
      id: created.id,
      name: 'Jukebox Network',
      category: 'public performance',
    }),
  );
  t.match(updated, {
    id: created.id,
    name: 'Jukebox Network',
    category: 'public performance',
    dimensions: 256,
  });
  t.not(
    JSON.stringify(updated.embedding),
    JSON.stringify(created.embedding),
    'the embedding was generated again',
  );
  const listed = data(
    await op.query('lookupSource.ragList', { search: 'jukebox', includeEmbedding: true }),
  );
  t.same(
    listed.data.map((e: any) => e.embedding),
    [updated.embedding],
  );
  const withoutVectors = data(await op.query('lookupSource.ragList', { search: 'jukebox' }));
  t.equal(withoutVectors.data[0].embedding, undefined);
  t.same(data(await op.mutate('lookupSource.ragDelete', { id: created.id })), {
    id: created.id,
    deleted: true,
  });
  isError(
    t,
    await op.mutate('lookupSource.ragDelete', { id: created.id }),
    'NOT_FOUND',
    'RAG_ENTRY_NOT_FOUND',
  );
  isError(
    t,
    await op.mutate('lookupSource.ragUpdate', { id: created.id, name: 'x', category: 'y' }),
    'NOT_FOUND',
    'RAG_ENTRY_NOT_FOUND',
  );
  const all = data(await op.query('lookupSource.ragList'));
  t.equal(all.pagination.total, 180);
  // pagination.sortOrder turns the order by name around
  const names = (list: any) => list.data.map((e: any) => e.name);
  const asc = data(await op.query('lookupSource.ragList', { pagination: { page: 1, limit: 180 } }));
  const desc = data(
    await op.query('lookupSource.ragList', {
      pagination: { page: 1, limit: 180, sortOrder: 'desc' },
    }),
  );
  t.same(names(desc), [...names(asc)].reverse());
  t.not(names(desc)[0], names(asc)[0]);
});

t.test('resolveWithAI and batchResolveWithAI with the built-in resolver', async (t) => {
  const r = data(
    await op.mutate('lookupSource.resolveWithAI', { original: 'Amazon Music Unlimited' }),
  );
  t.match(r, {
    normalized: 'amazon music',
    provider: 'builtin',
    method: 'lookup',
    confidence: 1,
    saved: false,
  });
  const phrase = data(
    await op.mutate('lookupSource.resolveWithAI', { original: 'GEMA Germany', saveToDb: true }),
  );
  t.match(phrase, {
    method: 'phrase',
    saved: true,
    proposal: { collectionSource: 'GEMA', earningsCategory: 'performance' },
  });
  t.ok(phrase.confidence > 0.7 && phrase.confidence < 0.97);
  t.match(phrase.entry, {
    original: 'GEMA Germany',
    status: 'ai_suggested',
    collectionSource: 'GEMA',
    reason: { resolvedBy: 'builtin', method: 'phrase' },
  });
  const batch = data(
    await op.mutate('lookupSource.batchResolveWithAI', {
      sources: ['Tidal HiFi Plus', 'Deezr', 'Nothing Known Here'],
    }),
  );
  t.same(
    batch.results.map((x: any) => [x.original, x.method, x.proposal?.earningsSource ?? null]),
    [
      ['Tidal HiFi Plus', 'lookup', 'Tidal'],
      ['Deezr', 'vector', 'Deezer'],
      ['Nothing Known Here', 'none', null],
    ],
  );
  isError(
    t,
    await op.mutate('lookupSource.batchResolveWithAI', {
      sources: Array.from({ length: 11 }, (_, i) => `s${i}`),
    }),
    'BAD_REQUEST',
    'RESOLVE_BATCH_TOO_LARGE',
  );
});

t.test(
  'the OpenAI-compatible provider, against a local server speaking its wire format',
  async (t) => {
    const fake = Fastify({ forceCloseConnections: true });
    const requests: { url: string; auth: string | undefined; body: any }[] = [];
    let mode: 'ok' | 'error' | 'garbage' = 'ok';
    fake.post('/v1/chat/completions', async (req, reply) => {
      const body = req.body as any;
      requests.push({ url: req.url, auth: req.headers.authorization, body });
      if (mode === 'error') return reply.code(500).send({ error: { message: 'overloaded' } });
      const user = JSON.parse(body.messages[1].content);
      const content =
        mode === 'garbage'
          ? 'not json at all'
          : user.source !== undefined
            ? JSON.stringify({
                collectionSource: null,
                earningsSource: 'Kiosk Music',
                earningsCategory: 'Streaming',
                earningsParentCompany: null,
                publisherSource: null,
                confidence: 0.82,
                reason: 'A jukebox streaming service',
              })
            : JSON.stringify({
                cleansed: 'Jukebox Plays',
                primarySalesType: user.salesType === 'Bogus' ? 'Podcasting' : 'Public Performance',
                secondarySalesType: user.salesType === 'Bogus' ? null : 'General Licensing',
                confidence: 0.7,
                reason: 'Venue plays',
              });
      return {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      };
    });
    fake.post('/v1/embeddings', async (req) => {
      const body = req.body as any;
      requests.push({ url: req.url, auth: req.headers.authorization, body });
      return {
        object: 'list',
        model: body.model,
        data: body.input.map((text: string, index: number) => ({
          object: 'embedding',
          index,
          embedding: [text.length, text.charCodeAt(0) || 0, 1, 0.5],
        })),
      };
    });
    const base = await fake.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(() => fake.close());

    const ai = await startTestHandler(t, {
      env: {
        AI_PROVIDER: 'openai',
        AI_BASE_URL: `${base}/v1`,
        AI_API_KEY: 'sk-test',
        AI_MODEL: 'test-model',
        AI_EMBEDDING_MODEL: 'test-embed',
      },
    });
    const aiOwner = await newOrganization(ai, 'AI Org');
    const aiOp = (await outsider(ai, aiOwner.organizationId, 'c2_superadmin')).client;

    const res = data(
      await aiOp.mutate('lookupSource.resolveWithAI', {
        original: 'Kiosk Jukebox Streams',
        saveToDb: true,
      }),
    );
    t.match(res, {
      provider: 'openai',
      method: 'model',
      confidence: 0.82,
      reason: 'A jukebox streaming service',
      proposal: {
        earningsSource: 'Kiosk Music',
        earningsCategory: 'streaming',
        collectionSource: null,
      },
      saved: true,
      entry: {
        status: 'ai_suggested',
        earningsSource: 'Kiosk Music',
        reason: { resolvedBy: 'openai', method: 'model' },
      },
    });
    const chat = requests.find((r) => r.url === '/v1/chat/completions')!;
    t.equal(chat.auth, 'Bearer sk-test');
    t.match(chat.body, {
      model: 'test-model',
      response_format: { type: 'json_object' },
      messages: [{ role: 'system' }, { role: 'user' }],
    });
    t.match(JSON.parse(chat.body.messages[1].content), {
      source: 'Kiosk Jukebox Streams',
      normalized: 'kiosk jukebox streams',
    });
    const embeds = requests.filter((r) => r.url === '/v1/embeddings');
    t.ok(embeds.length >= 1, 'vector entries were embedded by the configured endpoint');
    t.equal(embeds[0]!.body.model, 'test-embed');

    // an existing entry is the answer without asking the model
    const before = requests.length;
    const known = data(await aiOp.mutate('lookupSource.resolveWithAI', { original: 'Spotify' }));
    t.match(known, { provider: 'openai', method: 'lookup' });
    t.equal(requests.filter((r, i) => i >= before && r.url === '/v1/chat/completions').length, 0);

    const st = data(
      await aiOp.mutate('lookupSalesType.resolveWithAI', { original: 'Jukebox Plays' }),
    );
    t.match(st, {
      provider: 'openai',
      method: 'model',
      proposal: {
        cleansed: 'Jukebox Plays',
        primarySalesType: 'Public Performance',
        secondarySalesType: 'General Licensing',
      },
    });
    const lastChat = requests.filter((r) => r.url === '/v1/chat/completions').at(-1)!;
    t.ok(
      JSON.parse(lastChat.body.messages[1].content).taxonomy.length === 27,
      'the taxonomy is in the prompt',
    );
    isError(
      t,
      await aiOp.mutate('lookupSalesType.resolveWithAI', { original: 'Bogus' }),
      'INTERNAL_SERVER_ERROR',
      'AI_PROVIDER_FAILED',
    );

    const rag = data(
      await aiOp.mutate('lookupSource.ragCreate', { name: 'Kiosk', category: 'streaming' }),
    );
    t.match(rag, {
      embeddingModel: 'openai:test-embed',
      dimensions: 4,
      embedding: [5, 107, 1, 0.5],
    });

    mode = 'error';
    const failed = await aiOp.mutate('lookupSource.resolveWithAI', {
      original: 'Something Unknown Entirely',
    });
    isError(t, failed, 'INTERNAL_SERVER_ERROR', 'AI_PROVIDER_FAILED');
    t.equal(failed.status, 500);
    mode = 'garbage';
    isError(
      t,
      await aiOp.mutate('lookupSource.resolveWithAI', { original: 'Something Unknown Entirely' }),
      'INTERNAL_SERVER_ERROR',
      'AI_PROVIDER_FAILED',
    );
  },
);

// The OpenAI-compatible endpoint misbehaving: answers that are JSON but not the asked shape
// (null, a list of nulls, numbers a float4 cannot hold), and a body that stalls past the timeout
// after the headers were sent. Every one is AI_PROVIDER_FAILED, never an unexplained 500, and
// nothing is written.
import Fastify from 'fastify';
import t from 'tap';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError } from '../../helpers/outcome.ts';

type Mode = 'null' | 'nullItems' | 'huge' | 'stall' | 'dimensions' | 'dupIndex' | 'ok';
let mode: Mode = 'ok';
let chatMode: 'null' | 'nullChoice' = 'null';

const fake = Fastify({ forceCloseConnections: true });
fake.post('/v1/embeddings', async (req, reply) => {
  const body = req.body as { input: string[] };
  switch (mode) {
    case 'null':
      return reply.type('application/json').send('null');
    case 'nullItems':
      return reply
        .type('application/json')
        .send(JSON.stringify({ data: body.input.map(() => null) }));
    case 'huge':
      return { data: body.input.map((_, index) => ({ index, embedding: [1e300, 1, 2] })) };
    case 'dupIndex':
      return { data: body.input.map(() => ({ index: 0, embedding: [1, 2, 3] })) };
    case 'dimensions':
      return {
        data: body.input.map((_, index) => ({
          index,
          embedding: index === 0 ? [1, 2, 3] : [1, 2],
        })),
      };
    case 'stall': {
      // the headers and the start of the body, then nothing until long after the timeout
      reply.raw.writeHead(200, { 'content-type': 'application/json' });
      reply.raw.write('{"data": [');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      reply.raw.end(']}');
      return reply;
    }
    default:
      return { data: body.input.map((_, index) => ({ index, embedding: [1, 2, 3] })) };
  }
});
fake.post('/v1/chat/completions', async (_req, reply) => {
  if (chatMode === 'null') return reply.type('application/json').send('null');
  return reply.type('application/json').send(JSON.stringify({ choices: [null] }));
});
const base = await fake.listen({ port: 0, host: '127.0.0.1' });
t.teardown(() => fake.close());

const srv = await startTestHandler(t, {
  env: {
    AI_PROVIDER: 'openai',
    AI_BASE_URL: `${base}/v1`,
    AI_MODEL: 'test-model',
    AI_EMBEDDING_MODEL: 'test-embed',
    AI_TIMEOUT_MS: '500',
  },
});
const owner = await newOrganization(srv, 'AI Failures');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;

async function countEntries(name: string): Promise<number> {
  const { rows } = await srv.deps.pool.query<{ n: number }>(
    'SELECT count(*) AS n FROM source_vectors WHERE name = $1',
    [name],
  );
  return rows[0]!.n;
}

for (const m of ['null', 'nullItems', 'huge', 'stall'] as const) {
  t.test(`ragCreate when the embeddings endpoint answers ${m}`, async (t) => {
    mode = m;
    const name = `Failing ${m}`;
    const res = await op.mutate('lookupSource.ragCreate', { name, category: 'streaming' });
    isError(t, res, 'INTERNAL_SERVER_ERROR', 'AI_PROVIDER_FAILED');
    t.equal(await countEntries(name), 0, 'nothing written');
  });
}

t.test(
  'resolveWithAI embeds every vector entry in one call: indexes and sizes must fit',
  async (t) => {
    // ensureEmbeddings sends the shipped entries in chunks of 100, so an answer with one index
    // twice, or embeddings of two sizes, would put a vector on the wrong name
    for (const m of ['dupIndex', 'dimensions'] as const) {
      mode = m;
      isError(
        t,
        await op.mutate('lookupSource.resolveWithAI', { original: `Unheard Of Outlet ${m}` }),
        'INTERNAL_SERVER_ERROR',
        'AI_PROVIDER_FAILED',
      );
    }
    const { rows } = await srv.deps.pool.query<{ n: number }>(
      `SELECT count(*) AS n FROM source_vectors WHERE embedding_model = 'openai:test-embed'`,
    );
    t.equal(rows[0]!.n, 0, 'no entry embedded from those answers');
  },
);

t.test(
  'ragUpdate when the embeddings endpoint answers null keeps the entry as it was',
  async (t) => {
    mode = 'ok';
    const created = await op.mutate('lookupSource.ragCreate', {
      name: 'Steady Entry',
      category: 'streaming',
    });
    t.equal(created.ok, true);
    mode = 'null';
    isError(
      t,
      await op.mutate('lookupSource.ragUpdate', {
        id: created.data.id,
        name: 'Changed Entry',
        category: 'video',
      }),
      'INTERNAL_SERVER_ERROR',
      'AI_PROVIDER_FAILED',
    );
    const { rows } = await srv.deps.pool.query(
      'SELECT name, category FROM source_vectors WHERE id = $1',
      [created.data.id],
    );
    t.same(rows, [{ name: 'Steady Entry', category: 'streaming' }]);
  },
);

t.test('resolveWithAI when the chat endpoint answers null or a null choice', async (t) => {
  // embeddings work, so the failure is the chat completion's
  mode = 'ok';
  for (const m of ['null', 'nullChoice'] as const) {
    chatMode = m;
    const res = await op.mutate('lookupSource.resolveWithAI', {
      original: `Unheard Of Outlet ${m}`,
    });
    isError(t, res, 'INTERNAL_SERVER_ERROR', 'AI_PROVIDER_FAILED');
  }
});

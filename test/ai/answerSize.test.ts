// An OpenAI-compatible endpoint answering more than an answer may hold (MAX_ANSWER_BYTES): the
// answer is refused as AI_PROVIDER_FAILED once that much has arrived, whether the size is declared
// (content-length) or only streamed, or compressed small (the limit is on the answer as read,
// decompressed), instead of being read whole into memory; nothing is written.
// The answers here are valid JSON (the asked shape, padded with whitespace), so only the size
// refuses them.
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import t from 'tap';
import { MAX_ANSWER_BYTES } from '../../src/ai/embedding.ts';
import { newOrganization, outsider } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { data } from '../lookups/helpers.ts';
import { isError } from '../helpers/outcome.ts';

type Mode = 'ok' | 'bom' | 'declared' | 'streamed' | 'gzip';
let mode: Mode = 'ok';
/** bytes of the last answer the fake finished sending (or was cut off in) */
let sent = 0;

const padding = ' '.repeat(1024 * 1024);
const over = Math.ceil(MAX_ANSWER_BYTES / padding.length) + 1;

function answer(reply: import('fastify').FastifyReply, json: string) {
  if (mode === 'ok') return reply.type('application/json').send(json);
  if (mode === 'bom')
    return reply
      .type('application/json')
      .send(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]));
  if (mode === 'gzip') {
    const body = gzipSync(json + padding.repeat(over));
    sent = body.length;
    return reply.type('application/json').header('content-encoding', 'gzip').send(body);
  }
  if (mode === 'declared') {
    const body = json + padding.repeat(over);
    sent = body.length;
    return reply.type('application/json').send(body);
  }
  // chunked, no content-length: the size shows only as it arrives; the fake stops once the
  // client is gone
  reply.raw.writeHead(200, { 'content-type': 'application/json' });
  reply.raw.write(json);
  sent = json.length;
  const more = async () => {
    for (let i = 0; i < over * 4 && !reply.raw.destroyed; i++) {
      if (!reply.raw.write(padding))
        await new Promise((resolve) => reply.raw.once('drain', resolve).once('close', resolve));
      sent += padding.length;
    }
    reply.raw.end();
  };
  void more();
  return reply;
}

const fake = Fastify();
fake.post('/v1/embeddings', async (req, reply) => {
  const body = req.body as { input: string[] };
  return answer(
    reply,
    JSON.stringify({ data: body.input.map((_, index) => ({ index, embedding: [1, 2, 3] })) }),
  );
});
let chatMode: Mode = 'ok';
fake.post('/v1/chat/completions', async (_req, reply) => {
  const content = JSON.stringify({
    collectionSource: null,
    earningsSource: 'Padded Outlet',
    earningsCategory: 'streaming',
    earningsParentCompany: null,
    publisherSource: null,
    confidence: 0.8,
    reason: 'test',
  });
  const saved = mode;
  mode = chatMode;
  try {
    return answer(
      reply,
      JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }),
    );
  } finally {
    mode = saved;
  }
});
const base = await fake.listen({ port: 0, host: '127.0.0.1' });
t.teardown(() => fake.close());

const srv = await startTestServer(t, {
  env: {
    AI_PROVIDER: 'openai',
    AI_BASE_URL: `${base}/v1`,
    AI_MODEL: 'test-model',
    AI_EMBEDDING_MODEL: 'test-embed',
    AI_TIMEOUT_MS: '20000',
  },
});
const owner = await newOrganization(srv, 'AI Answer Size');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;

async function countEntries(name: string): Promise<number> {
  const { rows } = await srv.deps.pool.query<{ n: number }>(
    'SELECT count(*) AS n FROM source_vectors WHERE name = $1',
    [name],
  );
  return rows[0]!.n;
}

t.test(
  'an answer within the limit is read, a leading byte-order mark dropped as Response.text() drops it',
  async (t) => {
    mode = 'ok';
    t.match(
      data(
        await op.mutate('lookupSource.ragCreate', { name: 'Small Answer', category: 'streaming' }),
      ),
      { name: 'Small Answer', dimensions: 3 },
    );
    mode = 'bom';
    t.match(
      data(
        await op.mutate('lookupSource.ragCreate', { name: 'Marked Answer', category: 'streaming' }),
      ),
      { name: 'Marked Answer', dimensions: 3 },
    );
  },
);

for (const m of ['declared', 'streamed', 'gzip'] as const) {
  t.test(
    `an embeddings answer over the limit (${m}) is AI_PROVIDER_FAILED, and not read to its end`,
    async (t) => {
      mode = m;
      const name = `Oversized ${m}`;
      const res = await op.mutate('lookupSource.ragCreate', { name, category: 'streaming' });
      isError(t, res, 'INTERNAL_SERVER_ERROR', 'AI_PROVIDER_FAILED');
      t.match(res.error?.message, /more than the 16777216 bytes/);
      t.equal(await countEntries(name), 0, 'nothing written');
      if (m === 'streamed')
        t.ok(sent < over * 4 * padding.length, `the fake was cut off (${sent} bytes sent)`);
      if (m === 'gzip') t.ok(sent < 100_000, `${sent} bytes on the wire`);
    },
  );
}

t.test('a chat completion over the limit is AI_PROVIDER_FAILED and saves nothing', async (t) => {
  mode = 'ok';
  for (const m of ['declared', 'streamed'] as const) {
    chatMode = m;
    const res = await op.mutate('lookupSource.resolveWithAI', {
      original: `Padded Outlet ${m}`,
      saveToDb: true,
    });
    isError(t, res, 'INTERNAL_SERVER_ERROR', 'AI_PROVIDER_FAILED');
    const { rows } = await srv.deps.pool.query('SELECT 1 FROM lookup_sources WHERE original = $1', [
      `Padded Outlet ${m}`,
    ]);
    t.equal(rows.length, 0);
  }
  chatMode = 'ok';
  t.match(data(await op.mutate('lookupSource.resolveWithAI', { original: 'Padded Outlet ok' })), {
    provider: 'openai',
    method: 'model',
  });
});

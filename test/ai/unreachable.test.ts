// The AI provider configured but not there (nothing listens at AI_BASE_URL): every procedure that
// asks it answers AI_PROVIDER_FAILED at once, never an unexplained 500, and writes nothing. Without
// AI_PROVIDER (the built-in resolver) the same calls answer offline.
import { createServer } from 'node:net';
import t from 'tap';
import { newOrganization, outsider } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { data } from '../lookups/helpers.ts';
import { isError } from '../helpers/outcome.ts';

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const srv = await startTestServer(t, {
  env: {
    AI_PROVIDER: 'openai',
    AI_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`,
    AI_MODEL: 'test-model',
    AI_EMBEDDING_MODEL: 'test-embed',
  },
});
const owner = await newOrganization(srv, 'AI Unreachable');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;

t.test('every AI call is AI_PROVIDER_FAILED (500) and writes nothing', async (t) => {
  const calls: [string, Record<string, unknown>][] = [
    ['lookupSource.ragCreate', { name: 'Nowhere Radio', category: 'radio' }],
    ['lookupSource.resolveWithAI', { original: 'Nowhere Radio', saveToDb: true }],
    [
      'lookupSource.batchResolveWithAI',
      { sources: ['Nowhere Radio', 'Elsewhere FM'], saveToDb: true },
    ],
    ['lookupSalesType.resolveWithAI', { original: 'Nowhere Plays', saveToDb: true }],
    ['lookupSalesType.batchResolveWithAI', { salesTypes: ['Nowhere Plays'], saveToDb: true }],
  ];
  for (const [procedure, input] of calls) {
    const started = Date.now();
    const res = await op.call('POST', procedure, input);
    isError(t, res, 'INTERNAL_SERVER_ERROR', 'AI_PROVIDER_FAILED');
    t.match(res, { status: 500, error: { message: /could not be reached/ } }, procedure);
    t.ok(Date.now() - started < 10_000, `${procedure} fails at once`);
  }
  const { rows } = await srv.deps.pool.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM source_vectors WHERE name = 'Nowhere Radio') + (SELECT count(*) FROM lookup_sources WHERE original IN ('Nowhere Radio', 'Elsewhere FM'))
       + (SELECT count(*) FROM lookup_sales_types WHERE original = 'Nowhere Plays') AS n`,
  );
  t.equal(Number(rows[0]!.n), 0, 'nothing written');
});

t.test('without AI_PROVIDER the built-in resolver answers, with no network', async (t) => {
  const offline = await startTestServer(t);
  const o = await newOrganization(offline, 'AI Offline');
  const oop = (await outsider(offline, o.organizationId, 'c2_superadmin')).client;
  t.match(data(await oop.mutate('lookupSource.resolveWithAI', { original: 'Spotify' })), {
    provider: 'builtin',
    method: 'lookup',
  });
  t.match(data(await oop.mutate('lookupSalesType.resolveWithAI', { original: 'Nowhere Plays' })), {
    provider: 'builtin',
  });
});

// resolveWithAI / batchResolveWithAI against a slow provider: every request has AI_TIMEOUT_MS,
// and the whole call has 2 × AI_TIMEOUT_MS (RESOLVE_BUDGET_TIMEOUTS). The strings of a batch are
// resolved at once, so ten strings answered well within the timeout end within the budget, where
// one after the other they could not; when the budget runs out the call is AI_PROVIDER_FAILED
// with what was resolved (details.results, saved ones saved) and what was not
// (details.unresolved), and nothing of the unresolved strings is written afterwards.
//
// The timed assertions hold under load: each bound is a line the fake's delays (lower bounds of
// its answers) keep the other behaviour from meeting, and a slow request stays 800 ms within its
// timeout.
import Fastify from 'fastify';
import t from 'tap';
import { RESOLVE_BUDGET_TIMEOUTS } from '../../src/lookups/aiResolution.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { newOrganization, outsider } from '../helpers/principals.ts';
import { data } from '../lookups/helpers.ts';
import { isError } from '../helpers/outcome.ts';

const TIMEOUT_MS = 4000;
/** a "medium" request: ten strings of two such requests each take 5 timeouts one after the other */
const MEDIUM_MS = TIMEOUT_MS / 4;
/** a "slow" request, within the timeout: three of them one after the other are past the budget */
const SLOW_MS = TIMEOUT_MS * 0.8;
/** the fake's delay for a request naming "slow" or "medium" */
const delayOf = (text: string) =>
  /slow/i.test(text) ? SLOW_MS : /medium/i.test(text) ? MEDIUM_MS : 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// its connections closed with it: the aborted requests leave kept-alive sockets the test's
// process would otherwise wait about a minute for
const fake = Fastify({ forceCloseConnections: true });
fake.post('/v1/embeddings', async (req) => {
  const body = req.body as { input: string[] };
  await sleep(Math.max(...body.input.map(delayOf)));
  return { data: body.input.map((_, index) => ({ index, embedding: [1, 2, 3] })) };
});
fake.post('/v1/chat/completions', async (req) => {
  const question = JSON.parse(
    (req.body as { messages: { content: string }[] }).messages[1]!.content,
  ) as { source?: string; salesType?: string };
  const raw = question.source ?? question.salesType!;
  await sleep(delayOf(raw));
  const content =
    question.source !== undefined
      ? {
          collectionSource: null,
          earningsSource: raw,
          earningsCategory: 'streaming',
          earningsParentCompany: null,
          publisherSource: null,
          confidence: 0.8,
          reason: 'slow test',
        }
      : {
          cleansed: raw,
          primarySalesType: 'Streaming',
          secondarySalesType: 'Interactive Streaming',
          confidence: 0.75,
          reason: 'slow test',
        };
  return { choices: [{ message: { role: 'assistant', content: JSON.stringify(content) } }] };
});
const base = await fake.listen({ port: 0, host: '127.0.0.1' });
t.teardown(() => fake.close());

const srv = await startTestHandler(t, {
  env: {
    AI_PROVIDER: 'openai',
    AI_BASE_URL: `${base}/v1`,
    AI_MODEL: 'test-model',
    AI_EMBEDDING_MODEL: 'test-embed',
    AI_TIMEOUT_MS: String(TIMEOUT_MS),
  },
});
const owner = await newOrganization(srv, 'AI Time Budget');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;
const BUDGET_MS = TIMEOUT_MS * RESOLVE_BUDGET_TIMEOUTS;
const names = [
  'Alpha',
  'Bravo',
  'Charlie',
  'Delta',
  'Echo',
  'Foxtrot',
  'Golf',
  'Hotel',
  'India',
  'Juliett',
];

async function savedSources(originals: string[]): Promise<string[]> {
  const { rows } = await srv.deps.pool.query<{ original: string }>(
    `SELECT original FROM lookup_sources WHERE original = ANY($1) AND status = 'ai_suggested' ORDER BY original`,
    [originals],
  );
  return rows.map((r) => r.original);
}

t.test(
  'ten sources each answered within the timeout: resolved at once within the budget, all saved',
  async (t) => {
    // the vector entries are embedded on first use, outside what is measured
    data(await op.mutate('lookupSource.resolveWithAI', { original: 'Warm Up Outlet' }));
    const sources = names.map((n) => `Medium Outlet ${n}`);
    const started = Date.now();
    const { results } = data(
      await op.mutate('lookupSource.batchResolveWithAI', { sources, saveToDb: true }),
    );
    const took = Date.now() - started;
    t.ok(
      took < BUDGET_MS,
      `took ${took} ms, under the budget of ${BUDGET_MS} ms (one string after the other: at least ${20 * MEDIUM_MS})`,
    );
    t.same(
      results.map((r: any) => [
        r.original,
        r.method,
        r.confidence,
        r.proposal.earningsSource,
        r.saved,
      ]),
      sources.map((s) => [s, 'model', 0.8, s, true]),
    );
    t.same(await savedSources(sources), [...sources].sort());
  },
);

t.test(
  'ten sales types each answered within the timeout: resolved at once within the budget',
  async (t) => {
    const salesTypes = names.map((n) => `Medium Plays ${n}`);
    const started = Date.now();
    const { results } = data(await op.mutate('lookupSalesType.batchResolveWithAI', { salesTypes }));
    const took = Date.now() - started;
    t.ok(took < BUDGET_MS, `took ${took} ms, under the budget of ${BUDGET_MS} ms`);
    t.same(
      results.map((r: any) => [r.original, r.method, r.confidence, r.proposal, r.saved]),
      salesTypes.map((s) => [
        s,
        'model',
        0.75,
        { cleansed: s, primarySalesType: 'Streaming', secondarySalesType: 'Interactive Streaming' },
        false,
      ]),
    );
  },
);

t.test(
  'past the budget: AI_PROVIDER_FAILED with the strings resolved and those not; nothing of the rest is saved later',
  async (t) => {
    // an entry to embed first (slow), then each slow string's embedding and answer: 3 × SLOW_MS,
    // past the budget; the quick strings are resolved after the first one
    await srv.deps.pool.query(
      `INSERT INTO source_vectors (name, name_normalized, category) VALUES ('Slow Vector Entry', 'slow vector entry', 'radio')`,
    );
    const sources = [
      'Quick Outlet One',
      'Slow Outlet Two',
      'Quick Outlet Three',
      'Slow Outlet Four',
    ];
    const started = Date.now();
    const res = await op.mutate('lookupSource.batchResolveWithAI', { sources, saveToDb: true });
    const took = Date.now() - started;
    isError(t, res, 'INTERNAL_SERVER_ERROR', 'AI_PROVIDER_FAILED');
    t.ok(
      took >= BUDGET_MS && took < 3 * SLOW_MS,
      `answered at the budget (${took} ms), before the slow strings could be (${3 * SLOW_MS} ms)`,
    );
    const error = (res as any).error;
    t.match(
      error.message,
      /did not resolve 2 of 4 strings within the call's time budget \(8000 ms: 2 × AI_TIMEOUT_MS\)/,
    );
    t.equal(error.data.details.budgetMs, BUDGET_MS);
    t.same(error.data.details.unresolved, ['Slow Outlet Two', 'Slow Outlet Four']);
    t.same(
      error.data.details.results.map((r: any) => [
        r.original,
        r.method,
        r.proposal.earningsSource,
        r.saved,
        r.entry.status,
      ]),
      [
        ['Quick Outlet One', 'model', 'Quick Outlet One', true, 'ai_suggested'],
        ['Quick Outlet Three', 'model', 'Quick Outlet Three', true, 'ai_suggested'],
      ],
    );
    t.same(await savedSources(sources), ['Quick Outlet One', 'Quick Outlet Three']);
    // the aborted requests write nothing once their answers would have come
    await sleep(started + 3 * SLOW_MS + 500 - Date.now());
    t.same(
      await savedSources(sources),
      ['Quick Outlet One', 'Quick Outlet Three'],
      'still only the resolved ones',
    );
    // the entry's embedding was cut short too; the next call embeds it
    const single = await op.mutate('lookupSource.resolveWithAI', { original: 'Quick Outlet Five' });
    t.match(data(single), { original: 'Quick Outlet Five', method: 'model', saved: false });
  },
);

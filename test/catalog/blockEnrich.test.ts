// The enrichment queue over blocks built from ingested statements: the offline provider takes every
// detail to a terminal state; a failing provider (a test double of the external service) gives
// backoff and retries, then a visible failed state; stale claims are reclaimed; organizations are
// served fairly, by mdFetchMultiplier, with mdFetchFocus putting priority rightsholders first.
import t from 'tap';
import { refreshBlock } from '../../src/catalog/blocks.ts';
import { OfflineProvider } from '../../src/catalog/enrich/offline.ts';
import {
  ProviderError,
  type EnrichedRecording,
  type EnrichmentProvider,
  type TrackQuery,
} from '../../src/catalog/enrich/provider.ts';
import {
  backoffMs,
  claimRound,
  defaultEnrichSettings,
  drainQueue,
  reclaimStale,
} from '../../src/catalog/enrichQueue.ts';
import { statementIngestTask } from '../../src/jobs/tasks/statement_ingest.ts';
import { createRightsholder, putFile, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { distrokid } from './helpers.ts';

t.setTimeout(900_000);

// statements are ingested by the job runner; the catalog tasks are driven by the test itself
const srv = await startTestServer(t, {
  role: 'serve',
  taskList: (deps) => ({ statement_ingest: statementIngestTask(deps) }),
});
const db = srv.deps.pool;

async function blockOf(
  orgName: string,
  rightsholderName: string,
  rows: [string, string, string, string][],
) {
  const owner = await newOrganization(srv, orgName);
  const rh = await createRightsholder(owner.client, owner.organizationId, rightsholderName);
  const up = await putFile(owner.client, owner.organizationId, rh, 'dk.tsv', distrokid(rows));
  const s = await waitForStatement(owner.client, owner.organizationId, up.statementId, 240_000);
  if (s.status !== 'processed') throw new Error(`statement ${s.status}`);
  const refreshed = await refreshBlock(srv.deps, owner.organizationId, rh);
  return { owner, org: owner.organizationId, rh, block: refreshed!.blockId };
}

async function states(block: string) {
  const { rows } = await db.query<{
    title: string;
    state: string;
    attempts: number;
    last_error: string | null;
    provider: string | null;
  }>(
    'SELECT title, state, attempts, last_error, provider FROM musical_details WHERE block_id = $1 ORDER BY title',
    [block],
  );
  return rows;
}

/** A music data service that fails as told, then answers. */
class FlakyProvider implements EnrichmentProvider {
  readonly name = 'flaky';
  calls: TrackQuery[] = [];
  constructor(
    private readonly failures: (call: number, q: TrackQuery) => ProviderError | Error | null,
  ) {}
  async lookup(q: TrackQuery): Promise<EnrichedRecording | null> {
    this.calls.push(q);
    const failure = this.failures(this.calls.length, q);
    if (failure) throw failure;
    if (q.title === 'Unknown Song') return null;
    return {
      provider: 'flaky',
      providerId: `id-${q.isrc}`,
      title: q.title ?? '',
      artist: q.artist ?? '',
      isrc: q.isrc,
      releaseTitle: null,
      releaseArtist: null,
      releaseDate: '2020-01-01',
      genres: [],
      songWriters: [],
      composers: [],
      imageUrl: null,
      confidence: 1,
    };
  }
  async search(): Promise<EnrichedRecording[]> {
    return [];
  }
}

const fast = { baseBackoffMs: 1, maxBackoffMs: 5, maxAttempts: 3 };
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test(
  'the offline provider takes every detail of a fixture block to a terminal state',
  async (t) => {
    const { block } = await blockOf('Offline Org', 'Orla Finn', [
      ['Orla Finn', 'Blue Hearts', 'ESA1B1100343', '1'],
      ['Orla Finn', 'Crystal Hearts', '', '2'],
      ['Orla Finn', 'Unknown Song Nobody Recorded', '', '3'],
    ]);
    const result = await drainQueue(srv.deps, new OfflineProvider(), { budgetMs: 60_000 });
    t.match(result.settled, { found: 2, not_found: 1, retry: 0, failed: 0 });
    t.same(
      (await states(block)).map((r) => [r.title, r.state, r.attempts, r.provider]),
      [
        ['Blue Hearts', 'found', 1, 'offline'],
        ['Crystal Hearts', 'found', 1, 'offline'],
        ['Unknown Song Nobody Recorded', 'not_found', 1, 'offline'],
      ],
    );
    const found = await db.query(
      `SELECT provider_id, result FROM musical_details WHERE block_id = $1 AND title = 'Blue Hearts'`,
      [block],
    );
    t.match(found.rows[0], {
      provider_id: '87131117-84ba-5d8f-b753-103292177d54',
      result: {
        title: 'Blue Hearts',
        artist: 'Orla Finn',
        releaseTitle: 'Burning Horizon',
        releaseDate: '2011-01-29',
        genres: ['folk', 'singer-songwriter'],
      },
    });
    t.equal((await drainQueue(srv.deps, new OfflineProvider())).rounds, 0, 'nothing left to do');
  },
);

t.test('retryable failures back off and retry; the last attempt fails visibly', async (t) => {
  const { block } = await blockOf('Flaky Org', 'Flaky Artist', [
    ['Flaky Artist', 'Comes Through', 'USRC11000001', '1'],
    ['Flaky Artist', 'Never Answers', 'USRC11000002', '1'],
    ['Flaky Artist', 'Refused', 'USRC11000003', '1'],
  ]);
  let comesThrough = 0;
  const provider = new FlakyProvider((_call, q) => {
    if (q.title === 'Never Answers') return new ProviderError('503 Service Unavailable', true);
    if (q.title === 'Refused') return new ProviderError('400 Bad Request', false);
    if (q.title === 'Comes Through' && ++comesThrough <= 2)
      return new ProviderError('429 Too Many Requests', true, 2);
    return null;
  });
  const first = await drainQueue(srv.deps, provider, {
    settings: { ...fast, baseBackoffMs: 60_000, maxBackoffMs: 3_600_000 },
    budgetMs: 1,
  });
  t.match(
    first.settled,
    { retry: 2, failed: 1 },
    'one round: two back to pending, the refused one failed',
  );
  const afterFirst = await states(block);
  t.same(
    afterFirst.map((r) => [r.title, r.state, r.attempts, r.last_error]),
    [
      ['Comes Through', 'pending', 1, 'ProviderError: 429 Too Many Requests'],
      ['Never Answers', 'pending', 1, 'ProviderError: 503 Service Unavailable'],
      ['Refused', 'failed', 1, 'ProviderError: 400 Bad Request'],
    ],
  );
  const due = await db.query(
    `SELECT next_attempt_at > now() + interval '55 seconds' AS later FROM musical_details WHERE block_id = $1 AND state = 'pending'`,
    [block],
  );
  t.same(due.rows, [{ later: true }, { later: true }], 'retries wait for their backoff');
  t.equal(
    (await drainQueue(srv.deps, provider, { settings: fast })).rounds,
    0,
    'nothing is due before its time',
  );
  // time passes
  await db.query(
    `UPDATE musical_details SET next_attempt_at = now() WHERE block_id = $1 AND state = 'pending'`,
    [block],
  );
  for (let i = 0; i < 20; i++) {
    await wait(10);
    await drainQueue(srv.deps, provider, { settings: fast, budgetMs: 1 });
    const s = await states(block);
    if (s.every((r) => r.state !== 'pending')) break;
  }
  t.same(
    (await states(block)).map((r) => [r.title, r.state, r.attempts, r.last_error]),
    [
      ['Comes Through', 'found', 3, null],
      ['Never Answers', 'failed', 3, 'ProviderError: 503 Service Unavailable'],
      ['Refused', 'failed', 1, 'ProviderError: 400 Bad Request'],
    ],
  );
  t.equal(
    await db
      .query(`SELECT 1 FROM musical_details WHERE state = 'fetching'`)
      .then((r) => r.rowCount),
    0,
    'nothing is left fetching',
  );
});

t.test('backoff doubles per attempt, honours Retry-After, and is capped', async (t) => {
  const s = defaultEnrichSettings;
  t.equal(backoffMs(s, 1), 30_000);
  t.equal(backoffMs(s, 3), 120_000);
  t.equal(backoffMs(s, 2, 300_000), 300_000);
  t.equal(backoffMs(s, 40), s.maxBackoffMs);
});

t.test('a claim whose worker died is reclaimed', async (t) => {
  const { block } = await blockOf('Stale Org', 'Stale Artist', [
    ['Stale Artist', 'Stuck', 'USRC12000001', '1'],
  ]);
  await db.query(
    `UPDATE musical_details SET state = 'fetching', locked_at = now() - interval '10 minutes', locked_by = 'dead' WHERE block_id = $1`,
    [block],
  );
  t.equal(await reclaimStale(db, 60_000), 1);
  t.same(
    (await states(block)).map((r) => r.state),
    ['pending'],
  );
  const r = await drainQueue(srv.deps, new FlakyProvider(() => null), { settings: fast });
  t.ok(r.settled.found >= 1);
  t.same(
    (await states(block)).map((r) => r.state),
    ['found'],
  );
  // a late answer of the dead worker does not overwrite anything
  t.equal(
    (
      await db.query(
        `UPDATE musical_details SET state = 'found' WHERE block_id = $1 AND state = 'fetching' AND locked_by = 'dead'`,
        [block],
      )
    ).rowCount,
    0,
  );
});

t.test(
  'a claim that died on its last attempt fails visibly instead of going round forever',
  async (t) => {
    // a detail whose lookup kills its worker each time (or a worker that keeps dying) is claimed,
    // reclaimed and claimed again: after the last attempt it is failed, never claimed again
    const { block } = await blockOf('Poison Org', 'Poison Artist', [
      ['Poison Artist', 'Poison', 'USRC12000002', '1'],
      ['Poison Artist', 'Survivor', 'USRC12000003', '2'],
    ]);
    const max = defaultEnrichSettings.maxAttempts;
    await db.query(
      `UPDATE musical_details SET state = 'fetching', attempts = CASE WHEN title = 'Poison' THEN $2::int ELSE $2::int - 1 END,
       locked_at = now() - interval '10 minutes', locked_by = 'dead' WHERE block_id = $1`,
      [block, max],
    );
    t.equal(await reclaimStale(db, 60_000), 2);
    t.same(
      (await states(block)).map((r) => [r.title, r.state, r.attempts, r.last_error]),
      [
        ['Poison', 'failed', max, `claim timed out: no answer after ${max} attempts`],
        ['Survivor', 'pending', max - 1, 'claim timed out'],
      ],
    );
    const provider = new FlakyProvider(() => null);
    await drainQueue(srv.deps, provider, { settings: fast });
    t.same(
      provider.calls.map((c) => c.title),
      ['Survivor'],
      'the failed one is not asked again',
    );
    t.same(
      (await states(block)).map((r) => [r.title, r.state]),
      [
        ['Poison', 'failed'],
        ['Survivor', 'found'],
      ],
    );
  },
);

t.test('fair across organizations: multiplier and focus', async (t) => {
  const rows = (prefix: string, n: number): [string, string, string, string][] =>
    Array.from({ length: n }, (_, i) => [
      `${prefix} Artist`,
      `${prefix} Song ${i}`,
      `USAB1${prefix === 'A' ? '1' : '2'}${String(i).padStart(6, '0')}`,
      String(10 + i),
    ]);
  const a = await blockOf('Fair A', 'A Artist', rows('A', 6));
  const b = await blockOf('Fair B', 'B Artist', rows('B', 6));
  await db.query('UPDATE organizations SET md_fetch_multiplier = 3 WHERE id = $1', [b.org]);
  // earlier tests' organizations are served already; these two have never been served
  const round = await claimRound(
    db,
    { ...defaultEnrichSettings, batchPerOrg: 1, orgsPerRound: 2 },
    'test',
  );
  const byOrg = (org: string) => round.filter((c) => c.organization_id === org).length;
  t.equal(byOrg(a.org), 1, 'multiplier 1: one detail');
  t.equal(byOrg(b.org), 3, 'multiplier 3: three details');
  t.same(
    round.filter((c) => c.organization_id === b.org).map((c) => c.title),
    ['B Song 5', 'B Song 4', 'B Song 3'],
    'highest USD earnings first',
  );
  const servedFirst = round[0]!.organization_id;
  const next = await claimRound(
    db,
    { ...defaultEnrichSettings, batchPerOrg: 1, orgsPerRound: 1 },
    'test',
  );
  t.same(
    [...new Set(next.map((c) => c.organization_id))],
    [servedFirst],
    'the organization served longest ago goes next',
  );
  t.equal(next.length, servedFirst === b.org ? 3 : 1, 'with its own share');
  const then = await claimRound(
    db,
    { ...defaultEnrichSettings, batchPerOrg: 1, orgsPerRound: 1 },
    'test',
  );
  t.not(then[0]!.organization_id, servedFirst, 'then the other one');
  await db.query(
    `UPDATE musical_details SET state = 'pending', locked_at = NULL, locked_by = NULL WHERE state = 'fetching'`,
  );

  // focus: the priority rightsholder's details come first, in list order, whatever they earn
  const rh2 = await createRightsholder(a.owner.client, a.org, 'A Priority');
  const up = await putFile(
    a.owner.client,
    a.org,
    rh2,
    'p.tsv',
    distrokid([['A Priority', 'Tiny Earner', 'USAB13000001', '0.01']]),
  );
  await waitForStatement(a.owner.client, a.org, up.statementId, 240_000);
  await refreshBlock(srv.deps, a.org, rh2);
  await db.query(
    'INSERT INTO rightsholder_md_priorities (organization_id, rightsholder_id, position) VALUES ($1, $2, 1)',
    [a.org, rh2],
  );
  await db.query('UPDATE organizations SET md_fetch_focus = true WHERE id = $1', [a.org]);
  await db.query(
    `UPDATE catalog_fetch_turns SET last_served_at = '2000-01-01' WHERE organization_id = $1`,
    [a.org],
  );
  const focused = await claimRound(
    db,
    { ...defaultEnrichSettings, batchPerOrg: 2, orgsPerRound: 1 },
    'test',
  );
  t.same(
    focused.map((c) => c.title),
    ['Tiny Earner', 'A Song 5'],
  );
  await db.query(
    `UPDATE musical_details SET state = 'pending', locked_at = NULL, locked_by = NULL WHERE state = 'fetching'`,
  );
});

t.test(
  'an answer with NUL or half a UTF-16 pair in its text is recorded, cleaned, not retried until it fails',
  async (t) => {
    const { block } = await blockOf('Odd Text Org', 'Odd Text Artist', [
      ['Odd Text Artist', 'Odd Text', 'USRC11000099', '1'],
    ]);
    const provider: EnrichmentProvider = {
      name: 'odd',
      async lookup(q) {
        return {
          provider: 'odd',
          providerId: 'id\u0000-1',
          title: 'Odd\u0000 Text \ud800',
          artist: q.artist ?? '',
          isrc: q.isrc,
          releaseTitle: null,
          releaseArtist: null,
          releaseDate: null,
          genres: ['pop\u0000'],
          songWriters: [],
          composers: [],
          imageUrl: null,
          confidence: 1,
        };
      },
      async search() {
        return [];
      },
    };
    const result = await drainQueue(srv.deps, provider, { settings: fast });
    t.match(
      result.settled,
      { retry: 0, failed: 0 },
      'recorded at the first attempt (with the details other tests left pending)',
    );
    const { rows } = await db.query(
      `SELECT state, provider_id, result->>'title' AS title, result->'genres' AS genres FROM musical_details WHERE block_id = $1`,
      [block],
    );
    t.same(rows, [
      { state: 'found', provider_id: 'id-1', title: 'Odd Text \ufffd', genres: ['pop'] },
    ]);
  },
);

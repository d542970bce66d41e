// The async path and the cache: TIMEOUT past the synchronous window with the run going on for the
// poll, submit/poll naming one query whatever the key order, noCache, answers that change with the
// data and with reference data (no re-ingestion), and rollups giving identical answers.
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { m, seedStatement } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

// a window of 1 ms: every query that is not already cached times out, and submit answers at once
const srv = await startTestHandler(t, {
  env: { CUBE_SYNC_TIMEOUT_MS: '1', CUBE_ASYNC_WAIT_MS: '0' },
});
const owner = await newOrganization(srv, 'Cube Async Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };

async function poll(
  path: 'cube.queryPoll' | 'cube.sqlQueryPoll',
  body: Record<string, unknown>,
): Promise<any> {
  for (let i = 0; i < 400; i++) {
    const res = await owner.client.mutateUnchecked(path, { organizationId: org, ...body });
    if (!res.ok) throw new Error(JSON.stringify(res.error));
    if (res.data.status === 'completed') return res.data.data;
    t.same(res.data, { status: 'processing' });
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('never completed');
}

t.test('past the synchronous window: TIMEOUT, and the query goes on for the poll', async (t) => {
  const query = { measures: [m('units')], dimensions: [m('currency')], filters: [both] };
  const sync = await owner.client.mutate('cube.query', { organizationId: org, query });
  t.match(sync, {
    ok: false,
    status: 408,
    error: { data: { code: 'TIMEOUT', errorCode: 'ANALYTICS_QUERY_TIMEOUT', httpStatus: 408 } },
  });
  const answer = await poll('cube.queryPoll', { query });
  t.same(answer.data, [
    { [m('currency')]: 'USD', [m('units')]: '1500' },
    { [m('currency')]: 'EUR', [m('units')]: '111' },
    { [m('currency')]: 'GBP', [m('units')]: '7' },
  ]);
  // the same body in another key order names the same query: the cached answer, same refresh time
  const reordered = {
    filters: [{ values: [ds.rh1, ds.rh2], operator: 'equals', member: m('rightsholder_id') }],
    dimensions: [m('currency')],
    measures: [m('units')],
  };
  const again = await owner.client.mutate('cube.query', { organizationId: org, query: reordered });
  t.equal(again.ok, true, 'cached now: inside the window');
  t.equal(again.data.lastRefreshTime, answer.lastRefreshTime);
  t.same(again.data.data, answer.data);
});

t.test('submit answers processing, then completed; noCache runs it again', async (t) => {
  const query = {
    measures: [m('royalty_earnings')],
    dimensions: [m('territory')],
    filters: [both],
    total: true,
  };
  const first = await owner.client.mutate('cube.queryAsync', { organizationId: org, query });
  t.same(first.data, { status: 'processing' });
  const done = await poll('cube.queryPoll', { query });
  t.equal(done.total, 5);
  const cached = await owner.client.mutate('cube.queryAsync', { organizationId: org, query });
  t.same(cached.data, { status: 'completed', data: done }, 'cached: completed at once');
  await new Promise((r) => setTimeout(r, 5));
  const fresh = await owner.client.mutate('cube.queryAsync', {
    organizationId: org,
    query,
    noCache: true,
  });
  t.equal(fresh.ok, true);
  const rerun =
    fresh.data.status === 'completed' ? fresh.data.data : await poll('cube.queryPoll', { query });
  t.not(rerun.lastRefreshTime, done.lastRefreshTime, 'a fresh run');
  t.same(rerun.data, done.data);
});

t.test(
  'new data, and changed reference data, show in the next answer without re-ingesting',
  async (t) => {
    const query = {
      measures: [m('royalty_earnings_usd'), m('units')],
      dimensions: [m('rightsholder_name'), m('source'), m('distributor_name')],
      filters: [
        both,
        { member: m('track_title_raw'), operator: 'equals', values: ['Alpha', 'Golf', 'Hotel'] },
      ],
      order: { [m('rightsholder_name')]: 'asc' },
    };
    const rows = async () =>
      (await poll('cube.queryPoll', { query })).data.map((r: Record<string, string>) => [
        r[m('rightsholder_name')],
        r[m('source')],
        r[m('distributor_name')],
        r[m('royalty_earnings_usd')],
        r[m('units')],
      ]);
    t.same(await rows(), [
      ['Artist One', 'Spotify', 'Own Distribution', '11.55', '100'],
      ['Artist Two', null, 'Own Distribution', null, '7'],
    ]);
    const db = srv.deps.pool;
    await db.query('UPDATE rightsholders SET name = $2, updated_at = now() WHERE id = $1', [
      ds.rh1,
      'Artist One Renamed',
    ]);
    await db.query(
      `UPDATE lookup_sources SET earnings_source = 'Spotify Premium', updated_at = now() WHERE original_normalized = 'spotify'`,
    );
    await db.query(`UPDATE statement_fx SET rate = 2 WHERE statement_id = $1`, [ds.s1]);
    await db.query(
      `INSERT INTO statement_fx (statement_id, currency, rate, rate_date) VALUES ($1, 'GBP', 1.25, CURRENT_DATE)`,
      [ds.s3],
    );
    await db.query('UPDATE distributors SET name = $2 WHERE id = $1', [
      ds.d1,
      'Own Distribution II',
    ]);
    t.same(await rows(), [
      ['Artist One Renamed', 'Spotify Premium', 'Own Distribution II', '21', '100'],
      ['Artist Two', null, 'Own Distribution II', '8.75', '7'],
    ]);
    await seedStatement(srv, {
      organizationId: org,
      rightsholderId: ds.rh2,
      distributorId: ds.d1,
      stmt: { year: 2024, period: 2, cadence: 'M' },
      rows: [{ raw_title: 'Hotel', royalty_earnings: '3', units: '3', source: 'Spotify' }],
    });
    // ties in the order are broken by the other dimensions, ascending with NULL last
    t.same(await rows(), [
      ['Artist One Renamed', 'Spotify Premium', 'Own Distribution II', '21', '100'],
      ['Artist Two', 'Spotify Premium', 'Own Distribution II', '3', '3'],
      ['Artist Two', null, 'Own Distribution II', '8.75', '7'],
    ]);
    // a deleted statement leaves the answers
    await db.query(
      `UPDATE statements SET deleted_at = now(), status = 'deleted', updated_at = now() WHERE id = $1`,
      [ds.s3],
    );
    t.same(await rows(), [
      ['Artist One Renamed', 'Spotify Premium', 'Own Distribution II', '21', '100'],
      ['Artist Two', 'Spotify Premium', 'Own Distribution II', '3', '3'],
    ]);
    await db.query(
      `UPDATE statements SET deleted_at = NULL, status = 'processed', updated_at = now() WHERE id = $1`,
      [ds.s3],
    );
  },
);

t.test('usePreagg answers from the rollup with identical results', async (t) => {
  const queries = [
    {
      measures: [
        m('royalty_earnings_usd'),
        m('royalty_earnings'),
        m('units'),
        m('statement_count'),
        m('statement_row_count'),
      ],
      dimensions: [m('rightsholder_id')],
      filters: [both],
    },
    {
      measures: [m('royalty_earnings_usd')],
      dimensions: [m('distributor_name'), m('tm'), m('stmt_period_full')],
      filters: [both],
      total: true,
    },
    {
      measures: [m('units')],
      dimensions: [m('territory'), m('source'), m('primary_sales_type')],
      filters: [both, { member: m('currency'), operator: 'notEquals', values: ['GBP'] }],
    },
    {
      measures: [m('units')],
      timeDimensions: [
        {
          dimension: m('sales_period_start'),
          granularity: 'month',
          dateRange: ['2023-01-01', '2024-12-31'],
        },
      ],
      filters: [both],
    },
    {
      measures: [m('gross_royalty_earnings_usd')],
      dimensions: [m('territory_raw')],
      filters: [both],
    },
  ];
  for (const query of queries) {
    const plain = await poll('cube.queryPoll', { query });
    const rolled = await poll('cube.queryPoll', { query, usePreagg: true });
    t.same(rolled.data, plain.data, JSON.stringify(query.dimensions ?? query.timeDimensions));
    t.equal(rolled.total, plain.total);
  }
});

t.test('sqlQueryAsync and sqlQueryPoll', async (t) => {
  const sql = 'SELECT currency, sum(units) AS units FROM analytics_full_view GROUP BY 1 ORDER BY 1';
  const submitted = await owner.client.mutate('cube.sqlQueryAsync', { organizationId: org, sql });
  t.same(submitted.data, { status: 'processing' });
  const answer = await poll('cube.sqlQueryPoll', { sql });
  t.same(answer.schema, [
    { name: 'currency', column_type: 'VARCHAR' },
    { name: 'units', column_type: 'DECIMAL(38,12)' },
  ]);
  t.same(
    answer.rows.map((r: string[]) => [r[0], Number(r[1])]),
    [
      ['EUR', 111],
      ['GBP', 7],
      ['USD', 1503],
    ],
  );
  const sync = await owner.client.mutate('cube.sqlQuery', { organizationId: org, sql });
  t.same(sync.data, answer, 'the sync call gets the cached answer');
});

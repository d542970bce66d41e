// Eager aggregation (compile.ts, eagerRollup): a query a stored rollup could answer groups the facts
// by just the columns it reads before joining. Its answers must be exactly those of reading the
// facts row by row: the same queries run both ways on a real organization database, compared row
// for row, money to the last decimal, empty answers and measure filters included.
import t from 'tap';
import { analyticsFor } from '../../src/analytics/engine.ts';
import { compileQuery } from '../../src/analytics/compile.ts';
import { cubeQuerySchema, normalizeQuery } from '../../src/analytics/query.ts';
import { seedDataset } from './dataset.ts';
import { m, seedStatement } from './helpers.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import type { Outcome } from '../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Eager Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
// a statement with several currencies, territories and sources, and amounts with 12 decimals
await seedStatement(srv, {
  organizationId: org,
  rightsholderId: ds.rh2,
  distributorId: ds.d2,
  stmt: { year: 2024, period: 3, cadence: 'M' },
  fx: { EUR: '1.087654321', GBP: '1.2734' },
  rows: [
    {
      raw_title: 'Kilo',
      royalty_earnings: '0.123456789012',
      units: '3',
      currency: 'EUR',
      country: 'DE',
      source: 'Spotify',
      sales_period_start: '2024-03-01',
    },
    {
      raw_title: 'Kilo',
      royalty_earnings: '0.876543210988',
      units: '4',
      currency: 'EUR',
      country: 'DE',
      source: 'Spotify',
      sales_period_start: '2024-03-01',
    },
    {
      raw_title: 'Lima',
      royalty_earnings: '-0.5',
      units: '1',
      currency: 'GBP',
      country: 'GB',
      source: 'ASCAP',
      sales_period_start: '2024-02-01',
    },
    {
      raw_title: 'Mike',
      royalty_earnings: null,
      units: '2',
      currency: 'GBP',
      country: 'FR',
      sales_period_start: '2024-03-15',
    },
    {
      raw_title: 'Nova',
      royalty_earnings: '10',
      units: null,
      currency: 'JPY',
      country: null,
      source: 'Apple',
      sales_period_start: null,
    },
  ],
});
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };
const restrictions = { organizationId: org, rightsholderIds: null };

// loads the organization's database through the real path first
const first = await owner.client.mutate('cube.query', {
  organizationId: org,
  query: { measures: [m('units')], filters: [both] },
});
if (!first.ok) throw new Error(JSON.stringify(first.error));
const facts = analyticsFor(srv.deps).facts(org);

const queries: Record<string, unknown>[] = [
  { measures: [m('royalty_earnings_usd')], filters: [both] },
  {
    measures: [
      m('royalty_earnings_usd'),
      m('royalty_earnings'),
      m('gross_royalty_earnings_usd'),
      m('units'),
      m('statement_count'),
      m('statement_row_count'),
    ],
    dimensions: [m('currency')],
    filters: [both],
  },
  { measures: [m('statement_count')], dimensions: [m('distributor_name')], filters: [both] },
  {
    measures: [m('royalty_earnings_usd')],
    dimensions: [m('territory')],
    filters: [both, { member: m('tm'), operator: 'equals', values: ['01.LTM'] }],
  },
  {
    measures: [m('royalty_earnings_usd')],
    dimensions: [m('source')],
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
    measures: [m('units'), m('statement_row_count')],
    dimensions: [m('rightsholder_name'), m('tm')],
    filters: [both, { member: m('units'), operator: 'gt', values: ['5'] }],
    total: true,
  },
  {
    measures: [m('royalty_earnings_usd')],
    dimensions: [m('fx_rate'), m('stmt_period_full')],
    filters: [both],
  },
  // nothing matches: a count is 0, a sum NULL, as over the rows
  {
    measures: [m('statement_row_count'), m('statement_count'), m('units')],
    filters: [both, { member: m('currency'), operator: 'equals', values: ['XXX'] }],
  },
  {
    measures: [m('statement_row_count')],
    dimensions: [m('currency')],
    filters: [both, { member: m('currency'), operator: 'equals', values: ['XXX'] }],
  },
];

t.test('every query answers the same grouped first as row by row', async (t) => {
  let eagerCount = 0;
  for (const query of queries) {
    const normalized = normalizeQuery(cubeQuerySchema.parse(query), org, Date.now());
    const eager = compileQuery(normalized, restrictions, { usePreagg: false, inline: true });
    const rows = compileQuery(normalized, restrictions, {
      usePreagg: false,
      inline: true,
      eager: false,
    });
    t.notOk(rows.eager);
    if (eager.eager) eagerCount++;
    t.equal(eager.rollup, null, 'no stored rollup without usePreagg');
    const run = (sql: string) =>
      facts.withConnection(async (c) => JSON.stringify((await c.runAndReadAll(sql)).getRowsJson()));
    const [a, b] = [await run(eager.sql), await run(rows.sql)];
    t.equal(a, b, JSON.stringify(query));
    if (eager.totalSql) t.equal(await run(eager.totalSql), await run(rows.totalSql!), 'total');
  }
  t.equal(eagerCount, queries.length, 'every query here was grouped first');
});

t.test('a query reading row columns is not grouped first', async (t) => {
  const compile = (query: Record<string, unknown>) =>
    compileQuery(normalizeQuery(cubeQuerySchema.parse(query), org, Date.now()), restrictions, {
      usePreagg: false,
      inline: true,
    });
  t.notOk(
    compile({ measures: [m('units')], dimensions: [m('track_title_raw')], filters: [both] }).eager,
    'a title',
  );
  t.notOk(
    compile({ measures: [m('units')], filters: [both, { member: m('isrc'), operator: 'set' }] })
      .eager,
    'a filter on a row column',
  );
  t.notOk(
    compile({ measures: [m('product_age_avg')], filters: [both] }).eager,
    'a measure over rows',
  );
  const grouped = compile({
    measures: [m('statement_row_count')],
    dimensions: [m('distributor_name')],
    filters: [both],
  });
  t.ok(grouped.eager);
  t.match(
    grouped.sql,
    /FROM \(SELECT organization_id, statement_id, rightsholder_id, count\(\*\) AS row_count FROM facts GROUP BY organization_id, statement_id, rightsholder_id\) f\n/,
  );
  t.match(grouped.sql, /coalesce\(sum\(f\.row_count\), 0\)/);
});

t.test('through cube.query: the grouped answers, money to the last decimal', async (t) => {
  const res: Outcome<any> = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: [m('royalty_earnings_usd'), m('royalty_earnings'), m('statement_row_count')],
      dimensions: [m('currency')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [ds.rh2] }],
    },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  const byCurrency = Object.fromEntries(
    res.data.data.map((r: Record<string, string | null>) => [
      r[m('currency')],
      [r[m('royalty_earnings_usd')], r[m('royalty_earnings')], r[m('statement_row_count')]],
    ]),
  );
  // EUR: (0.123456789012 + 0.876543210988) × 1.087654321; GBP: -0.5 × 1.2734 (the NULL amount adds
  // nothing, and the seed statement's 7 GBP has no rate); JPY has no rate
  t.same(byCurrency.EUR, ['1.087654321', '1', '2']);
  t.same(byCurrency.GBP, ['-0.6367', '6.5', '3']);
  t.same(byCurrency.JPY, [null, '10', '1']);
});

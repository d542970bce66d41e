// US dollars of a currency worth little: a rate of 0.0000628882… USD per rupiah has only 10
// significant digits at 14 decimals, and a statement of 10^10 IDR was answered 628882.055 USD
// (.06 to the cent) where its rate gives 628882.05496… (.05). The analytics rate carries 18
// decimals (model.ts, usdOf): the answer is amount × round(rate, 18) exactly, on every path, and
// within 5e-9 USD of the rate's full product.
import t from 'tap';
import { m, seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'FX Precision Org');
const org = owner.organizationId;
const rh = await seedRightsholder(srv, org, 'Rupiah Artist');
// 1.0869 USD and 17283.05 IDR per euro, as the ECB import stores it: trim_scale(1.0869 / 17283.05)
const IDR_RATE = '0.000062888205496136387964';
const statement = await seedStatement(srv, {
  organizationId: org,
  rightsholderId: rh,
  currency: 'IDR',
  fx: { IDR: IDR_RATE },
  // 1,000 rows of 10,000,000 IDR: 10^10 IDR
  rows: Array.from({ length: 1000 }, (_, i) => ({
    raw_title: `Track ${i % 10}`,
    royalty_earnings: '10000000',
    gross_royalty_earnings: '10000000.5',
    units: '1',
  })),
});
const byRh = { member: m('rightsholder_id'), operator: 'equals', values: [rh] };

async function cube(query: Record<string, unknown>, usePreagg = false) {
  const res: Outcome<any> = await owner.client.mutate('cube.query', {
    organizationId: org,
    query,
    usePreagg,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data as Record<string, string>[];
}

t.test('a statement of 10^10 IDR: its USD is the rate times the amount, exact', async (t) => {
  const { rows } = await srv.deps.pool.query<{ usd: string; gross: string }>(
    `SELECT trim_scale(sum(10000000 * rate))::text AS full, trim_scale(sum(10000000 * round(rate, 18)))::text AS usd,
       trim_scale(sum(10000000.5 * round(rate, 18)))::text AS gross
     FROM statement_fx, generate_series(1, 1000) WHERE statement_id = $1`,
    [statement],
  );
  t.same(
    rows[0],
    { full: '628882.05496136387964', usd: '628882.05496136', gross: '628882.086405462748068' },
    'the products in PostgreSQL',
  );
  const measures = [m('royalty_earnings_usd'), m('gross_royalty_earnings_usd')];
  const exact = {
    [m('royalty_earnings_usd')]: '628882.05496136',
    [m('gross_royalty_earnings_usd')]: '628882.0864054627',
  };
  t.same(await cube({ measures, filters: [byRh] }), [exact], 'the facts');
  t.same(await cube({ measures, filters: [byRh] }, true), [exact], 'the stored rollup');
  t.same(
    await cube({ measures, dimensions: [m('currency')], filters: [byRh] }),
    [{ [m('currency')]: 'IDR', ...exact }],
    'grouped eagerly',
  );
  const tracks = await cube({
    measures: [m('royalty_earnings_usd')],
    dimensions: [m('track_title_raw')],
    filters: [byRh],
    order: { [m('track_title_raw')]: 'asc' },
  });
  t.equal(tracks.length, 10);
  t.same(
    tracks[0],
    { [m('track_title_raw')]: 'Track 0', [m('royalty_earnings_usd')]: '62888.205496136' },
    'row by row: 100 rows of 10^7 IDR',
  );
  t.same(
    await cube({
      measures: [m('royalty_earnings_usd')],
      filters: [
        byRh,
        { member: m('royalty_earnings_usd'), operator: 'gte', values: ['628882.05496136'] },
      ],
    }),
    [{ [m('royalty_earnings_usd')]: '628882.05496136' }],
  );
  t.same(
    await cube({
      measures: [m('statement_row_count')],
      dimensions: [m('fx_rate')],
      filters: [byRh],
    }),
    [{ [m('fx_rate')]: '0.0000628882055', [m('statement_row_count')]: '1000' }],
    'fx_rate shows 14 decimals',
  );
  // dataFreshness.ingestionStats sums the currency's USD as the measure does
  const stats = await owner.client.query('dataFreshness.ingestionStats', {
    organizationId: org,
    rightsholderIds: [rh],
  });
  if (!stats.ok) throw new Error(JSON.stringify(stats.error));
  t.same(
    (stats.data as { earnings: { currency: string; royaltyEarningsUsd: string }[] }).earnings.map(
      (e) => [e.currency, e.royaltyEarningsUsd],
    ),
    [['IDR', '628882.05496136']],
    'ingestionStats',
  );
});

t.test(
  'large sums: 10^16 IDR and 3 × 10^11 USD in many rows, summed without overflow',
  async (t) => {
    const big = await seedRightsholder(srv, org, 'Large Catalog');
    await seedStatement(srv, {
      organizationId: org,
      rightsholderId: big,
      currency: 'IDR',
      fx: { IDR: IDR_RATE },
      rows: Array.from({ length: 1000 }, () => ({
        raw_title: 'Big',
        royalty_earnings: '10000000000000',
        units: '1',
      })),
    });
    await seedStatement(srv, {
      organizationId: org,
      rightsholderId: big,
      currency: 'USD',
      rows: Array.from({ length: 1000 }, () => ({
        raw_title: 'Big',
        royalty_earnings: '300000000',
        units: '1',
      })),
    });
    const filters = [{ member: m('rightsholder_id'), operator: 'equals', values: [big] }];
    const expected = [{ [m('royalty_earnings_usd')]: '928882054961.36' }];
    t.same(
      await cube({ measures: [m('royalty_earnings_usd')], filters }),
      expected,
      '10^16 × round(rate, 18) + 3 × 10^11',
    );
    t.same(
      await cube({ measures: [m('royalty_earnings_usd')], filters }, true),
      expected,
      'the rollup',
    );
    t.same(
      await cube({
        measures: [m('royalty_earnings_usd')],
        dimensions: [m('currency')],
        filters,
        order: { [m('currency')]: 'asc' },
      }),
      [
        { [m('currency')]: 'IDR', [m('royalty_earnings_usd')]: '628882054961.36' },
        { [m('currency')]: 'USD', [m('royalty_earnings_usd')]: '300000000000' },
      ],
    );
  },
);

t.test(
  'an answer past what the view holds exactly (1e12 USD) is a clear error, not an internal one',
  async (t) => {
    const huge = await seedRightsholder(srv, org, 'Crafted Amounts');
    await seedStatement(srv, {
      organizationId: org,
      rightsholderId: huge,
      currency: 'USD',
      rows: [{ raw_title: 'Huge', royalty_earnings: '5000000000000', units: '1' }],
    });
    const filters = [{ member: m('rightsholder_id'), operator: 'equals', values: [huge] }];
    const res = await owner.client.mutate('cube.query', {
      organizationId: org,
      query: { measures: [m('royalty_earnings_usd')], filters },
    });
    t.same(res.ok ? null : [res.status, res.error.data.code, res.error.data.errorCode], [
      400,
      'BAD_REQUEST',
      'ANALYTICS_VALUE_OUT_OF_RANGE',
    ]);
    // the original currency's sum holds it
    t.same(await cube({ measures: [m('royalty_earnings')], filters }), [
      { [m('royalty_earnings')]: '5000000000000' },
    ]);
    const sql = await owner.client.mutate('cube.sqlQuery', {
      organizationId: org,
      sql: 'SELECT max(royalty_earnings_usd) AS usd FROM analytics_full_view',
    });
    t.same(
      sql.ok ? sql.data : [sql.status, sql.error.data.errorCode],
      [400, 'ANALYTICS_VALUE_OUT_OF_RANGE'],
      'sqlQuery reading the USD amounts',
    );
    // a statement that reads no USD amount is answered
    const count = await owner.client.mutate('cube.sqlQuery', {
      organizationId: org,
      sql: 'SELECT count(*) AS n FROM analytics_full_view',
    });
    t.same(count.ok ? count.data.rows : count.error, [['3001']]);
  },
);

// market.*: the built-in provider over the shipped snapshot and imported files, and the live
// provider against a local server speaking the Yahoo chart API and the Treasury CSV formats.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import t from 'tap';
import { adminInProcess } from '../../helpers/cli.ts';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data } from '../../lookups/helpers.ts';
import type { QueryPath } from '../../helpers/procedures.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Market Org');
const reader = await addMember(srv, owner.organizationId, 'reader');
const org = owner.organizationId;

const admin = adminInProcess(srv.config.databaseUrl);

t.test('quotes from the shipped snapshot: last close, previous close, exact change', async (t) => {
  const res = data(
    await reader.client.query('market.getQuotes', {
      organizationId: org,
      symbols: ['spot', 'UMG'],
    }),
  );
  t.same(res.quotes, [
    {
      symbol: 'SPOT',
      name: 'Spotify Technology S.A.',
      currency: 'USD',
      exchange: 'NYSE',
      price: '599.94',
      date: '2025-03-21',
      previousClose: '574.79',
      change: '25.15',
      changePercent: '4.3755',
    },
    {
      symbol: 'UMG',
      name: 'Universal Music Group N.V.',
      currency: 'USD',
      exchange: 'Euronext Amsterdam',
      price: '25.61352',
      date: '2024-10-04',
      previousClose: '25.87638',
      change: '-0.26286',
      changePercent: '-1.0158',
    },
  ]);
  const unknown = await reader.client.query('market.getQuotes', {
    organizationId: org,
    symbols: ['SPOT', 'NOPE', 'ZZZ'],
  });
  isError(t, unknown, 'NOT_FOUND', 'MARKET_SYMBOL_NOT_FOUND');
  t.same(!unknown.ok && (unknown.error.data as any).details, { symbols: ['NOPE', 'ZZZ'] });
  isError(
    t,
    await reader.client.query('market.getQuotes', { organizationId: org, symbols: [] }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await reader.client.query('market.getQuotes', {
      organizationId: org,
      symbols: ['bad symbol!'],
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  const stranger = await outsider(srv, org);
  isError(
    t,
    await stranger.client.query('market.getQuotes', { organizationId: org, symbols: ['SPOT'] }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
});

t.test('history: oldest first, within from and to', async (t) => {
  const res = data(
    await reader.client.query('market.getHistory', {
      organizationId: org,
      ticker: 'SPOT',
      from: '2024-08-01',
      to: '2024-08-31',
    }),
  );
  t.same(res, {
    symbol: 'SPOT',
    name: 'Spotify Technology S.A.',
    currency: 'USD',
    exchange: 'NYSE',
    points: [
      { date: '2024-08-02', open: null, high: null, low: null, close: '330.85', volume: null },
      { date: '2024-08-09', open: null, high: null, low: null, close: '339.9', volume: null },
      { date: '2024-08-16', open: null, high: null, low: null, close: '337.38', volume: null },
      { date: '2024-08-23', open: null, high: null, low: null, close: '342.49', volume: null },
      { date: '2024-08-30', open: null, high: null, low: null, close: '342.88', volume: null },
    ],
  });
  t.equal(
    data(await reader.client.query('market.getHistory', { organizationId: org, ticker: 'SPOT' }))
      .points.length,
    38,
  );
  isError(
    t,
    await reader.client.query('market.getHistory', { organizationId: org, ticker: 'WMG' }),
    'NOT_FOUND',
    'MARKET_SYMBOL_NOT_FOUND',
  );
  // a range that ends before it starts is a mistake to point out, not an empty history
  const inverted = await reader.client.query('market.getHistory', {
    organizationId: org,
    ticker: 'SPOT',
    from: '2024-08-31',
    to: '2024-08-01',
  });
  isError(t, inverted, 'BAD_REQUEST', 'VALIDATION_FAILED');
  t.same(inverted.error?.data.fields, [{ path: 'from', message: 'from must not be after to' }]);
  t.equal(
    data(
      await reader.client.query('market.getHistory', {
        organizationId: org,
        ticker: 'SPOT',
        from: '2024-08-30',
        to: '2024-08-30',
      }),
    ).points.length,
    1,
    'from = to: that day',
  );
});

t.test('Treasury par yields: latest, on a date, over a range', async (t) => {
  const latest = data(
    await reader.client.query('market.getTreasuryYields', { organizationId: org }),
  );
  t.same(latest.curves, [
    {
      date: '2024-10-07',
      yields: {
        '1M': '5.00',
        '2M': '4.87',
        '3M': '4.77',
        '4M': '4.67',
        '6M': '4.45',
        '1Y': '4.24',
        '2Y': '3.99',
        '3Y': '3.89',
        '5Y': '3.86',
        '7Y': '3.92',
        '10Y': '4.03',
        '20Y': '4.37',
        '30Y': '4.30',
      },
    },
  ]);
  t.same(
    Object.keys(latest.curves[0].yields),
    ['1M', '2M', '3M', '4M', '6M', '1Y', '2Y', '3Y', '5Y', '7Y', '10Y', '20Y', '30Y'],
    'shortest tenor first',
  );
  const weekend = data(
    await reader.client.query('market.getTreasuryYields', {
      organizationId: org,
      date: '2024-09-29',
    }),
  );
  t.equal(weekend.curves[0].date, '2024-09-27');
  t.equal(weekend.curves[0].yields['10Y'], '3.75');
  const range = data(
    await reader.client.query('market.getTreasuryYields', {
      organizationId: org,
      from: '2024-09-30',
      to: '2024-10-03',
    }),
  );
  t.same(
    range.curves.map((c: any) => [c.date, c.yields['2Y']]),
    [
      ['2024-09-30', '3.66'],
      ['2024-10-01', '3.61'],
      ['2024-10-02', '3.63'],
      ['2024-10-03', '3.70'],
    ],
  );
  isError(
    t,
    await reader.client.query('market.getTreasuryYields', {
      organizationId: org,
      date: '2020-01-01',
    }),
    'NOT_FOUND',
    'TREASURY_YIELDS_NOT_FOUND',
  );
  isError(
    t,
    await reader.client.query('market.getTreasuryYields', {
      organizationId: org,
      date: '2024-09-30',
      from: '2024-09-01',
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  // from after to: VALIDATION_FAILED, not TREASURY_YIELDS_NOT_FOUND as if no curve were published
  const inverted = await reader.client.query('market.getTreasuryYields', {
    organizationId: org,
    from: '2024-10-03',
    to: '2024-09-30',
  });
  isError(t, inverted, 'BAD_REQUEST', 'VALIDATION_FAILED');
  t.same(inverted.error?.data.fields, [{ path: 'from', message: 'from must not be after to' }]);
  t.same(
    data(
      await reader.client.query('market.getTreasuryYields', {
        organizationId: org,
        from: '2024-10-01',
        to: '2024-10-01',
      }),
    ).curves.map((c: any) => c.date),
    ['2024-10-01'],
  );
});

t.test(
  'Treasury par yields over a long range: whole curves, the latest 5000 days at most',
  async (t) => {
    const tenors = `(VALUES ('1M',1),('2M',2),('3M',3),('4M',4),('6M',6),('1Y',12),('2Y',24),('3Y',36),('5Y',60),('7Y',84),('10Y',120),('20Y',240),('30Y',360)) tn(tenor, m)`;
    await srv.deps.pool
      .query(`INSERT INTO treasury_yields (curve_date, tenor, tenor_months, yield_percent)
    SELECT d::date, tn.tenor, tn.m, 1.25 FROM generate_series('2000-01-01'::date, '2014-12-31'::date, '1 day') d, ${tenors}`);
    t.teardown(() =>
      srv.deps.pool.query(`DELETE FROM treasury_yields WHERE curve_date < '2015-01-01'`),
    );
    // five years of curves (1826 days, 23738 rows): every day, each with its 13 tenors
    const five = data(
      await reader.client.query('market.getTreasuryYields', {
        organizationId: org,
        from: '2010-01-01',
        to: '2014-12-31',
      }),
    ).curves;
    t.equal(five.length, 1826);
    t.equal(five[0].date, '2010-01-01');
    t.equal(five.at(-1).date, '2014-12-31');
    t.equal(
      five.filter((c: any) => Object.keys(c.yields).length !== 13).length,
      0,
      'no curve is cut short',
    );
    t.same(
      five.at(-1).yields,
      Object.fromEntries(
        ['1M', '2M', '3M', '4M', '6M', '1Y', '2Y', '3Y', '5Y', '7Y', '10Y', '20Y', '30Y'].map(
          (k) => [k, '1.25'],
        ),
      ),
    );
    // fifteen years: the latest 5000 days of the range, whole
    const all = data(
      await reader.client.query('market.getTreasuryYields', {
        organizationId: org,
        from: '2000-01-01',
        to: '2014-12-31',
      }),
    ).curves;
    t.equal(all.length, 5000);
    t.equal(all[0].date, '2001-04-24');
    t.equal(all.at(-1).date, '2014-12-31');
    t.equal(all.filter((c: any) => Object.keys(c.yields).length !== 13).length, 0);
  },
);

t.test('market import from the command line: history, symbols, treasury', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'market-'));
  const yahooCsv = path.join(dir, 'WMG.csv');
  await writeFile(
    yahooCsv,
    'Date,Open,High,Low,Close,Adj Close,Volume\n2024-09-26,31.10,31.50,30.90,31.25,31.25,1200300\n2024-09-27,31.30,31.80,31.00,31.70,31.70,980000\n2024-09-30,null,null,null,null,null,null\n',
  );
  const hist = await admin(
    'market',
    'import',
    '--kind',
    'history',
    '--file',
    yahooCsv,
    '--symbol',
    'wmg',
    '--json',
  );
  t.equal(hist.code, 0, hist.stderr);
  t.same(JSON.parse(hist.stdout), {
    kind: 'history',
    rows: 2,
    symbols: ['WMG'],
    from: '2024-09-26',
    to: '2024-09-27',
  });
  const symbols = path.join(dir, 'symbols.csv');
  await writeFile(
    symbols,
    'symbol,name,currency,exchange\nWMG,Warner Music Group Corp.,USD,Nasdaq\n',
  );
  t.equal(
    (await admin('market', 'import', '--kind', 'symbols', '--file', symbols, '--json')).code,
    0,
  );
  const quote = data(
    await reader.client.query('market.getQuotes', { organizationId: org, symbols: ['WMG'] }),
  );
  t.same(quote.quotes, [
    {
      symbol: 'WMG',
      name: 'Warner Music Group Corp.',
      currency: 'USD',
      exchange: 'Nasdaq',
      price: '31.70',
      date: '2024-09-27',
      previousClose: '31.25',
      change: '0.45',
      changePercent: '1.44',
    },
  ]);
  const points = data(
    await reader.client.query('market.getHistory', { organizationId: org, ticker: 'WMG' }),
  ).points;
  t.same(points[0], {
    date: '2024-09-26',
    open: '31.10',
    high: '31.50',
    low: '30.90',
    close: '31.25',
    volume: '1200300',
  });

  const treasury = path.join(dir, 'yields.csv');
  await writeFile(
    treasury,
    'Date,"1 Mo","2 Mo","3 Mo","4 Mo","6 Mo","1 Yr","2 Yr","3 Yr","5 Yr","7 Yr","10 Yr","20 Yr","30 Yr"\n10/08/2024,4.98,4.86,4.76,,4.44,4.23,4.00,3.90,3.87,3.93,4.04,4.38,4.31\n',
  );
  const ty = await admin('market', 'import', '--kind', 'treasury', '--file', treasury, '--json');
  t.same(JSON.parse(ty.stdout), {
    kind: 'treasury',
    rows: 12,
    from: '2024-10-08',
    to: '2024-10-08',
  });
  const latest = data(
    await reader.client.query('market.getTreasuryYields', { organizationId: org }),
  ).curves[0];
  t.equal(latest.date, '2024-10-08');
  t.equal(latest.yields['4M'], undefined, 'a blank tenor is absent, never zero');

  const bad = await admin('market', 'import', '--kind', 'history', '--file', symbols);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /date and close columns/);
  t.equal((await admin('market', 'import', '--kind', 'nope', '--file', symbols)).code, 2);
  const { rows } = await srv.deps.pool.query(
    `SELECT kind, status FROM reference_imports ORDER BY created_at`,
  );
  t.same(rows, [
    { kind: 'market_history', status: 'succeeded' },
    { kind: 'market_symbols', status: 'succeeded' },
    { kind: 'treasury_yields', status: 'succeeded' },
    { kind: 'market_history', status: 'failed' },
  ]);
});

t.test(
  'the live provider, against a local server speaking the chart API and the Treasury CSV',
  async (t) => {
    const fake = Fastify({ forceCloseConnections: true });
    const seen: string[] = [];
    fake.get('/v8/finance/chart/:symbol', async (req, reply) => {
      seen.push(req.url);
      const { symbol } = req.params as { symbol: string };
      if (symbol !== 'SPOT')
        return reply.code(404).send({
          chart: {
            result: null,
            error: { code: 'Not Found', description: 'No data found, symbol may be delisted' },
          },
        });
      const q = req.query as Record<string, string>;
      const meta = {
        currency: 'USD',
        symbol: 'SPOT',
        exchangeName: 'NYQ',
        fullExchangeName: 'NYSE',
        longName: 'Spotify Technology S.A.',
        regularMarketPrice: 599.94,
        regularMarketTime: 1742587201,
        previousClose: 574.79,
        gmtoffset: -14400,
      };
      if (q.range === '1d')
        return {
          chart: {
            result: [
              { meta, timestamp: [1742563800], indicators: { quote: [{ close: [599.94] }] } },
            ],
            error: null,
          },
        };
      return {
        chart: {
          result: [
            {
              meta,
              timestamp: [1742391000, 1742477400, 1742563800],
              indicators: {
                quote: [
                  {
                    open: [560.1, null, 580],
                    high: [575.5, null, 601.25],
                    low: [555, null, 578.3],
                    close: [570.12, null, 599.94],
                    volume: [2100000, null, 3050000],
                  },
                ],
              },
            },
          ],
          error: null,
        },
      };
    });
    fake.get(
      '/resource-center/data-chart-center/interest-rates/daily-treasury-rates.csv/:year/all',
      async (req, reply) => {
        seen.push(req.url);
        const { year } = req.params as { year: string };
        reply.type('text/csv');
        if (year === '2025')
          return 'Date,"1 Mo","2 Mo","3 Mo","4 Mo","6 Mo","1 Yr","2 Yr","3 Yr","5 Yr","7 Yr","10 Yr","20 Yr","30 Yr"\n';
        return 'Date,"1 Mo","2 Mo","3 Mo","4 Mo","6 Mo","1 Yr","2 Yr","3 Yr","5 Yr","7 Yr","10 Yr","20 Yr","30 Yr"\n12/31/2024,4.40,4.39,4.37,4.32,4.24,4.16,4.25,4.27,4.38,4.48,4.58,4.86,4.78\n12/30/2024,4.43,4.40,4.37,4.32,4.25,4.17,4.24,4.27,4.35,4.45,4.55,4.83,4.76\n';
      },
    );
    const base = await fake.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(() => fake.close());
    const live = await startTestHandler(t, {
      env: { MARKET_PROVIDER: 'yahoo', MARKET_BASE_URL: base, TREASURY_BASE_URL: base },
    });
    const liveOwner = await newOrganization(live, 'Live');
    const call = (p: QueryPath, input: object) =>
      liveOwner.client.query(p, { organizationId: liveOwner.organizationId, ...input });

    t.same(data(await call('market.getQuotes', { symbols: ['SPOT'] })).quotes, [
      {
        symbol: 'SPOT',
        name: 'Spotify Technology S.A.',
        currency: 'USD',
        exchange: 'NYSE',
        price: '599.94',
        date: '2025-03-21',
        previousClose: '574.79',
        change: '25.15',
        changePercent: '4.3755',
      },
    ]);
    const unknown = await call('market.getQuotes', { symbols: ['SPOT', 'GONE'] });
    isError(t, unknown, 'NOT_FOUND', 'MARKET_SYMBOL_NOT_FOUND');
    t.same(!unknown.ok && (unknown.error.data as any).details, { symbols: ['GONE'] });

    const hist = data(
      await call('market.getHistory', { ticker: 'SPOT', from: '2025-03-19', to: '2025-03-21' }),
    );
    t.same(hist.points, [
      {
        date: '2025-03-19',
        open: '560.1',
        high: '575.5',
        low: '555',
        close: '570.12',
        volume: '2100000',
      },
      {
        date: '2025-03-21',
        open: '580',
        high: '601.25',
        low: '578.3',
        close: '599.94',
        volume: '3050000',
      },
    ]);
    t.ok(
      seen.some(
        (u) =>
          u.includes('period1=1742342400') &&
          u.includes('period2=1742601600') &&
          u.includes('interval=1d'),
      ),
    );
    isError(
      t,
      await call('market.getHistory', { ticker: 'GONE' }),
      'NOT_FOUND',
      'MARKET_SYMBOL_NOT_FOUND',
    );

    const curves = data(await call('market.getTreasuryYields', { date: '2025-01-02' })).curves;
    t.same(
      curves,
      [
        {
          date: '2024-12-31',
          yields: {
            '1M': '4.40',
            '2M': '4.39',
            '3M': '4.37',
            '4M': '4.32',
            '6M': '4.24',
            '1Y': '4.16',
            '2Y': '4.25',
            '3Y': '4.27',
            '5Y': '4.38',
            '7Y': '4.48',
            '10Y': '4.58',
            '20Y': '4.86',
            '30Y': '4.78',
          },
        },
      ],
      'early January falls back to the previous year',
    );
    t.ok(
      seen.some((u) =>
        u.includes('/2024/all?type=daily_treasury_yield_curve&field_tdr_date_value=2024'),
      ),
    );

    await fake.close();
    isError(
      t,
      await call('market.getQuotes', { symbols: ['SPOT'] }),
      'INTERNAL_SERVER_ERROR',
      'MARKET_PROVIDER_FAILED',
    );
  },
);

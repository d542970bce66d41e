// cube.query at the handler: the parts of Cube's query language beyond the basics, each compared with
// the exact answer Cube gives on the synthetic dataset (test/analytics/dataset.ts): paging with
// offset, limit 0, the date and string operators, timezone, and the response envelope.
import t from 'tap';
import { m } from '../../analytics/helpers.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';
import type { MutationPath } from '../../helpers/procedures.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Cube Query Language Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };
const title = m('track_title_raw');

async function ok(query: Record<string, unknown>) {
  const res: Outcome<any> = await owner.client.mutate('cube.query', { organizationId: org, query });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

async function refused(query: Record<string, unknown>) {
  const res: Outcome<any> = await owner.client.mutate('cube.query', { organizationId: org, query });
  if (res.ok) throw new Error(`accepted: ${JSON.stringify(query)}`);
  return res.error.data;
}

/** [title, units, royalty_earnings] of each row, in the answer's order. */
const rowsOf = (data: { data: Record<string, string | null>[] }) =>
  data.data.map((r) => [r[title], r[m('units')], r[m('royalty_earnings')]]);

// by the default order (units, descending): Echo 1000, Foxtrot 500, Alpha 100, Beta 100% 10,
// Golf 7, Delta\Path 1, gamma_x 0
const byUnits = {
  measures: [m('units'), m('royalty_earnings')],
  dimensions: [title],
  filters: [both],
};

t.test('offset pages through the result, with limit and total', async (t) => {
  const page = await ok({ ...byUnits, limit: 2, offset: 2, total: true });
  t.same(rowsOf(page), [
    ['Alpha', '100', '10.5'],
    ['Beta 100%', '10', '2.25'],
  ]);
  t.equal(page.total, 7, 'total ignores limit and offset');
  t.match(page.query, { limit: 2, offset: 2, rowLimit: 2, total: true });

  const last = await ok({ ...byUnits, limit: 5, offset: 5 });
  t.same(rowsOf(last), [
    ['Delta\\Path', '1', '0.000000000001'],
    ['gamma_x', '0', '-1'],
  ]);
  t.same((await ok({ ...byUnits, offset: 7, total: true })).data, [], 'past the end: no rows');
  t.notOk('offset' in (await ok(byUnits)).query, 'offset echoed only when sent');

  // the pages together are the whole answer, in order
  const pages = [];
  for (let offset = 0; offset < 7; offset += 3)
    pages.push(...rowsOf(await ok({ ...byUnits, limit: 3, offset })));
  t.same(pages, rowsOf(await ok(byUnits)));
});

t.test('limit 0 is accepted: no rows, total still counted', async (t) => {
  const counted = await ok({ ...byUnits, limit: 0, total: true });
  t.same(counted.data, []);
  t.equal(counted.total, 7);
  t.match(counted.query, { limit: 0, rowLimit: 0 });
  const plain = await ok({ ...byUnits, limit: 0 });
  t.same(plain.data, []);
  t.notOk('total' in plain);
});

t.test('offset and limit are strict integers', async (t) => {
  for (const [query, path] of [
    [{ ...byUnits, offset: -1 }, 'query.offset'],
    [{ ...byUnits, offset: 0.5 }, 'query.offset'],
    [{ ...byUnits, offset: '2' }, 'query.offset'],
    [{ ...byUnits, limit: -1 }, 'query.limit'],
  ] as const) {
    const error = await refused(query);
    t.match(error, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
    t.match(error.fields, [{ path }], path);
  }
});

/** The titles a filter keeps, in title order (byte order: `gamma_x` last). */
async function titles(...filters: object[]): Promise<string[]> {
  const data = await ok({
    measures: [m('statement_row_count')],
    dimensions: [title],
    filters: [both, ...filters],
    order: { [title]: 'asc' },
  });
  return data.data.map((r: Record<string, string>) => r[title]);
}

// sales_period_start: Echo 2023-10-01, Foxtrot 2023-12-31, Golf 2024-01-10, Delta\Path 2024-02-29,
// Alpha 2024-03-01, Beta 100% 2024-03-15, gamma_x NULL
t.test(
  'beforeOrOnDate and afterOrOnDate beside beforeDate and afterDate (BaseFilter: <=, >= the start of the day)',
  async (t) => {
    const spd = m('sales_period_start');
    const f = (operator: string, value: string) => ({ member: spd, operator, values: [value] });
    t.same(
      await titles(f('beforeOrOnDate', '2024-02-29')),
      ['Delta\\Path', 'Echo', 'Foxtrot', 'Golf'],
      'the day itself is in',
    );
    t.same(await titles(f('beforeDate', '2024-02-29')), ['Echo', 'Foxtrot', 'Golf'], 'strict');
    t.same(
      await titles(f('afterOrOnDate', '2024-03-01')),
      ['Alpha', 'Beta 100%'],
      'the day itself is in',
    );
    t.same(
      await titles(f('afterDate', '2024-03-01')),
      ['Beta 100%'],
      'strict: a date is its midnight',
    );
    // a timestamp is kept: a date (its midnight) is before 12:00 of its day
    t.same(await titles(f('afterOrOnDate', '2024-03-01T12:00')), ['Beta 100%']);
    t.same(await titles(f('beforeOrOnDate', '2024-03-01T12:00')), [
      'Alpha',
      'Delta\\Path',
      'Echo',
      'Foxtrot',
      'Golf',
    ]);
    // a phrase: afterOrOnDate takes the start of its range, beforeOrOnDate the end
    t.same(await titles(f('afterOrOnDate', 'from 2024-03-01 to 2024-03-31')), [
      'Alpha',
      'Beta 100%',
    ]);
    t.same(await titles(f('beforeOrOnDate', 'from 2024-02-01 to 2024-02-29')), [
      'Delta\\Path',
      'Echo',
      'Foxtrot',
      'Golf',
    ]);
    // NULL dates match no date operator, notInDateRange included
    t.same(
      await titles({
        member: spd,
        operator: 'notInDateRange',
        values: ['2024-01-01', '2024-12-31'],
      }),
      ['Echo', 'Foxtrot'],
    );
    const error = await refused({
      measures: [m('units')],
      filters: [
        both,
        { member: spd, operator: 'afterOrOnDate', values: ['2024-01-01', '2024-02-01'] },
      ],
    });
    t.match(error.fields, [{ path: 'query.filters.1.values', message: /exactly one value/ }]);
    const notTime = await refused({
      measures: [m('units')],
      filters: [both, { member: title, operator: 'beforeOrOnDate', values: ['2024-01-01'] }],
    });
    t.match(notTime.fields, [
      { path: 'query.filters.1.operator', message: /needs a time dimension/ },
    ]);
  },
);

// payor: Alpha 'Spotify AB', Delta\Path 'spotify ab ltd', gamma_x '', the others NULL
t.test(
  'startsWith, endsWith and their negations: case, several values, NULLs, literal wildcards',
  async (t) => {
    const payor = (operator: string, ...values: (string | null)[]) =>
      titles({ member: m('payor'), operator, values });
    t.same(await payor('startsWith', 'SPOT'), ['Alpha', 'Delta\\Path'], 'without case');
    t.same(await payor('startsWith', 'ab'), []);
    t.same(
      await payor('startsWith', ''),
      ['Alpha', 'Delta\\Path', 'gamma_x'],
      "'' starts every text, not NULL",
    );
    t.same(await payor('endsWith', 'AB'), ['Alpha']);
    t.same(await payor('endsWith', 'ltd', 'ab'), ['Alpha', 'Delta\\Path'], 'several values: any');
    t.same(
      await payor('endsWith', 'ab', null),
      ['Alpha', 'Beta 100%', 'Echo', 'Foxtrot', 'Golf'],
      'null among the values adds the NULL rows',
    );
    t.same(
      await payor('startsWith', null),
      ['Beta 100%', 'Echo', 'Foxtrot', 'Golf'],
      'null alone: IS NULL',
    );
    t.same(
      await payor('notStartsWith', 'spotify'),
      ['Beta 100%', 'Echo', 'Foxtrot', 'Golf', 'gamma_x'],
      'NULL rows kept',
    );
    t.same(
      await payor('notStartsWith', 'spotify', null),
      ['gamma_x'],
      'null among the values drops them',
    );
    t.same(
      await payor('notStartsWith', null),
      ['Alpha', 'Delta\\Path', 'gamma_x'],
      'null alone: IS NOT NULL',
    );
    t.same(await payor('notEndsWith', 'ab'), [
      'Beta 100%',
      'Delta\\Path',
      'Echo',
      'Foxtrot',
      'Golf',
      'gamma_x',
    ]);
    t.same(
      await payor('notEndsWith', 'ab', 'LTD'),
      ['Beta 100%', 'Echo', 'Foxtrot', 'Golf', 'gamma_x'],
      'several values: none of them',
    );

    const track = (operator: string, value: string) =>
      titles({ member: title, operator, values: [value] });
    t.same(await track('endsWith', '%'), ['Beta 100%'], '% is literal');
    t.same(await track('startsWith', '_'), [], '_ is literal');
    t.same(await track('endsWith', '_x'), ['gamma_x']);
    t.same(await track('startsWith', 'delta\\'), ['Delta\\Path'], '\\ is literal');
    // a number member matches the text it is answered as
    t.same(await titles({ member: m('stmt_year'), operator: 'endsWith', values: ['3'] }), [
      'Echo',
      'Foxtrot',
    ]);
    t.same(
      await titles({ member: m('stmt_year'), operator: 'notStartsWith', values: ['2023', '19'] }),
      ['Alpha', 'Beta 100%', 'Delta\\Path', 'Golf', 'gamma_x'],
    );
  },
);

t.test('the LIKE family on organization_id is stripped, as every filter on it', async (t) => {
  const orgFilter = (operator: string, value: string) => ({
    member: m('organization_id'),
    operator,
    values: [value],
  });
  const all = await titles();
  t.equal(all.length, 7);
  t.same(await titles(orgFilter('startsWith', org.slice(0, 8).toUpperCase())), all);
  t.same(await titles(orgFilter('endsWith', 'zz')), all);
  t.same(
    await titles({
      or: [
        orgFilter('notEndsWith', org.slice(-4)),
        { member: title, operator: 'equals', values: ['Golf'] },
      ],
    }),
    ['Golf'],
    'stripped OR x is x',
  );
});

t.test(
  "segments: the model defines none, so a named one is Cube's unknown-segment error",
  async (t) => {
    const named = await refused({ ...byUnits, segments: [m('big_earners')] });
    t.match(named, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED', httpStatus: 400 });
    t.same(named.fields, [
      {
        path: 'query.segments.0',
        message: "'big_earners' not found for path 'analytics_full_view.big_earners'",
      },
    ]);
    const several = await refused({
      ...byUnits,
      segments: ['orders.completed', "x'; DROP TABLE t; --", m('')],
    });
    t.same(several.fields, [
      { path: 'query.segments.0', message: "Cube 'orders' not found for path 'orders.completed'" },
      {
        path: 'query.segments.1',
        message: "Cube 'x'; DROP TABLE t; --' not found for path 'x'; DROP TABLE t; --'",
      },
      { path: 'query.segments.2', message: "'' not found for path 'analytics_full_view.'" },
    ]);
    const wrongType = await refused({ ...byUnits, segments: 'analytics_full_view.x' });
    t.match(wrongType, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
    t.match(wrongType.fields, [{ path: 'query.segments' }]);
    const none = await ok({ ...byUnits, segments: [], limit: 1 });
    t.same(none.query.segments, [], 'an empty list is no segment: accepted and echoed');
    t.same(rowsOf(none), rowsOf(await ok({ ...byUnits, limit: 1 })));
    t.notOk('segments' in (await ok({ ...byUnits, limit: 1 })).query, 'echoed only when sent');
  },
);

t.test('a refused operator is told the accepted ones', async (t) => {
  const error = await refused({
    measures: [m('units')],
    filters: [both, { member: title, operator: 'like', values: ['x'] }],
  });
  t.match(error, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  t.match(error.fields, [{ path: 'query.filters.1.operator' }]);
  t.equal(
    error.fields?.[0]?.message,
    'unknown operator: the operators are equals, notEquals, contains, notContains, startsWith, notStartsWith, endsWith, notEndsWith, gt, gte, lt, lte, set, notSet, inDateRange, notInDateRange, beforeDate, beforeOrOnDate, afterDate, afterOrOnDate',
  );
});

t.test('timezone: validated, canonicalised and echoed', async (t) => {
  const london = await ok({ ...byUnits, timezone: 'europe/london', limit: 1 });
  t.equal(london.query.timezone, 'Europe/London');
  t.equal((await ok({ ...byUnits, limit: 1 })).query.timezone, 'UTC', 'UTC unless named');
  for (const timezone of ['Mars/Base', '+01:00', 5]) {
    const error = await refused({ ...byUnits, timezone });
    t.match(error, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
    t.match(error.fields, [{ path: 'query.timezone' }], String(timezone));
  }
  const mars = await refused({ ...byUnits, timezone: 'Mars/Base' });
  t.same(mars.fields, [
    {
      path: 'query.timezone',
      message: '"timezone" must be a valid IANA time zone, got "Mars/Base"',
    },
  ]);
});

t.test(
  'timezone: relative ranges and instants are read on its wall clock; dates stay calendar dates',
  async (t) => {
    const spd = m('sales_period_start');
    // an instant (Z) is read on the zone's wall clock: 2024-02-29T23:30Z is 2024-03-01T08:30 in Tokyo
    const after = { member: spd, operator: 'afterOrOnDate', values: ['2024-02-29T23:30:00Z'] };
    const inZone = async (timezone: string) =>
      (
        await ok({
          measures: [m('statement_row_count')],
          dimensions: [title],
          filters: [both, after],
          order: { [title]: 'asc' },
          timezone,
        })
      ).data.map((r: Record<string, string>) => r[title]);
    t.same(
      await inZone('UTC'),
      ['Alpha', 'Beta 100%'],
      'UTC: 2024-03-01 (its midnight) is after 2024-02-29T23:30',
    );
    t.same(
      await inZone('Asia/Tokyo'),
      ['Beta 100%'],
      'Tokyo: 2024-03-01 is before 2024-03-01T08:30',
    );

    // today differs by a day between UTC+14 and UTC-11 at every instant
    const dayAt = (hours: number) =>
      new Date(Date.now() + hours * 3_600_000).toISOString().slice(0, 10);
    for (const [timezone, hours] of [
      ['Pacific/Kiritimati', 14],
      ['Pacific/Pago_Pago', -11],
    ] as const) {
      const data = await ok({
        measures: [m('units')],
        timeDimensions: [{ dimension: spd, dateRange: 'today' }],
        filters: [both],
        timezone,
      });
      t.same(
        data.query.timeDimensions[0].dateRange,
        [`${dayAt(hours)}T00:00:00.000`, `${dayAt(hours)}T23:59:59.999`],
        timezone,
      );
    }

    // a royalty period is a calendar date: its month bucket is the same in every zone
    const months = async (timezone: string) =>
      (
        await ok({
          measures: [m('units')],
          timeDimensions: [{ dimension: spd, granularity: 'month' }],
          filters: [both],
          timezone,
        })
      ).data;
    const expected = [
      {
        [`${spd}.month`]: '2023-10-01T00:00:00.000',
        [spd]: '2023-10-01T00:00:00.000',
        [m('units')]: '1000',
      },
      {
        [`${spd}.month`]: '2023-12-01T00:00:00.000',
        [spd]: '2023-12-01T00:00:00.000',
        [m('units')]: '500',
      },
      {
        [`${spd}.month`]: '2024-01-01T00:00:00.000',
        [spd]: '2024-01-01T00:00:00.000',
        [m('units')]: '7',
      },
      {
        [`${spd}.month`]: '2024-02-01T00:00:00.000',
        [spd]: '2024-02-01T00:00:00.000',
        [m('units')]: '1',
      },
      {
        [`${spd}.month`]: '2024-03-01T00:00:00.000',
        [spd]: '2024-03-01T00:00:00.000',
        [m('units')]: '110',
      },
      { [`${spd}.month`]: null, [spd]: null, [m('units')]: '0' },
    ];
    t.same(await months('UTC'), expected);
    t.same(
      await months('America/Los_Angeles'),
      expected,
      'Delta\\Path (2024-02-29) stays in February',
    );
    t.same(await months('Asia/Tokyo'), expected);
  },
);

t.test(
  "the envelope in Cube's shape and order; the query echoed with filters as sent",
  async (t) => {
    const spd = m('sales_period_start');
    const sent = {
      measures: [m('royalty_earnings'), m('units')],
      dimensions: [m('currency')],
      timeDimensions: [
        { dimension: spd, granularity: 'month', dateRange: ['2024-01-01', '2024-03-31'] },
      ],
      filters: [
        {
          member: m('rightsholder_id'),
          operator: 'equals',
          values: [ds.rh1.toUpperCase(), ds.rh2],
        },
        {
          or: [
            { member: m('stmt_year'), operator: 'equals', values: [2024, null] },
            { member: spd, operator: 'afterOrOnDate', values: ['from 2024-03-01 to 2024-03-31'] },
          ],
        },
        { member: m('payor'), operator: 'notSet' },
      ],
      order: { [`${spd}.month`]: 'asc' },
      offset: 0,
      total: true,
      timezone: 'asia/tokyo',
    };
    const data = await ok(sent);
    t.same(Object.keys(data), [
      'query',
      'lastRefreshTime',
      'annotation',
      'dataSource',
      'dbType',
      'external',
      'slowQuery',
      'total',
      'data',
    ]);
    t.match(data, {
      dataSource: 'default',
      dbType: 'duckdb',
      external: false,
      slowQuery: false,
      total: 2,
    });
    t.match(data.lastRefreshTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    t.same(Object.keys(data.query), [
      'measures',
      'dimensions',
      'timeDimensions',
      'limit',
      'offset',
      'total',
      'timezone',
      'filters',
      'rowLimit',
      'order',
    ]);
    t.same(data.query, {
      measures: [m('royalty_earnings'), m('units')],
      dimensions: [m('currency')],
      timeDimensions: [
        {
          dimension: spd,
          granularity: 'month',
          dateRange: ['2024-01-01T00:00:00.000', '2024-03-31T23:59:59.999'],
        },
      ],
      limit: 10000,
      offset: 0,
      total: true,
      timezone: 'Asia/Tokyo',
      filters: [
        {
          member: m('rightsholder_id'),
          operator: 'equals',
          values: [ds.rh1.toUpperCase(), ds.rh2],
        },
        {
          or: [
            { member: m('stmt_year'), operator: 'equals', values: ['2024', null] },
            { member: spd, operator: 'afterOrOnDate', values: ['from 2024-03-01 to 2024-03-31'] },
          ],
        },
        { member: m('payor'), operator: 'notSet' },
        { member: m('organization_id'), operator: 'equals', values: [org] },
      ],
      rowLimit: 10000,
      order: [{ id: `${spd}.month`, desc: false }],
    });
    t.same(Object.keys(data.annotation), ['measures', 'dimensions', 'segments', 'timeDimensions']);
    t.same(data.annotation.segments, {});
    // Golf (GBP, 2024-01-10, payor NULL, 2024) and Beta 100% (EUR, 2024-03-15, payor NULL, 2024)
    t.same(data.data, [
      {
        [m('currency')]: 'GBP',
        [`${spd}.month`]: '2024-01-01T00:00:00.000',
        [m('royalty_earnings')]: '7',
        [m('units')]: '7',
        [spd]: '2024-01-01T00:00:00.000',
      },
      {
        [m('currency')]: 'EUR',
        [`${spd}.month`]: '2024-03-01T00:00:00.000',
        [m('royalty_earnings')]: '2.25',
        [m('units')]: '10',
        [spd]: '2024-03-01T00:00:00.000',
      },
    ]);
    t.same(
      Object.keys(data.data[0]),
      [m('currency'), `${spd}.month`, m('royalty_earnings'), m('units'), spd],
      "Cube's key order: the plain time key last",
    );

    // a phrase and the dates it resolves to are one answer each, with its own echo
    const phrase = {
      measures: [m('units')],
      filters: [
        both,
        { member: spd, operator: 'inDateRange', values: ['from 2024-03-01 to 2024-03-31'] },
      ],
    };
    const dates = {
      measures: [m('units')],
      filters: [
        both,
        { member: spd, operator: 'inDateRange', values: ['2024-03-01', '2024-03-31'] },
      ],
    };
    const [a, b] = [await ok(phrase), await ok(dates)];
    t.same(a.query.filters[1].values, ['from 2024-03-01 to 2024-03-31']);
    t.same(b.query.filters[1].values, ['2024-03-01', '2024-03-31']);
    t.same([a.data, b.data], [[{ [m('units')]: '110' }], [{ [m('units')]: '110' }]]);
  },
);

t.test('queryAsync and queryPoll answer the same envelope', async (t) => {
  const query = { ...byUnits, limit: 2, offset: 1, total: true, timezone: 'Europe/Paris' };
  const sync = await ok(query);
  const submit = async (procedure: MutationPath) => {
    for (;;) {
      const res: Outcome<any> = await owner.client.mutate(procedure, {
        organizationId: org,
        query,
      });
      if (!res.ok) throw new Error(JSON.stringify(res.error));
      if (res.data.status === 'completed') return res.data.data;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  for (const procedure of ['cube.queryAsync', 'cube.queryPoll'] as const) {
    const answer = await submit(procedure);
    t.same(Object.keys(answer), Object.keys(sync), procedure);
    t.same({ ...answer, lastRefreshTime: null }, { ...sync, lastRefreshTime: null }, procedure);
    t.same(rowsOf(answer), [
      ['Foxtrot', '500', '50'],
      ['Alpha', '100', '10.5'],
    ]);
    t.equal(answer.total, 7);
    t.match(answer.query, { offset: 1, total: true, timezone: 'Europe/Paris' });
  }
});

t.test(
  'ungrouped: one answer row per statement row, within the limit and the tenant scope',
  async (t) => {
    const cur = m('currency');
    const q = {
      measures: [
        m('units'),
        m('royalty_earnings'),
        m('royalty_earnings_usd'),
        m('statement_row_count'),
      ],
      dimensions: [cur],
      filters: [both],
      ungrouped: true,
    };
    const rows = (data: { data: Record<string, string | null>[] }) =>
      data.data.map((r) => [
        r[cur],
        r[m('units')],
        r[m('royalty_earnings')],
        r[m('royalty_earnings_usd')],
        r[m('statement_row_count')],
      ]);
    const all = await ok({ ...q, total: true });
    // by the first measure, descending (Cube's default order), ties by every column
    t.same(rows(all), [
      ['USD', '1000', '100', '100', '1'],
      ['USD', '500', '50', '50', '1'],
      ['EUR', '100', '10.5', '11.55', '1'],
      ['EUR', '10', '2.25', '2.475', '1'],
      ['GBP', '7', '7', null, '1'],
      ['EUR', '1', '0.000000000001', '0', '1'],
      ['EUR', '0', '-1', '-1.1', '1'],
    ]);
    t.equal(all.total, 7, 'total counts rows');
    t.equal(all.query.ungrouped, true, 'echoed');
    t.same(Object.keys(all.query).slice(-2), ['rowLimit', 'ungrouped']);

    const page = await ok({ ...q, limit: 2, offset: 2, total: true });
    t.same(rows(page), rows(all).slice(2, 4));
    t.equal(page.total, 7);
    const preagg: Outcome<any> = await owner.client.mutate('cube.query', {
      organizationId: org,
      query: q,
      usePreagg: true,
    });
    t.same(preagg.ok && rows(preagg.data), rows(all), 'no rollup answers row by row');

    // a measure filter compares each row's value
    const big = await ok({
      ...q,
      filters: [both, { member: m('units'), operator: 'gt', values: ['50'] }],
    });
    t.same(rows(big), rows(all).slice(0, 3));
    const grouped = await ok({
      ...q,
      ungrouped: undefined,
      filters: [both, { member: m('units'), operator: 'gt', values: ['50'] }],
    });
    t.same(
      grouped.data.map((r: Record<string, string>) => [r[cur], r[m('units')]]),
      [
        ['USD', '1500'],
        ['EUR', '111'],
      ],
      'grouped: the sums',
    );

    // the tenant scope holds: only the rightsholder named, only the caller's organization
    const one = await ok({
      ...q,
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [ds.rh2] }],
    });
    t.same(rows(one), [['GBP', '7', '7', null, '1']]);
    const other = await newOrganization(srv, 'Cube Ungrouped Other Org');
    const foreign: Outcome<any> = await other.client.mutate('cube.query', {
      organizationId: other.organizationId,
      query: q,
    });
    t.match(foreign, { ok: true });
    if (foreign.ok) t.same(foreign.data.data, [], 'another organization sees none of these rows');
  },
);

t.test('ungrouped: a measure without a row value is refused', async (t) => {
  const error = await refused({
    measures: [m('statement_count')],
    filters: [both],
    ungrouped: true,
  });
  t.match(error, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  t.same(error.fields, [
    {
      path: 'query.measures.0',
      message: `${m('statement_count')} has no value of one row (a distinct count or a ratio): it cannot be asked for in an ungrouped query`,
    },
  ]);
  const ordered = await refused({
    measures: [m('units')],
    filters: [both],
    ungrouped: true,
    order: { [m('fetching_percentage')]: 'desc' },
  });
  t.match(ordered.fields, [{ path: `query.order.${m('fetching_percentage')}` }]);
  t.equal(
    (await ok({ measures: [m('statement_count')], filters: [both], ungrouped: false })).data[0][
      m('statement_count')
    ],
    '3',
    'ungrouped: false is the grouped answer',
  );
});

t.test("compareDateRange: one result per range, in Cube's shape", async (t) => {
  const spd = m('sales_period_start');
  const cur = m('currency');
  const ranges = [
    ['2024-01-01', '2024-01-31'],
    'from 2024-02-01 to 2024-02-29',
    ['2024-03-01', '2024-03-31'],
  ];
  const query = {
    measures: [m('units'), m('royalty_earnings')],
    dimensions: [cur],
    timeDimensions: [{ dimension: spd, granularity: 'month', compareDateRange: ranges }],
    filters: [both],
  };
  const answer = await ok(query);
  t.same(Object.keys(answer), ['queryType', 'results', 'pivotQuery', 'slowQuery']);
  t.match(answer, { queryType: 'compareDateRangeQuery', slowQuery: false });
  const range = (a: string, b: string) => `${a}T00:00:00.000 - ${b}T23:59:59.999`;
  const row = (
    currency: string,
    month: string,
    units: string,
    earnings: string,
    compared: string,
  ) => ({
    [cur]: currency,
    [`${spd}.month`]: `${month}T00:00:00.000`,
    [m('units')]: units,
    [m('royalty_earnings')]: earnings,
    [spd]: `${month}T00:00:00.000`,
    compareDateRange: compared,
  });
  t.same(
    answer.results.map((r: { data: unknown[] }) => r.data),
    [
      [row('GBP', '2024-01-01', '7', '7', range('2024-01-01', '2024-01-31'))],
      [row('EUR', '2024-02-01', '1', '0.000000000001', range('2024-02-01', '2024-02-29'))],
      [row('EUR', '2024-03-01', '110', '12.75', range('2024-03-01', '2024-03-31'))],
    ],
  );
  t.same(
    answer.results.map((r: { query: { timeDimensions: unknown[] } }) => r.query.timeDimensions),
    [
      [
        {
          dimension: spd,
          granularity: 'month',
          dateRange: ['2024-01-01T00:00:00.000', '2024-01-31T23:59:59.999'],
        },
      ],
      [
        {
          dimension: spd,
          granularity: 'month',
          dateRange: ['2024-02-01T00:00:00.000', '2024-02-29T23:59:59.999'],
        },
      ],
      [
        {
          dimension: spd,
          granularity: 'month',
          dateRange: ['2024-03-01T00:00:00.000', '2024-03-31T23:59:59.999'],
        },
      ],
    ],
  );
  t.same(Object.keys(answer.results[0]), [
    'query',
    'lastRefreshTime',
    'annotation',
    'dataSource',
    'dbType',
    'external',
    'slowQuery',
    'data',
  ]);
  t.same(answer.pivotQuery.dimensions, ['compareDateRange', cur]);
  t.equal(answer.pivotQuery.queryType, 'compareDateRangeQuery');

  // the same through queryAsync / queryPoll
  let polled: any;
  for (let i = 0; i < 400 && polled === undefined; i++) {
    // unchecked: the query object's granularity is typed as any string
    const res = await owner.client.mutateUnchecked(i === 0 ? 'cube.queryAsync' : 'cube.queryPoll', {
      organizationId: org,
      query,
    });
    if (!res.ok) throw new Error(JSON.stringify(res.error));
    if (res.data.status === 'completed') polled = res.data.data;
    else await new Promise((r) => setTimeout(r, 25));
  }
  t.same(
    polled.results.map((r: { data: unknown[] }) => r.data),
    answer.results.map((r: { data: unknown[] }) => r.data),
  );
  t.equal(polled.queryType, 'compareDateRangeQuery');
});

t.test('compareDateRange: refused where Cube refuses it', async (t) => {
  const spd = m('sales_period_start');
  const base = { measures: [m('units')], filters: [both] };
  const two = await refused({
    ...base,
    timeDimensions: [
      { dimension: spd, compareDateRange: ['last year'] },
      { dimension: m('sales_period_end'), compareDateRange: ['last year'] },
    ],
  });
  t.same(two.fields, [
    {
      path: 'query.timeDimensions.1.compareDateRange',
      message: 'compareDateRange can only exist for one timeDimension',
    },
  ]);
  const both_ = await refused({
    ...base,
    timeDimensions: [{ dimension: spd, dateRange: 'last year', compareDateRange: ['last year'] }],
  });
  t.match(both_.fields, [{ path: 'query.timeDimensions.0.compareDateRange', message: /not both/ }]);
  const bad = await refused({
    ...base,
    timeDimensions: [{ dimension: spd, compareDateRange: ['last year', '2024'] }],
  });
  t.same(bad.fields, [
    { path: 'query.timeDimensions.0.compareDateRange.1', message: "Can't parse date: '2024'" },
  ]);
  const none = await refused({
    ...base,
    timeDimensions: [{ dimension: spd, compareDateRange: [] }],
  });
  t.match(none, { errorCode: 'VALIDATION_FAILED' });
});

// cube.query at the handler on the synthetic dataset (test/analytics/dataset.ts): strict validation with
// field paths, the injected restrictions, every operator with its NULL rules, ordering, total,
// granularities, value formatting and the annotation.
import t from 'tap';
import { m, seedDistributor, seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Cube Query Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };

/** cube.query's outcome, loosely typed: the tests read the plain envelope (no compareDateRange) */
async function cube(query: Record<string, unknown>, client = owner.client): Promise<Outcome<any>> {
  return client.mutate('cube.query', { organizationId: org, query });
}

async function ok(query: Record<string, unknown>, client = owner.client) {
  const res = await cube(query, client);
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

/** The titles a filter keeps, in title order. */
async function titles(...filters: object[]): Promise<string[]> {
  const data = await ok({
    measures: [m('statement_row_count')],
    dimensions: [m('track_title_raw')],
    filters: [both, ...filters],
    order: { [m('track_title_raw')]: 'asc' },
  });
  return data.data.map((r: Record<string, string>) => r[m('track_title_raw')]);
}

t.test('the query object is validated strictly, with field paths', async (t) => {
  const fails = async (query: Record<string, unknown>, path: string, message: RegExp) => {
    const res = await cube(query);
    t.equal(res.ok, false, path);
    if (res.ok) return;
    t.match(res.error.data, {
      code: 'BAD_REQUEST',
      errorCode: 'VALIDATION_FAILED',
      httpStatus: 400,
    });
    t.match(res.error.data.fields, [{ path, message }], path);
  };
  const base = { measures: [m('units')], filters: [both] };
  await fails({ ...base, offset: -1 }, 'query.offset', /.+/);
  await fails({ ...base, offset: 1.5 }, 'query.offset', /.+/);
  await fails({ ...base, offset: '5' }, 'query.offset', /.+/);
  await fails(
    { ...base, measures: [m('no_such_measure')] },
    'query.measures.0',
    /unknown member analytics_full_view\.no_such_measure/,
  );
  await fails({ ...base, measures: ['units'] }, 'query.measures.0', /unknown member/);
  await fails(
    { ...base, measures: [m('territory')] },
    'query.measures.0',
    /is a dimension, not a measure/,
  );
  await fails(
    { ...base, dimensions: [m('units')] },
    'query.dimensions.0',
    /is a measure, not a dimension/,
  );
  await fails(
    { ...base, timeDimensions: [{ dimension: m('territory'), granularity: 'month' }] },
    'query.timeDimensions.0.dimension',
    /not a time dimension/,
  );
  await fails(
    { ...base, timeDimensions: [{ dimension: m('sales_period_start'), granularity: 'hour' }] },
    'query.timeDimensions.0.granularity',
    /.+/,
  );
  await fails(
    { ...base, timeDimensions: [{ dimension: m('sales_period_start'), dateRange: '2024' }] },
    'query.timeDimensions.0.dateRange',
    /Can't parse date: '2024'/,
  );
  await fails({ ...base, limit: -1 }, 'query.limit', /.+/);
  await fails({ ...base, limit: 50_001 }, 'query.limit', /.+/);
  await fails({ ...base, limit: '5' }, 'query.limit', /.+/);
  await fails({ ...base, total: 'yes' }, 'query.total', /.+/);
  await fails(
    { ...base, order: { [m('units')]: 'up' } },
    'query.order.analytics_full_view.units',
    /.+/,
  );
  await fails(
    { ...base, order: { [m('nope')]: 'asc' } },
    'query.order.analytics_full_view.nope',
    /unknown member/,
  );
  await fails(
    { ...base, filters: [both, { member: m('currency'), operator: 'like', values: ['x'] }] },
    'query.filters.1.operator',
    /.+/,
  );
  await fails(
    { ...base, filters: [both, { member: m('currency'), operator: 'equals' }] },
    'query.filters.1.values',
    /needs at least one value/,
  );
  await fails(
    { ...base, filters: [both, { member: m('currency'), operator: 'contains', values: [] }] },
    'query.filters.1.values',
    /needs at least one value/,
  );
  await fails(
    { ...base, filters: [both, { member: m('stmt_year'), operator: 'gt' }] },
    'query.filters.1.values',
    /first value/,
  );
  await fails(
    { ...base, filters: [both, { member: m('stmt_year'), operator: 'equals', values: ['abc'] }] },
    'query.filters.1.values.0',
    /is a number/,
  );
  await fails(
    {
      ...base,
      filters: [
        both,
        {
          member: m('sales_period_start'),
          operator: 'inDateRange',
          values: ['2024-01-01', '2024-01-02', '2024-01-03'],
        },
      ],
    },
    'query.filters.1.values',
    /one value .* or two dates/,
  );
  await fails(
    {
      ...base,
      filters: [
        both,
        {
          member: m('sales_period_start'),
          operator: 'beforeDate',
          values: ['2024-01-01', '2024-02-01'],
        },
      ],
    },
    'query.filters.1.values',
    /exactly one value/,
  );
  await fails(
    {
      ...base,
      filters: [
        both,
        {
          member: m('sales_period_start'),
          operator: 'inDateRange',
          values: ['last week', '2024-01-01'],
        },
      ],
    },
    'query.filters.1.values',
    /relative phrase/,
  );
  await fails(
    {
      ...base,
      filters: [both, { member: m('currency'), operator: 'afterDate', values: ['2024-01-01'] }],
    },
    'query.filters.1.operator',
    /needs a time dimension/,
  );
  await fails(
    {
      ...base,
      filters: [both, { member: m('currency'), operator: 'equals', values: ['x'], extra: 1 }],
    },
    'query.filters.1',
    /extra/,
  );
  await fails(
    {
      ...base,
      filters: [
        both,
        {
          or: [
            { member: m('currency'), operator: 'equals', values: ['EUR'] },
            { member: m('units'), operator: 'gt', values: ['1'] },
          ],
        },
      ],
    },
    'query.filters.1',
    /cannot use dimension and measure in same condition/,
  );
  await fails(
    { filters: [both] },
    'query',
    /should contain either measures, dimensions or timeDimensions with granularities/,
  );
});

t.test('a filter on rightsholder_id is required (its own errorCode)', async (t) => {
  for (const filters of [
    [],
    [{ member: m('currency'), operator: 'equals', values: ['EUR'] }],
    [{ or: [both, { member: m('currency'), operator: 'set' }] }],
    [{ member: m('rightsholder_id'), operator: 'set' }],
  ]) {
    const res = await cube({ measures: [m('units')], filters });
    t.match(res, {
      ok: false,
      error: {
        data: { code: 'BAD_REQUEST', errorCode: 'RIGHTSHOLDER_FILTER_REQUIRED', httpStatus: 400 },
      },
    });
  }
  t.equal(
    (await cube({ measures: [m('units')], filters: [{ and: [both] }] })).ok,
    true,
    'inside a top-level and it counts',
  );
});

t.test('the organization is injected and a client organization filter is stripped', async (t) => {
  const other = await newOrganization(srv, 'Other Org');
  const plain = await ok({ measures: [m('units')], filters: [both] });
  t.same(plain.data, [{ [m('units')]: '1618' }]);
  const own = await ok({
    measures: [m('units')],
    filters: [
      both,
      {
        or: [
          { member: m('organization_id'), operator: 'equals', values: [org.toUpperCase()] },
          { member: m('currency'), operator: 'equals', values: ['EUR'] },
        ],
      },
    ],
  });
  t.same(own.data, [{ [m('units')]: '111' }], 'own organization OR x: x, the EUR rows');
  const smuggled = await ok({
    measures: [m('units')],
    filters: [
      both,
      { member: m('organization_id'), operator: 'equals', values: [other.organizationId] },
    ],
  });
  t.same(smuggled.data, plain.data, 'another organization named: changes nothing');
  t.same(
    smuggled.query.filters,
    [both, { member: m('organization_id'), operator: 'equals', values: [org] }],
    'echo: the client filters without it, then the injected one',
  );
});

t.test('the data-access role restricts rows, the tm window and total', async (t) => {
  const restricted = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, restricted.userId, [ds.rh2]],
  );
  const query = {
    measures: [m('units')],
    dimensions: [m('rightsholder_id'), m('tm')],
    filters: [both],
    total: true,
  };
  const mine = await ok(query, restricted.client);
  t.same(
    mine.data,
    [{ [m('rightsholder_id')]: ds.rh2, [m('tm')]: '00.TM', [m('units')]: '7' }],
    "only RH2; D1's latest month is RH2's own",
  );
  t.equal(mine.total, 1);
  const escape = await ok(
    {
      measures: [m('units')],
      filters: [
        { or: [both, { member: m('rightsholder_id'), operator: 'notEquals', values: [ds.rh2] }] },
        { and: [both] },
      ],
    },
    restricted.client,
  );
  t.same(
    escape.data,
    [{ [m('units')]: '7' }],
    'an or around the rightsholder filter reaches nothing outside the scope',
  );
  const owners = await ok(query);
  t.same(
    owners.data.map((r: Record<string, string>) => [
      r[m('rightsholder_id')] === ds.rh1 ? 'rh1' : 'rh2',
      r[m('tm')],
      r[m('units')],
    ]),
    [
      ['rh1', '00.TM', '1611'],
      ['rh2', '01.LTM', '7'],
    ],
    'for the owner D1 ends in 2024M03, so January is in the last twelve months',
  );
});

t.test('equals and notEquals with their NULL rules', async (t) => {
  t.same(await titles({ member: m('territory'), operator: 'equals', values: ['US'] }), [
    'Alpha',
    'Delta\\Path',
    'Foxtrot',
  ]);
  t.same(await titles({ member: m('territory'), operator: 'equals', values: ['US', null] }), [
    'Alpha',
    'Delta\\Path',
    'Foxtrot',
    'gamma_x',
  ]);
  t.same(await titles({ member: m('territory'), operator: 'equals', values: [null] }), ['gamma_x']);
  t.same(
    await titles({ member: m('territory'), operator: 'notEquals', values: ['US'] }),
    ['Beta 100%', 'Echo', 'Golf', 'gamma_x'],
    'NULL rows kept',
  );
  t.same(await titles({ member: m('territory'), operator: 'notEquals', values: ['US', null] }), [
    'Beta 100%',
    'Echo',
    'Golf',
  ]);
  t.same(await titles({ member: m('territory'), operator: 'notEquals', values: [null] }), [
    'Alpha',
    'Beta 100%',
    'Delta\\Path',
    'Echo',
    'Foxtrot',
    'Golf',
  ]);
  t.same(
    await titles({ member: m('stmt_year'), operator: 'equals', values: ['2023.0'] }),
    ['Echo', 'Foxtrot'],
    'numbers compare as numbers',
  );
  t.same(await titles({ member: m('stmt_year'), operator: 'equals', values: [2024] }), [
    'Alpha',
    'Beta 100%',
    'Delta\\Path',
    'Golf',
    'gamma_x',
  ]);
  t.same(
    await titles({ member: m('sales_period_start'), operator: 'equals', values: ['2024-02-29'] }),
    ['Delta\\Path'],
  );
});

t.test('contains and notContains: case-insensitive, %, _ and \\ literal, NULL rules', async (t) => {
  t.same(await titles({ member: m('payor'), operator: 'contains', values: ['SPOTIFY'] }), [
    'Alpha',
    'Delta\\Path',
  ]);
  t.same(await titles({ member: m('track_title_raw'), operator: 'contains', values: ['%'] }), [
    'Beta 100%',
  ]);
  t.same(await titles({ member: m('track_title_raw'), operator: 'contains', values: ['_'] }), [
    'gamma_x',
  ]);
  t.same(await titles({ member: m('track_title_raw'), operator: 'contains', values: ['\\'] }), [
    'Delta\\Path',
  ]);
  t.same(
    await titles({ member: m('track_title_raw'), operator: 'contains', values: ['lph', 'OLF'] }),
    ['Alpha', 'Golf'],
    'values OR-ed',
  );
  t.same(await titles({ member: m('payor'), operator: 'contains', values: ['ab', null] }), [
    'Alpha',
    'Beta 100%',
    'Delta\\Path',
    'Echo',
    'Foxtrot',
    'Golf',
  ]);
  t.same(
    await titles({ member: m('payor'), operator: 'notContains', values: ['spotify'] }),
    ['Beta 100%', 'Echo', 'Foxtrot', 'Golf', 'gamma_x'],
    'NULL rows kept',
  );
  t.same(await titles({ member: m('payor'), operator: 'notContains', values: ['spotify', null] }), [
    'gamma_x',
  ]);
  t.same(
    await titles({ member: m('track_title_raw'), operator: 'notContains', values: ['a', 'o'] }),
    [],
    'values AND-ed: every title has an a or an o',
  );
  t.same(
    await titles({ member: m('track_title_raw'), operator: 'notContains', values: ['ph', 'ta'] }),
    ['Echo', 'Foxtrot', 'Golf', 'gamma_x'],
  );
});

t.test(
  'contains and notContains on numbers and times match the text they are answered as',
  async (t) => {
    const all = ['Alpha', 'Beta 100%', 'Delta\\Path', 'Echo', 'Foxtrot', 'Golf', 'gamma_x'];
    // Alpha's royalty_rate is answered "0.5"; DuckDB's own text of the DECIMAL(38,12) is 0.500000000000
    const rate = await ok({
      dimensions: [m('royalty_rate')],
      filters: [both, { member: m('royalty_rate'), operator: 'set' }],
    });
    t.same(rate.data, [{ [m('royalty_rate')]: '0.5' }]);
    t.same(await titles({ member: m('royalty_rate'), operator: 'contains', values: ['0.5'] }), [
      'Alpha',
    ]);
    t.same(
      await titles({ member: m('royalty_rate'), operator: 'contains', values: ['500'] }),
      [],
      'no trailing zeros to match',
    );
    t.same(
      await titles({ member: m('royalty_rate'), operator: 'notContains', values: ['00'] }),
      all,
      'Alpha kept, NULL rows kept',
    );
    // a measure (HAVING): units per title are 100, 10, 1, 1000, 500, 7, 0
    t.same(await titles({ member: m('units'), operator: 'contains', values: ['00'] }), [
      'Alpha',
      'Echo',
      'Foxtrot',
    ]);
    t.same(await titles({ member: m('units'), operator: 'contains', values: ['0000'] }), []);
    t.same(
      await titles({ member: m('units'), operator: 'notContains', values: ['.'] }),
      all,
      'no decimal point in a whole number',
    );
    t.same(await titles({ member: m('stmt_year'), operator: 'contains', values: ['023'] }), [
      'Echo',
      'Foxtrot',
    ]);
    // a time member is answered YYYY-MM-DDTHH:mm:ss.SSS
    t.same(
      await titles({
        member: m('sales_period_start'),
        operator: 'contains',
        values: ['t00:00:00.000'],
      }),
      all.filter((x) => x !== 'gamma_x'),
    );
    t.same(
      await titles({ member: m('sales_period_start'), operator: 'contains', values: ['2024-03-'] }),
      ['Alpha', 'Beta 100%'],
    );
  },
);

t.test('hostile values stay values: quotes, backslashes, SQL, placeholders', async (t) => {
  // values reach DuckDB as string literals (src/analytics/compile.ts): nothing in them may end the literal
  const all = await titles();
  for (const hostile of [
    "x' OR '1'='1",
    "'; DROP TABLE facts; --",
    "\\'; SELECT 1; --",
    '$1',
    "O'Brien",
    "'",
    "''",
    'Alpha\u202e',
  ]) {
    t.same(
      await titles({ member: m('track_title_raw'), operator: 'equals', values: [hostile] }),
      [],
      `equals ${JSON.stringify(hostile)}`,
    );
    t.same(
      await titles({ member: m('track_title_raw'), operator: 'contains', values: [hostile] }),
      [],
      `contains ${JSON.stringify(hostile)}`,
    );
    t.same(
      await titles({ member: m('track_title_raw'), operator: 'notEquals', values: [hostile] }),
      all,
      `notEquals ${JSON.stringify(hostile)}`,
    );
    t.same(
      await titles({ member: m('tm'), operator: 'equals', values: [hostile] }),
      [],
      `tm ${JSON.stringify(hostile)}`,
    );
  }
  const nobody = '00000000-0000-0000-0000-000000000000';
  const sneaky = await cube({
    measures: [m('units')],
    filters: [
      { member: m('rightsholder_id'), operator: 'equals', values: [nobody, "' OR 1=1 --"] },
    ],
  });
  t.equal(sneaky.ok, true);
  t.same(
    sneaky.data.data,
    [{ [m('units')]: null }],
    'a rightsholder id made of SQL matches no row',
  );
  t.same(
    await titles({ member: m('track_title_raw'), operator: 'equals', values: ['Delta\\Path'] }),
    ['Delta\\Path'],
    'a backslash is an ordinary character',
  );
  t.same(await titles(), all, 'the facts are all still there');
});

t.test(
  'gt, gte, lt, lte on the first value: numbers as numbers, strings lexicographically, measures after aggregation',
  async (t) => {
    t.same(await titles({ member: m('stmt_year'), operator: 'gt', values: ['2023'] }), [
      'Alpha',
      'Beta 100%',
      'Delta\\Path',
      'Golf',
      'gamma_x',
    ]);
    t.same(await titles({ member: m('stmt_year'), operator: 'gte', values: ['2024.0', '1900'] }), [
      'Alpha',
      'Beta 100%',
      'Delta\\Path',
      'Golf',
      'gamma_x',
    ]);
    t.same(await titles({ member: m('stmt_year'), operator: 'lt', values: ['2024'] }), [
      'Echo',
      'Foxtrot',
    ]);
    t.same(
      await titles({ member: m('stmt_year'), operator: 'lte', values: ['2023', '3000'] }),
      ['Echo', 'Foxtrot'],
      'later values ignored',
    );
    t.same(await titles({ member: m('royalty_rate'), operator: 'gte', values: ['0.5'] }), [
      'Alpha',
    ]);
    t.same(
      await titles({ member: m('currency'), operator: 'gt', values: ['EUR'] }),
      ['Echo', 'Foxtrot', 'Golf'],
      'GBP and USD sort after EUR',
    );
    const data = await ok({
      measures: [m('royalty_earnings')],
      dimensions: [m('track_title_raw')],
      filters: [both, { member: m('royalty_earnings'), operator: 'gt', values: ['10'] }],
      order: { [m('royalty_earnings')]: 'desc' },
    });
    t.same(
      data.data.map((r: Record<string, string>) => [
        r[m('track_title_raw')],
        r[m('royalty_earnings')],
      ]),
      [
        ['Echo', '100'],
        ['Foxtrot', '50'],
        ['Alpha', '10.5'],
      ],
    );
    t.same(
      await titles({ member: m('sales_period_start'), operator: 'gte', values: ['2024-03-01'] }),
      ['Alpha', 'Beta 100%'],
    );
    t.same(
      await titles({
        member: m('sales_period_start'),
        operator: 'lt',
        values: ['2024-01-10T12:00'],
      }),
      ['Echo', 'Foxtrot', 'Golf'],
    );
  },
);

t.test(
  'a USD measure equals the very value it answers (its DECIMAL(38,26) meets the DOUBLE exactly)',
  async (t) => {
    // 3.333333333333 × 1.087654321 = 3.625514403332970781893, answered 3.6255144033; DuckDB's own DECIMAL → DOUBLE cast
    // of it is an ulp below the value's double, which made gte and equals drop the group
    const rh = await seedRightsholder(srv, org, 'Artist Double');
    await seedStatement(srv, {
      organizationId: org,
      rightsholderId: rh,
      currency: 'EUR',
      fx: { EUR: '1.087654321' },
      rows: [{ raw_title: 'Ulp', royalty_earnings: '3.333333333333' }],
    });
    const usd = async (operator: string) => {
      const data = await ok({
        measures: [m('royalty_earnings_usd')],
        filters: [
          { member: m('rightsholder_id'), operator: 'equals', values: [rh] },
          { member: m('royalty_earnings_usd'), operator, values: ['3.6255144033'] },
        ],
      });
      return data.data.map((r: Record<string, string>) => r[m('royalty_earnings_usd')]);
    };
    for (const operator of ['equals', 'gte', 'lte'])
      t.same(await usd(operator), ['3.6255144033'], operator);
    for (const operator of ['notEquals', 'gt', 'lt']) t.same(await usd(operator), [], operator);
  },
);

t.test('set and notSet', async (t) => {
  t.same(
    await titles({ member: m('payor'), operator: 'set' }),
    ['Alpha', 'Delta\\Path', 'gamma_x'],
    "'' is set",
  );
  t.same(await titles({ member: m('payor'), operator: 'notSet' }), [
    'Beta 100%',
    'Echo',
    'Foxtrot',
    'Golf',
  ]);
});

t.test(
  'date operators: inclusive millisecond bounds, single days, strict before/after',
  async (t) => {
    const spd = m('sales_period_start');
    t.same(
      await titles({ member: spd, operator: 'inDateRange', values: ['2024-03-01', '2024-03-15'] }),
      ['Alpha', 'Beta 100%'],
      'both end days included',
    );
    t.same(
      await titles({ member: spd, operator: 'inDateRange', values: ['2024-02-29'] }),
      ['Delta\\Path'],
      'one value: that day',
    );
    t.same(
      await titles({
        member: spd,
        operator: 'inDateRange',
        values: ['2024-02-29T00:00:00.001', '2024-03-15T00:00:00.000'],
      }),
      ['Alpha', 'Beta 100%'],
      'a day is its first millisecond',
    );
    t.same(
      await titles({
        member: spd,
        operator: 'notInDateRange',
        values: ['2024-01-01', '2024-03-14'],
      }),
      ['Beta 100%', 'Echo', 'Foxtrot'],
      'NULL dates are not added',
    );
    t.same(
      await titles({ member: spd, operator: 'beforeDate', values: ['2024-01-10'] }),
      ['Echo', 'Foxtrot'],
      'strict',
    );
    t.same(
      await titles({ member: spd, operator: 'afterDate', values: ['2024-03-01'] }),
      ['Beta 100%'],
      'strict against the start of the day',
    );
    t.same(await titles({ member: spd, operator: 'afterDate', values: ['2024-02-29T23:00'] }), [
      'Alpha',
      'Beta 100%',
    ]);
    const ranged = await ok({
      measures: [m('units')],
      timeDimensions: [{ dimension: spd, dateRange: ['2023-12-31', '2024-01-10'] }],
      filters: [both],
    });
    t.same(
      ranged.data,
      [{ [m('units')]: '507' }],
      'a time dimension without granularity filters only',
    );
    t.same(ranged.query.timeDimensions, [
      { dimension: spd, dateRange: ['2023-12-31T00:00:00.000', '2024-01-10T23:59:59.999'] },
    ]);
  },
);

t.test('and / or groups, nested', async (t) => {
  t.same(
    await titles({
      or: [
        { member: m('territory'), operator: 'equals', values: ['GB'] },
        {
          and: [
            { member: m('territory'), operator: 'equals', values: ['US'] },
            { member: m('stmt_year'), operator: 'gte', values: ['2024'] },
          ],
        },
      ],
    }),
    ['Alpha', 'Delta\\Path', 'Echo'],
  );
});

t.test('granularities: both keys, Monday weeks, no gap filling', async (t) => {
  const spd = m('sales_period_start');
  const series = async (granularity: string) => {
    const data = await ok({
      measures: [m('units')],
      timeDimensions: [{ dimension: spd, granularity }],
      filters: [both],
    });
    for (const r of data.data)
      t.equal(r[spd], r[`${spd}.${granularity}`], 'the plain key carries the bucket too');
    return data.data.map((r: Record<string, string>) => [
      r[`${spd}.${granularity}`],
      r[m('units')],
    ]);
  };
  t.same(await series('day'), [
    ['2023-10-01T00:00:00.000', '1000'],
    ['2023-12-31T00:00:00.000', '500'],
    ['2024-01-10T00:00:00.000', '7'],
    ['2024-02-29T00:00:00.000', '1'],
    ['2024-03-01T00:00:00.000', '100'],
    ['2024-03-15T00:00:00.000', '10'],
    [null, '0'],
  ]);
  t.same(await series('week'), [
    ['2023-09-25T00:00:00.000', '1000'],
    ['2023-12-25T00:00:00.000', '500'],
    ['2024-01-08T00:00:00.000', '7'],
    ['2024-02-26T00:00:00.000', '101'],
    ['2024-03-11T00:00:00.000', '10'],
    [null, '0'],
  ]);
  t.same(await series('month'), [
    ['2023-10-01T00:00:00.000', '1000'],
    ['2023-12-01T00:00:00.000', '500'],
    ['2024-01-01T00:00:00.000', '7'],
    ['2024-02-01T00:00:00.000', '1'],
    ['2024-03-01T00:00:00.000', '110'],
    [null, '0'],
  ]);
  t.same(await series('quarter'), [
    ['2023-10-01T00:00:00.000', '1500'],
    ['2024-01-01T00:00:00.000', '118'],
    [null, '0'],
  ]);
  t.same(await series('year'), [
    ['2023-01-01T00:00:00.000', '1500'],
    ['2024-01-01T00:00:00.000', '118'],
    [null, '0'],
  ]);
  const two = await ok({
    measures: [m('units')],
    dimensions: [`${spd}.year`],
    timeDimensions: [
      { dimension: spd, granularity: 'month', dateRange: ['2024-03-01', '2024-03-31'] },
    ],
    filters: [both],
  });
  t.same(
    two.data,
    [
      {
        [`${spd}.year`]: '2024-01-01T00:00:00.000',
        [`${spd}.month`]: '2024-03-01T00:00:00.000',
        [spd]: '2024-03-01T00:00:00.000',
        [m('units')]: '110',
      },
    ],
    'the plain key takes the finest granularity',
  );
  t.match(two.annotation.timeDimensions[`${spd}.month`], {
    type: 'time',
    granularity: { name: 'month', title: 'month', interval: '1 month' },
  });
  t.match(two.annotation.timeDimensions[spd], { type: 'time', shortTitle: 'Sales Period Start' });
});

t.test(
  'values: decimal strings for measures and number dimensions, exact money, NULL as null',
  async (t) => {
    const data = await ok({
      measures: [
        m('royalty_earnings'),
        m('royalty_earnings_usd'),
        m('gross_royalty_earnings'),
        m('units'),
        m('statement_count'),
        m('statement_row_count'),
      ],
      dimensions: [m('track_title_raw'), m('stmt_year'), m('fx_rate'), m('currency')],
      filters: [both],
      order: { [m('track_title_raw')]: 'asc' },
    });
    const row = (title: string) =>
      data.data.find((r: Record<string, string>) => r[m('track_title_raw')] === title);
    t.same(row('Alpha'), {
      [m('track_title_raw')]: 'Alpha',
      [m('stmt_year')]: '2024',
      [m('fx_rate')]: '1.1',
      [m('currency')]: 'EUR',
      [m('royalty_earnings')]: '10.5',
      [m('royalty_earnings_usd')]: '11.55',
      [m('gross_royalty_earnings')]: '12',
      [m('units')]: '100',
      [m('statement_count')]: '1',
      [m('statement_row_count')]: '1',
    });
    t.equal(row('Delta\\Path')[m('royalty_earnings')], '0.000000000001');
    t.equal(row('Delta\\Path')[m('royalty_earnings_usd')], '0');
    t.equal(row('gamma_x')[m('royalty_earnings')], '-1');
    t.equal(row('Golf')[m('royalty_earnings_usd')], null, 'no exchange rate: NULL, never 1');
    t.equal(row('Golf')[m('fx_rate')], null);
    const sums = await ok({
      measures: [m('royalty_earnings_usd'), m('units')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1] }],
    });
    t.same(sums.data, [{ [m('royalty_earnings_usd')]: '162.925', [m('units')]: '1611' }]);
    const none = await ok({
      measures: [m('royalty_earnings_usd')],
      filters: [both, { member: m('currency'), operator: 'equals', values: ['JPY'] }],
    });
    t.same(none.data, [{ [m('royalty_earnings_usd')]: null }], 'a sum over nothing is null');
  },
);

t.test('statement, reference and period dimensions', async (t) => {
  const data = await ok({
    measures: [m('units')],
    dimensions: [
      m('file_name'),
      m('custom_name'),
      m('distributor_name'),
      m('rightsholder_name'),
      m('stmt_period_full'),
      m('stmt_period_month'),
      m('stmt_cadence'),
      m('statement_id'),
    ],
    filters: [both],
    order: { [m('file_name')]: 'asc' },
  });
  t.same(
    data.data.map((r: Record<string, string>) => Object.values(r)),
    [
      [
        'jan-2024.csv',
        null,
        'Own Distribution',
        'Artist Two',
        '2024M01',
        '2024M01',
        'M',
        ds.s3,
        '7',
      ],
      [
        'march-2024.csv',
        'March',
        'Own Distribution',
        'Artist One',
        '2024M03',
        '2024M03',
        'M',
        ds.s1,
        '111',
      ],
      [
        'q4-2023.csv',
        null,
        `Library Distribution ${org.slice(0, 8)}`,
        'Artist One',
        '2023Q04',
        '2023M12',
        'Q',
        ds.s2,
        '1500',
      ],
    ],
  );
  const lookups = await ok({
    measures: [m('units')],
    dimensions: [
      m('track_title_raw'),
      m('primary_sales_type'),
      m('secondary_sales_type'),
      m('source'),
      m('earnings_category'),
      m('earnings_parent_company'),
      m('primary_rights_type'),
    ],
    filters: [
      both,
      {
        member: m('track_title_raw'),
        operator: 'equals',
        values: ['Alpha', 'Beta 100%', 'Echo', 'Golf'],
      },
    ],
    order: { [m('track_title_raw')]: 'asc' },
  });
  t.same(
    lookups.data.map((r: Record<string, string>) => Object.values(r).slice(0, 7)),
    [
      [
        'Alpha',
        'Streaming',
        'Interactive Streaming',
        'Spotify',
        'streaming',
        'Spotify Technology S.A.',
        'Master',
      ],
      [
        'Beta 100%',
        'Download',
        'Track Download',
        'Apple Music',
        'streaming',
        'Apple Inc.',
        'Master',
      ],
      ['Echo', null, null, 'ASCAP', 'performance', null, 'Publishing'],
      ['Golf', null, null, null, null, null, null],
    ],
  );
});

t.test('limit, total, default limit and the echo', async (t) => {
  const data = await ok({
    measures: [m('units')],
    dimensions: [m('track_title_raw')],
    filters: [both],
    limit: 2,
    total: true,
  });
  t.equal(data.total, 7, 'total counts every result row, ignoring the limit');
  t.equal(data.data.length, 2);
  t.same(
    data.data.map((r: Record<string, string>) => r[m('track_title_raw')]),
    ['Echo', 'Foxtrot'],
    'default order: the first measure, descending',
  );
  const plain = await ok({ measures: [m('units')], filters: [both] });
  t.match(plain.query, { limit: 10000, rowLimit: 10000, timezone: 'UTC' });
  t.notOk('total' in plain.query, 'total echoed only when sent, as Cube echoes it');
  t.notOk('total' in plain, 'total only when asked for');
  t.notOk('order' in plain.query, 'order echoed only when given');
  const ordered = await ok({
    measures: [m('units')],
    dimensions: [m('currency')],
    filters: [both],
    order: { [m('currency')]: 'desc' },
  });
  t.same(ordered.query.order, [{ id: m('currency'), desc: true }]);
  t.same(
    ordered.data.map((r: Record<string, string>) => r[m('currency')]),
    ['USD', 'GBP', 'EUR'],
  );
});

t.test('annotation and lastRefreshTime', async (t) => {
  const query = {
    measures: [m('royalty_earnings_usd')],
    dimensions: [m('rightsholder_id')],
    filters: [both],
  };
  const first = await ok(query);
  t.same(first.annotation.measures[m('royalty_earnings_usd')], {
    title: 'Analytics Full View Royalty Earnings USD',
    shortTitle: 'Royalty Earnings USD',
    description: first.annotation.measures[m('royalty_earnings_usd')].description,
    type: 'number',
    format: 'currency',
    drillMembers: [],
    drillMembersGrouped: { measures: [], dimensions: [] },
  });
  t.match(first.annotation.dimensions[m('rightsholder_id')], {
    title: 'Analytics Full View Rightsholder ID',
    shortTitle: 'Rightsholder ID',
    type: 'string',
  });
  t.same(first.annotation.timeDimensions, {});
  t.match(first.lastRefreshTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const again = await ok(query);
  t.equal(again.lastRefreshTime, first.lastRefreshTime, 'unchanged while cached');
});

t.test('relative date ranges resolve against today', async (t) => {
  const rh3 = await seedRightsholder(srv, org, 'Artist Relative');
  const d3 = await seedDistributor(srv, org, 'Relative Co');
  const DAY = 86_400_000;
  const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00.000Z').getTime();
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
  const now = new Date(today);
  const monthStart = (offset: number) =>
    Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1);
  const dates: Record<string, number> = {
    today,
    yesterday: today - DAY,
    sixDaysAgo: today - 6 * DAY,
    lastMonth: monthStart(-1),
    thirteenMonthsAgo: monthStart(-13),
    lastYear: Date.UTC(now.getUTCFullYear() - 1, 6, 1),
    nextMonth: monthStart(1),
  };
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: rh3,
    distributorId: d3,
    stmt: { year: now.getUTCFullYear(), period: now.getUTCMonth() + 1, cadence: 'M' },
    rows: Object.entries(dates).map(([name, day]) => ({
      raw_title: name,
      royalty_earnings: '1',
      units: '1',
      sales_period_start: iso(day),
    })),
  });
  const endOfDay = (t: number) => `${iso(t)}T23:59:59.999`;
  const startOfDay = (t: number) => `${iso(t)}T00:00:00.000`;
  const weekStart = today - ((now.getUTCDay() + 6) % 7) * DAY;
  const expected: Record<string, [number, number]> = {
    today: [today, today],
    yesterday: [today - DAY, today - DAY],
    'this week': [weekStart, weekStart + 6 * DAY],
    'this month': [monthStart(0), monthStart(1) - DAY],
    'last month': [monthStart(-1), monthStart(0) - DAY],
    'last 12 months': [monthStart(-12), monthStart(0) - DAY],
    'last year': [
      Date.UTC(now.getUTCFullYear() - 1, 0, 1),
      Date.UTC(now.getUTCFullYear(), 0, 1) - DAY,
    ],
    'this year': [
      Date.UTC(now.getUTCFullYear(), 0, 1),
      Date.UTC(now.getUTCFullYear() + 1, 0, 1) - DAY,
    ],
    'last 7 days': [today - 7 * DAY, today - DAY],
    'from 7 days ago to now': [today - 7 * DAY, today],
    'next month': [monthStart(1), monthStart(2) - DAY],
  };
  for (const [phrase, [from, to]] of Object.entries(expected)) {
    const data = await ok({
      measures: [m('units')],
      dimensions: [m('track_title_raw')],
      timeDimensions: [{ dimension: m('sales_period_start'), dateRange: phrase }],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rh3] }],
      order: { [m('track_title_raw')]: 'asc' },
    });
    t.same(
      data.query.timeDimensions[0].dateRange,
      [startOfDay(from), endOfDay(to)],
      `${phrase}: resolved range`,
    );
    const want = Object.entries(dates)
      .filter(([, d]) => d >= from && d <= to)
      .map(([n]) => n)
      .sort();
    t.same(
      data.data.map((r: Record<string, string>) => r[m('track_title_raw')]),
      want,
      `${phrase}: rows`,
    );
  }
  const filtered = await ok({
    measures: [m('units')],
    filters: [
      { member: m('rightsholder_id'), operator: 'equals', values: [rh3] },
      { member: m('sales_period_start'), operator: 'afterDate', values: ['yesterday'] },
    ],
  });
  t.same(
    filtered.data,
    [{ [m('units')]: '2' }],
    'afterDate yesterday: after its end, so today and next month',
  );
  t.same(filtered.query.filters[1].values, ['yesterday'], 'echoed as sent');
});

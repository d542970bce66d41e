// Dates at the edges of the calendar in cube.query, cube.queryAsync and cube.queryPoll: the
// supported dates are 0001-01-01 to 9999-12-31 (UTC); every value or phrase inside them is
// answered (years 0001-0099 as themselves, the last day with a time of day, any case, Z, a UTC
// offset, a space for the T), in one canonical form (YYYY-MM-DDTHH:mm:ss.SSS, UTC) in the SQL (the
// echo shows filter values as sent); everything outside them is BAD_REQUEST VALIDATION_FAILED with its field path. First the
// resolution itself at a fixed now, then the procedures at the handler.
import { TRPCError } from '@trpc/server';
import t, { type Test } from 'tap';
import { compileQuery } from '../../../src/analytics/compile.ts';
import {
  DateParseError,
  absoluteBound,
  addUnits,
  formatTimestamp,
  nextDay,
  resolveDateRange,
  resolveRelative,
  utc,
} from '../../../src/analytics/dates.ts';
import { cubeQuerySchema, normalizeQuery } from '../../../src/analytics/query.ts';
import { describeError } from '../../../src/trpc/init.ts';
import { m, seedDistributor, seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';
import type { MutationPath } from '../../helpers/procedures.ts';

const OUTSIDE = 'falls outside the supported dates (0001-01-01 to 9999-12-31, UTC)';
const spd = m('sales_period_start');

// --- resolution at a fixed now (cube-query-semantics.md, b: 2026-11-22T03:03Z) ----------------

const now = Date.UTC(2026, 10, 22, 3, 3, 7, 307);
const span = (a: string, b: string): [string, string] => [`${a}T00:00:00.000`, `${b}T23:59:59.999`];

t.test('relative phrases reach the first and the last supported day, and no further', async (t) => {
  t.same(
    resolveRelative('last 2025 years', now),
    span('0001-01-01', '2025-12-31'),
    'the first day',
  );
  t.same(resolveRelative('next 7973 years', now), span('2027-01-01', '9999-12-31'), 'the last day');
  t.same(
    resolveRelative('last 2000 years', now),
    span('0026-01-01', '2025-12-31'),
    'year 0026, not 1926',
  );
  t.same(resolveRelative('last 24000 months', now), span('0026-11-01', '2026-10-31'));
  t.same(resolveRelative('January 0050', now), span('0050-01-01', '0050-01-01'));
  t.same(resolveRelative('march 1 0099', now), span('0099-03-01', '0099-03-01'));
  t.same(resolveRelative('from 0050-01-01 to 0099-12-31', now), span('0050-01-01', '0099-12-31'));
  t.same(resolveRelative('from january 0050 to now', now), span('0050-01-01', '2026-11-22'));
  for (const phrase of [
    'last 2026 years',
    'last 3000 years',
    'next 7974 years',
    'next 8000 years',
    'last 100000000 years',
    'next 100000000 days',
    'last 99999999999999999999 seconds',
    'from 100000000 years ago to now',
    'from january 0000 to now',
  ]) {
    t.throws(
      () => resolveRelative(phrase, now),
      new DateParseError(`'${phrase}' ${OUTSIDE}`),
      phrase,
    );
  }
  const lastDay = utc(9999, 11, 31, 12);
  t.same(resolveRelative('today', lastDay), span('9999-12-31', '9999-12-31'));
  t.same(resolveRelative('this year', lastDay), span('9999-01-01', '9999-12-31'));
  t.throws(() => resolveRelative('tomorrow', lastDay), new DateParseError(`'tomorrow' ${OUTSIDE}`));
  t.throws(
    () => resolveRelative('this week', lastDay),
    new DateParseError(`'this week' ${OUTSIDE}`),
    'the week ends in 10000',
  );
  const firstDay = utc(1, 0, 1, 12);
  t.same(
    resolveRelative('this week', firstDay),
    span('0001-01-01', '0001-01-07'),
    '0001-01-01 is a Monday',
  );
  t.throws(
    () => resolveRelative('yesterday', firstDay),
    new DateParseError(`'yesterday' ${OUTSIDE}`),
  );
});

t.test(
  'absolute values: every accepted form in one canonical form, UTC offsets applied',
  async (t) => {
    for (const v of [
      '2024-02-29',
      '2024-02-29Z',
      '2024-02-29t00:00',
      '2024-02-29 00:00z',
      '2024-02-29T00:00:00+00:00',
      '2024-02-29T00:00-00:00',
      '2024-02-29T02:00+02',
      '2024-02-29T05:30+0530',
      '2024-02-28T19:00:00.000-05:00',
    ]) {
      t.equal(absoluteBound(v, 'start'), '2024-02-29T00:00:00.000', v);
    }
    t.equal(
      absoluteBound('2024-03-01T01:30+02:00', 'end'),
      '2024-02-29T23:30:00.000',
      'a time is kept, not padded, and moved to UTC',
    );
    t.equal(absoluteBound('2024-02-29Z', 'end'), '2024-02-29T23:59:59.999');
    t.same(resolveDateRange(['0001-01-01', '9999-12-31'], now), span('0001-01-01', '9999-12-31'));
    t.same(resolveDateRange(['9999-12-31T10:00', '9999-12-31'], now), [
      '9999-12-31T10:00:00.000',
      '9999-12-31T23:59:59.999',
    ]);
    t.equal(absoluteBound('9999-12-31T23:30+01:00', 'start'), '9999-12-31T22:30:00.000');
    t.equal(absoluteBound('0001-01-01T00:30-01:00', 'start'), '0001-01-01T01:30:00.000');
    for (const v of [
      '0000-12-31',
      '0000-01-01T00:00',
      '0001-01-01T00:30+01:00',
      '9999-12-31T23:30-01:00',
    ]) {
      t.throws(() => absoluteBound(v, 'start'), new DateParseError(`'${v}' ${OUTSIDE}`), v);
    }
    t.throws(
      () => absoluteBound('0000-12-31', 'end'),
      new DateParseError(`'0000-12-31' ${OUTSIDE}`),
    );
    for (const v of [
      '10000-01-01',
      '2023-02-29',
      '2024-02-29T24:00',
      '2024-03-01+02:00',
      '2024-02-29T00:00+24:00',
      '2024-02-29T00:00+02:60',
      '2024-02-29T02+02',
      '2024-02-29T00:00 +02:00',
    ]) {
      t.throws(() => absoluteBound(v, 'start'), DateParseError, `${v} is not a date`);
    }
  },
);

t.test('calendar arithmetic and formatting over years 0001-9999', async (t) => {
  t.equal(formatTimestamp(utc(50, 5, 15)), '0050-06-15T00:00:00.000');
  t.equal(formatTimestamp(utc(9999, 11, 31, 23, 59, 59, 999)), '9999-12-31T23:59:59.999');
  t.equal(formatTimestamp(utc(1, 0, 1)), '0001-01-01T00:00:00.000');
  t.equal(
    formatTimestamp(addUnits(utc(100, 0, 31), -1, 'month')),
    '0099-12-31T00:00:00.000',
    'from 0100 into 0099',
  );
  t.equal(
    formatTimestamp(addUnits(utc(2024, 1, 29), -2000, 'year')),
    '0024-02-29T00:00:00.000',
    'a leap day 2000 years back',
  );
  t.throws(() => formatTimestamp(utc(0, 11, 31)), DateParseError);
  t.throws(() => formatTimestamp(utc(10_000, 0, 1)), DateParseError);
  t.throws(() => formatTimestamp(Number.NaN), DateParseError);
  t.equal(nextDay('0099-12-31'), '0100-01-01');
  t.equal(nextDay('9999-12-30'), '9999-12-31');
  t.throws(() => nextDay('9999-12-31'), DateParseError, 'no day after the last');
});

t.test(
  'the SQL: the last day with a time compares as a date; ordinary bounds are unchanged',
  async (t) => {
    const r = { organizationId: 'org-1', rightsholderIds: null };
    const rh = { member: m('rightsholder_id'), operator: 'equals', values: ['rh-1'] };
    const where = (filter: object) => {
      const c = compileQuery(
        normalizeQuery(
          cubeQuerySchema.parse({ measures: [m('units')], filters: [rh, filter] }),
          'org-1',
          now,
        ),
        r,
        { usePreagg: false },
      );
      return {
        sql: /WHERE (.*)$/m
          .exec(c.sql)![1]!
          .replace('f.organization_id = $1 AND (f.rightsholder_id = $2) AND ', ''),
        params: c.params.slice(2, -1),
      };
    };
    t.same(where({ member: spd, operator: 'beforeDate', values: ['9999-12-31T10:00'] }), {
      sql: '(f.sales_period_start <= CAST($3 AS DATE))',
      params: ['9999-12-31'],
    });
    t.same(where({ member: spd, operator: 'gte', values: ['9999-12-31T10:00'] }), {
      sql: '(f.sales_period_start > CAST($3 AS DATE))',
      params: ['9999-12-31'],
    });
    t.same(where({ member: spd, operator: 'beforeDate', values: ['9999-12-30T10:00'] }), {
      sql: '(f.sales_period_start < CAST($3 AS DATE))',
      params: ['9999-12-31'],
    });
    t.same(
      where({
        member: spd,
        operator: 'inDateRange',
        values: ['2024-01-01T06:00', '2024-01-31T06:00'],
      }),
      {
        sql: '(f.sales_period_start >= CAST($3 AS DATE) AND f.sales_period_start <= CAST($4 AS DATE))',
        params: ['2024-01-02', '2024-01-31'],
      },
    );
    t.same(where({ member: spd, operator: 'equals', values: ['2024-02-29 00:00z'] }), {
      sql: '(CAST(f.sales_period_start AS TIMESTAMP) = CAST($3 AS TIMESTAMP))',
      params: ['2024-02-29T00:00:00.000'],
    });
    t.same(
      where({
        member: spd,
        operator: 'notEquals',
        values: ['2024-02-29', '2024-03-01T01:30+02:00'],
      }),
      {
        sql: '(CAST(f.sales_period_start AS TIMESTAMP) NOT IN (CAST($3 AS TIMESTAMP), CAST($4 AS TIMESTAMP)) OR f.sales_period_start IS NULL)',
        params: ['2024-02-29T00:00:00.000', '2024-02-29T23:30:00.000'],
      },
    );
  },
);

t.test(
  'a phrase that leaves the calendar between validation and normalization is VALIDATION_FAILED',
  async (t) => {
    const query = cubeQuerySchema.parse({
      measures: [m('units')],
      timeDimensions: [{ dimension: spd, dateRange: 'next 5 years' }],
      filters: [
        { member: m('rightsholder_id'), operator: 'equals', values: ['rh-1'] },
        { and: [{ member: spd, operator: 'afterDate', values: ['next 5 years'] }] },
      ],
    });
    const late = utc(9998, 0, 1);
    const error = t.throws(() => normalizeQuery(query, 'org-1', late)) as unknown;
    t.ok(error instanceof TRPCError);
    t.same(describeError(error as TRPCError), {
      errorCode: 'VALIDATION_FAILED',
      message: `Invalid input: query.timeDimensions.0.dateRange: 'next 5 years' ${OUTSIDE}`,
      fields: [{ path: 'query.timeDimensions.0.dateRange', message: `'next 5 years' ${OUTSIDE}` }],
    });
    const filterOnly = cubeQuerySchema.parse({ ...query, timeDimensions: [] });
    const inGroup = t.throws(() => normalizeQuery(filterOnly, 'org-1', late)) as unknown;
    t.same(
      (describeError(inGroup as TRPCError).fields ?? []).map((f) => f.path),
      ['query.filters.1.and.0.values'],
    );
  },
);

// --- at the handler ----------------------------------------------------------------------

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Cube Date Bounds Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };
// rows at the edges of the calendar, under a rightsholder of their own
const edgeDates: Record<string, string> = {
  First: '0001-01-01',
  Early: '0050-06-15',
  Leap: '2024-02-29',
  Eve: '9999-12-30',
  Last: '9999-12-31',
};
const rh3 = await seedRightsholder(srv, org, 'Edge Artist');
await seedStatement(srv, {
  organizationId: org,
  rightsholderId: rh3,
  distributorId: await seedDistributor(srv, org, 'Edge Distribution'),
  stmt: { year: 2024, period: 2, cadence: 'M' },
  rows: Object.entries(edgeDates).map(([title, day]) => ({
    raw_title: title,
    royalty_earnings: '1',
    units: '1',
    sales_period_start: day,
  })),
});
const edge = { member: m('rightsholder_id'), operator: 'equals', values: [rh3] };

/** cube.query's outcome, loosely typed: the tests read the plain envelope (no compareDateRange) */
const cube = (query: Record<string, unknown>): Promise<Outcome<any>> =>
  owner.client.mutate('cube.query', { organizationId: org, query });

async function ok(query: Record<string, unknown>) {
  const res = await cube(query);
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

/** The titles of the rows a query keeps, in title order, with its echo. */
async function rows(
  query: Record<string, unknown>,
  rh: object = edge,
): Promise<{ titles: string[]; query: any }> {
  const filters = (query.filters as object[] | undefined) ?? [];
  const data = await ok({
    measures: [m('statement_row_count')],
    dimensions: [m('track_title_raw')],
    order: { [m('track_title_raw')]: 'asc' },
    ...query,
    filters: [rh, ...filters],
  });
  return {
    titles: data.data.map((r: Record<string, string>) => r[m('track_title_raw')]),
    query: data.query,
  };
}
const titles = async (...filters: object[]) => (await rows({ filters })).titles;
const ranged = (dateRange: unknown) => rows({ timeDimensions: [{ dimension: spd, dateRange }] });
/** The edge rows whose day lies in [from, to] (days compare as text: four-digit years). */
const within = (from: string, to: string) =>
  Object.entries(edgeDates)
    .filter(([, d]) => d >= from && d <= to)
    .map(([title]) => title)
    .sort();

/** Refused as the schema refuses: BAD_REQUEST, VALIDATION_FAILED, exactly these fields. */
async function refused(
  t: Test,
  query: Record<string, unknown>,
  fields: { path: string; message: string }[],
  procedure: MutationPath = 'cube.query',
) {
  const res = await owner.client.mutate(procedure, { organizationId: org, query });
  t.equal(res.ok, false, `${procedure}: refused`);
  if (res.ok) return;
  t.equal(res.status, 400);
  t.equal(res.error.data.code, 'BAD_REQUEST');
  t.equal(res.error.data.errorCode, 'VALIDATION_FAILED');
  t.same(res.error.data.fields, fields);
}
const base = { measures: [m('units')], filters: [edge] };
const year = () => new Date().getUTCFullYear();
const pad4 = (y: number) => String(y).padStart(4, '0');

t.test(
  '1. far-range relative phrases: VALIDATION_FAILED outside the calendar, exact ranges inside it',
  async (t) => {
    await refused(
      t,
      { ...base, timeDimensions: [{ dimension: spd, dateRange: 'last 3000 years' }] },
      [{ path: 'query.timeDimensions.0.dateRange', message: `'last 3000 years' ${OUTSIDE}` }],
    );
    await refused(
      t,
      {
        ...base,
        filters: [edge, { member: spd, operator: 'inDateRange', values: ['last 3000 years'] }],
      },
      [{ path: 'query.filters.1.values', message: `'last 3000 years' ${OUTSIDE}` }],
    );
    await refused(
      t,
      { ...base, timeDimensions: [{ dimension: spd, dateRange: 'next 8000 years' }] },
      [{ path: 'query.timeDimensions.0.dateRange', message: `'next 8000 years' ${OUTSIDE}` }],
    );
    await refused(
      t,
      {
        ...base,
        filters: [edge, { member: spd, operator: 'beforeDate', values: ['next 8000 years'] }],
      },
      [{ path: 'query.filters.1.values', message: `'next 8000 years' ${OUTSIDE}` }],
    );
    const Y = year();
    const toLast = `next ${9999 - Y} years`;
    const far = await ranged(toLast);
    t.same(
      far.query.timeDimensions[0].dateRange,
      span(`${Y + 1}-01-01`, '9999-12-31'),
      `${toLast}: to the last day`,
    );
    t.same(far.titles, within(`${Y + 1}-01-01`, '9999-12-31'));
    t.same(far.titles, ['Eve', 'Last']);
    await refused(
      t,
      { ...base, timeDimensions: [{ dimension: spd, dateRange: `next ${10_000 - Y} years` }] },
      [
        {
          path: 'query.timeDimensions.0.dateRange',
          message: `'next ${10_000 - Y} years' ${OUTSIDE}`,
        },
      ],
    );
    const beyond = await titles({
      member: spd,
      operator: 'afterDate',
      values: [`next ${9999 - Y} years`],
    });
    t.same(beyond, [], 'afterDate takes the end of the range: nothing after 9999-12-31');
  },
);

t.test('2. bounds on the last day with a time of day', async (t) => {
  t.same(
    await titles({ member: spd, operator: 'beforeDate', values: ['9999-12-31T10:00'] }),
    ['Early', 'Eve', 'First', 'Last', 'Leap'],
    'beforeDate: the last day (its midnight) is before 10:00',
  );
  t.same(await titles({ member: spd, operator: 'beforeDate', values: ['9999-12-31'] }), [
    'Early',
    'Eve',
    'First',
    'Leap',
  ]);
  t.same(await titles({ member: spd, operator: 'lt', values: ['9999-12-31T10:00'] }), [
    'Early',
    'Eve',
    'First',
    'Last',
    'Leap',
  ]);
  t.same(await titles({ member: spd, operator: 'lte', values: ['9999-12-31T10:00'] }), [
    'Early',
    'Eve',
    'First',
    'Last',
    'Leap',
  ]);
  t.same(await titles({ member: spd, operator: 'gte', values: ['9999-12-31T10:00'] }), []);
  t.same(await titles({ member: spd, operator: 'gt', values: ['9999-12-30T10:00'] }), ['Last']);
  t.same(await titles({ member: spd, operator: 'afterDate', values: ['9999-12-30T23:00'] }), [
    'Last',
  ]);
  t.same(
    await titles({
      member: spd,
      operator: 'inDateRange',
      values: ['9999-12-31T10:00', '9999-12-31T11:00'],
    }),
    [],
    'no DATE lies between 10:00 and 11:00',
  );
  t.same(
    await titles({
      member: spd,
      operator: 'inDateRange',
      values: ['9999-12-30T10:00', '9999-12-31T11:00'],
    }),
    ['Last'],
  );
  t.same(
    await titles({
      member: spd,
      operator: 'notInDateRange',
      values: ['0001-01-01T10:00', '9999-12-31T10:00'],
    }),
    ['First'],
  );
  const r = await ranged(['9999-12-31T10:00', '9999-12-31']);
  t.same(r.query.timeDimensions[0].dateRange, [
    '9999-12-31T10:00:00.000',
    '9999-12-31T23:59:59.999',
  ]);
  t.same(r.titles, []);
  const eve = await ranged(['9999-12-30T10:00', '9999-12-31']);
  t.same(eve.titles, ['Last']);
});

t.test(
  '3. equals / notEquals on a time member: every accepted form, compared in one form',
  async (t) => {
    for (const v of [
      '2024-02-29',
      '2024-02-29Z',
      '2024-02-29t00:00',
      '2024-02-29 00:00z',
      '2024-02-29T02:00:00+02:00',
    ]) {
      const r = await rows({ filters: [{ member: spd, operator: 'equals', values: [v] }] });
      t.same(r.titles, ['Leap'], `equals ${v}`);
      t.same(r.query.filters[1].values, [v], `equals ${v}: echoed as sent`);
    }
    const not = await rows({
      filters: [{ member: spd, operator: 'notEquals', values: ['2024-02-29 00:00z'] }],
    });
    t.same(not.titles, ['Early', 'Eve', 'First', 'Last']);
    t.same(not.query.filters[1], {
      member: spd,
      operator: 'notEquals',
      values: ['2024-02-29 00:00z'],
    });
    t.same(
      await titles({
        member: spd,
        operator: 'equals',
        values: ['0001-01-01', '9999-12-31T00:00z', null],
      }),
      ['First', 'Last'],
    );
    t.same(
      await titles({ member: spd, operator: 'equals', values: ['2024-02-29T10:00'] }),
      [],
      'a DATE is its midnight',
    );
    await refused(
      t,
      {
        ...base,
        filters: [edge, { member: spd, operator: 'equals', values: ['2024-02-29', '0000-01-01'] }],
      },
      [{ path: 'query.filters.1.values.1', message: `${spd} is a time: '0000-01-01' ${OUTSIDE}` }],
    );
    await refused(
      t,
      { ...base, filters: [edge, { member: spd, operator: 'notEquals', values: ['2024-02-30'] }] },
      [
        {
          path: 'query.filters.1.values.0',
          message: `${spd} is a time: '2024-02-30' is not a date`,
        },
      ],
    );
  },
);

t.test('4. timestamps with a UTC offset are that instant, in UTC', async (t) => {
  const plain = await rows(
    {
      filters: [
        {
          member: spd,
          operator: 'inDateRange',
          values: ['2024-03-01T00:00:00+00:00', '2024-03-15T00:00:00+00:00'],
        },
      ],
    },
    both,
  );
  t.same(plain.titles, ['Alpha', 'Beta 100%']);
  t.same(
    plain.query.filters[1].values,
    ['2024-03-01T00:00:00+00:00', '2024-03-15T00:00:00+00:00'],
    'echoed as sent',
  );
  const shifted = await rows(
    {
      timeDimensions: [
        { dimension: spd, dateRange: ['2024-02-28T19:00-05:00', '2024-02-29T18:59:59.999-0500'] },
      ],
    },
    both,
  );
  t.same(shifted.query.timeDimensions[0].dateRange, span('2024-02-29', '2024-02-29'));
  t.same(shifted.titles, ['Delta\\Path']);
  t.same(
    await rows(
      {
        timeDimensions: [
          { dimension: spd, dateRange: ['2024-03-01T00:00:00+00:00', '2024-03-15'] },
        ],
      },
      both,
    ).then((r) => r.query.timeDimensions[0].dateRange),
    span('2024-03-01', '2024-03-15'),
  );
  // 01:00 at +02:00 is 23:00 the day before in UTC: after it is from 2024-03-01 on
  const after = await rows(
    { filters: [{ member: spd, operator: 'afterDate', values: ['2024-03-01T01:00+02:00'] }] },
    both,
  );
  t.same(after.query.filters[1].values, ['2024-03-01T01:00+02:00']);
  t.same(after.titles, ['Alpha', 'Beta 100%']);
  t.same(
    (
      await rows(
        { filters: [{ member: spd, operator: 'afterDate', values: ['2024-03-01T01:00'] }] },
        both,
      )
    ).titles,
    ['Beta 100%'],
    'without the offset: after 2024-03-01',
  );
  await refused(
    t,
    {
      ...base,
      filters: [
        edge,
        { member: spd, operator: 'inDateRange', values: ['2024-03-01+02:00', '2024-03-02'] },
      ],
    },
    [
      {
        path: 'query.filters.1.values',
        message:
          "'2024-03-01+02:00' is not a date: a relative phrase is given alone, not inside an array",
      },
    ],
  );
  await refused(
    t,
    {
      ...base,
      filters: [edge, { member: spd, operator: 'gte', values: ['2024-03-01T00:00+24:00'] }],
    },
    [
      {
        path: 'query.filters.1.values.0',
        message: `${spd} is a time: '2024-03-01T00:00+24:00' is not a date`,
      },
    ],
  );
  await refused(
    t,
    {
      ...base,
      timeDimensions: [{ dimension: spd, dateRange: ['0001-01-01T00:30+01:00', '0001-01-02'] }],
    },
    [{ path: 'query.timeDimensions.0.dateRange', message: `'0001-01-01T00:30+01:00' ${OUTSIDE}` }],
  );
  await refused(
    t,
    {
      ...base,
      filters: [edge, { member: spd, operator: 'afterDate', values: ['9999-12-31T23:30-01:00'] }],
    },
    [{ path: 'query.filters.1.values', message: `'9999-12-31T23:30-01:00' ${OUTSIDE}` }],
  );
  t.same(
    await titles({ member: spd, operator: 'beforeDate', values: ['9999-12-31T23:30+01:00'] }),
    ['Early', 'Eve', 'First', 'Last', 'Leap'],
    '22:30 UTC on the last day',
  );
});

t.test('5. years 0001-0099 are themselves', async (t) => {
  const Y = year();
  const r = await ranged('last 2000 years');
  t.same(r.query.timeDimensions[0].dateRange, span(`${pad4(Y - 2000)}-01-01`, `${Y - 1}-12-31`));
  t.same(r.titles, within(`${pad4(Y - 2000)}-01-01`, `${Y - 1}-12-31`));
  t.same(r.titles, ['Early', 'Leap']);
  const a = await ranged(['0001-01-01', '2024-12-31']);
  t.same(a.query.timeDimensions[0].dateRange, span('0001-01-01', '2024-12-31'));
  t.same(a.titles, ['Early', 'First', 'Leap']);
  const b = await ranged('from 0050-01-01 to 0099-12-31');
  t.same(b.query.timeDimensions[0].dateRange, span('0050-01-01', '0099-12-31'));
  t.same(b.titles, ['Early']);
  t.same((await ranged('June 15 0050')).titles, ['Early']);
  t.same(await titles({ member: spd, operator: 'inDateRange', values: ['0050-06-15'] }), ['Early']);
  t.same(await titles({ member: spd, operator: 'beforeDate', values: ['0050-06-15'] }), ['First']);
  const years = await ok({
    measures: [m('units')],
    timeDimensions: [{ dimension: spd, granularity: 'year' }],
    filters: [edge],
  });
  t.same(
    years.data.map((row: Record<string, string>) => row[`${spd}.year`]),
    [
      '0001-01-01T00:00:00.000',
      '0050-01-01T00:00:00.000',
      '2024-01-01T00:00:00.000',
      '9999-01-01T00:00:00.000',
    ],
    'buckets keep four-digit years',
  );
});

t.test('6. phrases far out of range are VALIDATION_FAILED with the field path', async (t) => {
  for (const phrase of [
    'last 100000000 years',
    'next 100000000 days',
    'last 99999999999999999999 seconds',
    'from 100000000 years ago to now',
  ]) {
    await refused(t, { ...base, timeDimensions: [{ dimension: spd, dateRange: phrase }] }, [
      { path: 'query.timeDimensions.0.dateRange', message: `'${phrase}' ${OUTSIDE}` },
    ]);
    await refused(
      t,
      {
        ...base,
        filters: [edge, { or: [{ member: spd, operator: 'beforeDate', values: [phrase] }] }],
      },
      [{ path: 'query.filters.1.or.0.values', message: `'${phrase}' ${OUTSIDE}` }],
    );
  }
});

t.test('the boundaries 0001-01-01 and 9999-12-31 and the days beyond them', async (t) => {
  const all = await ranged(['0001-01-01', '9999-12-31']);
  t.same(all.query.timeDimensions[0].dateRange, span('0001-01-01', '9999-12-31'));
  t.same(all.titles, ['Early', 'Eve', 'First', 'Last', 'Leap']);
  const first = await ranged('0001-01-01');
  t.same(first.query.timeDimensions[0].dateRange, span('0001-01-01', '0001-01-01'));
  t.same(first.titles, ['First']);
  const last = await ranged(['9999-12-31']);
  t.same(last.query.timeDimensions[0].dateRange, span('9999-12-31', '9999-12-31'));
  t.same(last.titles, ['Last']);
  t.same(
    await titles({ member: spd, operator: 'afterDate', values: ['9999-12-30'] }),
    ['Last'],
    'strict against the start of the day',
  );
  t.same(
    await titles({ member: spd, operator: 'afterDate', values: ['9999-12-29T23:59:59.999'] }),
    ['Eve', 'Last'],
  );
  t.same(
    await titles({ member: spd, operator: 'notInDateRange', values: ['0001-01-02', '9999-12-30'] }),
    ['First', 'Last'],
  );
  await refused(
    t,
    { ...base, timeDimensions: [{ dimension: spd, dateRange: ['0000-12-31', '0001-01-01'] }] },
    [{ path: 'query.timeDimensions.0.dateRange', message: `'0000-12-31' ${OUTSIDE}` }],
  );
  await refused(
    t,
    { ...base, filters: [edge, { member: spd, operator: 'lt', values: ['0000-01-01'] }] },
    [{ path: 'query.filters.1.values.0', message: `${spd} is a time: '0000-01-01' ${OUTSIDE}` }],
  );
  await refused(
    t,
    { ...base, filters: [edge, { member: spd, operator: 'beforeDate', values: ['0000-06-01'] }] },
    [{ path: 'query.filters.1.values', message: `'0000-06-01' ${OUTSIDE}` }],
  );
  await refused(t, { ...base, timeDimensions: [{ dimension: spd, dateRange: '10000-01-01' }] }, [
    { path: 'query.timeDimensions.0.dateRange', message: "Can't parse date: '10000-01-01'" },
  ]);
  await refused(
    t,
    {
      ...base,
      filters: [
        edge,
        { member: spd, operator: 'inDateRange', values: ['9999-12-31', '10000-01-01'] },
      ],
    },
    [
      {
        path: 'query.filters.1.values',
        message:
          "'10000-01-01' is not a date: a relative phrase is given alone, not inside an array",
      },
    ],
  );
});

t.test('ordinary dates answer as before', async (t) => {
  const r = await rows(
    { timeDimensions: [{ dimension: spd, dateRange: ['2023-12-31', '2024-01-10'] }] },
    both,
  );
  t.same(r.query.timeDimensions, [{ dimension: spd, dateRange: span('2023-12-31', '2024-01-10') }]);
  t.same(r.titles, ['Foxtrot', 'Golf']);
  const days = await rows(
    {
      filters: [
        {
          member: spd,
          operator: 'inDateRange',
          values: ['2024-02-29T00:00:00.001', '2024-03-15T00:00:00.000'],
        },
      ],
    },
    both,
  );
  t.same(days.query.filters[1].values, ['2024-02-29T00:00:00.001', '2024-03-15T00:00:00.000']);
  t.same(days.titles, ['Alpha', 'Beta 100%']);
  t.same(
    (
      await rows(
        { filters: [{ member: spd, operator: 'beforeDate', values: ['2024-01-10'] }] },
        both,
      )
    ).titles,
    ['Echo', 'Foxtrot'],
  );
  t.same(
    (await rows({ filters: [{ member: spd, operator: 'lt', values: ['2024-01-10T12:00'] }] }, both))
      .titles,
    ['Echo', 'Foxtrot', 'Golf'],
  );
  t.same(
    (await rows({ filters: [{ member: spd, operator: 'equals', values: ['2024-02-29'] }] }, both))
      .titles,
    ['Delta\\Path'],
  );
  const Y = year();
  const lastYear = await ok({
    measures: [m('units')],
    timeDimensions: [{ dimension: spd, dateRange: 'last year' }],
    filters: [both],
  });
  t.same(lastYear.query.timeDimensions[0].dateRange, span(`${Y - 1}-01-01`, `${Y - 1}-12-31`));
  t.same(
    (
      await ok({
        measures: [m('units')],
        filters: [
          both,
          { member: spd, operator: 'inDateRange', values: ['2024-03-01', '2024-03-15'] },
        ],
      })
    ).data,
    [{ [m('units')]: '110' }],
  );
});

t.test('cube.queryAsync and cube.queryPoll resolve and refuse the same way', async (t) => {
  const query = {
    measures: [m('units')],
    timeDimensions: [{ dimension: spd, dateRange: ['9999-12-30T10:00', '9999-12-31'] }],
    filters: [edge, { member: spd, operator: 'equals', values: ['9999-12-31 00:00z'] }],
  };
  let answer: any;
  for (let i = 0; i < 400 && answer === undefined; i++) {
    const res = await owner.client.mutate(i === 0 ? 'cube.queryAsync' : 'cube.queryPoll', {
      organizationId: org,
      query,
    });
    if (!res.ok) throw new Error(JSON.stringify(res.error));
    if (res.data.status === 'completed') answer = res.data.data;
    else await new Promise((r) => setTimeout(r, 25));
  }
  t.same(answer.query.timeDimensions[0].dateRange, [
    '9999-12-30T10:00:00.000',
    '9999-12-31T23:59:59.999',
  ]);
  t.same(answer.query.filters[1].values, ['9999-12-31 00:00z']);
  t.same(answer.data, [{ [m('units')]: '1' }]);
  for (const procedure of ['cube.queryAsync', 'cube.queryPoll'] as const) {
    await refused(
      t,
      { ...base, timeDimensions: [{ dimension: spd, dateRange: 'last 100000000 years' }] },
      [{ path: 'query.timeDimensions.0.dateRange', message: `'last 100000000 years' ${OUTSIDE}` }],
      procedure,
    );
    await refused(
      t,
      { ...base, filters: [edge, { member: spd, operator: 'gt', values: ['0000-12-31T23:00'] }] },
      [
        {
          path: 'query.filters.1.values.0',
          message: `${spd} is a time: '0000-12-31T23:00' ${OUTSIDE}`,
        },
      ],
      procedure,
    );
  }
  const preagg: Outcome<any> = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: [m('units')],
      filters: [edge, { member: spd, operator: 'beforeDate', values: ['9999-12-31T10:00'] }],
    },
    usePreagg: true,
  });
  t.same(
    preagg.ok && preagg.data.data,
    [{ [m('units')]: '5' }],
    'the rollup path compares the same way',
  );
});

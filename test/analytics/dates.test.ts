// Relative and absolute date ranges, resolved as Cube 1.7 resolves them: the table is the one
// measured against Cube's own parser at now = 2026-11-22T03:03Z (cube-query-semantics.md, b).
import t from 'tap';
import {
  DateParseError,
  canonicalZone,
  resolveDateRange,
  resolveRelative,
} from '../../src/analytics/dates.ts';

const now = Date.UTC(2026, 10, 22, 3, 3, 7, 307);
const day = (d: string): [string, string] => [`${d}T00:00:00.000`, `${d}T23:59:59.999`];
const span = (a: string, b: string): [string, string] => [`${a}T00:00:00.000`, `${b}T23:59:59.999`];

const table: [string, [string, string]][] = [
  ['today', day('2026-11-22')],
  ['yesterday', day('2026-11-21')],
  ['tomorrow', day('2026-11-23')],
  ['this week', span('2026-11-16', '2026-11-22')],
  ['this month', span('2026-11-01', '2026-11-30')],
  ['this quarter', span('2026-10-01', '2026-12-31')],
  ['this year', span('2026-01-01', '2026-12-31')],
  ['last week', span('2026-11-09', '2026-11-15')],
  ['last month', span('2026-10-01', '2026-10-31')],
  ['last quarter', span('2026-07-01', '2026-09-30')],
  ['last year', span('2025-01-01', '2025-12-31')],
  ['next week', span('2026-11-23', '2026-11-29')],
  ['next month', span('2026-12-01', '2026-12-31')],
  ['next year', span('2027-01-01', '2027-12-31')],
  ['last 7 days', span('2026-11-15', '2026-11-21')],
  ['last 30 days', span('2026-10-23', '2026-11-21')],
  ['last 12 months', span('2025-11-01', '2026-10-31')],
  ['last 2 quarters', span('2026-04-01', '2026-09-30')],
  ['last 1 year', span('2025-01-01', '2025-12-31')],
  ['last 3 years', span('2023-01-01', '2025-12-31')],
  ['next 3 months', span('2026-12-01', '2027-02-28')],
  ['last day', day('2026-11-21')],
  ['last hour', ['2026-11-22T02:00:00.000', '2026-11-22T02:59:59.999']],
  ['last 6 hours', ['2026-11-21T21:00:00.000', '2026-11-22T02:59:59.999']],
  ['from 7 days ago to now', span('2026-11-15', '2026-11-22')],
  ['from now to 2 weeks from now', span('2026-11-22', '2026-12-06')],
  ['from 2024-01-01 to 2024-03-31', span('2024-01-01', '2024-03-31')],
  ['from 2 hours ago to now', ['2026-11-22T01:00:00.000', '2026-11-22T03:59:59.999']],
  // Cube's first-match quirks, kept on purpose
  ['from 1 year ago to today', day('2026-11-22')],
  ['from last week to now', span('2026-11-09', '2026-11-15')],
  ['from yesterday to today', day('2026-11-22')],
  ['2 weeks ago', day('2026-11-08')],
  ['last friday', day('2026-11-20')],
  ['January 2025', day('2025-01-01')],
  ['Last 12 Months', span('2025-11-01', '2026-10-31')],
  ['last 12 months please', span('2025-11-01', '2026-10-31')],
  // Cube's rule 2 reads digits only: these reach chrono, a single moment (its day, or its hour)
  ['past 12 months', day('2025-11-22')],
  ['last twelve months', day('2025-11-22')],
  ['past two weeks', day('2026-11-08')],
  ['next twelve months', day('2027-11-22')],
  ['three days ago', day('2026-11-19')],
  ['2 hours ago', ['2026-11-22T01:00:00.000', '2026-11-22T01:59:59.999']],
  ['in 1 hour', ['2026-11-22T04:00:00.000', '2026-11-22T04:59:59.999']],
  ['from 30 days ago to now', span('2026-10-23', '2026-11-22')],
  ['last 2 weeks', span('2026-11-02', '2026-11-15')],
  ['next 2 days', span('2026-11-23', '2026-11-24')],
  ['this day', day('2026-11-22')],
  ['next quarter', span('2027-01-01', '2027-03-31')],
];

t.test('relative phrases resolve like Cube', async (t) => {
  for (const [phrase, expected] of table) t.same(resolveRelative(phrase, now), expected, phrase);
});

t.test("unparseable phrases fail with Cube's message", async (t) => {
  for (const phrase of ['2024', 'past 12 months please', 'last thirteen months', 'soon']) {
    t.throws(
      () => resolveRelative(phrase, now),
      new DateParseError(`Can't parse date: '${phrase}'`),
      phrase,
    );
  }
});

t.test('absolute ranges: padding, single dates, times kept', async (t) => {
  t.same(resolveDateRange(['2024-01-01', '2024-03-31'], now), span('2024-01-01', '2024-03-31'));
  t.same(resolveDateRange(['2024-02-29'], now), day('2024-02-29'));
  t.same(resolveDateRange(['2024-01-01T10:00', '2024-01-02T12:30:15.5'], now), [
    '2024-01-01T10:00:00.000',
    '2024-01-02T12:30:15.500',
  ]);
  t.same(
    resolveDateRange('2024-05-06', now),
    day('2024-05-06'),
    'a single date string is that day (rule 5)',
  );
  t.same(
    resolveDateRange('2024-05-06T10:00', now),
    day('2024-05-06'),
    'so is a single timestamp string',
  );
  t.same(
    resolveDateRange(['2024-05-06T10:00'], now),
    ['2024-05-06T10:00:00.000', '2024-05-06T10:00:00.000'],
    'a timestamp in an array is kept',
  );
  t.throws(
    () => resolveDateRange(['2024-02-30', '2024-03-01'], now),
    DateParseError,
    'no such day',
  );
  t.throws(
    () => resolveDateRange(['last week', '2024-03-01'], now),
    DateParseError,
    'a phrase inside an array',
  );
  t.throws(() => resolveDateRange([], now), DateParseError);
});

t.test('month arithmetic clamps like moment.js and weeks start on Monday', async (t) => {
  const endOfMarch = Date.UTC(2024, 2, 31, 12);
  t.same(resolveRelative('last month', endOfMarch), span('2024-02-01', '2024-02-29'));
  t.same(resolveRelative('last 1 month', endOfMarch), span('2024-02-01', '2024-02-29'));
  const sunday = Date.UTC(2024, 2, 10);
  t.same(resolveRelative('this week', sunday), span('2024-03-04', '2024-03-10'));
  const monday = Date.UTC(2024, 2, 11);
  t.same(resolveRelative('this week', monday), span('2024-03-11', '2024-03-17'));
});

// the same instant on the wall clocks of other zones (Cube: moment.tz(timezone))
const zoneTable: [string, string, number, [string, string]][] = [
  // 2026-11-22T03:03Z is 2026-11-21T19:03 in Los Angeles (UTC-8)
  ['today', 'America/Los_Angeles', now, day('2026-11-21')],
  ['last 7 days', 'America/Los_Angeles', now, span('2026-11-14', '2026-11-20')],
  ['last hour', 'America/Los_Angeles', now, ['2026-11-21T18:00:00.000', '2026-11-21T18:59:59.999']],
  ['from 2 days ago to now', 'America/Los_Angeles', now, span('2026-11-19', '2026-11-21')],
  ['today', 'Asia/Tokyo', now, day('2026-11-22')],
  // 2026-11-30T20:00Z is 2026-12-01T05:00 in Tokyo (UTC+9): another month, quarter unchanged
  ['this month', 'Asia/Tokyo', Date.UTC(2026, 10, 30, 20), span('2026-12-01', '2026-12-31')],
  ['this month', 'UTC', Date.UTC(2026, 10, 30, 20), span('2026-11-01', '2026-11-30')],
  ['last month', 'Asia/Tokyo', Date.UTC(2026, 10, 30, 20), span('2026-11-01', '2026-11-30')],
  ['this year', 'Pacific/Kiritimati', Date.UTC(2026, 11, 31, 12), span('2027-01-01', '2027-12-31')],
  // summer time: 2026-07-01T23:30Z is 2026-07-02T00:30 in London (UTC+1)
  ['today', 'Europe/London', Date.UTC(2026, 6, 1, 23, 30), day('2026-07-02')],
  ['today', 'Europe/London', Date.UTC(2026, 0, 1, 23, 30), day('2026-01-01')],
];

t.test('relative phrases resolve on the wall clock of the query time zone', async (t) => {
  for (const [phrase, zone, at, expected] of zoneTable)
    t.same(resolveRelative(phrase, at, zone), expected, `${phrase} in ${zone}`);
});

t.test(
  'an absolute value with Z or an offset is that instant on the zone wall clock; one without is the wall clock',
  async (t) => {
    t.same(resolveDateRange(['2024-02-29T23:30:00Z'], now, 'Asia/Tokyo'), [
      '2024-03-01T08:30:00.000',
      '2024-03-01T08:30:00.000',
    ]);
    t.same(resolveDateRange(['2024-03-01T01:30+02:00'], now, 'America/New_York'), [
      '2024-02-29T18:30:00.000',
      '2024-02-29T18:30:00.000',
    ]);
    t.same(resolveDateRange(['2024-02-29', '2024-03-01T12:00'], now, 'Asia/Tokyo'), [
      '2024-02-29T00:00:00.000',
      '2024-03-01T12:00:00.000',
    ]);
  },
);

t.test('time zone names: IANA, in any letter case, canonicalised', async (t) => {
  t.equal(canonicalZone('europe/london'), 'Europe/London');
  t.equal(canonicalZone('UTC'), 'UTC');
  t.equal(canonicalZone('America/Los_Angeles'), 'America/Los_Angeles');
  for (const bad of ['Mars/Base', '+01:00', '', 'Europe/London ', '../etc'])
    t.equal(canonicalZone(bad), undefined, JSON.stringify(bad));
});

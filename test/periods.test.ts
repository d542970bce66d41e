// Period arithmetic, its one home (src/periods.ts): the calendar periods in TypeScript, and the
// same rules as SQL run in the two databases that read it, PostgreSQL and DuckDB.
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import t from 'tap';
import {
  cadenceMonthsSql,
  monthIdSql,
  monthIndex,
  monthIndexSql,
  monthStartSql,
  periodFromDate,
  periodId,
  periodIdSql,
  periodOf,
  periodText,
} from '../src/periods.ts';
import { serverUrl } from './helpers/db.ts';

t.test(
  'periodOf: the calendar period, leap days included; null for what the cadence has not',
  async (t) => {
    t.same(periodOf(2024, 2, 'M'), {
      year: 2024,
      period: 2,
      cadence: 'M',
      start: '2024-02-01',
      end: '2024-02-29',
    });
    t.same(periodOf(2023, 2, 'M')?.end, '2023-02-28');
    t.same(periodOf(2024, 4, 'Q'), {
      year: 2024,
      period: 4,
      cadence: 'Q',
      start: '2024-10-01',
      end: '2024-12-31',
    });
    t.same(periodOf(2024, 2, 'H'), {
      year: 2024,
      period: 2,
      cadence: 'H',
      start: '2024-07-01',
      end: '2024-12-31',
    });
    t.same(periodOf(2024, 1, 'Y'), {
      year: 2024,
      period: 1,
      cadence: 'Y',
      start: '2024-01-01',
      end: '2024-12-31',
    });
    for (const [year, period, cadence] of [
      [2024, 13, 'M'],
      [2024, 0, 'M'],
      [2024, 5, 'Q'],
      [2024, 3, 'H'],
      [2024, 2, 'Y'],
      [2024, 1.5, 'Q'],
      [1899, 1, 'Y'],
      [2201, 1, 'Y'],
      [Number.NaN, 1, 'M'],
    ] as const) {
      t.equal(periodOf(year, period, cadence), null, `${year} ${cadence}${period}`);
    }
  },
);

t.test('periodFromDate widens a date to its month, quarter, half or year', async (t) => {
  t.same(
    (['M', 'Q', 'H', 'Y'] as const)
      .map((c) => periodFromDate('2024-08-15', c))
      .map((p) => `${p!.cadence}${p!.period} ${p!.start}..${p!.end}`),
    [
      'M8 2024-08-01..2024-08-31',
      'Q3 2024-07-01..2024-09-30',
      'H2 2024-07-01..2024-12-31',
      'Y1 2024-01-01..2024-12-31',
    ],
  );
  t.equal(periodFromDate('1850-01-01', 'M'), null);
});

t.test('month index and period ids', async (t) => {
  t.equal(monthIndex('2024-03'), 24290);
  t.equal(monthIndex('2024-03-31'), 24290);
  t.equal(monthIndex('0000-01'), 0);
  t.equal(periodId(2024, 2, 'Q'), '2024Q02');
  t.equal(periodId(2024, 11, 'M'), '2024M11');
});

// every combination, the unknown and the out-of-range ones included
const YEARS = [2023, 2024, null];
const PERIODS = [0, 1, 2, 3, 4, 5, 6, 12, 13, null];
const CADENCE_VALUES = ['M', 'Q', 'H', 'Y', 'X', null];
const LAST_MONTH: Record<string, (p: number) => number | null> = {
  M: (p) => (p >= 1 && p <= 12 ? p : null),
  Q: (p) => (p >= 1 && p <= 4 ? p * 3 : null),
  H: (p) => (p >= 1 && p <= 2 ? p * 6 : null),
  Y: (p) => (p === 1 ? 12 : null),
};
const SPAN: Record<string, number> = { M: 1, Q: 3, H: 6, Y: 12 };

interface Row {
  year: number | null;
  period: number | null;
  cadence: string | null;
}
const rows: Row[] = YEARS.flatMap((year) =>
  PERIODS.flatMap((period) => CADENCE_VALUES.map((cadence) => ({ year, period, cadence }))),
);

function expected(r: Row): unknown[] {
  const last =
    r.year === null || r.period === null || r.cadence === null
      ? null
      : (LAST_MONTH[r.cadence]?.(r.period) ?? null);
  return [
    last === null ? null : r.year! * 12 + last - 1,
    r.year === null || r.period === null || r.cadence === null
      ? null
      : `${r.year}${r.cadence}${String(r.period).padStart(2, '0')}`,
    r.cadence === null ? null : (SPAN[r.cadence] ?? null),
  ];
}

const columns = { year: 'y', period: 'p', cadence: 'c' };
const select = `SELECT ${monthIndexSql(columns)} AS month_index, ${periodIdSql(columns)} AS period_id, ${cadenceMonthsSql('c')} AS months FROM v`;
const values = (cast: (r: Row) => string) =>
  `WITH v(y, p, c) AS (VALUES ${rows.map(cast).join(', ')}) ${select}`;
const lit = (v: number | string | null, type: string) =>
  v === null ? `CAST(NULL AS ${type})` : typeof v === 'number' ? `CAST(${v} AS ${type})` : `'${v}'`;

t.test('the SQL forms give the same answers in PostgreSQL', async (t) => {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  t.teardown(() => client.end());
  const { rows: got } = await client.query<{
    month_index: number | null;
    period_id: string | null;
    months: number | null;
  }>(
    values(
      (r) => `(${lit(r.year, 'integer')}, ${lit(r.period, 'integer')}, ${lit(r.cadence, 'text')})`,
    ),
  );
  t.equal(got.length, rows.length);
  t.same(
    got.map((g) => [g.month_index, g.period_id, g.months]),
    rows.map(expected),
  );
});

t.test('and in DuckDB, with the monthly id of a month index', async (t) => {
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  t.teardown(() => duck.closeSync());
  const reader = await duck.runAndReadAll(
    values(
      (r) =>
        `(${lit(r.year, 'INTEGER')}, ${lit(r.period, 'INTEGER')}, ${lit(r.cadence, 'VARCHAR')})`,
    ),
  );
  const got = reader
    .getRowsJS()
    .map(([m, id, months]) => [
      m === null ? null : Number(m),
      id,
      months === null ? null : Number(months),
    ]);
  t.same(got, rows.map(expected));
  const ids = await duck.runAndReadAll(
    `SELECT ${monthIdSql('i')} FROM (VALUES (24290), (24299), (0), (NULL)) v(i)`,
  );
  t.same(
    ids.getRowsJS().map((r) => r[0]),
    ['2024M03', '2024M12', '0M01', null],
  );
  const starts = await duck.runAndReadAll(
    `SELECT CAST(${monthStartSql('i')} AS VARCHAR) FROM (VALUES (24290), (24299), (NULL)) v(i)`,
  );
  t.same(
    starts.getRowsJS().map((r) => r[0]),
    ['2024-03-01', '2024-12-01', null],
  );
});

t.test('periodText: a period as the period readers read it back', async (t) => {
  t.same(
    [
      periodText({ year: 2024, period: 5, cadence: 'M' }),
      periodText({ year: 2023, period: 3, cadence: 'Q' }),
      periodText({ year: 2023, period: 2, cadence: 'H' }),
      periodText({ year: 2023, period: 1, cadence: 'Y' }),
    ],
    ['2024M05', '2023Q3', '2023H2', '2023'],
  );
});

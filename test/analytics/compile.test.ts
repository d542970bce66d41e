// The compiler pinned: exact SQL and parameters for representative queries, where the injected
// restrictions go, how each operator compiles, and when a rollup answers. A time column groups by
// its timestamp and is formatted once per group (formatting every row cost 4x, bench:query).
import t from 'tap';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  compileQuery,
  tmFilter,
  tmLabelRange,
  type Restrictions,
} from '../../src/analytics/compile.ts';
import { sqlLiteral } from '../../src/db/sql.ts';
import { cubeQuerySchema, normalizeQuery } from '../../src/analytics/query.ts';
import { semantic } from '../../src/analytics/semantic.ts';

const now = Date.UTC(2026, 10, 22, 3, 3);
const V = (n: string) => `analytics_full_view.${n}`;
const rh = { member: V('rightsholder_id'), operator: 'equals', values: ['rh-1'] };
const scoped: Restrictions = { organizationId: 'org-1', rightsholderIds: ['rh-1', 'rh-2'] };
const all: Restrictions = { organizationId: 'org-1', rightsholderIds: null };

const compile = (query: unknown, r: Restrictions = all, usePreagg = false) =>
  compileQuery(normalizeQuery(cubeQuerySchema.parse(query), r.organizationId, now), r, {
    usePreagg,
  });

t.test(
  'a full query: restrictions first, dimension filters in WHERE, measure filters in HAVING',
  async (t) => {
    const c = compile(
      {
        measures: [V('royalty_earnings_usd')],
        dimensions: [V('territory')],
        timeDimensions: [
          { dimension: V('sales_period_start'), granularity: 'month', dateRange: 'last 12 months' },
        ],
        filters: [
          rh,
          // a client organization filter is stripped: never a condition on the column
          {
            or: [
              { member: V('organization_id'), operator: 'equals', values: ['another-org'] },
              { member: V('organization_id'), operator: 'equals', values: ['org-1'] },
            ],
          },
          {
            or: [
              { member: V('source_raw'), operator: 'contains', values: ['50%_off'] },
              { member: V('stmt_year'), operator: 'gte', values: [2024] },
            ],
          },
          { member: V('royalty_earnings_usd'), operator: 'gt', values: ['0'] },
        ],
        limit: 10,
        total: true,
      },
      scoped,
      true,
    );
    const body = `SELECT f.country AS "c0", strftime(CAST(date_trunc('month', f.sales_period_start) AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%g') AS "c1", CAST(CASE WHEN abs((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))) - trunc((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10)) = CAST(0.00000000005 AS DECIMAL(38,26)) AND CAST(trunc((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10) * 10000000000 AS HUGEINT) % 2 = 0 THEN trunc((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10) ELSE round((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10) END AS DECIMAL(38,10)) AS "c2"
FROM rollup_statement f
LEFT JOIN fx ON fx.statement_id = f.statement_id AND fx.currency = f.currency
WHERE f.organization_id = $1 AND f.rightsholder_id IN ($2, $3) AND (f.sales_period_start >= CAST($4 AS DATE) AND f.sales_period_start <= CAST($5 AS DATE)) AND (f.rightsholder_id = $6) AND ((f.source ILIKE '%' || $7 || '%' ESCAPE '\\') OR (f.stmt_year >= CAST($8 AS DOUBLE)))
GROUP BY 1, CAST(date_trunc('month', f.sales_period_start) AS TIMESTAMP)
HAVING (CAST(CAST(CAST(CASE WHEN abs((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))) - trunc((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10)) = CAST(0.00000000005 AS DECIMAL(38,26)) AND CAST(trunc((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10) * 10000000000 AS HUGEINT) % 2 = 0 THEN trunc((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10) ELSE round((sum(f.royalty_earnings * fx.rate) + CAST(sum(f.royalty_earnings * fx.rate_lo) AS DECIMAL(38,12)) * CAST(0.00000000000001 AS DECIMAL(15,14))), 10) END AS DECIMAL(38,10)) AS VARCHAR) AS DOUBLE) > CAST($9 AS DOUBLE))`;
    t.equal(c.sql, `${body}\nORDER BY 2 ASC, 1 ASC\nLIMIT CAST($10 AS BIGINT)`);
    t.same(c.params, [
      'org-1',
      'rh-1',
      'rh-2',
      '2025-11-01',
      '2026-10-31',
      'rh-1',
      '50\\%\\_off',
      '2024',
      '0',
      '10',
    ]);
    t.equal(c.totalSql, `SELECT count(*) AS total FROM (\n${body}\n) q`);
    t.same(c.totalParams, c.params.slice(0, -1));
    t.equal(c.rollup, 'statement_territory_source');
    t.same(
      c.columns.map((col) => col.keys),
      [
        [V('territory')],
        [V('sales_period_start.month'), V('sales_period_start')],
        [V('royalty_earnings_usd')],
      ],
    );
    t.notMatch(c.sql, /another-org/);
    t.notOk(
      c.params.includes('another-org'),
      "a client's organization filter is stripped, not compared",
    );
  },
);

t.test('operators and their NULL rules', async (t) => {
  const where = (filter: object) => {
    const c = compile({ measures: [V('units')], filters: [rh, filter] });
    return {
      sql: /WHERE (.*)$/m
        .exec(c.sql)![1]!
        .replace('f.organization_id = $1 AND (f.rightsholder_id = $2) AND ', ''),
      params: c.params.slice(2, -1),
    };
  };
  t.same(where({ member: V('currency'), operator: 'equals', values: ['EUR', 'USD'] }), {
    sql: '(f.currency IN ($3, $4))',
    params: ['EUR', 'USD'],
  });
  t.same(where({ member: V('currency'), operator: 'equals', values: ['EUR', null] }), {
    sql: '(f.currency = $3 OR f.currency IS NULL)',
    params: ['EUR'],
  });
  t.same(where({ member: V('currency'), operator: 'notEquals', values: ['EUR'] }), {
    sql: '(f.currency <> $3 OR f.currency IS NULL)',
    params: ['EUR'],
  });
  t.same(where({ member: V('currency'), operator: 'notEquals', values: ['EUR', null] }), {
    sql: '(f.currency <> $3)',
    params: ['EUR'],
  });
  t.same(where({ member: V('currency'), operator: 'notEquals', values: [null] }), {
    sql: '(f.currency IS NOT NULL)',
    params: [],
  });
  t.same(where({ member: V('payor'), operator: 'notContains', values: ['a'] }), {
    sql: "((f.payor NOT ILIKE '%' || $3 || '%' ESCAPE '\\') OR f.payor IS NULL)",
    params: ['a'],
  });
  // several values: the text once, matched against the list by a lambda
  t.same(where({ member: V('payor'), operator: 'notContains', values: ['a', 'b'] }), {
    sql: "((f.payor IS NOT NULL AND len(list_filter([$3, $4], lambda contains_value: f.payor ILIKE '%' || contains_value || '%' ESCAPE '\\')) = 0) OR f.payor IS NULL)",
    params: ['a', 'b'],
  });
  t.same(where({ member: V('payor'), operator: 'contains', values: ['a', '5%', null] }), {
    sql: "(len(list_filter([$3, $4], lambda contains_value: f.payor ILIKE '%' || contains_value || '%' ESCAPE '\\')) > 0 OR f.payor IS NULL)",
    params: ['a', '5\\%'],
  });
  t.same(where({ member: V('stmt_year'), operator: 'lt', values: ['2025', '1900'] }), {
    sql: '(f.stmt_year < CAST($3 AS DOUBLE))',
    params: ['2025'],
  });
  t.same(where({ member: V('royalty_rate'), operator: 'contains', values: ['5'] }), {
    sql: "(regexp_replace(CAST(f.royalty_rate AS VARCHAR), '(\\.[0-9]*[1-9])0+$|\\.0+$', '\\1') ILIKE '%' || $3 || '%' ESCAPE '\\')",
    params: ['5'],
  });
  t.same(where({ member: V('isrc'), operator: 'set' }), {
    sql: '(f.isrc IS NOT NULL)',
    params: [],
  });
  t.same(where({ member: V('isrc'), operator: 'notSet', values: ['ignored'] }), {
    sql: '(f.isrc IS NULL)',
    params: [],
  });
  // a DATE compared with millisecond bounds, as dates
  t.same(
    where({
      member: V('sales_period_start'),
      operator: 'inDateRange',
      values: ['2024-01-01', '2024-01-31'],
    }),
    {
      sql: '(f.sales_period_start >= CAST($3 AS DATE) AND f.sales_period_start <= CAST($4 AS DATE))',
      params: ['2024-01-01', '2024-01-31'],
    },
  );
  t.same(
    where({
      member: V('sales_period_start'),
      operator: 'inDateRange',
      values: ['2024-01-01T06:00', '2024-01-31T06:00'],
    }),
    {
      sql: '(f.sales_period_start >= CAST($3 AS DATE) AND f.sales_period_start <= CAST($4 AS DATE))',
      params: ['2024-01-02', '2024-01-31'],
    },
  );
  t.same(
    where({
      member: V('sales_period_start'),
      operator: 'notInDateRange',
      values: ['2024-01-01', '2024-01-31'],
    }),
    {
      sql: '(f.sales_period_start < CAST($3 AS DATE) OR f.sales_period_start > CAST($4 AS DATE))',
      params: ['2024-01-01', '2024-01-31'],
    },
  );
  t.same(
    where({ member: V('sales_period_start'), operator: 'afterDate', values: ['2024-03-03'] }),
    {
      sql: '(f.sales_period_start > CAST($3 AS DATE))',
      params: ['2024-03-03'],
    },
  );
  t.same(
    where({ member: V('sales_period_start'), operator: 'beforeDate', values: ['yesterday'] }),
    {
      sql: '(f.sales_period_start < CAST($3 AS DATE))',
      params: ['2026-11-21'],
    },
  );
  t.same(where({ member: V('sales_period_start'), operator: 'afterDate', values: ['yesterday'] }), {
    sql: '(f.sales_period_start > CAST($3 AS DATE))',
    params: ['2026-11-21'],
  });
});

t.test(
  "contains/notContains with many values write the member's expression once, not once per value",
  async (t) => {
    // the tm expression repeated 1,000 times took DuckDB's planner 2.4 s on 7 rows; ten such filters
    // ran past the synchronous window (test/api/cube/inputForms.test.ts runs them)
    const tmSql = semantic.dimensions.get('tm')!.sql;
    const copies = (sql: string) => sql.split(tmSql).length - 1;
    const values = Array.from({ length: 1_000 }, (_, i) => `v${i}`);
    const contains = compile({
      measures: [V('units')],
      filters: [rh, { member: V('tm'), operator: 'contains', values }],
    });
    t.equal(copies(contains.sql), 1);
    t.same(
      contains.params.filter((v) => v.startsWith('v')),
      values,
      'the values, in order',
    );
    const notContains = compile({
      measures: [V('units')],
      filters: [rh, { member: V('tm'), operator: 'notContains', values }],
    });
    t.equal(copies(notContains.sql), 3, 'IS NOT NULL, the match and the NULL rule');
  },
);

t.test(
  'restrictions: an empty data-access scope matches nothing; the tm relation is restricted too',
  async (t) => {
    const none = compile(
      { measures: [V('units')], dimensions: [V('tm')], filters: [rh] },
      { organizationId: 'org-1', rightsholderIds: [] },
    );
    t.match(none.sql, /WHERE FALSE\n\s*GROUP BY s2\.distributor_id\)/);
    t.match(none.sql, /\nWHERE FALSE AND \(f\.rightsholder_id = \$1\)/);
    t.same(none.params, ['rh-1', '10000']);
    const some = compile({ measures: [V('units')], dimensions: [V('tm')], filters: [rh] }, scoped);
    t.match(some.sql, /WHERE sm\.organization_id = \$1 AND sm\.rightsholder_id IN \(\$2, \$3\)/);
  },
);

t.test('default order, explicit order and unselected members', async (t) => {
  const order = (q: object) => /ORDER BY (.*)$/m.exec(compile({ filters: [rh], ...q }).sql)?.[1];
  t.equal(
    order({ measures: [V('units')], dimensions: [V('currency')] }),
    '2 DESC, 1 ASC',
    'measures and dimensions: first measure desc',
  );
  t.equal(
    order({ dimensions: [V('currency'), V('territory')] }),
    '1 ASC, 2 ASC',
    'dimensions only: first dimension asc',
  );
  t.equal(order({ measures: [V('units')] }), undefined, 'measures only: no order');
  t.equal(
    order({
      measures: [V('units')],
      dimensions: [V('currency')],
      timeDimensions: [{ dimension: V('sales_period_end'), granularity: 'year' }],
    }),
    '2 ASC, 1 ASC',
  );
  t.equal(
    order({
      measures: [V('units')],
      dimensions: [V('currency')],
      order: { [V('units')]: 'asc', [V('payor')]: 'desc' },
    }),
    '2 ASC, 1 ASC',
    'payor is not selected: dropped',
  );
  t.equal(
    order({ measures: [V('units')], dimensions: [V('currency')], order: {} }),
    '1 ASC',
    'an empty order disables the default',
  );
});

t.test('rollups answer only what they can, with identical measures', async (t) => {
  const rollup = (q: object) => compile({ filters: [rh], ...q }, all, true).rollup;
  t.equal(
    rollup({
      measures: [V('royalty_earnings_usd'), V('statement_count'), V('statement_row_count')],
      dimensions: [V('distributor_name'), V('tm')],
    }),
    'statement_territory_source',
  );
  t.equal(
    rollup({
      measures: [V('units')],
      dimensions: [V('primary_sales_type'), V('source'), V('stmt_period_full'), V('territory')],
    }),
    'statement_territory_source',
  );
  t.equal(
    rollup({ measures: [V('units')], dimensions: [V('territory_raw')] }),
    null,
    'territory_raw is not in the rollup',
  );
  t.equal(rollup({ measures: [V('product_age_avg')] }), null, 'product measures need the rows');
  t.equal(
    rollup({ measures: [V('units')], filters: [rh, { member: V('isrc'), operator: 'set' }] }),
    null,
    'a filter on a row column',
  );
  t.match(
    compile({ measures: [V('statement_row_count')], filters: [rh] }, all, true).sql,
    /sum\(f\.row_count\)/,
  );
  t.match(
    compile({ measures: [V('statement_row_count')], filters: [rh] }, all, false).sql,
    /count\(\*\)/,
  );
});

t.test(
  'tm filters compile to months_back ranges that keep exactly the rows the label comparison keeps',
  async (t) => {
    t.same(tmLabelRange('01.LTM'), { from: 1, to: 12 });
    t.same(tmLabelRange('00.TM'), { from: null, to: 0 });
    t.same(tmLabelRange('03.TM'), { from: 25, to: 36 });
    t.same(tmLabelRange('100.TM'), { from: 1189, to: 1200 });
    for (const never of [
      '3.TM',
      '003.TM',
      '01.TM',
      '02.TM',
      '1.LTM',
      'LTM',
      '',
      '01.LTM ',
      "01.LTM' OR 1=1 --",
    ])
      t.equal(tmLabelRange(never), null, never);
    const c = compile({
      measures: [V('units')],
      filters: [rh, { member: V('tm'), operator: 'equals', values: ['01.LTM'] }],
    });
    t.match(c.sql, /\(\(lp\.month_index - f\.month_index\) BETWEEN 1 AND 12\)/);
    t.notMatch(c.sql, /'01\.LTM'/, 'no label is built per row');
    t.notOk(c.params.includes('01.LTM'));

    // the model's own labels over months_back -3..1300 and NULL, against the ranges
    const db = await DuckDBInstance.create(':memory:');
    const duck = await db.connect();
    const label = semantic.dimensions
      .get('tm')!
      .sql.replaceAll('(lp.month_index - f.month_index)', 'mb');
    await duck.run(
      `CREATE TABLE w AS SELECT mb, ${label} AS tm FROM (SELECT CAST(range AS INTEGER) AS mb FROM range(-3, 1301) UNION ALL SELECT NULL)`,
    );
    const labels = [
      '00.TM',
      '01.LTM',
      '02.PTM',
      '03.TM',
      '09.TM',
      '10.TM',
      '99.TM',
      '100.TM',
      '108.TM',
      '3.TM',
      '10.LTM',
      'x',
    ];
    const sets: (string | null)[][] = [
      ...labels.map((l) => [l]),
      [null],
      ['01.LTM', null],
      ['01.LTM', '02.PTM'],
      ['x', null],
      ['00.TM', '100.TM', 'x'],
    ];
    for (const values of sets) {
      for (const operator of ['equals', 'notEquals'] as const) {
        const nonNull = values.filter((v): v is string => v !== null);
        const list = nonNull.map(sqlLiteral).join(', ');
        const hasNull = values.includes(null);
        // the general rule of compile.ts for any string member
        const byLabel =
          operator === 'equals'
            ? [nonNull.length ? `tm IN (${list})` : null, hasNull ? 'tm IS NULL' : null]
                .filter(Boolean)
                .join(' OR ')
            : nonNull.length === 0
              ? 'tm IS NOT NULL'
              : hasNull
                ? `tm NOT IN (${list})`
                : `tm NOT IN (${list}) OR tm IS NULL`;
        const rows = async (where: string) =>
          (
            await duck.runAndReadAll(
              `SELECT list(mb ORDER BY mb NULLS LAST)::VARCHAR FROM w WHERE ${where}`,
            )
          ).getRows()[0]![0];
        t.equal(
          await rows(tmFilter('mb', operator, values)),
          await rows(byLabel),
          `${operator} ${JSON.stringify(values)}`,
        );
      }
    }
    t.equal(
      (await duck.runAndReadAll(`SELECT tm FROM w WHERE mb = 1200`)).getRows()[0]![0],
      '100.TM',
      'labels past 99 are not cut to two digits',
    );
    duck.closeSync();
    db.closeSync();
  },
);

t.test(
  'inline: values become quoted literals, and the SQL runs as the placeholders would',
  async (t) => {
    const hostile = "x' OR 1=1; DROP TABLE facts; --";
    const query = {
      measures: [V('units')],
      dimensions: [V('territory')],
      filters: [
        rh,
        { member: V('source_raw'), operator: 'contains', values: [hostile] },
        { member: V('territory'), operator: 'equals', values: ["O'Hare", 'US'] },
      ],
      limit: 5,
    };
    const placeholders = compile(query);
    const inline = compileQuery(normalizeQuery(cubeQuerySchema.parse(query), 'org-1', now), all, {
      usePreagg: false,
      inline: true,
    });
    t.same(inline.params, []);
    t.notMatch(inline.sql, /\$[0-9]/);
    t.match(inline.sql, /f\.organization_id = 'org-1' AND \(f\.rightsholder_id = 'rh-1'\)/);
    t.match(
      inline.sql,
      /'%' \|\| 'x'' OR 1=1; DROP TABLE facts; --' \|\| '%'/,
      'quotes doubled, nothing else',
    );
    t.match(inline.sql, /f\.country IN \('O''Hare', 'US'\)/);
    t.match(inline.sql, /LIMIT CAST\('5' AS BIGINT\)/);
    // each placeholder, replaced by its literal, gives the inline text
    t.equal(
      placeholders.sql.replace(/\$([0-9]+)/g, (_m, i: string) =>
        sqlLiteral(placeholders.params[Number(i) - 1]!),
      ),
      inline.sql,
    );
    t.throws(() => sqlLiteral('a\u0000b'), /NUL/);
  },
);

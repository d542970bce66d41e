// Large amounts and the edges of cube.sqlQuery and the answer cache:
// - the valuation measures (product_dollar_age, product_dollar_age_percentage,
//   fetching_percentage) answer exactly for labels of millions to 1e15 USD and ages to 200
//   years, where a sum of USD (DECIMAL(38,26)) × age overflowed DuckDB's 38 digits;
// - cube.sqlQuery loads only the columns a statement names, unless the statement reads columns
//   it does not name (USING, NATURAL, #n, catalog views and functions, DESCRIBE, ...);
// - the answer cache counts answers at their size and stays within ANALYTICS_RESULT_CACHE_MB.
import { DuckDBInstance } from '@duckdb/node-api';
import t from 'tap';
import { sqlTableColumns } from '../../../src/analytics/compile.ts';
import { analyticsFor, viewColumnsRead } from '../../../src/analytics/engine.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { m, seedDistributor, seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const CACHE_MB = 16;
const srv = await startTestHandler(t, {
  env: { ANALYTICS_RESULT_CACHE_MB: String(CACHE_MB), CUBE_SQL_MAX_ROWS: '50000' },
});
const db = srv.deps.pool;
const ALL = sqlTableColumns.map((c) => c.name).sort();

// --- which columns a statement needs (the parser's tree, as inspectSql reads it) -------------

t.test(
  'the columns a statement needs: pruned only when every column it reads is named',
  async (t) => {
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    t.teardown(() => {
      c.closeSync();
      instance.closeSync();
    });
    const needs = async (sql: string) => {
      const tree = JSON.parse(
        String(
          (
            await c.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR))', [sql])
          ).getRows()[0]![0],
        ),
      ) as { statements: unknown[] };
      return viewColumnsRead(tree.statements).sort();
    };
    const pruned: [string, string[]][] = [
      [
        "SELECT track_title_raw, sum(units) FROM analytics_full_view WHERE currency = 'USD' GROUP BY 1 ORDER BY 2",
        ['currency', 'track_title_raw', 'units'],
      ],
      ['SELECT count(*) FROM analytics_full_view', ['organization_id']],
      [
        'SELECT a.statement_id, b.units FROM analytics_full_view a JOIN analytics_full_view b ON a.statement_id = b.statement_id',
        ['statement_id', 'units'],
      ],
      [
        'SELECT count(*) FROM analytics_full_view a JOIN analytics_full_view b USING (statement_id)',
        ['statement_id'],
      ],
      [
        'SELECT count(*) FROM analytics_full_view a JOIN analytics_full_view b USING (statement_id, currency) WHERE a.units > 0',
        ['currency', 'statement_id', 'units'],
      ],
      [
        'WITH c AS (SELECT track_title_raw FROM analytics_full_view) SELECT count(*) FROM c',
        ['track_title_raw'],
      ],
      ['SELECT main.analytics_full_view.tm FROM memory.main.analytics_full_view', ['tm']],
      ["SELECT repeat('x', 10) FROM range(3)", ['organization_id']],
      [
        'SELECT isrc FROM analytics_full_view UNION ALL SELECT upc FROM analytics_full_view ORDER BY 1',
        ['isrc', 'upc'],
      ],
    ];
    for (const [sql, columns] of pruned) t.same(await needs(sql), columns, sql);
    const everything = [
      'SELECT * FROM analytics_full_view',
      "SELECT COLUMNS('^curr.*') FROM analytics_full_view",
      'SELECT a FROM analytics_full_view a',
      'SELECT to_json(analytics_full_view) FROM analytics_full_view',
      'SELECT #2 FROM analytics_full_view',
      'SELECT units FROM analytics_full_view ORDER BY #1',
      'SELECT count(*) FROM analytics_full_view a NATURAL JOIN analytics_full_view b',
      'SELECT count(*) FROM analytics_full_view AS t(a, b) WHERE b IS NOT NULL',
      "SELECT count(*) FROM information_schema.columns WHERE table_name = 'analytics_full_view'",
      "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'analytics_full_view'",
      "SELECT count(*) FROM duckdb_columns WHERE table_name = 'analytics_full_view'",
      'SELECT count(*) FROM pg_catalog.pg_attribute',
      "SELECT count(*) FROM pragma_table_info('analytics_full_view')",
      "SELECT count(*) FROM query_table('analytics_full_view')",
      "SELECT count(*) FROM query('SELECT track_title_raw FROM analytics_full_view')",
      'DESCRIBE analytics_full_view',
      'SUMMARIZE analytics_full_view',
      'SELECT count(*) FROM (SUMMARIZE analytics_full_view)',
      'SHOW analytics_full_view',
      "SELECT * FROM analytics_full_view PIVOT (sum(units) FOR currency IN ('USD'))",
      'SELECT count(*) FROM analytics_full_view UNPIVOT (v FOR k IN (isrc, upc))',
      'SELECT count(*) FROM (SELECT 1) WHERE EXISTS (SELECT * FROM analytics_full_view)',
      // a CTE hides a catalog view only where it is visible
      'SELECT (WITH duckdb_columns AS (SELECT 1 AS x) SELECT x FROM duckdb_columns), (SELECT count(*) FROM duckdb_columns)',
      // unknown tables (errors in the sandbox) load everything too
      'SELECT count(*) FROM facts',
    ];
    for (const sql of everything) t.same(await needs(sql), ALL, sql);
  },
);

// --- cube.sqlQuery: statements that use columns without naming them ----------------------------

t.test(
  'cube.sqlQuery answers constructs that use columns without naming them as over the whole table',
  async (t) => {
    const owner = await newOrganization(srv, 'Magnitudes SQL');
    const org = owner.organizationId;
    await seedDataset(srv, org);
    const rows = async (sql: string): Promise<unknown[][]> => {
      const res = await owner.client.mutate('cube.sqlQuery', { organizationId: org, sql });
      if (!res.ok) throw new Error(`${sql}: ${JSON.stringify(res.error)}`);
      return res.data.rows;
    };
    const width = String(ALL.length);
    t.equal(width, '71');
    t.equal((await rows('DESCRIBE analytics_full_view')).length, 71, 'DESCRIBE');
    // S1 has 4 rows, S2 2, S3 1: 16 + 4 + 1 pairs share a statement
    t.same(
      await rows(
        'SELECT count(*) FROM analytics_full_view a JOIN analytics_full_view b USING (statement_id)',
      ),
      [['21']],
      'JOIN ... USING',
    );
    t.same(
      await rows(
        'SELECT count(*) FROM analytics_full_view a JOIN analytics_full_view b ON a.statement_id = b.statement_id',
      ),
      [['21']],
      'JOIN ... ON',
    );
    // every row has NULL columns, and NULL never equals: a natural join on all 71 columns is empty
    t.same(
      await rows('SELECT count(*) FROM analytics_full_view a NATURAL JOIN analytics_full_view b'),
      [['0']],
      'NATURAL JOIN',
    );
    t.same(
      await rows(
        'SELECT count(*) FROM (SELECT * FROM analytics_full_view) a NATURAL JOIN (SELECT * FROM analytics_full_view) b',
      ),
      [['0']],
      'NATURAL JOIN of *',
    );
    t.same(
      await rows(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'analytics_full_view'",
      ),
      [[width]],
      'information_schema.columns',
    );
    t.same(
      await rows("SELECT count(*) FROM duckdb_columns() WHERE table_name = 'analytics_full_view'"),
      [[width]],
      'duckdb_columns()',
    );
    t.same(
      await rows("SELECT count(*) FROM pragma_table_info('analytics_full_view')"),
      [[width]],
      'pragma_table_info',
    );
    t.same(
      await rows('SELECT count(*) FROM (SUMMARIZE analytics_full_view)'),
      [[width]],
      'SUMMARIZE',
    );
    t.same(
      await rows(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'analytics_full_view' AND ordinal_position <= 3 ORDER BY ordinal_position",
      ),
      [['organization_id'], ['statement_id'], ['distributor_id']],
      'the first columns, in the view order',
    );
    const statementIds = await rows('SELECT statement_id FROM analytics_full_view ORDER BY 1');
    t.equal(statementIds.length, 7);
    t.same(
      await rows('SELECT #2 FROM analytics_full_view ORDER BY 1'),
      statementIds,
      'SELECT #2 is statement_id',
    );
    t.same(
      await rows('SELECT b FROM analytics_full_view AS t(a, b) ORDER BY 1'),
      statementIds,
      'column aliases by position',
    );
    t.same(
      await rows(
        "SELECT COLUMNS('^curr.*') FROM analytics_full_view WHERE track_title_raw = 'Golf'",
      ),
      [['GBP']],
      'COLUMNS(regex)',
    );
    t.same(
      await rows("SELECT count(*) FROM query_table('analytics_full_view')"),
      [['7']],
      'query_table',
    );
    // the ordinary case is still pruned, and answers the same
    t.same(
      await rows(
        "SELECT track_title_raw, units FROM analytics_full_view WHERE currency = 'USD' ORDER BY 1",
      ),
      [
        ['Echo', '1000.000000000000'],
        ['Foxtrot', '500.000000000000'],
      ],
    );
  },
);

// --- valuation measures at large magnitudes ----------------------------------------------------

t.test('valuation measures of labels with millions to 1e15 USD', async (t) => {
  const owner = await newOrganization(srv, 'Magnitudes Valuation');
  const org = owner.organizationId;
  const cube = async (query: Record<string, unknown>) => {
    const res: Outcome<any> = await owner.client.mutate('cube.query', {
      organizationId: org,
      query,
    });
    if (!res.ok) throw new Error(JSON.stringify(res.error));
    return res.data.data;
  };
  const catalog = async (rh: string, items: { isrc: string; title: string; release: string }[]) => {
    const b = await db.query<{ id: string }>(
      'INSERT INTO catalog_blocks (organization_id, rightsholder_id) VALUES ($1, $2) RETURNING id',
      [org, rh],
    );
    for (const it of items) {
      const md = await db.query<{ id: string }>(
        `INSERT INTO musical_details (organization_id, block_id, identity_key, isrc, title, state) VALUES ($1, $2, $3, $4, $5, 'found') RETURNING id`,
        [org, b.rows[0]!.id, `isrc:${it.isrc}`, it.isrc, it.title],
      );
      const p = await db.query<{ id: string }>(
        `INSERT INTO products (organization_id, block_id, kind, stable_key, title, release_date) VALUES ($1, $2, 'track', $3, $4, $5) RETURNING id`,
        [org, b.rows[0]!.id, `k-${it.isrc}`, it.title, it.release],
      );
      await db.query(
        'INSERT INTO product_musical_details (organization_id, product_id, musical_detail_id) VALUES ($1, $2, $3)',
        [org, p.rows[0]!.id, md.rows[0]!.id],
      );
    }
  };
  const byRh = (rh: string) => ({ member: m('rightsholder_id'), operator: 'equals', values: [rh] });
  const ltm = { member: m('tm'), operator: 'equals', values: ['01.LTM'] };
  const d = await seedDistributor(srv, org, 'Magnitude Dist');
  // every label's distributor has 2024M03 as its latest month (period end 2024-03-31)
  const current = async (rh: string, distributorId = d) =>
    seedStatement(srv, {
      organizationId: org,
      rightsholderId: rh,
      distributorId,
      stmt: { year: 2024, period: 3, cadence: 'M' },
      rows: [{ raw_title: 'Now', royalty_earnings: '1' }],
    });

  // 12 monthly LTM statements of 1,000,000 USD on a product 20 years old (7305 days / 365.25)
  const evergreen = await seedRightsholder(srv, org, 'Evergreen Label');
  await current(evergreen);
  for (let month = 3; month <= 14; month++) {
    const [year, period] = month <= 12 ? [2023, month] : [2024, month - 12];
    await seedStatement(srv, {
      organizationId: org,
      rightsholderId: evergreen,
      distributorId: d,
      stmt: { year, period, cadence: 'M' },
      rows: [{ raw_title: 'Evergreen', isrc: 'USCCC0400001', royalty_earnings: '1000000' }],
    });
  }
  await catalog(evergreen, [{ isrc: 'USCCC0400001', title: 'Evergreen', release: '2004-03-31' }]);

  // 3 rows of 30,000,000 USD on a product 4 years old
  const hit = await seedRightsholder(srv, org, 'Hit Label');
  const dHit = await seedDistributor(srv, org, 'Hit Dist');
  await current(hit, dHit);
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: hit,
    distributorId: dHit,
    stmt: { year: 2023, period: 6, cadence: 'M' },
    rows: Array.from({ length: 3 }, () => ({
      raw_title: 'Hit',
      isrc: 'USBBB2000001',
      royalty_earnings: '30000000',
    })),
  });
  await catalog(hit, [{ isrc: 'USBBB2000001', title: 'Hit', release: '2020-03-31' }]);

  // 1e15 USD in the LTM (2000 rows of 5e11: a row's exact USD amount, DECIMAL(38,26), stays
  // under 1e12) on a product 200 years old (73049 days: 199.9973), and 5e11 USD on a track of
  // unknown age
  const huge = await seedRightsholder(srv, org, 'Huge Label');
  const dHuge = await seedDistributor(srv, org, 'Huge Dist');
  await current(huge, dHuge);
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: huge,
    distributorId: dHuge,
    stmt: { year: 2023, period: 6, cadence: 'M' },
    rows: [
      ...Array.from({ length: 2000 }, () => ({
        raw_title: 'Anthem',
        isrc: 'USHHH2400001',
        royalty_earnings: '500000000000',
      })),
      { raw_title: 'Mystery', royalty_earnings: '500000000000' },
    ],
  });
  await catalog(huge, [{ isrc: 'USHHH2400001', title: 'Anthem', release: '1824-03-31' }]);

  // an ordinary label: the values are those of the exact arithmetic, to the 4th decimal
  const small = await seedRightsholder(srv, org, 'Small Label');
  const dSmall = await seedDistributor(srv, org, 'Small Dist');
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: small,
    distributorId: dSmall,
    stmt: { year: 2024, period: 3, cadence: 'M' },
    rows: [{ raw_title: 'Current', royalty_earnings: '30' }],
  });
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: small,
    distributorId: dSmall,
    stmt: { year: 2023, period: 6, cadence: 'M' },
    rows: [
      { raw_title: 'P1', isrc: 'USAAA2000001', royalty_earnings: '100' },
      { raw_title: 'P2', isrc: 'USAAA1600001', royalty_earnings: '50' },
      { raw_title: 'P3', isrc: 'USAAA1600002', royalty_earnings: '-10' },
      { raw_title: 'Unknown', royalty_earnings: '20' },
    ],
  });
  await catalog(small, [
    { isrc: 'USAAA2000001', title: 'P1', release: '2020-03-31' },
    { isrc: 'USAAA1600001', title: 'P2', release: '2016-03-31' },
    { isrc: 'USAAA1600002', title: 'P3', release: '2016-04-01' },
  ]);

  const pda = m('product_dollar_age');
  const pdap = m('product_dollar_age_percentage');
  const fetching = m('fetching_percentage');
  const usd = m('royalty_earnings_usd');

  t.same(
    await cube({ measures: [pda, usd], filters: [byRh(evergreen), ltm] }),
    [{ [pda]: '20', [usd]: '12000000' }],
    '12 M USD on a 20-year-old product',
  );
  t.same(
    await cube({ measures: [pda, pdap, fetching], filters: [byRh(evergreen)] }),
    [{ [pda]: '20', [pdap]: '100', [fetching]: '100' }],
    'all windows: 12,000,000 of 12,000,001 USD resolved (99.99999…)',
  );
  t.same(
    await cube({ measures: [pda, usd], filters: [byRh(hit), ltm] }),
    [{ [pda]: '4', [usd]: '90000000' }],
    '30 M USD rows on a 4-year-old product',
  );
  // 2000 × 5e11 at 199.9973 and 5e11 of unknown age: 2000 / 2001 of the USD has an age
  t.same(
    await cube({ measures: [pda, pdap, fetching], filters: [byRh(huge), ltm] }),
    [{ [pda]: '199.9973', [pdap]: '99.95', [fetching]: '99.95' }],
    '1e15 USD on a 200-year-old product',
  );
  t.same(
    await cube({
      measures: [pda, pdap, fetching],
      dimensions: [m('track_title_raw')],
      filters: [byRh(huge)],
      order: { [m('track_title_raw')]: 'asc' },
    }),
    [
      { [m('track_title_raw')]: 'Anthem', [pda]: '199.9973', [pdap]: '100', [fetching]: '100' },
      { [m('track_title_raw')]: 'Mystery', [pda]: null, [pdap]: '0', [fetching]: '0' },
      { [m('track_title_raw')]: 'Now', [pda]: null, [pdap]: '0', [fetching]: '0' },
    ],
    'by track',
  );
  t.same(
    await cube({
      measures: [pda, pdap, m('product_age_avg'), m('product_age_percentage'), fetching, usd],
      filters: [byRh(small)],
    }),
    [
      {
        [pda]: '5.3333',
        [pdap]: '88.2353',
        [m('product_age_avg')]: '6.6658',
        [m('product_age_percentage')]: '60',
        [fetching]: '73.6842',
        [usd]: '190',
      },
    ],
    'an ordinary label: (100 × 4 + 50 × 8) / 150, 150 / 170, 140 / 190',
  );
});

// --- the answer cache stays within its budget ---------------------------------------------------

t.test(
  'the answer cache counts answers at their size and stays within ANALYTICS_RESULT_CACHE_MB',
  async (t) => {
    const owner = await newOrganization(srv, 'Magnitudes Cache');
    const org = owner.organizationId;
    await seedDataset(srv, org);
    const engine = analyticsFor(srv.deps);
    const limit = CACHE_MB * 1_048_576;
    const sql = async (text: string) => {
      const res = await owner.client.mutate('cube.sqlQuery', { organizationId: org, sql: text });
      if (!res.ok) throw new Error(`${text}: ${JSON.stringify(res.error)}`);
      return res.data;
    };
    t.equal(engine.cacheStats().limitBytes, limit);
    const before = engine.cacheStats();
    // answers of ~40 MB (20,000 strings of 2,001 characters): each larger than the whole budget
    for (let i = 0; i < 5; i++) {
      const answer = await sql(`SELECT repeat('x', 2000) || ${i} AS s FROM range(20000)`);
      t.equal(answer.rows.length, 20000);
      t.ok(JSON.stringify(answer).length > limit, `answer ${i} is larger than the budget`);
    }
    t.same(engine.cacheStats(), before, 'none of them is kept, and nothing else is pushed out');

    // answers of ~6 MB (2,000 strings of 3,001 characters): two fit in 16 MB, three do not
    const sizes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await sql(`SELECT repeat('y', 3000) || ${i} AS s FROM range(2000)`);
      sizes.push(JSON.stringify(answer).length);
      const stats = engine.cacheStats();
      t.ok(
        stats.bytes <= limit,
        `after answer ${i}: ${stats.bytes} bytes counted, within ${limit}`,
      );
    }
    const after = engine.cacheStats();
    t.equal(after.entries, 2, 'the last two answers are kept, the oldest entries went out');
    // the counted size is at least the JSON text of what is kept, and that is within the budget
    t.ok(
      after.bytes >= sizes[1]! + sizes[2]!,
      `${after.bytes} bytes counted for ${sizes[1]! + sizes[2]!} bytes of JSON`,
    );
    t.ok(after.bytes <= limit);
    // a kept answer is served again without a change to the cache
    t.equal((await sql(`SELECT repeat('y', 3000) || 2 AS s FROM range(2000)`)).rows.length, 2000);
    t.same(engine.cacheStats(), after);
  },
);

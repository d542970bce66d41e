// cube.sqlQuery: the sandbox threat model (docs/analytics.md), each point tried with a hostile
// statement. The caller sees one table, analytics_full_view, holding only the rows they may see;
// everything else a statement could reach for is refused, and nothing one call does reaches the
// next.
import path from 'node:path';
import t, { type Test } from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, {
  env: {
    CUBE_SQL_TIMEOUT_MS: '1500',
    CUBE_SQL_MEMORY_MB: '128',
    CUBE_SQL_MAX_ROWS: '1000',
    CUBE_SQL_MAX_RESULT_MB: '1',
  },
});
const owner = await newOrganization(srv, 'Sandbox Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const other = await newOrganization(srv, 'Other Tenant');
await seedDataset(srv, other.organizationId, 'B ');
const analyticsDir = srv.config.analytics.dir;

async function sql(text: string, client = owner.client, organizationId = org) {
  return client.mutate('cube.sqlQuery', { organizationId, sql: text });
}

async function rows(
  text: string,
  client = owner.client,
  organizationId = org,
): Promise<unknown[][]> {
  const res = await sql(text, client, organizationId);
  if (!res.ok) throw new Error(`${text}: ${JSON.stringify(res.error)}`);
  return res.data.rows;
}

async function refused(t: Test, text: string, errorCode: string, message?: RegExp) {
  const res = await sql(text);
  t.equal(res.ok, false, text);
  if (res.ok) return;
  t.equal(res.error.data.errorCode, errorCode, text);
  if (message) t.match(res.error.message, message, text);
}

// the other tenant's database exists on disk: its first query builds it
t.equal(
  (
    await rows('SELECT count(*) FROM analytics_full_view', other.client, other.organizationId)
  )[0]![0],
  '7',
);
const otherFile = path.join(analyticsDir, other.organizationId, 'facts.duckdb');

t.test("one table, only the caller's rows, with the view's columns", async (t) => {
  const res = await sql(
    `SELECT track_title_raw, units, royalty_earnings_usd, sales_period_start, stmt_year FROM analytics_full_view WHERE track_title_raw = 'Alpha'`,
  );
  t.same(res.data, {
    schema: [
      { name: 'track_title_raw', column_type: 'VARCHAR' },
      { name: 'units', column_type: 'DECIMAL(38,12)' },
      { name: 'royalty_earnings_usd', column_type: 'DECIMAL(38,10)' },
      { name: 'sales_period_start', column_type: 'DATE' },
      { name: 'stmt_year', column_type: 'INTEGER' },
    ],
    rows: [['Alpha', '100.000000000000', '11.5500000000', '2024-03-01', 2024]],
  });
  t.same(await rows('SELECT DISTINCT organization_id FROM analytics_full_view'), [[org]]);
  t.same(await rows('SELECT count(*), count(DISTINCT statement_id) FROM analytics_full_view'), [
    ['7', '3'],
  ]);
  const all = await sql('SELECT * FROM analytics_full_view LIMIT 1');
  t.ok(all.data.schema.length > 60, 'every dimension and row measure');
  t.same(await rows('SELECT count(*) FROM (SELECT v FROM analytics_full_view v)'), [['7']]);
  t.same(await rows('SELECT 1 + 1'), [[2]]);
});

t.test("a restricted member's table holds only their rightsholders", async (t) => {
  const restricted = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, restricted.userId, [ds.rh2]],
  );
  t.same(
    await rows('SELECT DISTINCT rightsholder_id, tm FROM analytics_full_view', restricted.client),
    [[ds.rh2, '00.TM']],
  );
  t.same(
    await rows(
      `SELECT count(*) FROM analytics_full_view WHERE rightsholder_id = '${ds.rh1}'`,
      restricted.client,
    ),
    [['0']],
  );
});

t.test(
  "no other tables or views: not the analytics database's, not the catalog's secrets",
  async (t) => {
    for (const table of [
      'facts',
      'stmt',
      'fx',
      'loaded',
      'rollup_statement',
      'lk_source',
      'main.facts',
      `"${other.organizationId}".facts`,
    ]) {
      await refused(t, `SELECT * FROM ${table}`, 'SQL_QUERY_INVALID', /does not exist|not found/i);
    }
    await refused(
      t,
      "SELECT * FROM query('SELECT * FROM facts')",
      'SQL_QUERY_INVALID',
      /does not exist/,
    );
    t.same(await rows('SELECT table_name FROM duckdb_tables()'), [['analytics_full_view']]);
    t.same(await rows('SELECT database_name, path FROM duckdb_databases() ORDER BY 1'), [
      ['memory', null],
      ['system', null],
      ['temp', null],
    ]);
    t.same(await rows(`SELECT count(*) FROM duckdb_views() WHERE NOT internal`), [['0']]);
    t.same(await rows(`SELECT table_name FROM information_schema.tables`), [
      ['analytics_full_view'],
    ]);
    const settings = await rows(
      `SELECT name, value FROM duckdb_settings() WHERE value LIKE '%${path.basename(analyticsDir)}%' OR value LIKE '%${other.organizationId}%' OR value LIKE '%/tmp%'`,
    );
    t.same(settings, [], 'no setting names a path of the service or of a tenant');
    t.same(
      await rows(
        `SELECT current_setting('temp_directory'), current_setting('enable_external_access')`,
      ),
      [['', false]],
      'no temporary directory',
    );
  },
);

t.test(
  "no files: not the other tenant's database, not the service's, not the system's",
  async (t) => {
    for (const text of [
      `SELECT * FROM read_parquet('${otherFile}')`,
      `SELECT * FROM '${otherFile}'`,
      `SELECT * FROM read_text('${otherFile}')`,
      `SELECT * FROM read_blob('${otherFile}')`,
      `SELECT * FROM read_csv('/etc/passwd')`,
      `SELECT * FROM glob('${analyticsDir}/**')`,
      `SELECT * FROM glob('/tmp/*')`,
      `SELECT * FROM read_json_auto('${path.join(srv.config.dataDir, 's3')}/**')`,
      `SELECT * FROM parquet_metadata('${otherFile}')`,
      `SELECT * FROM sniff_csv('/etc/hosts')`,
    ]) {
      await refused(t, text, 'SQL_QUERY_INVALID', /Permission Error|disabled/i);
    }
  },
);

t.test('no network', async (t) => {
  const s3 = srv.config.s3!;
  for (const text of [
    `SELECT * FROM read_parquet('${s3.endpoint}/${s3.bucket}/orgs/${other.organizationId}/x.parquet')`,
    `SELECT * FROM read_csv('https://example.com/data.csv')`,
    `SELECT * FROM read_parquet('s3://${s3.bucket}/orgs/${other.organizationId}/x.parquet')`,
  ]) {
    await refused(t, text, 'SQL_QUERY_INVALID');
  }
});

t.test(
  'only one SELECT: no settings, extensions, ATTACH, COPY, macros, temporary objects or second statements',
  async (t) => {
    for (const text of [
      'SET threads = 8',
      'RESET lock_configuration',
      'SET enable_external_access = true',
      'SET VARIABLE leak = 1',
      'PRAGMA version',
      'INSTALL httpfs',
      'LOAD httpfs',
      `ATTACH '${otherFile}' AS stolen (READ_ONLY)`,
      "ATTACH ':memory:' AS scratch",
      "COPY analytics_full_view TO '/tmp/exfiltrated.csv'",
      "EXPORT DATABASE '/tmp/exfiltrated'",
      'CREATE MACRO leak() AS 42',
      'CREATE TEMP TABLE keep AS SELECT * FROM analytics_full_view',
      'CREATE VIEW keep AS SELECT 1',
      'DROP TABLE analytics_full_view',
      'DELETE FROM analytics_full_view',
      'UPDATE analytics_full_view SET units = 0',
      'SELECT 1; SELECT 2',
      'SELECT 1; DROP TABLE analytics_full_view',
      'EXPLAIN SELECT 1',
      'CALL pragma_version()',
      'CHECKPOINT',
    ]) {
      await refused(t, text, 'SQL_QUERY_NOT_SELECT');
    }
    await refused(t, 'SELEC 1', 'SQL_QUERY_INVALID', /syntax/i);
    // a PIVOT without its values would run a statement of its own first: refused, saying how to write it
    await refused(
      t,
      'PIVOT analytics_full_view ON tm USING sum(units)',
      'SQL_QUERY_NOT_SELECT',
      /a PIVOT must name the values it turns into columns/,
    );
    t.same(
      await rows(
        'SELECT rightsholder_id IS NOT NULL, "00.TM", "01.LTM" FROM (PIVOT analytics_full_view ON tm IN (\'00.TM\', \'01.LTM\') USING sum(units) GROUP BY rightsholder_id) ORDER BY 2 NULLS LAST',
      ),
      [
        [true, '1611.000000000000', null],
        [true, null, '7.000000000000'],
      ],
    );
  },
);

t.test('time is bounded: a runaway statement is interrupted', async (t) => {
  const started = Date.now();
  await refused(t, 'SELECT count(*) FROM range(1000000000000) a', 'SQL_QUERY_TIMEOUT');
  t.ok(Date.now() - started < 10_000, 'interrupted near its limit');
  // a recursive CTE that never ends: stopped by time, or by memory first on a fast machine
  const endless = await sql(
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
  );
  t.ok(
    !endless.ok &&
      ['SQL_QUERY_TIMEOUT', 'SQL_QUERY_RESOURCE_LIMIT'].includes(endless.error.data.errorCode),
    'an endless recursive CTE is stopped',
  );
  t.same(
    await rows(
      'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT count(*) FROM r',
    ),
    [['5']],
    'a finite one runs',
  );
});

t.test('memory is bounded, inside DuckDB and outside it', async (t) => {
  // a service of its own with time to spare, so that only the memory limit can stop these (on a
  // loaded machine the 1.5 s limit above could otherwise end them first)
  const roomy = await startTestHandler(t, {
    env: { CUBE_SQL_TIMEOUT_MS: '120000', CUBE_SQL_MEMORY_MB: '128', CUBE_SQL_MAX_ROWS: '1000' },
  });
  const tenant = await newOrganization(roomy, 'Roomy Org');
  await seedDataset(roomy, tenant.organizationId);
  const refusedThere = async (text: string, errorCode: string) => {
    const res = await tenant.client.mutate('cube.sqlQuery', {
      organizationId: tenant.organizationId,
      sql: text,
    });
    t.equal(res.ok, false, text);
    if (!res.ok) t.equal(res.error.data.errorCode, errorCode, text);
  };
  await refusedThere(
    "SELECT count(*) FROM (SELECT repeat('x', 1000) || range AS s FROM range(3000000) ORDER BY s)",
    'SQL_QUERY_RESOURCE_LIMIT',
  );
  await refusedThere(
    "SELECT max(length(repeat('x', 100000000 + range))) FROM range(40)",
    'SQL_QUERY_RESOURCE_LIMIT',
  );
  await refusedThere('SELECT * FROM range(5000)', 'SQL_QUERY_TOO_MANY_ROWS');
});

t.test('the size of a result is bounded, not only its rows', async (t) => {
  // 600 rows, under the 1,000 of CUBE_SQL_MAX_ROWS, of 2,000 characters: 1.2 MB against 1 MB
  await refused(
    t,
    "SELECT repeat('x', 2000) AS s FROM range(600)",
    'SQL_QUERY_TOO_MANY_ROWS',
    /larger than 1 MB/,
  );
  await refused(
    t,
    "SELECT [repeat('x', 2000) || range FOR range IN range(600)] AS s",
    'SQL_QUERY_TOO_MANY_ROWS',
    /larger than 1 MB/,
  );
  // counted as the JSON the caller receives: UTF-8 bytes and escapes, not characters
  await refused(
    t,
    'SELECT repeat(chr(1), 2000) AS s FROM range(100)',
    'SQL_QUERY_TOO_MANY_ROWS',
    /larger than 1 MB/,
  ); // 12,002 bytes a row: 1.2 MB
  await refused(
    t,
    "SELECT repeat('€', 2000) AS s FROM range(200)",
    'SQL_QUERY_TOO_MANY_ROWS',
    /larger than 1 MB/,
  ); // 6,002 bytes a row: 1.2 MB
  await refused(
    t,
    `SELECT repeat('"', 2000) AS s FROM range(300)`,
    'SQL_QUERY_TOO_MANY_ROWS',
    /larger than 1 MB/,
  ); // 4,002 bytes a row: 1.2 MB
  await refused(
    t,
    "SELECT {'é': repeat('é', 1000)} AS s FROM range(600)",
    'SQL_QUERY_TOO_MANY_ROWS',
    /larger than 1 MB/,
  ); // 2,010 bytes a row: 1.2 MB
  t.equal(
    (await rows("SELECT repeat('€', 2000) AS s FROM range(150)")).length,
    150,
    '0.9 MB of multi-byte text is answered',
  );
  const fits = await rows("SELECT repeat('x', 2000) AS s FROM range(400)");
  t.equal(fits.length, 400, '0.8 MB is answered');
  t.equal((fits[0]![0] as string).length, 2000);
});

t.test('nothing one call does reaches the next', async (t) => {
  await refused(t, 'CREATE MACRO units() AS 0', 'SQL_QUERY_NOT_SELECT');
  // a call that ran out of memory (or, on a loaded machine, of time first) leaves nothing behind
  const heavy = await sql("SELECT max(length(repeat('x', 100000000 + range))) FROM range(40)");
  t.ok(
    !heavy.ok &&
      ['SQL_QUERY_RESOURCE_LIMIT', 'SQL_QUERY_TIMEOUT'].includes(heavy.error.data.errorCode),
    'the heavy call is refused',
  );
  t.same(await rows('SELECT count(*), sum(units) FROM analytics_full_view'), [
    ['7', '1618.000000000000'],
  ]);
  t.same(await rows("SELECT getvariable('leak')"), [[null]]);
  t.same(
    await rows('SELECT count(*) FROM duckdb_functions() WHERE NOT internal'),
    [['0']],
    'no macro survived',
  );
});

t.test("the same statement from another tenant gets that tenant's answer", async (t) => {
  const text = 'SELECT rightsholder_id, sum(units) FROM analytics_full_view GROUP BY 1 ORDER BY 2';
  const mine = await rows(text);
  const theirs = await rows(text, other.client, other.organizationId);
  t.equal(mine.length, 2);
  t.equal(theirs.length, 2);
  t.notOk(
    theirs.some((r) => r[0] === ds.rh1 || r[0] === ds.rh2),
    'no rightsholder of ours in their answer',
  );
  t.match(await sql(text, owner.client, other.organizationId), {
    ok: false,
    error: { data: { errorCode: 'ORGANIZATION_MISMATCH' } },
  });
  t.match(
    await sql(
      text,
      owner.client.with({ 'x-organization-id': other.organizationId }),
      other.organizationId,
    ),
    {
      ok: false,
      error: { data: { code: 'FORBIDDEN', errorCode: 'API_KEY_SCOPE_DENIED' } },
    },
  );
});

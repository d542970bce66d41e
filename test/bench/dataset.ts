// The benches' PostgreSQL, and the analytics data set both bench:query and bench:export use: RIGHTSHOLDERS rightsholders ×
// MONTHS monthly statements, rows generated directly (one normalized Parquet file per statement in
// the layout of workers/normalize.ts) rather than ingested, put into the object store, and the
// processed statement rows with their exchange rates inserted into PostgreSQL, as ingestion
// leaves them.
import { chmod, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, listValue } from '@duckdb/node-api';
import { bootstrap } from '../../src/organizations/bootstrap.ts';
import type { Deps } from '../../src/deps.ts';

/**
 * The PostgreSQL server a bench uses: DATABASE_URL's when set, else an embedded one started under
 * `dir` for this run (never a test run's leftovers); `stop` stops only what it started.
 */
export async function benchPostgres(dir: string): Promise<{ stop(): Promise<void> }> {
  if (process.env.DATABASE_URL) return { stop: async () => {} };
  const { startEmbeddedPostgres } = await import('../../src/db/embedded.ts');
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres(path.join(dir, 'embedded'));
  process.env.DATABASE_URL = pg.url;
  return pg;
}

export const RIGHTSHOLDERS = 50;
export const MONTHS = 60;
export const TRACKS = 20_000;
export const STATEMENTS = RIGHTSHOLDERS * MONTHS;
export const FIRST_YEAR = 2021;

export interface BenchDataset {
  org: { organizationId: string; apiKey: string };
  organizationId: string;
  rhs: string[];
  distributors: string[];
  rowCount: number;
}

/** Builds the data set of about `rows` rows (a whole number of rows per statement) under `dir`. */
export async function seedBenchDataset(
  deps: Pick<Deps, 'pool' | 'store'>,
  dir: string,
  rows: number,
): Promise<BenchDataset> {
  const PER_STATEMENT = Math.ceil(rows / STATEMENTS);
  const { pool, store } = deps;
  const org = await bootstrap(pool, { email: 'bench@example.com', organizationName: 'Bench' });
  const organizationId = org.organizationId;
  const rhs = (
    await pool.query<{ id: string }>(
      `INSERT INTO rightsholders (organization_id, name) SELECT $1, 'Artist ' || i FROM generate_series(1, $2) i RETURNING id`,
      [organizationId, RIGHTSHOLDERS],
    )
  ).rows.map((r) => r.id);
  const distributors = (
    await pool.query<{ id: string }>(
      `INSERT INTO distributors (organization_id, name) SELECT $1, 'Distributor ' || i FROM generate_series(1, 5) i RETURNING id`,
      [organizationId],
    )
  ).rows.map((r) => r.id);
  const upload = (
    await pool.query<{ id: string }>(
      'INSERT INTO uploads (organization_id) VALUES ($1) RETURNING id',
      [organizationId],
    )
  ).rows[0]!.id;

  // --- generate the normalized rows, one Parquet file per statement ---------------------------
  let t0 = performance.now();
  const gen = await DuckDBInstance.create(':memory:', { memory_limit: '4GB', threads: '2' });
  const g = await gen.connect();
  await g.run(
    `CREATE TABLE rh AS SELECT id, CAST(row_number() OVER () - 1 AS INTEGER) AS i FROM (SELECT unnest($1::VARCHAR[]) AS id)`,
    [listValue(rhs)],
  );
  await g.run(`CREATE TABLE st AS SELECT uuid() AS statement_id, rh.id AS rightsholder_id, rh.i AS rh_index, m AS month, CAST(rh.i // 2 AS INTEGER) AS batch,
      ${FIRST_YEAR} + m // 12 AS stmt_year, m % 12 + 1 AS stmt_period,
      CASE rh.i % 5 WHEN 0 THEN 'EUR' WHEN 1 THEN 'GBP' ELSE 'USD' END AS currency, (rh.i + m) % 5 AS distributor_index
    FROM rh, range(${MONTHS}) AS months(m)`);
  const countries = `['US','GB','DE','FR','BR','JP','CA','AU','SE','MX','NL','ES','IT','PL','NO','DK','FI','IE','NZ','ZA']`;
  const sources = `['Spotify','Apple Music','YouTube','Amazon Music','Deezer','TikTok']`;
  const salesTypes = `['Streaming','Download','Stream','Streams']`;
  // written in batches of statements: a partitioned write keeps every open partition in memory
  const rowsOf = (where: string) => `SELECT
      CAST('${organizationId}' AS UUID) AS organization_id, CAST(st.statement_id AS UUID) AS statement_id, CAST(st.rightsholder_id AS UUID) AS rightsholder_id,
      CAST(r.i + 1 AS BIGINT) AS source_row, CAST(st.stmt_year AS INTEGER) AS stmt_year, CAST(st.stmt_period AS INTEGER) AS stmt_period, 'M' AS stmt_cadence,
      st.currency,
      CAST(((hash(st.statement_id, r.i) % 100000) / 1e7 + 0.00001) AS DECIMAL(38,12)) AS royalty_earnings,
      CAST(((hash(st.statement_id, r.i) % 100000) / 8e6 + 0.00001) AS DECIMAL(38,12)) AS gross_royalty_earnings,
      CAST(1 + hash(r.i, st.month) % 500 AS DECIMAL(38,12)) AS units,
      make_date(CAST(st.stmt_year AS BIGINT), CAST(st.stmt_period AS BIGINT), 1) AS sales_period_start,
      last_day(make_date(CAST(st.stmt_year AS BIGINT), CAST(st.stmt_period AS BIGINT), 1)) AS sales_period_end,
      ${salesTypes}[1 + r.i % 4] AS sales_type, NULL::VARCHAR AS sub_sales_type, ${sources}[1 + (r.i // 7) % 6] AS source, NULL::VARCHAR AS sub_source,
      ${countries}[1 + (r.i // 3) % 20] AS country_raw, ${countries}[1 + (r.i // 3) % 20] AS country, NULL::VARCHAR AS type_of_right,
      NULL::VARCHAR AS account_number, NULL::VARCHAR AS account_name, NULL::VARCHAR AS legal_vendor,
      NULL::DECIMAL(38,12) AS territory_deduction, NULL::DECIMAL(38,12) AS tax_deduction, NULL::DECIMAL(38,12) AS royalty_rate, NULL::VARCHAR AS other_adjustments,
      'Track ' || (st.rh_index * ${TRACKS / RIGHTSHOLDERS} + r.i % ${TRACKS / RIGHTSHOLDERS}) AS raw_title, 'Artist ' || (st.rh_index + 1) AS raw_artist,
      'Album ' || (st.rh_index * 40 + r.i % 40) AS raw_release_title, 'Artist ' || (st.rh_index + 1) AS raw_release_artist, NULL::VARCHAR AS composers,
      'USBEN' || lpad(CAST(st.rh_index * ${TRACKS / RIGHTSHOLDERS} + r.i % ${TRACKS / RIGHTSHOLDERS} AS VARCHAR), 7, '0') AS isrc_raw,
      'USBEN' || lpad(CAST(st.rh_index * ${TRACKS / RIGHTSHOLDERS} + r.i % ${TRACKS / RIGHTSHOLDERS} AS VARCHAR), 7, '0') AS isrc,
      NULL::VARCHAR AS upc_raw, NULL::VARCHAR AS upc, NULL::VARCHAR AS iswc, NULL::VARCHAR AS other_identifier, ${sources}[1 + (r.i // 7) % 6] AS payor
    FROM st, range(${PER_STATEMENT}) AS r(i) WHERE ${where}`;
  const parquetDir = path.join(dir, 'parquet');
  await mkdir(parquetDir, { recursive: true });
  const batches = Number((await g.runAndReadAll('SELECT max(batch) + 1 FROM st')).getRows()[0]![0]);
  for (let b = 0; b < batches; b++) {
    await g.run(
      `COPY (${rowsOf(`st.batch = ${b}`)} ORDER BY statement_id, source_row) TO '${path.join(parquetDir, `batch-${b}`)}' (FORMAT parquet, PARTITION_BY (statement_id), WRITE_PARTITION_COLUMNS true, COMPRESSION zstd)`,
    );
  }
  const statements = (
    await g.runAndReadAll(
      'SELECT statement_id, rightsholder_id, stmt_year, stmt_period, currency, distributor_index, batch FROM st',
    )
  ).getRows();
  const rowCount = STATEMENTS * PER_STATEMENT;
  g.closeSync();
  gen.closeSync();
  console.log(
    `generated ${rowCount} rows in ${STATEMENTS} statements: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // --- the statements, as ingestion leaves them ---------------------------------------------------
  t0 = performance.now();
  const queue = [...statements];
  const keys = new Map<string, string>();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let s = queue.shift(); s; s = queue.shift()) {
        const id = String(s[0]);
        const folder = path.join(parquetDir, `batch-${String(s[6])}`, `statement_id=${id}`);
        const [file] = await readdir(folder);
        const key = `orgs/${organizationId}/statements/${id}/normalized-1.parquet`;
        await store.put(
          key,
          await readFile(path.join(folder, file!)),
          'application/vnd.apache.parquet',
        );
        keys.set(id, key);
      }
    }),
  );
  await pool.query(
    `INSERT INTO statements (id, organization_id, upload_id, rightsholder_id, distributor_id, file_name, content_type, object_key, status,
       stmt_year, stmt_period, stmt_cadence, currency, normalized_key, normalized_version, row_count, kept_rows, removed_rows, processed_at)
     SELECT s.id, $1::uuid, $2, s.rh, s.d, 'statement-' || s.id || '.csv', 'text/csv', 'orgs/' || $1::text || '/statements/' || s.id || '/original', 'processed',
       s.y, s.p, 'M', s.c, s.k, 1, $3, $3, 0, now()
     FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::int[], $8::int[], $9::text[], $10::text[]) AS s(id, rh, d, y, p, c, k)`,
    [
      organizationId,
      upload,
      PER_STATEMENT,
      statements.map((s) => String(s[0])),
      statements.map((s) => String(s[1])),
      statements.map((s) => distributors[Number(s[5])]!),
      statements.map((s) => Number(s[2])),
      statements.map((s) => Number(s[3])),
      statements.map((s) => String(s[4])),
      statements.map((s) => keys.get(String(s[0]))!),
    ],
  );
  await pool.query(
    `INSERT INTO statement_fx (statement_id, currency, rate, rate_date)
     SELECT id, currency, CASE currency WHEN 'EUR' THEN 1.0828 WHEN 'GBP' THEN 1.2832424745200284 ELSE 1 END, make_date(stmt_year, stmt_period, 1)
     FROM statements WHERE organization_id = $1`,
    [organizationId],
  );
  await rm(parquetDir, { recursive: true, force: true });
  console.log(`stored ${STATEMENTS} statements: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return { org, organizationId, rhs, distributors, rowCount };
}

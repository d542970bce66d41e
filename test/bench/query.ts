// npm run bench:query [-- --rows 10000000 --runs 40]
// Analytics query latency: a fixed set of typical questions asked through HTTP cube.query, and the
// same questions as hand-written DuckDB SQL over the same per-organization database, in one run.
//
// The data set is generated directly, not ingested: normalized Parquet files in the layout of
// workers/normalize.ts (one per statement, written by DuckDB) put into the object store, and the
// processed statement rows and their exchange rates inserted into PostgreSQL, exactly as
// ingestion leaves them. 50 rightsholders x 60 monthly statements (5 years), 20,000 tracks.
// The first query builds the organization's analytics database from them (timed and reported).
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createTestDatabase } from '../helpers/db.ts';
import { loadConfig } from '../../src/config.ts';
import { startRuntime } from '../../src/runtime.ts';
import { startEmbeddedS3 } from '../../src/storage/embedded.ts';
import { analyticsFor } from '../../src/analytics/engine.ts';
import { compileQuery } from '../../src/analytics/compile.ts';
import { cubeQuerySchema, normalizeQuery } from '../../src/analytics/query.ts';
import {
  FIRST_YEAR,
  MONTHS,
  RIGHTSHOLDERS,
  STATEMENTS,
  benchPostgres,
  seedBenchDataset,
} from './dataset.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '40' },
  },
});
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);

const V = (n: string) => `analytics_full_view.${n}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-bench-query-'));
  const postgres = await benchPostgres(dir);
  const db = await createTestDatabase();
  const s3 = await startEmbeddedS3(path.join(dir, 's3'), 'bench');
  const config = loadConfig({
    DATABASE_URL: db.url,
    S3_ENDPOINT: s3.settings.endpoint,
    S3_BUCKET: 'bench',
    S3_ACCESS_KEY_ID: s3.settings.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.settings.secretAccessKey,
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
    PORT: '0',
    DEMO_BOOTSTRAP: 'false',
    ANALYTICS_MEMORY_MB: '4096',
    CUBE_SYNC_TIMEOUT_MS: '600000',
    // the benchmark's one caller asks thousands of questions a minute: no rate limit
    RATE_LIMIT_CUBE: '0',
    RATE_LIMIT_SQL: '0',
  });
  const runtime = await startRuntime(config, 'api');
  try {
    const { org, organizationId, rhs, rowCount } = await seedBenchDataset(runtime.deps, dir, ROWS);
    let t0 = performance.now();

    // --- the questions ----------------------------------------------------------------------------
    const url = runtime.url!;
    const headers = {
      'content-type': 'application/json',
      'x-api-key': org.apiKey,
      'x-organization-id': organizationId,
    };
    // node:http with a keep-alive agent rather than fetch: undici's fetch adds about 0.6 ms of its
    // own to every call on this machine type, which is the client's cost, not the service's
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const call = (pathname: string, payload?: object) =>
      new Promise<string>((resolve, reject) => {
        const text = payload === undefined ? '' : JSON.stringify(payload);
        const method = payload === undefined ? 'GET' : 'POST';
        const req = http.request(
          `${url}${pathname}`,
          { method, agent, headers: { ...headers, 'content-length': Buffer.byteLength(text) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(text);
      });
    const cube = async (query: object, usePreagg = false) => {
      const body = JSON.parse(
        await call('/trpc/cube.query', { organizationId, query, usePreagg }),
      ) as { result?: { data: { data: Record<string, string | null>[] } }; error?: unknown };
      if (!body.result) throw new Error(JSON.stringify(body.error));
      return body.result.data.data;
    };
    const lastYear = FIRST_YEAR + MONTHS / 12 - 1;
    const rh = (i: number) => rhs[i % RIGHTSHOLDERS]!;
    const filter = (i: number) => [
      { member: V('rightsholder_id'), operator: 'equals', values: [rh(i)] },
    ];
    // the USD the view answers: the rate to 18 decimals, in the analytics database's two parts (rate
    // to 14, rate_lo the next four × 10^14), the small part rounded once after summing
    const usd = 'f.royalty_earnings * fx.rate';
    const usdLo = 'f.royalty_earnings * fx.rate_lo';
    const sumUsd = `(sum(${usd}) + CAST(sum(${usdLo}) AS DECIMAL(38,12)) * 0.00000000000001)`;
    const fxJoin = 'LEFT JOIN fx ON fx.statement_id = f.statement_id AND fx.currency = f.currency';
    const questions: { name: string; cube: (i: number) => object; sql: (i: number) => string }[] = [
      {
        name: 'total for one rightsholder',
        cube: (i) => ({ measures: [V('royalty_earnings_usd')], filters: filter(i) }),
        sql: (i) => `SELECT ${sumUsd} FROM facts f ${fxJoin} WHERE f.rightsholder_id = '${rh(i)}'`,
      },
      {
        name: 'top 10 products',
        cube: (i) => ({
          measures: [V('royalty_earnings_usd')],
          dimensions: [V('product_title'), V('product_artist')],
          filters: filter(i),
          limit: 10,
        }),
        sql: (i) =>
          `SELECT f.raw_title, f.raw_artist, ${sumUsd} AS usd FROM facts f ${fxJoin} WHERE f.rightsholder_id = '${rh(i)}' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 10`,
      },
      {
        name: '24-month series by source',
        cube: (i) => ({
          measures: [V('royalty_earnings_usd')],
          dimensions: [V('source')],
          timeDimensions: [
            {
              dimension: V('sales_period_start'),
              granularity: 'month',
              dateRange: [`${lastYear - 1}-01-01`, `${lastYear}-12-31`],
            },
          ],
          filters: filter(i),
        }),
        sql: (
          i,
        ) => `SELECT date_trunc('month', f.sales_period_start) AS m, coalesce(so.collection_source, so.publisher_source, so.earnings_source) AS source, ${sumUsd}
          FROM facts f ${fxJoin} LEFT JOIN lk_source so ON so.raw = f.source
          WHERE f.rightsholder_id = '${rh(i)}' AND f.sales_period_start BETWEEN DATE '${lastYear - 1}-01-01' AND DATE '${lastYear}-12-31'
          GROUP BY 1, 2 ORDER BY 1, 2`,
      },
      {
        name: 'LTM by territory',
        cube: (i) => ({
          measures: [V('royalty_earnings_usd')],
          dimensions: [V('territory')],
          filters: [...filter(i), { member: V('tm'), operator: 'equals', values: ['01.LTM'] }],
        }),
        sql: (
          i,
        ) => `WITH latest AS (SELECT s.distributor_id, max(sm.month_index) AS month_index FROM statement_months sm JOIN stmt s USING (statement_id)
            WHERE sm.rightsholder_id = '${rh(i)}' GROUP BY 1)
          SELECT f.country, ${sumUsd} AS usd FROM facts f ${fxJoin} JOIN stmt s ON s.statement_id = f.statement_id JOIN latest l ON l.distributor_id = s.distributor_id
          WHERE f.rightsholder_id = '${rh(i)}' AND l.month_index - f.month_index BETWEEN 1 AND 12 GROUP BY 1 ORDER BY 2 DESC`,
      },
      {
        name: 'distinct statements',
        cube: (i) => ({
          measures: [V('statement_count')],
          dimensions: [V('distributor_name')],
          filters: filter(i),
        }),
        sql: (
          i,
        ) => `SELECT d.name, count(DISTINCT f.statement_id) FROM facts f JOIN stmt s ON s.statement_id = f.statement_id JOIN distributor d ON d.id = s.distributor_id
          WHERE f.rightsholder_id = '${rh(i)}' GROUP BY 1 ORDER BY 2 DESC`,
      },
    ];

    t0 = performance.now();
    await cube(questions[0]!.cube(0));
    console.log(
      `first query (builds the analytics database from ${STATEMENTS} Parquet objects): ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const facts = analyticsFor(runtime.deps).facts(organizationId);
    const hand = async (sql: string) =>
      facts.withConnection(async (c) => (await c.runAndReadAll(sql)).getRows());
    const results: {
      name: string;
      cube: number[];
      preagg: number[];
      sql: number[];
      compiled: number[];
      rows: number;
    }[] = [];
    // the SQL cube.query runs, as its compiler writes it, run in process like the hand-written SQL:
    // the difference to cube.query is the service around the query, to the hand-written SQL the compiler's
    const compiled = (query: object) =>
      compileQuery(
        normalizeQuery(cubeQuerySchema.parse(query), organizationId, Date.now()),
        { organizationId, rightsholderIds: null },
        { usePreagg: false, inline: true },
      ).sql;
    // every rightsholder's data is read once by each question before anything is timed, so that
    // no variant pays for first reading blocks into DuckDB's buffer pool; and the variants take
    // turns at going first
    for (const q of questions) for (let i = 0; i < RIGHTSHOLDERS; i++) await hand(q.sql(i));
    for (const q of questions) {
      const timings = {
        cube: [] as number[],
        preagg: [] as number[],
        sql: [] as number[],
        compiled: [] as number[],
      };
      let rows = 0;
      // a different rightsholder each run: every cube query misses the result cache
      for (let i = 0; i < RUNS + 3; i++) {
        let data: unknown[] = [];
        let handRows: unknown[] = [];
        const ms = { cube: 0, preagg: 0, sql: 0, compiled: 0 };
        const variants = [
          async () => {
            const start = performance.now();
            data = await cube(q.cube(i));
            ms.cube = performance.now() - start;
          },
          async () => {
            const start = performance.now();
            await cube(q.cube(i), true);
            ms.preagg = performance.now() - start;
          },
          async () => {
            const start = performance.now();
            handRows = await hand(q.sql(i));
            ms.sql = performance.now() - start;
          },
          async () => {
            const sql = compiled(q.cube(i));
            const start = performance.now();
            await hand(sql);
            ms.compiled = performance.now() - start;
          },
        ];
        for (let k = 0; k < variants.length; k++) await variants[(i + k) % variants.length]!();
        if (data.length !== handRows.length)
          throw new Error(
            `${q.name}: cube.query gave ${data.length} rows, the SQL ${handRows.length}`,
          );
        rows = data.length;
        if (i < 3) continue;
        timings.cube.push(ms.cube);
        timings.preagg.push(ms.preagg);
        timings.sql.push(ms.sql);
        timings.compiled.push(ms.compiled);
      }
      results.push({ name: q.name, rows, ...timings });
    }

    // the floor under every cube.query: an HTTP round trip with authentication and the role check
    const floor: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await call(`/trpc/cube.meta?input=${encodeURIComponent(JSON.stringify({ organizationId }))}`);
      floor.push(performance.now() - start);
    }
    agent.destroy();
    floor.sort((x, y) => x - y);

    console.log(
      `\n${rowCount.toLocaleString('en-US')} rows, ${RIGHTSHOLDERS} rightsholders, ${STATEMENTS} statements, ${RUNS} runs per query (ms)\n`,
    );
    console.log(
      `floor (cube.meta over HTTP: authentication, role check, no analytics): p50 ${percentile(floor, 50).toFixed(1)} ms, p95 ${percentile(floor, 95).toFixed(1)} ms\n`,
    );
    console.log(
      "| query | rows | cube.query p50 | p95 | usePreagg p50 | p95 | hand-written SQL p50 | p95 | cube.query's SQL in process p50 | ratio p50 (cube / SQL) |",
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      const s = (a: number[]) => [...a].sort((x, y) => x - y);
      const [c, p, h, k] = [s(r.cube), s(r.preagg), s(r.sql), s(r.compiled)];
      const f = (n: number) => n.toFixed(1);
      console.log(
        `| ${r.name} | ${r.rows} | ${f(percentile(c, 50))} | ${f(percentile(c, 95))} | ${f(percentile(p, 50))} | ${f(percentile(p, 95))} | ${f(percentile(h, 50))} | ${f(percentile(h, 95))} | ${f(percentile(k, 50))} | ${(percentile(c, 50) / percentile(h, 50)).toFixed(2)} |`,
      );
    }
  } finally {
    await runtime.stop();
    await s3.stop();
    await db.drop();
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

// npm run bench:small [-- --single 10 --burst 40 --reprocess 200]
// The fixed cost of a small statement (fixtures/statements/believe.csv, 30 rows, a distinct copy
// per statement), end to end in a worker process (object in the store → statement processed):
//   single    — one statement at a time, `complete` → `processed`, p50 of --single runs, against the
//               irreducible work measured in the same run (the yardstick: DuckDB reads the same CSV
//               and writes Parquet in this process, plus 5 PostgreSQL round trips);
//   burst     — --burst statements completed at once: statements/s until the last is processed;
//   reprocess — the admin command's queueing of every statement so far (--reprocess at most),
//               followed to the end: statements/s.
// The catalog block refreshes a burst sets off are counted: coalesced, one per rightsholder per
// burst. Like bench:ingest, the worker runs in a child process and the object store in this one.
// BENCH_LOG_LEVEL=info prints the child's log; the stage timings of the single runs are always shown.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { benchPostgres } from './dataset.ts';
import type { S3Settings } from '../../src/config.ts';
import { runChildWithStore } from './child.ts';

const { values } = parseArgs({
  options: {
    single: { type: 'string', default: '10' },
    burst: { type: 'string', default: '40' },
    reprocess: { type: 'string', default: '200' },
    child: { type: 'boolean', default: false },
    s3: { type: 'string' },
    dir: { type: 'string' },
  },
});

const FIXTURE = new URL('../../fixtures/statements/believe.csv', import.meta.url).pathname;

/** The fixture with the first data row's quantity made unique: other bytes, the same rows otherwise. */
function copyOf(source: string, n: number): string {
  return source.replace(/;Stream;7522;/, `;Stream;${7522 + n};`);
}

const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** DuckDB reads the CSV and writes Parquet in this process, and 5 PostgreSQL round trips: p50 of `runs`. */
async function yardstick(
  file: string,
  dir: string,
  databaseUrl: string,
  runs: number,
): Promise<number> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await c.run(
        `COPY (SELECT * FROM read_csv('${file}', delim=';', header=true)) TO '${path.join(dir, `yardstick-${i}.parquet`)}' (FORMAT parquet)`,
      );
      for (let q = 0; q < 5; q++) await client.query('SELECT 1');
      times.push(performance.now() - start);
    }
  } finally {
    await client.end();
    c.closeSync();
    db.closeSync();
  }
  return p50(times);
}

interface ChildResult {
  singleMs: number[];
  burst: { statements: number; ms: number };
  reprocess: { statements: number; ms: number };
}

async function child(): Promise<void> {
  const { createTestDatabase } = await import('../helpers/db.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { startRuntime } = await import('../../src/runtime.ts');
  const { bootstrap } = await import('../../src/organizations/bootstrap.ts');
  const { enqueueStatementIngest } = await import('../../src/ingest/queue.ts');
  const { queueReprocess, followReprocess } = await import('../../src/cli/reprocess.ts');
  const dir = values.dir!;
  const db = await createTestDatabase();
  const s3 = JSON.parse(values.s3!) as S3Settings;
  const config = loadConfig({
    DATABASE_URL: db.url,
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: 'bench',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    // the job's stage timings are logged at info: the parent reads them
    LOG_LEVEL: 'info',
    DATA_DIR: dir,
  });
  const runtime = await startRuntime(config, 'worker');
  const source = await readFile(FIXTURE, 'utf8');
  let copies = 0;
  try {
    const { pool, store } = runtime.deps;
    const org = await bootstrap(pool, { email: 'bench@example.com', organizationName: 'Bench' });
    const rh = await pool.query<{ id: string }>(
      `INSERT INTO rightsholders (organization_id, name) VALUES ($1, 'Bench Artist') RETURNING id`,
      [org.organizationId],
    );
    const up = await pool.query<{ id: string }>(
      'INSERT INTO uploads (organization_id) VALUES ($1) RETURNING id',
      [org.organizationId],
    );
    /** a statement stored and made, waiting (uploaded) for its job */
    const stored = async (): Promise<string> => {
      const n = copies++;
      const key = `orgs/${org.organizationId}/statements/bench/original/believe-${n}.csv`;
      await store.put(key, Buffer.from(copyOf(source, n)), 'text/csv');
      const s = await pool.query<{ id: string }>(
        `INSERT INTO statements (organization_id, upload_id, rightsholder_id, file_name, content_type, object_key, status)
         VALUES ($1, $2, $3, $4, 'text/csv', $5, 'uploaded') RETURNING id`,
        [org.organizationId, up.rows[0]!.id, rh.rows[0]!.id, `believe-${n}.csv`, key],
      );
      return s.rows[0]!.id;
    };
    /** resolves when none of the statements waits or runs; fails on one that did not end processed */
    const settled = async (ids: string[]): Promise<void> => {
      for (;;) {
        const r = await pool.query<{ status: string; n: number; reason: string | null }>(
          'SELECT status, count(*)::int AS n, min(failure_reason) AS reason FROM statements WHERE id = ANY ($1) GROUP BY status',
          [ids],
        );
        const bad = r.rows.find(
          (row) => !['processed', 'uploaded', 'processing'].includes(row.status),
        );
        if (bad) throw new Error(`statement ${bad.status}: ${bad.reason}`);
        if (r.rows.every((row) => row.status === 'processed')) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    /** until no job is waiting or running (the follow-ups of what was processed) */
    const quiet = async (): Promise<void> => {
      for (;;) {
        const r = await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE (run_at <= now() + interval '10 seconds' AND attempts < max_attempts) OR locked_at IS NOT NULL`,
        );
        if (r.rows[0]!.n === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    // warm: a statement processed before, and its follow-ups done
    const warm = await stored();
    await enqueueStatementIngest(runtime.deps, org.organizationId, [warm], 'bench');
    await settled([warm]);
    await quiet();
    const singleMs: number[] = [];
    for (let i = 0; i < Number(values.single); i++) {
      const id = await stored();
      const start = performance.now();
      await enqueueStatementIngest(runtime.deps, org.organizationId, [id], 'complete');
      await settled([id]);
      singleMs.push(performance.now() - start);
    }
    await quiet();
    // a burst: every statement stored first, then all completed at once
    const ids: string[] = [];
    for (let i = 0; i < Number(values.burst); i++) ids.push(await stored());
    // the log between these lines is the burst's (its block refreshes are counted there)
    process.stdout.write('BENCH-BURST start\n');
    const burstStart = performance.now();
    await enqueueStatementIngest(runtime.deps, org.organizationId, ids, 'complete');
    await settled(ids);
    const burstMs = performance.now() - burstStart;
    await quiet();
    process.stdout.write('BENCH-BURST end\n');
    // reprocess every statement so far
    const reprocessStart = performance.now();
    const queued = await queueReprocess(runtime.deps, {
      organizationId: org.organizationId,
      statuses: ['processed'],
    });
    const chosen = queued.slice(0, Number(values.reprocess));
    await followReprocess(pool, chosen, { intervalMs: 20, draw: false });
    await settled(queued);
    const reprocessMs = performance.now() - reprocessStart;
    const result: ChildResult = {
      singleMs,
      burst: { statements: ids.length, ms: burstMs },
      reprocess: { statements: queued.length, ms: reprocessMs },
    };
    process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
  } finally {
    await runtime.stop();
    await db.drop();
  }
}

/** The stage timings the job logged for the single runs (`statement ID (complete): processed {...} ms`), p50 per stage. */
function stageTimings(log: string, runs: number): Record<string, number> {
  const laps = log
    .split('\n')
    // (the log line is JSON: the timings are in its message, quoted)
    .map((line) => /\(complete\): processed (\{[^}]*\}) ms/.exec(line.replace(/\\"/g, '"'))?.[1])
    .filter((json): json is string => json !== undefined)
    .slice(0, runs)
    .map((json) => JSON.parse(json) as Record<string, number>);
  const stages = [...new Set(laps.flatMap((l) => Object.keys(l)))];
  return Object.fromEntries(stages.map((s) => [s, Math.round(p50(laps.map((l) => l[s] ?? 0)))]));
}

/** The block refreshes logged between the burst's markers (`block ID (reason): N musical details ...`). */
function burstRefreshes(log: string): number {
  const burst = log.split('BENCH-BURST start')[1]?.split('BENCH-BURST end')[0] ?? '';
  return burst
    .split('\n')
    .filter((line) => /block [0-9a-f-]+ \([^)]*\): \d+ musical details/.test(line)).length;
}

async function main(): Promise<void> {
  if (values.child) return child();
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-bench-small-'));
  const embedded = await benchPostgres(dir);
  try {
    const file = path.join(dir, 'believe.csv');
    await writeFile(file, copyOf(await readFile(FIXTURE, 'utf8'), 0));
    const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const yardstickBefore = await yardstick(file, dir, databaseUrl, Number(values.single));
    const run = await runChildWithStore(import.meta.url, path.join(dir, 's3'), [
      '--child',
      '--dir',
      dir,
    ]);
    const yardstickAfter = await yardstick(file, dir, databaseUrl, Number(values.single));
    if (process.env.BENCH_LOG_LEVEL) process.stderr.write(run.stderr + run.stdout);
    const line = run.stdout.split('\n').find((l) => l.startsWith('BENCH '));
    if (run.status !== 0 || !line)
      throw new Error(`the bench's worker failed:\n${run.stderr}\n${run.stdout.slice(-5000)}`);
    const r = JSON.parse(line.slice('BENCH '.length)) as ChildResult;
    const single = p50(r.singleMs);
    const yard = (yardstickBefore + yardstickAfter) / 2;
    console.table({
      'one statement, complete → processed (p50)': {
        value: `${single.toFixed(0)} ms`,
        note: `${Math.min(...r.singleMs).toFixed(0)}–${Math.max(...r.singleMs).toFixed(0)} ms over ${r.singleMs.length}`,
      },
      'yardstick: DuckDB CSV → Parquet + 5 round trips (p50)': {
        value: `${yard.toFixed(1)} ms`,
        note: `before ${yardstickBefore.toFixed(1)}, after ${yardstickAfter.toFixed(1)}`,
      },
      'one statement / yardstick': {
        value: `${(single / yard).toFixed(1)}x`,
        note: 'goal: within 5x',
      },
      [`${r.burst.statements} statements completed at once`]: {
        value: `${(r.burst.statements / (r.burst.ms / 1000)).toFixed(1)} statements/s`,
        note: `${(r.burst.ms / 1000).toFixed(2)} s`,
      },
      'catalog block refreshes of the burst': {
        value: String(burstRefreshes(run.stdout)),
        note: 'one rightsholder: coalesced, 1',
      },
      [`reprocess of ${r.reprocess.statements} statements`]: {
        value: `${(r.reprocess.statements / (r.reprocess.ms / 1000)).toFixed(1)} statements/s`,
        note: `${(r.reprocess.ms / 1000).toFixed(2)} s`,
      },
    });
    console.log(
      'stages of one statement (p50, ms):',
      JSON.stringify(stageTimings(run.stdout, r.singleMs.length)),
    );
    console.log(
      `node ${process.version}, ${execFileSync('nproc').toString().trim()} cores, load average ${execFileSync('cat', ['/proc/loadavg']).toString().split(' ').slice(0, 3).join(' ')}`,
    );
  } finally {
    await embedded.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

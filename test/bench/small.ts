// npm run bench:small [-- --single 10 --burst 40 --reprocess 1000 --workers 2 --source]
// The worker runs compiled, as `npm run worker` runs it (the service built when stale, this
// script bundled into dist/bench/); --source runs it from the TypeScript source through tsx.
// The fixed cost of a small statement (fixtures/statements/believe.csv, 30 rows, a distinct copy
// per statement), end to end in a worker process (object in the store → statement processed):
//   single    — one statement at a time, `complete` → `processed`, p50 of --single runs, against the
//               irreducible work measured in the same run (the yardstick: DuckDB reads the same CSV
//               and writes Parquet in this process, plus 5 PostgreSQL round trips);
//   burst     — --burst statements completed at once: statements/s until the last is processed;
//   reprocess — the admin command's queueing of every statement so far (with --reprocess N, more
//               are made and processed first, unmeasured, when fewer than N were made),
//               followed to the end: statements/s, and what its progress line said at a quarter,
//               half and three quarters of the way (rate, time left) against what followed.
// --workers N runs N worker processes against the database (the first also drives the bench);
// the organization's cap (INGEST_ORG_CONCURRENCY) is then set from their slots together, as
// docs/configuration.md says. WORKER_CONCURRENCY, INGEST_ORG_CONCURRENCY and THREADS_MAX in the
// environment are passed to every worker process.
// The catalog block refreshes a burst sets off are counted: coalesced, one per rightsholder per
// burst. Like bench:ingest, the worker runs in a child process and the object store in this one.
// BENCH_LOG_LEVEL=info prints the child's log; the stage timings of the single runs are always shown.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
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
    reprocess: { type: 'string', default: '0' },
    workers: { type: 'string', default: '1' },
    child: { type: 'boolean', default: false },
    // the worker from the TypeScript source through tsx, not compiled as `npm run worker` runs it
    source: { type: 'boolean', default: false },
    'worker-only': { type: 'boolean', default: false },
    'database-url': { type: 'string' },
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

interface Pace {
  /** how far the reprocess was (a quarter, half, three quarters) */
  at: string;
  /** what the progress line said then: `  21/s, 28 s left` */
  said: string;
  /** the seconds the reprocess actually took from then on */
  actualLeftS: number;
}

interface ChildResult {
  singleMs: number[];
  burst: { statements: number; ms: number; cpuMs: number };
  reprocess: { statements: number; ms: number; cpuMs: number; paces: Pace[] };
  workers: number;
}

/** The worker settings of every worker process: the defaults, unless the environment names them. */
function workerEnv(workers: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['WORKER_CONCURRENCY', 'INGEST_ORG_CONCURRENCY', 'THREADS_MAX'])
    if (process.env[name]) env[name] = process.env[name]!;
  // the organization's cap holds across processes: with several, it is their slots together
  if (workers > 1 && !env.INGEST_ORG_CONCURRENCY) {
    const { loadConfig } = configModule!;
    const one = loadConfig({ ...env, DATABASE_URL: 'postgres://x@localhost/x' });
    env.INGEST_ORG_CONCURRENCY = String(one.ingest.orgConcurrency * workers);
  }
  return env;
}

let configModule: typeof import('../../src/config.ts') | undefined;

/** The config of a worker process of the bench, against `databaseUrl`. */
async function benchConfig(databaseUrl: string) {
  configModule ??= await import('../../src/config.ts');
  const s3 = JSON.parse(values.s3!) as S3Settings;
  return configModule.loadConfig({
    ...workerEnv(Number(values.workers)),
    DATABASE_URL: databaseUrl,
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: 'bench',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    // the job's stage timings are logged at info: the parent reads them
    LOG_LEVEL: 'info',
    DATA_DIR: values.dir!,
  });
}

/** --worker-only: a worker process and nothing else, until SIGTERM. */
async function workerOnly(): Promise<void> {
  const { startRuntime } = await import('../../src/runtime.ts');
  const runtime = await startRuntime(await benchConfig(values['database-url']!), 'worker');
  process.stdout.write('BENCH-WORKER ready\n');
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await runtime.stop();
  process.exit(0);
}

/** `count` more worker processes against the database, their log into this one's; stop() ends them. */
async function moreWorkers(count: number, databaseUrl: string) {
  // as this process runs: compiled, or through tsx (its --import)
  const children = Array.from({ length: count }, () =>
    spawn(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1]!,
        '--worker-only',
        '--database-url',
        databaseUrl,
        '--dir',
        values.dir!,
        '--s3',
        values.s3!,
        '--workers',
        values.workers!,
      ],
      { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] },
    ),
  );
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve, reject) => {
          c.on('exit', (code) => reject(new Error(`a worker process ended (${code})`)));
          createInterface({ input: c.stdout }).on('line', (line) => {
            if (line === 'BENCH-WORKER ready') resolve();
            else process.stdout.write(`${line}\n`);
          });
        }),
    ),
  );
  return {
    async stop() {
      await Promise.all(
        children.map((c) => {
          c.removeAllListeners('exit');
          const ended = new Promise((resolve) => c.once('exit', resolve));
          c.kill('SIGTERM');
          return ended;
        }),
      );
    },
  };
}

type Runtime = Awaited<ReturnType<typeof import('../../src/runtime.ts').startRuntime>>;

/** The bench's organization and rightsholder, and how a statement is made and followed. */
async function benchSetup(runtime: Runtime) {
  const { benchOrg } = await import('./benchOrg.ts');
  const source = await readFile(FIXTURE, 'utf8');
  let copies = 0;
  const org = await benchOrg(runtime.deps);
  /** a statement stored and made, waiting (uploaded) for its job */
  const stored = async (): Promise<string> => {
    const n = copies++;
    return org.putStatement(`believe-${n}.csv`, Buffer.from(copyOf(source, n)), 'text/csv');
  };
  return { organizationId: org.organizationId, stored, made: () => copies };
}

/**
 * Resolves when none of the statements waits or runs; fails on one that did not end processed.
 * It asks every 5 ms for one statement (its time is the figure) and every 25 ms for more: a
 * burst's few seconds are then measured to 1 %, and its polling costs the worker process little.
 */
async function settled(pool: pg.Pool, ids: string[]): Promise<void> {
  const everyMs = ids.length === 1 ? 5 : 25;
  for (;;) {
    const r = await pool.query<{ status: string; n: number; reason: string | null }>(
      'SELECT status, count(*)::int AS n, min(failure_reason) AS reason FROM statements WHERE id = ANY ($1) GROUP BY status',
      [ids],
    );
    const bad = r.rows.find((row) => !['processed', 'uploaded', 'processing'].includes(row.status));
    if (bad) throw new Error(`statement ${bad.status}: ${bad.reason}`);
    if (r.rows.every((row) => row.status === 'processed')) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Until no job is waiting or running (the follow-ups of what was processed). */
async function quiet(pool: pg.Pool): Promise<void> {
  for (;;) {
    const r = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE (run_at <= now() + interval '10 seconds' AND attempts < max_attempts) OR locked_at IS NOT NULL`,
    );
    if (r.rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type Setup = Awaited<ReturnType<typeof benchSetup>>;

/** The CPU time this process (all its threads) has used: ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Statements made and completed at once, until all are processed: ms, and this process's CPU ms. */
async function burstOf(runtime: Runtime, setup: Setup, count: number, reason: string) {
  const { enqueueStatementIngest } = await import('../../src/ingest/queue.ts');
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await setup.stored());
  const start = performance.now();
  const cpuStart = cpuMs();
  await enqueueStatementIngest(runtime.deps, setup.organizationId, ids, reason);
  await settled(runtime.deps.pool, ids);
  return { statements: ids.length, ms: performance.now() - start, cpuMs: cpuMs() - cpuStart };
}

/** One statement at a time, `runs` times: ms each. */
async function singles(runtime: Runtime, setup: Setup, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push((await burstOf(runtime, setup, 1, 'complete')).ms);
  return times;
}

/**
 * Every processed statement reprocessed, as `npm run admin -- reprocess` does (queued, then
 * followed with the progress line's pace): ms, and what the line said at a quarter, half and
 * three quarters of the way against the time the rest took.
 */
async function reprocessAll(runtime: Runtime, setup: Setup) {
  const { queueReprocess, countsByStatus, paceOf } = await import('../../src/cli/reprocess.ts');
  const { pool } = runtime.deps;
  const start = performance.now();
  const cpuStart = cpuMs();
  const ids = await queueReprocess(runtime.deps, {
    organizationId: setup.organizationId,
    statuses: ['processed'],
  });
  const pace = paceOf(Date.now());
  const said: { at: string; said: string; when: number }[] = [];
  for (const marks = [0.25, 0.5, 0.75]; ;) {
    const counts = await countsByStatus(pool, ids);
    const pending = (counts.uploaded ?? 0) + (counts.processing ?? 0);
    const line = pending > 0 ? pace(ids.length - pending, pending, Date.now()) : '';
    while (marks.length > 0 && ids.length - pending >= marks[0]! * ids.length) {
      said.push({ at: `${marks.shift()! * 100}%`, said: line.trim(), when: performance.now() });
    }
    if (pending === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await settled(pool, ids);
  const end = performance.now();
  const paces = said.map((s) => ({ at: s.at, said: s.said, actualLeftS: (end - s.when) / 1000 }));
  return { statements: ids.length, ms: end - start, cpuMs: cpuMs() - cpuStart, paces };
}

/** The bench in a worker process of its own (and --workers - 1 more): its result on stdout. */
async function child(): Promise<void> {
  const { createTestDatabase } = await import('../helpers/db.ts');
  const { startRuntime } = await import('../../src/runtime.ts');
  const db = await createTestDatabase();
  const runtime = await startRuntime(await benchConfig(db.url), 'worker');
  const workers = Number(values.workers);
  const others = workers > 1 ? await moreWorkers(workers - 1, db.url) : undefined;
  try {
    const setup = await benchSetup(runtime);
    const { pool } = runtime.deps;
    // warm: a statement processed before, and its follow-ups done
    await burstOf(runtime, setup, 1, 'bench');
    await quiet(pool);
    const singleMs = await singles(runtime, setup, Number(values.single));
    await quiet(pool);
    // the log between these lines is the burst's (its block refreshes are counted there)
    process.stdout.write('BENCH-BURST start\n');
    const burst = await burstOf(runtime, setup, Number(values.burst), 'complete');
    await quiet(pool);
    process.stdout.write('BENCH-BURST end\n');
    // more statements to reprocess, processed first (not measured)
    const more = Number(values.reprocess) - setup.made();
    if (more > 0) {
      await burstOf(runtime, setup, more, 'bench');
      await quiet(pool);
    }
    const reprocess = await reprocessAll(runtime, setup);
    const result: ChildResult = { singleMs, burst, reprocess, workers };
    process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
  } finally {
    await others?.stop();
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

/** What the CPU figures count: every thread of the first worker process, the bench's own polling included. */
const workerNote = (workers: number) =>
  workers > 1 ? `the first of ${workers} processes only` : 'all its threads';

/** The block refreshes logged between the burst's markers (`block ID (reason): N musical details ...`). */
function burstRefreshes(log: string): number {
  const burst = log.split('BENCH-BURST start')[1]?.split('BENCH-BURST end')[0] ?? '';
  return burst
    .split('\n')
    .filter((line) => /block [0-9a-f-]+ \([^)]*\): \d+ musical details/.test(line)).length;
}

async function main(): Promise<void> {
  if (values['worker-only']) return workerOnly();
  if (values.child) return child();
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-bench-small-'));
  const embedded = await benchPostgres(dir);
  try {
    const file = path.join(dir, 'believe.csv');
    await writeFile(file, copyOf(await readFile(FIXTURE, 'utf8'), 0));
    const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const yardstickBefore = await yardstick(file, dir, databaseUrl, Number(values.single));
    const run = await runChildWithStore(
      import.meta.url,
      path.join(dir, 's3'),
      [
        '--child',
        '--dir',
        dir,
        ...['single', 'burst', 'reprocess', 'workers'].flatMap((o) => [
          `--${o}`,
          String(values[o as 'single']),
        ]),
      ],
      { compiled: !values.source },
    );
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
      'CPU of the worker process per statement, burst': {
        value: `${(r.burst.cpuMs / r.burst.statements).toFixed(0)} ms`,
        note: workerNote(r.workers),
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
      `CPU of the worker process per statement, reprocess: ${(r.reprocess.cpuMs / r.reprocess.statements).toFixed(0)} ms (${workerNote(r.workers)})`,
    );
    for (const p of r.reprocess.paces)
      console.log(
        `reprocess progress line at ${p.at}: "${p.said}"; the rest took ${p.actualLeftS.toFixed(1)} s`,
      );
    console.log(
      'stages of one statement (p50, ms):',
      JSON.stringify(stageTimings(run.stdout, r.singleMs.length)),
    );
    console.log(
      `${r.workers} worker process(es), ${values.source ? 'from the TypeScript source (tsx)' : 'compiled (dist/)'}; node ${process.version}, ${execFileSync('nproc').toString().trim()} cores, load average ${execFileSync('cat', ['/proc/loadavg']).toString().split(' ').slice(0, 3).join(' ')}`,
    );
  } finally {
    await embedded.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

// npm run bench:ingest [-- --rows 1000000,5000000]
// End-to-end statement ingestion (object in the store → statement processed) against DuckDB's own
// CSV → Parquet conversion of the same file as the yardstick, in one run, with peak RSS.
// Each size runs the pipeline in a fresh child process, so each peak RSS is that size's alone; the
// object store (s3rver) and PostgreSQL run outside it, as the services they are.
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { benchPostgres } from './dataset.ts';
import type { S3Settings } from '../../src/config.ts';
import { runChildWithStore } from './child.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000,5000000' },
    child: { type: 'boolean', default: false },
    file: { type: 'string' },
    // the object store's endpoint, run by the parent (an object store is a service of its own)
    s3: { type: 'string' },
  },
});

const HEADER = [
  'Reporting Date',
  'Sale Month',
  'Store',
  'Artist',
  'Title',
  'ISRC',
  'UPC',
  'Quantity',
  'Team Percentage',
  'Song/Album',
  'Country of Sale',
  'Songwriter Royalties Withheld',
  'Earnings (USD)',
];
const STORES = [
  'Spotify',
  'Apple Music',
  'Amazon Unlimited',
  'YouTube (Red)',
  'Deezer',
  'Tidal',
  'Instagram/Facebook',
  'TikTok',
];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'BR', 'JP', 'CA', 'AU', 'SE', 'MX'];

async function generate(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  const write = (s: string) =>
    out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r()));
  await write(`${HEADER.join('\t')}\n`);
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const track = i % 20_000;
    const isrc = `USX9P${String(24).padStart(2, '0')}${String(track).padStart(5, '0')}`;
    const earnings = ((i * 7919) % 100_000) / 1e7 + 0.00000001 * (i % 97);
    chunk += `2024-03-15\t2024-0${1 + (i % 2)}\t${STORES[i % STORES.length]}\tArtist ${track % 50}\tTrack ${track}\t${isrc}\t\t${1 + (i % 900)}\t100\tSong\t${COUNTRIES[i % COUNTRIES.length]}\t0\t${earnings.toFixed(10)}\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  await new Promise<void>((r) => out.end(r));
}

async function yardstick(file: string, dir: string): Promise<number> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const start = performance.now();
  await c.run(
    `COPY (SELECT * FROM read_csv('${file}', delim='\t', header=true)) TO '${path.join(dir, 'yardstick.parquet')}' (FORMAT parquet)`,
  );
  const ms = performance.now() - start;
  c.closeSync();
  db.closeSync();
  return ms;
}

async function child(file: string): Promise<void> {
  const { createTestDatabase } = await import('../helpers/db.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { startRuntime } = await import('../../src/runtime.ts');
  const { benchOrg } = await import('./benchOrg.ts');
  const { enqueueStatementIngest } = await import('../../src/ingest/queue.ts');
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-bench-'));
  const db = await createTestDatabase();
  const s3 = JSON.parse(values.s3!) as S3Settings;
  const config = loadConfig({
    DATABASE_URL: db.url,
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: 'bench',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    // BENCH_LOG_LEVEL=info shows the job's per-stage timings on stderr
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    WORKER_POLL_INTERVAL_MS: '50',
    DATA_DIR: dir,
  });
  const runtime = await startRuntime(config, 'worker');
  try {
    const { pool } = runtime.deps;
    const org = await benchOrg(runtime.deps);
    // one statement: stored, its row made, its ingestion enqueued; resolves when it is processed
    const ingest = async (source: string, name: string): Promise<{ ms: number; kept: number }> => {
      const id = await org.putStatement(
        name,
        createReadStream(source),
        'text/tab-separated-values',
      );
      const start = performance.now();
      await enqueueStatementIngest(runtime.deps, org.organizationId, [id], 'bench');
      for (;;) {
        await new Promise((r) => setTimeout(r, 50));
        const r = await pool.query<{ status: string; kept_rows: number; failure_reason: string }>(
          'SELECT status, kept_rows, failure_reason FROM statements WHERE id = $1',
          [id],
        );
        const { status, kept_rows: kept, failure_reason: reason } = r.rows[0]!;
        if (status === 'processed') return { ms: performance.now() - start, kept };
        if (status === 'failed' || status === 'needs_mapping')
          throw new Error(`statement ${status}: ${reason}`);
      }
    };
    // a service that has processed a statement before (threads started, modules loaded and
    // compiled, as in steady state): a small statement of the same shape goes first, unmeasured
    const warmUp = path.join(dir, 'warm-up.tsv');
    await generate(warmUp, 2_000);
    const cold = await ingest(warmUp, 'warm-up.tsv');
    // and the jobs it set off (catalog refresh, enrichment) are done, so none runs beside the measured one
    for (;;) {
      const r = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE (run_at <= now() + interval '5 seconds' AND attempts < max_attempts) OR locked_at IS NOT NULL`,
      );
      if (r.rows[0]!.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { ms, kept } = await ingest(file, 'distrokid.tsv');
    process.stdout.write(
      JSON.stringify({
        ms,
        rows: kept,
        warmUpMs: cold.ms,
        peakRssMb: process.resourceUsage().maxRSS / 1024,
      }) + '\n',
    );
  } finally {
    await runtime.stop();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (values.child) return child(values.file!);
  const sizes = values.rows!.split(',').map(Number);
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-bench-data-'));
  const results = [];
  // the children use DATABASE_URL, or an embedded PostgreSQL this run starts
  const embedded = await benchPostgres(dir);
  try {
    for (const rows of sizes) {
      const file = path.join(dir, `distrokid-${rows}.tsv`);
      await generate(file, rows);
      const mb = (await stat(file)).size / 1e6;
      const duck = await yardstick(file, dir);
      const run = await runChildWithStore(import.meta.url, path.join(dir, `s3-${rows}`), [
        '--child',
        '--file',
        file,
      ]);
      // the child's result line (with BENCH_LOG_LEVEL its log lines are JSON too)
      const line =
        run.stdout
          .trim()
          .split('\n')
          .filter((l) => l.includes('"peakRssMb"'))
          .pop() ?? '';
      if (process.env.BENCH_LOG_LEVEL)
        process.stderr.write(
          run.stderr +
            run.stdout
              .split('\n')
              .filter((l) => l.includes('statement '))
              .join('\n') +
            '\n',
        );
      if (run.status !== 0 || !line.startsWith('{'))
        throw new Error(`pipeline run failed:\n${run.stderr}\n${run.stdout}`);
      const e2e = JSON.parse(line) as {
        ms: number;
        rows: number;
        warmUpMs: number;
        peakRssMb: number;
      };
      results.push({
        rows,
        fileMb: mb.toFixed(0),
        duckdbMs: duck.toFixed(0),
        duckdbRowsPerSec: Math.round(rows / (duck / 1000)),
        pipelineMs: e2e.ms.toFixed(0),
        pipelineRowsPerSec: Math.round(e2e.rows / (e2e.ms / 1000)),
        ratio: (duck / e2e.ms).toFixed(2),
        peakRssMb: e2e.peakRssMb.toFixed(0),
        warmUpMs: e2e.warmUpMs.toFixed(0),
      });
      await rm(file, { force: true });
    }
  } finally {
    await embedded.stop();
    await rm(dir, { recursive: true, force: true });
  }
  console.table(results);
  if (results.length >= 2) {
    const ratio = Number(results[results.length - 1]!.peakRssMb) / Number(results[0]!.peakRssMb);
    console.log(
      `peak RSS ${results[results.length - 1]!.rows} rows / ${results[0]!.rows} rows: ${ratio.toFixed(2)}x`,
    );
  }
  console.log(`node ${process.version}, ${execFileSync('nproc').toString().trim()} cores`);
}

await main();

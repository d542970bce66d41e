// npm run bench:export [-- --rows 10000000]
// A royalty_lines CSV export of the whole data set (every rightsholder) through the real API, job
// runner, analytics database and object store, in a fresh child process whose peak resident memory
// (VmHWM) is the figure that matters: it must stay flat whatever the export size.
//
// The parent generates the data set exactly as bench:query does (normalized Parquet per statement in
// the object store, processed statements and rates in PostgreSQL), builds the organization's
// analytics database once, and keeps PostgreSQL and s3rver running for the child. The child starts
// the service (`serve`), triggers the export over HTTP, waits for it, and reports the time, rows/s
// and its peak RSS; as a yardstick it then times DuckDB's own COPY of the bare facts rows to CSV.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createTestDatabase } from '../helpers/db.ts';
import { loadConfig } from '../../src/config.ts';
import { startRuntime } from '../../src/runtime.ts';
import { startEmbeddedS3 } from '../../src/storage/embedded.ts';
import { analyticsFor } from '../../src/analytics/engine.ts';
import { benchPostgres, seedBenchDataset } from './dataset.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '10000000' }, child: { type: 'string' } },
});
const ROWS = Number(values.rows);

interface ChildInput {
  env: Record<string, string>;
  organizationId: string;
  apiKey: string;
  rightsholderIds: string[];
}

function peakRssMb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : process.memoryUsage().rss / 1_048_576;
}

async function child(input: ChildInput): Promise<void> {
  const config = loadConfig(input.env);
  const runtime = await startRuntime(config, 'serve');
  try {
    const url = runtime.url!;
    const headers = {
      'content-type': 'application/json',
      'x-api-key': input.apiKey,
      'x-organization-id': input.organizationId,
    };
    const baseline = peakRssMb();
    const t0 = performance.now();
    const res = await fetch(`${url}/trpc/export.trigger`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        organizationId: input.organizationId,
        type: 'royalty_lines',
        format: 'csv',
        rightsholderIds: input.rightsholderIds,
      }),
    });
    const body = (await res.json()) as { result?: { data: { exportId: string } }; error?: unknown };
    if (!body.result) throw new Error(JSON.stringify(body.error));
    const exportId = body.result.data.exportId;
    let status: {
      status: string;
      rowCount: number | null;
      fileCount: number | null;
      totalBytes: number | null;
      errorCode: string | null;
      reason: string | null;
    };
    for (;;) {
      const q = encodeURIComponent(
        JSON.stringify({ organizationId: input.organizationId, exportId }),
      );
      const s = (await (
        await fetch(`${url}/trpc/export.status?input=${q}`, { headers })
      ).json()) as { result: { data: typeof status } };
      status = s.result.data;
      if (status.status === 'completed' || status.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const seconds = (performance.now() - t0) / 1000;
    const peak = peakRssMb();
    if (status.status !== 'completed')
      throw new Error(`export ${status.status}: ${status.errorCode} ${status.reason}`);
    // yardstick: DuckDB's own COPY of the bare facts rows (no joins, no neutralisation, no upload)
    const facts = await analyticsFor(runtime.deps).freshFacts(input.organizationId);
    const file = path.join(config.analytics.dir, 'yardstick.csv');
    const y0 = performance.now();
    await facts.withConnection((c) =>
      c.run(`COPY (SELECT * FROM facts) TO '${file}' (FORMAT csv, HEADER true)`),
    );
    const yardstick = (performance.now() - y0) / 1000;
    await rm(file, { force: true });
    console.log(
      JSON.stringify({
        baseline,
        seconds,
        rows: status.rowCount,
        files: status.fileCount,
        bytes: status.totalBytes,
        peakRssMb: peak,
        yardstick,
      }),
    );
  } finally {
    await runtime.stop();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-bench-export-'));
  const postgres = await benchPostgres(dir);
  const db = await createTestDatabase();
  const s3 = await startEmbeddedS3(path.join(dir, 's3'), 'bench');
  const env = {
    DATABASE_URL: db.url,
    S3_ENDPOINT: s3.settings.endpoint,
    S3_BUCKET: 'bench',
    S3_ACCESS_KEY_ID: s3.settings.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.settings.secretAccessKey,
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
    PORT: '0',
    DEMO_BOOTSTRAP: 'false',
  };
  // the parent builds the analytics database with room to spare; the child runs with the defaults
  const config = loadConfig({ ...env, ANALYTICS_MEMORY_MB: '4096' });
  const runtime = await startRuntime(config, 'api');
  let stopped = false;
  try {
    const { org, organizationId, rhs } = await seedBenchDataset(runtime.deps, dir, ROWS);
    const t0 = performance.now();
    await analyticsFor(runtime.deps).freshFacts(organizationId);
    console.log(`analytics database built: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await runtime.stop();
    stopped = true;

    const input: ChildInput = { env, organizationId, apiKey: org.apiKey, rightsholderIds: rhs };
    // asynchronously: s3rver runs in this process and must keep answering the child
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', new URL(import.meta.url).pathname, '--child', JSON.stringify(input)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    const [code] = (await once(proc, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`child failed (${code}): ${stdout}`);
    const run = { stdout };
    const r = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      baseline: number;
      seconds: number;
      rows: number;
      files: number;
      bytes: number;
      peakRssMb: number;
      yardstick: number;
    };
    console.log(
      `\n| rows | files | CSV bytes | export end to end | rows/s | peak RSS (child process) | RSS of the started service before | DuckDB bare COPY to CSV |`,
    );
    console.log(`|---|---|---|---|---|---|---|---|`);
    console.log(
      `| ${r.rows.toLocaleString('en-US')} | ${r.files} | ${(r.bytes / 1e9).toFixed(2)} GB | ${r.seconds.toFixed(1)} s | ${Math.round(r.rows / r.seconds).toLocaleString('en-US')} | ${Math.round(r.peakRssMb).toLocaleString('en-US')} MB | ${Math.round(r.baseline).toLocaleString('en-US')} MB | ${r.yardstick.toFixed(1)} s |`,
    );
    console.log(
      `\ngoal: peak RSS under 1 GB (1,024 MB): ${r.peakRssMb < 1024 ? 'met' : 'NOT met'}`,
    );
  } finally {
    if (!stopped) await runtime.stop();
    await s3.stop();
    await db.drop();
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (values.child) await child(JSON.parse(values.child) as ChildInput);
else await main();

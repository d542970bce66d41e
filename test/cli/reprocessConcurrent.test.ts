// Reprocessing in bulk with several `worker` processes against one database, and two reprocess
// commands at once: every statement is run once per command that queued it (never twice for one,
// never lost), its rows are replaced (the same totals, one normalized version left in the store),
// and each command's counts add up to the statements it queued.
import { execFile } from 'node:child_process';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot, serviceEntry } from '../setup/paths.ts';
import { launcher, serviceEnv, waitFor } from '../runtime/processes.ts';

const run = promisify(execFile);
// the API only: the jobs are the worker processes'
const srv = await startTestServer(t);
const launch = launcher(t);
const env = serviceEnv(srv.config, {
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  WORKER_CONCURRENCY: '2',
});
const workers = [launch(['worker'], env), launch(['worker'], env)];
for (const w of workers) await waitFor(w, /royalty engine worker running/, 120_000);
t.teardown(async () => {
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
});

const owner = await newOrganization(srv, 'Concurrent Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Concurrent Artist');
const fixtures = [
  'tunecore.csv',
  'cdbaby.txt',
  'distrokid-legacy.tsv',
  'orchard.csv',
  'soundexchange-statement.csv',
  'mlc-royalty-detail.csv',
];
const ids: string[] = [];
try {
  for (const f of fixtures)
    ids.push(
      (
        await uploadFixture(
          owner.client,
          org,
          artist,
          path.join(repoRoot, 'fixtures', 'statements', f),
        )
      ).statementId,
    );
  for (const [i, id] of ids.entries()) {
    const { status } = await waitForStatement(owner.client, org, id);
    if (status !== 'processed') throw new Error(`${fixtures[i]} is ${status}`);
  }
} catch (error) {
  // a failure here ends the file before tap's teardown: the workers must not outlive it
  for (const w of workers) w.child.kill('SIGKILL');
  throw error;
}

interface State {
  version: number;
  status: string;
  net: string;
  rows: number;
}
async function states(): Promise<Map<string, State>> {
  const { rows } = await srv.deps.pool.query<{
    id: string;
    version: number;
    status: string;
    net: string;
    rows: number;
  }>(
    'SELECT id, normalized_version AS version, status, net_earnings::text AS net, row_count AS rows FROM statements WHERE id = ANY ($1)',
    [ids],
  );
  return new Map(
    rows.map((r) => [r.id, { version: r.version, status: r.status, net: r.net, rows: r.rows }]),
  );
}

/** the normalized Parquet versions kept in the store for a statement (s3rver's files on disk) */
async function storedVersions(statementId: string): Promise<string[]> {
  // read through the S3 API: the object store may be a server shared by the test run
  const prefix = `orgs/${org}/statements/${statementId}/normalized/`;
  const page = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.config.s3!.bucket, Prefix: prefix }),
  );
  return (page.Contents ?? [])
    .map((o) => o.Key!.slice(prefix.length))
    .filter((n) => /^v\d+\.parquet$/.test(n))
    .sort();
}

async function reprocess(...args: string[]) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [serviceEntry, 'admin', 'reprocess', '--org', org, '--json', ...args],
      { cwd: repoRoot, env },
    );
    return {
      code: 0,
      out: JSON.parse(stdout) as { statements: number; counts: Record<string, number> },
      stderr,
    };
  } catch (error) {
    const e = error as { code: number; stderr: string };
    return { code: e.code, err: e.stderr, out: undefined };
  }
}

t.test(
  'two workers share one reprocess: every statement run once, its rows replaced',
  async (t) => {
    const before = await states();
    const res = await reprocess('--no-local-worker');
    t.equal(res.code, 0, res.err ?? 'exit 0');
    t.same(res.out, {
      organizationId: org,
      statements: ids.length,
      counts: { processed: ids.length },
    });
    t.notMatch(res.stderr, /no job runner is running/, 'the running workers are seen');
    const after = await states();
    for (const id of ids) {
      const [b, a] = [before.get(id)!, after.get(id)!];
      t.same(a, { ...b, version: b.version + 1 }, `${id}: one new version, the same totals`);
      t.same(
        await storedVersions(id),
        [`v${a.version}.parquet`],
        `${id}: the previous version's objects removed`,
      );
    }
    const { rows } = await srv.deps.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
     WHERE k.identifier = 'statement_ingest'`,
    );
    t.equal(rows[0]!.n, 0, 'no ingest job left behind');
  },
);

t.test(
  'two reprocess commands at once: no statement run twice for one command nor lost',
  async (t) => {
    const before = await states();
    const [a, b] = await Promise.all([reprocess('--no-local-worker'), reprocess()]);
    t.equal(a.code, 0, a.err ?? 'exit 0');
    t.equal(b.code, 0, b.err ?? 'exit 0');
    for (const r of [a, b]) {
      const n = r.out!.statements;
      t.same(
        r.out!.counts,
        n === 0 ? {} : { processed: n },
        'the counts add up to the statements it queued',
      );
    }
    const after = await states();
    let runs = 0;
    for (const id of ids) {
      const [x, y] = [before.get(id)!, after.get(id)!];
      t.equal(y.status, 'processed');
      t.same({ net: y.net, rows: y.rows }, { net: x.net, rows: x.rows }, `${id}: the same totals`);
      runs += y.version - x.version;
      t.same(await storedVersions(id), [`v${y.version}.parquet`], `${id}: one version stored`);
    }
    t.ok(
      a.out!.statements + b.out!.statements >= ids.length,
      'every statement was queued by one command at least',
    );
    t.equal(runs, a.out!.statements + b.out!.statements, 'one run per statement queued');
  },
);

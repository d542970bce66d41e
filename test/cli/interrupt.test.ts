// Ctrl-C (SIGINT) and SIGTERM on `npm run admin -- …`: the command stops waiting, the jobs its
// local worker runs are finished (or, forced, released), everything it started is stopped, and
// it exits with 130 (SIGINT) or 143 (SIGTERM).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';
import {
  ingestDirs,
  ingestHold,
  launcher,
  serviceEnv,
  sleep,
  until,
  waitFor,
} from '../runtime/processes.ts';

// the API only: no worker but the admin command's own takes the jobs
const srv = await startTestServer(t);
const launch = launcher(t);
const env = serviceEnv(srv.config);
const hold = await ingestHold(srv.config.databaseUrl!);
t.teardown(() => hold.close());
const owner = await newOrganization(srv, 'Interrupt Label');
const org = owner.organizationId;
const bytes = await readFile(path.join(repoRoot, 'fixtures', 'statements', 'tunecore.csv'));

/** A statement of a new rightsholder whose file is in the store, in state failed (to be reprocessed). */
async function failedStatement(): Promise<{ rightsholderId: string; statementId: string }> {
  const rightsholderId = await createRightsholder(
    owner.client,
    org,
    `Interrupt Artist ${Date.now()}`,
  );
  const start = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId,
    fileName: 'tunecore.csv',
    size: bytes.length,
  });
  if (!start.ok) throw new Error(JSON.stringify(start.error));
  const put = await fetch(start.data.url, {
    method: 'PUT',
    headers: start.data.headers,
    body: bytes,
  });
  if (put.status !== 200) throw new Error(`PUT ${put.status}`);
  await srv.deps.pool.query(
    `UPDATE statements SET status = 'failed', size_bytes = $2 WHERE id = $1`,
    [start.data.statementId, bytes.length],
  );
  return { rightsholderId, statementId: start.data.statementId };
}

const reprocess = (rightsholderId: string, ...flags: string[]) =>
  launch(
    ['admin', 'reprocess', '--org', org, '--rightsholder', rightsholderId, '--json', ...flags],
    env,
  );

t.test(
  'reprocess: Ctrl-C stops waiting, the running job finishes, a second Ctrl-C is ignored, exit 130',
  async (t) => {
    await hold.hold();
    const { rightsholderId, statementId } = await failedStatement();
    const run = reprocess(rightsholderId);
    await until('the local worker holds the statement mid-ingestion', hold.waiting);
    run.child.kill('SIGINT');
    await waitFor(run, /shutting down/);
    await sleep(400);
    run.child.kill('SIGINT');
    await waitFor(run, /already shutting down/);
    await sleep(500);
    t.equal(run.child.exitCode, null, 'still finishing the running job');
    t.match(await hold.job(statementId), { locked: true });
    await hold.release();
    t.same(await run.exited, { code: 130, signal: null });
    t.equal(run.stdout(), '', 'no result on stdout');
    t.match(run.stderr(), /interrupted with 1 of 1 statements not done/);
    t.equal(await hold.status(statementId), 'processed', 'the running statement was finished');
    t.equal(await hold.job(statementId), undefined, 'no job left locked');
    t.same(ingestDirs(statementId), []);
  },
);

t.test(
  'reprocess: one signal and a job that hangs: released after SHUTDOWN_GRACE_MS, exit 130',
  async (t) => {
    await hold.hold();
    const { rightsholderId, statementId } = await failedStatement();
    const run = launch(
      ['admin', 'reprocess', '--org', org, '--rightsholder', rightsholderId, '--json'],
      { ...env, SHUTDOWN_GRACE_MS: '2000' },
    );
    await until('the local worker holds the statement mid-ingestion', hold.waiting);
    const asked = Date.now();
    run.child.kill('SIGINT');
    const exit = await Promise.race([run.exited, sleep(20_000).then(() => 'still running')]);
    t.same(exit, { code: 130, signal: null }, 'one signal is enough');
    t.ok(
      Date.now() - asked < 12_000,
      `exited ${Date.now() - asked} ms after the signal (grace 2000 ms)`,
    );
    t.match(
      run.stderr(),
      /the shutdown grace period is over: releasing the running jobs for a retry/,
    );
    t.match(
      await hold.job(statementId),
      { locked: false, attempts: 0, due: true },
      'released, the attempt given back',
    );
    t.same(ingestDirs(statementId), [], 'its work directory removed');
    await hold.release();
    const worker = launch(['worker'], env);
    await until(
      'the statement is processed',
      async () => (await hold.status(statementId)) === 'processed',
    );
    worker.child.kill('SIGINT');
    t.same(await worker.exited, { code: 0, signal: null });
  },
);

t.test('reprocess: three signals force the exit, the job released for the workers', async (t) => {
  await hold.hold();
  const { rightsholderId, statementId } = await failedStatement();
  const run = reprocess(rightsholderId);
  await until('the local worker holds the statement mid-ingestion', hold.waiting);
  t.equal(ingestDirs(statementId).length, 1);
  for (const wait of [/shutting down/, /already shutting down/]) {
    run.child.kill('SIGTERM');
    await waitFor(run, wait);
    await sleep(400);
  }
  run.child.kill('SIGTERM');
  t.same(await run.exited, { code: 143, signal: null }, '128 + SIGTERM');
  t.match(
    await hold.job(statementId),
    { locked: false, attempts: 0, due: true },
    'released, the attempt given back',
  );
  t.same(ingestDirs(statementId), [], 'its work directory removed');
  await hold.release();
  // the next worker finishes it
  const worker = launch(['worker'], env);
  await until(
    'the statement is processed',
    async () => (await hold.status(statementId)) === 'processed',
  );
  worker.child.kill('SIGINT');
  t.same(await worker.exited, { code: 0, signal: null });
});

t.test(
  'reprocess --no-local-worker: Ctrl-C stops waiting at once; the statements stay queued',
  async (t) => {
    const { rightsholderId, statementId } = await failedStatement();
    const run = reprocess(rightsholderId, '--no-local-worker');
    await until('the statement is queued', async () => (await hold.job(statementId)) !== undefined);
    // no worker runs (the test server is the API only): said rather than waited in silence
    await waitFor(
      run,
      /admin: no job runner is running against this database: the statements wait for a `worker` or `serve` process \(start one, or leave out --no-local-worker\)\n/,
    );
    run.child.kill('SIGINT');
    t.same(await run.exited, { code: 130, signal: null });
    t.equal(await hold.status(statementId), 'uploaded');
    t.match(await hold.job(statementId), { locked: false, attempts: 0 });
  },
);

t.test(
  'another command: Ctrl-C while it waits (a download) exits 130 without a result',
  async (t) => {
    let requested = false;
    const stalled = createServer(() => (requested = true));
    await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', r));
    t.teardown(() => (stalled.closeAllConnections(), stalled.close()));
    const url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/rates.csv`;
    const run = launch(['admin', 'fx', 'import', '--url', url, '--format', 'plain', '--json'], env);
    await until('the download is asked for', () => requested);
    run.child.kill('SIGINT');
    t.same(await run.exited, { code: 130, signal: null });
    t.equal(run.stdout(), '');
    t.match(run.stderr(), /admin: interrupted/);
  },
);

// An embedded PostgreSQL that stops while the service runs (killed, crashed, the OOM killer) is
// restarted on its port by the first process using it to notice; the others go on with it, and
// the pools and the job runner connect again by themselves. One that cannot be restarted stops the
// service at once: a message naming the cause on stderr, exit code 1 (for a supervisor or the user
// to start it again). Before, the service stayed up `degraded` for good and a Ctrl-C took up to a
// minute.
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { TrpcClient } from '../helpers/trpc.ts';
import { repoRoot } from '../setup/paths.ts';
import { launcher, until, waitFor } from './processes.ts';

// with a space and an accent in its path, as a user's folder may have
const dataDir = await mkdtemp(path.join(tmpdir(), 'royalty restart é-'));
// PostgreSQL runs as the postgres user when the tests run as root: it must reach its directory
await chmod(dataDir, 0o755);
const launch = launcher(t);
const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** the pid in postmaster.pid, alive or not */
function postmasterPid(file = pidFile): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) ? pid : undefined;
}

t.teardown(async () => {
  // whatever a failed test left running
  for (const file of [pidFile, path.join(dataDir, 'pg.away', 'postmaster.pid')]) {
    const pid = postmasterPid(file);
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
  }
  await rm(dataDir, { recursive: true, force: true });
});

const env: NodeJS.ProcessEnv = {
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'info',
  FX_RATES_URL: '',
  WORKER_POLL_INTERVAL_MS: '100',
  THREADS_WARM: '0',
};

let [base, org, key] = ['', '', ''];

t.test(
  'a killed embedded PostgreSQL is restarted once, on its port; the service and a worker sharing it go on',
  async (t) => {
    const serve = launch(['serve'], env);
    const m = await waitFor(
      serve,
      /base URL:\s+(\S+)\s+organization id:\s+(\S+)\s+API key:\s+(\S+)/,
      120_000,
    );
    [base, org, key] = [m[1]!, m[2]!, m[3]!];
    const worker = launch(['worker'], { ...env, DEMO_BOOTSTRAP: 'false' });
    await waitFor(worker, /royalty engine worker running/, 120_000);
    const first = postmasterPid()!;
    const port = readFileSync(pidFile, 'utf8').split('\n')[3];

    process.kill(first, 'SIGKILL');
    const restarted =
      /restarted the embedded PostgreSQL \(pid (\d+), port (\d+)\): restart 1 of at most 3 within 10 minutes/;
    // whichever process noticed first restarts it; the other goes on with that one
    await until(
      'one process restarted it',
      () => restarted.test(serve.output()) || restarted.test(worker.output()),
      60_000,
    );
    const [restarter, other] = restarted.test(serve.output()) ? [serve, worker] : [worker, serve];
    const r = restarter.output().match(restarted)!;
    t.equal(r[2], port, 'on the same port');
    t.match(
      restarter.output(),
      new RegExp(
        `the embedded PostgreSQL \\(pid ${first}\\) stopped unexpectedly: restarting it on port ${port}`,
      ),
    );
    const second = Number(r[1]);
    t.equal(postmasterPid(), second);
    await waitFor(
      other,
      new RegExp(
        `the embedded PostgreSQL was restarted by another process \\(pid ${second}, port ${port}\\)`,
      ),
      30_000,
    );
    t.notMatch(other.output(), /restarted the embedded PostgreSQL/, 'restarted once, not by both');
    const registry = JSON.parse(readFileSync(path.join(dataDir, 'pg.users.json'), 'utf8')) as {
      postmaster: { pid: number };
      users: { pid: number }[];
    };
    t.equal(registry.postmaster.pid, second);
    t.same(
      registry.users.map((u) => u.pid).sort(),
      [serve.child.pid, worker.child.pid].sort(),
      'both processes use the new server',
    );

    const health = await fetch(`${base}/trpc/health`);
    t.match(await health.json(), {
      result: { data: { status: 'ok', checks: { database: 'ok', objectStore: 'ok' } } },
    });
    // a statement goes all the way through: the API's pool and the job runners reconnected
    const client = new TrpcClient(base, { 'x-api-key': key, 'x-organization-id': org });
    const artist = await createRightsholder(client, org, 'Restart Artist');
    const fixture = path.join(repoRoot, 'fixtures', 'statements', 'distrokid-legacy.tsv');
    const expected = JSON.parse(readFileSync(`${fixture}.expected.json`, 'utf8'));
    const { statementId } = await uploadFixture(client, org, artist, fixture);
    const statement = await waitForStatement(client, org, statementId);
    t.equal(statement.status, 'processed');
    t.equal(canonicalDecimal(statement.netEarnings), canonicalDecimal(expected.netEarningsSum));

    worker.child.kill('SIGINT');
    t.same(await worker.exited, { code: 0, signal: null });
    t.match(worker.output(), /leaving the embedded PostgreSQL running for process/);
    t.ok(alive(second), 'the service still uses it');
    const asked = Date.now();
    serve.child.kill('SIGINT');
    t.same(await serve.exited, { code: 0, signal: null }, 'Ctrl-C exits cleanly');
    t.ok(Date.now() - asked < 10_000, `and promptly (${Date.now() - asked} ms)`);
    t.notOk(alive(second), 'the restarted PostgreSQL was stopped');
    t.notOk(existsSync(pidFile));
  },
);

t.test(
  'an embedded PostgreSQL that cannot be restarted stops the service: a message and exit 1, promptly',
  async (t) => {
    const serve = launch(['serve'], env);
    await waitFor(serve, /running at (\S+)/, 120_000);
    const pid = postmasterPid()!;
    // its data gone (moved away) and the server killed: nothing to restart
    await rename(path.join(dataDir, 'pg'), path.join(dataDir, 'pg.away'));
    process.kill(pid, 'SIGKILL');
    const killed = Date.now();
    const exit = await serve.exited;
    t.same(exit, { code: 1, signal: null });
    t.ok(Date.now() - killed < 15_000, `stopped ${Date.now() - killed} ms after the server died`);
    t.match(
      serve.stderr(),
      `royalty engine stopping: the embedded PostgreSQL stopped and was not restarted: ${path.join(dataDir, 'pg')} holds no PostgreSQL data any more (was it removed?)\n`,
    );
    t.match(serve.output(), /"msg":"stopped"/);
    t.notOk(alive(pid));

    // put back, the data is there again for the next start
    await rename(path.join(dataDir, 'pg.away'), path.join(dataDir, 'pg'));
    const again = launch(['serve'], env);
    const m = await waitFor(again, /running at (\S+)/, 120_000);
    const health = await fetch(`${m[1]}/trpc/health`);
    t.match(await health.json(), { result: { data: { status: 'ok' } } });
    again.child.kill('SIGTERM');
    t.same(await again.exited, { code: 0, signal: null });
  },
);

t.test('an admin reprocess following its statements goes on across a restart', async (t) => {
  // the API only: no job runner, so the reprocessed statement stays queued while the command follows it
  const api = launch(['api'], env);
  await waitFor(api, /running at (\S+)/, 120_000);
  const admin = launch(
    ['admin', 'reprocess', '--org', org, '--status', 'processed', '--no-local-worker', '--json'],
    { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  );
  await waitFor(admin, /no job runner is running against this database/, 120_000);
  const pid = postmasterPid()!;
  process.kill(pid, 'SIGKILL');
  const restarted = /restarted the embedded PostgreSQL \(pid (\d+)/;
  await until(
    'it was restarted',
    () => restarted.test(api.output()) || restarted.test(admin.output()),
    60_000,
  );
  await new Promise((r) => setTimeout(r, 3_000));
  t.equal(admin.child.exitCode, null, 'the command still follows its statement');
  t.notMatch(admin.stderr(), /fatal/);
  admin.child.kill('SIGINT');
  t.same(await admin.exited, { code: 130, signal: null });
  t.match(admin.stderr(), /admin: interrupted with 1 of 1 statements not done/);
  t.equal(admin.stdout(), '');
  api.child.kill('SIGINT');
  t.same(await api.exited, { code: 0, signal: null });
  t.notOk(existsSync(pidFile), 'the last process stopped it');
});

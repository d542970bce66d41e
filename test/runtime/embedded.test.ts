// The embedded default, as a new user meets it: `npm start` with no configuration starts a real
// PostgreSQL and S3 server under DATA_DIR, creates the demo organization once, keeps data across
// restarts, survives an orphaned server left by a killed process, and stops cleanly on Ctrl-C.
// The admin command shares the running service's database.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot, serviceEntry } from '../setup/paths.ts';
import { readFileSync } from 'node:fs';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { TrpcClient } from '../helpers/trpc.ts';

const dataDir = await mkdtemp(path.join(tmpdir(), 'royalty-embedded-'));
// PostgreSQL runs as the postgres user when the tests run as root: it must reach its directory
await chmod(dataDir, 0o755);
const children = new Set<ChildProcess>();
t.teardown(async () => {
  for (const c of children) c.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'info',
};

interface Running {
  child: ChildProcess;
  output: () => string;
  stdout: () => string;
  /** the exit code, or the signal that ended the process (`SIGABRT`, ...) */
  exited: Promise<number | string | null>;
}

function launch(args: string[]): Running {
  const child = spawn(process.execPath, [serviceEntry, ...args], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => ((out += c.toString()), (stdout += c.toString())));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      // a process ended by a signal says which, with what it printed last: the next reader's lead
      if (code === null && signal !== 'SIGKILL')
        console.error(
          `# ${args.join(' ')} ended by ${signal}; its last output:\n${out.slice(-3000)}`,
        );
      resolve(code ?? signal);
    }),
  );
  return { child, output: () => out, stdout: () => stdout, exited };
}

async function waitFor(run: Running, pattern: RegExp, ms = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = run.output().match(pattern);
    if (m) return m;
    if (Date.now() > deadline || run.child.exitCode !== null)
      throw new Error(`did not see ${pattern}; output:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function currentUser(base: string, key: string, org: string) {
  const res = await fetch(`${base}/trpc/user.currentUser?batch=1`, {
    headers: { 'x-api-key': key, 'x-organization-id': org },
  });
  return { status: res.status, body: (await res.json()) as any };
}

const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
let demo: { base: string; org: string; key: string };

t.test(
  'first start: embedded servers, migrations, the demo organization printed once',
  async (t) => {
    const run = launch(['serve']);
    const m = await waitFor(run, /base URL:\s+(\S+)\s+organization id:\s+(\S+)\s+API key:\s+(\S+)/);
    demo = { base: m[1]!, org: m[2]!, key: m[3]! };
    // a lost key is no dead end: the way to another is printed with it
    t.match(
      run.stdout(),
      `npm run admin -- api-key create --email demo@example.com --org ${demo.org}`,
    );
    t.ok(existsSync(path.join(dataDir, 'pg', 'PG_VERSION')), 'PostgreSQL data under DATA_DIR/pg');
    t.ok(existsSync(path.join(dataDir, 's3')), 'object store data under DATA_DIR/s3');
    const me = await currentUser(demo.base, demo.key, demo.org);
    t.equal(me.status, 200);
    t.same(me.body[0].result.data.organizations, [
      { id: demo.org, name: 'Demo Organization', role: 'owner' },
    ]);
    const health = await fetch(`${demo.base}/trpc/health`);
    t.match(await health.json(), {
      result: { data: { status: 'ok', checks: { database: 'ok', objectStore: 'ok' } } },
    });

    // a statement goes all the way through the real service: job runner, worker threads loading
    // TypeScript on their own (the test runner's loader does not help them here), DuckDB, store
    const client = new TrpcClient(demo.base, {
      'x-api-key': demo.key,
      'x-organization-id': demo.org,
    });
    const artist = await createRightsholder(client, demo.org, 'Embedded Artist');
    // the embedded cluster maps the case of every Unicode letter, not ASCII alone (initdb's builtin
    // C.UTF-8 provider): 'BEYONCÉ' is the name 'Beyoncé' already taken
    await createRightsholder(client, demo.org, 'Beyoncé');
    const again = await client.mutate('rightsholder.create', {
      organizationId: demo.org,
      name: 'BEYONCÉ',
    });
    t.same(again.ok ? again.data : again.error.data.errorCode, 'RIGHTSHOLDER_NAME_TAKEN');
    const fixture = path.join(repoRoot, 'fixtures', 'statements', 'distrokid-legacy.tsv');
    const expected = JSON.parse(readFileSync(`${fixture}.expected.json`, 'utf8'));
    const { statementId } = await uploadFixture(client, demo.org, artist, fixture);
    const statement = await waitForStatement(client, demo.org, statementId);
    t.equal(statement.status, 'processed');
    t.equal(canonicalDecimal(statement.netEarnings), canonicalDecimal(expected.netEarningsSum));

    // the operator's command shares the running service's database
    const admin = launch([
      'admin',
      'bootstrap',
      '--email',
      'ops@example.com',
      '--org-name',
      'Ops Org',
      '--platform-role',
      'c2_superadmin',
      '--json',
    ]);
    t.equal(await admin.exited, 0);
    const lines = admin.stdout().trim().split('\n');
    t.equal(lines.length, 1, 'stdout is exactly one JSON object');
    // sharing the running server is routine: nothing on stderr at the default level
    t.notMatch(admin.output(), /"level":(40|50)/, 'no warning for sharing the database');
    const boot = JSON.parse(lines[0]!);
    t.same(Object.keys(boot).sort(), ['apiKey', 'organizationId', 'userId']);
    const ops = await currentUser(demo.base, boot.apiKey, boot.organizationId);
    t.same(ops.body[0].result.data.organizations, [
      { id: boot.organizationId, name: 'Ops Org', role: 'owner' },
    ]);

    run.child.kill('SIGINT');
    t.equal(await run.exited, 0, 'Ctrl-C exits cleanly');
    t.match(run.output(), /"msg":"stopped"/);
    t.notOk(existsSync(pidFile), 'the embedded PostgreSQL stopped');
  },
);

t.test('a restart keeps all data and creates no second demo', async (t) => {
  const run = launch(['serve']);
  const m = await waitFor(run, /running at (\S+)/);
  await new Promise((r) => setTimeout(r, 300));
  t.notMatch(run.output(), /First start/);
  const me = await currentUser(m[1]!, demo.key, demo.org);
  t.equal(me.body[0].result.data.id.length, 36, 'the demo key still works');
  run.child.kill('SIGTERM');
  t.equal(await run.exited, 0);
});

t.test('a server orphaned by a killed process is detected and replaced', async (t) => {
  const killed = launch(['serve']);
  await waitFor(killed, /running at (\S+)/);
  killed.child.kill('SIGKILL');
  await killed.exited;
  t.ok(existsSync(pidFile), 'the killed service left its PostgreSQL running');
  const run = launch(['serve']);
  const m = await waitFor(run, /running at (\S+)/);
  const me = await currentUser(m[1]!, demo.key, demo.org);
  t.equal(me.status, 200);
  run.child.kill('SIGINT');
  t.equal(await run.exited, 0);
  t.notOk(existsSync(pidFile));
});

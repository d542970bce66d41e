// Closing the terminal (or losing the SSH session) sends SIGHUP: the service stops as cleanly as on
// Ctrl-C (its embedded PostgreSQL stopped, nothing left running), also when its terminal is gone
// and every write to it fails, and it ends as SIGHUP ends a process rather than by Node's abort
// on restoring a terminal that no longer exists.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot, serviceEntry } from '../setup/paths.ts';
import { launcher, until, waitFor } from './processes.ts';

const root = await mkdtemp(path.join(tmpdir(), 'royalty-hangup-'));
// PostgreSQL runs as the postgres user when the tests run as root: it must reach its directory
await chmod(root, 0o755);
const launch = launcher(t);
t.teardown(() => rm(root, { recursive: true, force: true }));

const env = (dataDir: string): NodeJS.ProcessEnv => ({
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'info',
  DEMO_BOOTSTRAP: 'false',
  FX_RATES_URL: '',
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const postmasterPid = (dataDir: string) =>
  Number.parseInt(
    readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]!,
    10,
  );

t.test('SIGHUP stops the service cleanly, its embedded PostgreSQL with it', async (t) => {
  const dataDir = path.join(root, 'pipe');
  const run = launch(['serve'], env(dataDir));
  await waitFor(run, /running at (\S+)/, 120_000);
  const postmaster = postmasterPid(dataDir);
  run.child.kill('SIGHUP');
  t.same(await run.exited, { code: 0, signal: null });
  t.match(run.output(), /"signal":"SIGHUP","msg":"shutting down"/);
  t.match(run.output(), /"msg":"stopped"/);
  t.notOk(alive(postmaster), 'the embedded PostgreSQL is stopped');
  t.notOk(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')));
});

const hasScript = spawnSync('script', ['--version']).status === 0;

t.test(
  'the terminal closed under it: a clean stop though every write to it fails',
  { skip: !hasScript && 'needs script(1) for a terminal' },
  async (t) => {
    const dataDir = path.join(root, 'tty');
    const errors = path.join(root, 'tty-stderr');
    const command = `${process.execPath} ${serviceEntry} serve 2>${errors}`;
    // script(1) runs the service on a terminal of its own; killing script closes that terminal
    const terminal = spawn('script', ['-qfc', command, '/dev/null'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env(dataDir) },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    t.teardown(() => void (terminal.exitCode === null && terminal.kill('SIGKILL')));
    let out = '';
    terminal.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await until('the service runs', () => /running at/.test(out), 120_000);
    const postmaster = postmasterPid(dataDir);
    const registry = JSON.parse(readFileSync(path.join(dataDir, 'pg.users.json'), 'utf8')) as {
      users: { pid: number }[];
    };
    const service = registry.users[0]!.pid;

    terminal.kill('SIGKILL');
    await until('the service has ended', () => !alive(service), 60_000);
    t.notOk(alive(postmaster), 'the embedded PostgreSQL is stopped');
    t.notOk(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')));
    t.notOk(
      existsSync(path.join(dataDir, 'pg.users.json')),
      'no process is left registered as using it',
    );
    t.notMatch(readFileSync(errors, 'utf8'), /Assertion failed|fatal/, 'no abort, no failure');
  },
);

// Several processes on one embedded PostgreSQL (one DATA_DIR, no DATABASE_URL): whichever started
// it, the server stops with the last live process using it, and a server left by killed
// processes is orphaned however its parent changed (also under a child subreaper, as under
// systemd --user or a container's init).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { launcher, until, waitFor, type Running } from './processes.ts';
import { serviceEntry } from '../setup/paths.ts';

const dataDir = await mkdtemp(path.join(tmpdir(), 'royalty-sharing-'));
// PostgreSQL runs as the postgres user when the tests run as root: it must reach its directory
await chmod(dataDir, 0o755);
const launch = launcher(t);
const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
const registry = path.join(dataDir, 'pg.users.json');

/** the running postmaster's pid, if any */
function postmaster(): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

const users = (): number[] =>
  existsSync(registry)
    ? (JSON.parse(readFileSync(registry, 'utf8')) as { users: { pid: number }[] }).users.map(
        (u) => u.pid,
      )
    : [];

const env: NodeJS.ProcessEnv = {
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'info',
  DEMO_BOOTSTRAP: 'false',
  FX_RATES_URL: '',
};

async function start(
  extra: NodeJS.ProcessEnv = {},
  command?: string[],
): Promise<{ run: Running; url: string }> {
  const run = launch(['api'], { ...env, ...extra }, command);
  const m = await waitFor(run, /running at (\S+)/, 120_000);
  return { run, url: m[1]! };
}

async function health(url: string) {
  const res = await fetch(`${url}/trpc/health`);
  return { status: res.status, body: (await res.json()) as any };
}

t.teardown(async () => {
  // whatever a failed test left running
  const pid = postmaster();
  if (pid) process.kill(pid, 'SIGINT');
  await until('the test server stopped', () => postmaster() === undefined, 30_000).catch(() => {});
  await rm(dataDir, { recursive: true, force: true });
});

t.test(
  'the process that started the server stops first: the other keeps its database; the last stops it',
  async (t) => {
    const a = await start();
    const server = postmaster();
    t.ok(server, 'the first process started the server');
    t.same(users(), [a.run.child.pid]);
    const b = await start();
    t.match(b.run.output(), /sharing the embedded PostgreSQL/);
    t.same(users().sort(), [a.run.child.pid, b.run.child.pid].sort());

    a.run.child.kill('SIGINT');
    t.same(await a.run.exited, { code: 0, signal: null });
    t.match(a.run.output(), /leaving the embedded PostgreSQL running for process/);
    t.equal(postmaster(), server, 'the server still runs');
    t.same(users(), [b.run.child.pid]);
    const h = await health(b.url);
    t.equal(h.status, 200);
    t.match(
      h.body,
      { result: { data: { checks: { database: 'ok' } } } },
      'the other process still has its database',
    );

    b.run.child.kill('SIGTERM');
    t.same(await b.run.exited, { code: 0, signal: null });
    t.equal(postmaster(), undefined, 'the last process stopped it');
    t.notOk(existsSync(registry));
  },
);

t.test('a sharer killed meanwhile does not keep the server running', async (t) => {
  const a = await start();
  const b = await start();
  b.run.child.kill('SIGKILL');
  await b.run.exited;
  a.run.child.kill('SIGINT');
  t.same(await a.run.exited, { code: 0, signal: null });
  t.equal(postmaster(), undefined, 'stopped: its only other user is dead');
});

const subreaperAvailable =
  spawnSync('python3', ['-c', 'import ctypes; assert ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0'])
    .status === 0;

const orphanTest =
  'a server whose users were all killed is orphaned, also when a child subreaper adopted it';
t.test(
  orphanTest,
  { skip: subreaperAvailable ? false : 'needs python3 and prctl(PR_SET_CHILD_SUBREAPER)' },
  async (t) => {
    // a child subreaper (like systemd --user) that runs the service and stays alive
    const subreaper = [
      'python3',
      '-c',
      [
        'import ctypes, os, subprocess, sys, time',
        'assert ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0',
        'subprocess.Popen(sys.argv[1:])',
        'while True:',
        '    try:',
        '        os.waitpid(-1, 0)',
        '    except ChildProcessError:',
        '        time.sleep(0.2)',
      ].join('\n'),
      process.execPath,
      serviceEntry,
    ];
    const { run: reaper } = await start({}, subreaper);
    const orphan = postmaster()!;
    const [service] = users();
    t.ok(
      service && service !== reaper.child.pid,
      'the service, a child of the subreaper, started the server',
    );
    process.kill(service!, 'SIGKILL');
    await until('the service is gone', () => {
      try {
        process.kill(service!, 0);
        return false;
      } catch {
        return true;
      }
    });
    const parent = Number.parseInt(
      readFileSync(`/proc/${orphan}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]!,
      10,
    );
    t.equal(
      parent,
      reaper.child.pid,
      'the subreaper adopted the server: its parent is alive and not init',
    );

    const next = await start();
    t.match(next.run.output(), /stopping an orphaned embedded PostgreSQL/);
    t.not(postmaster(), orphan, 'a new server replaced the orphaned one');
    t.equal((await health(next.url)).status, 200);
    next.run.child.kill('SIGINT');
    t.same(await next.run.exited, { code: 0, signal: null });
    t.equal(postmaster(), undefined);
    reaper.child.kill('SIGKILL');
    await reaper.exited;
  },
);

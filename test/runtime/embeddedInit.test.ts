// The embedded PostgreSQL's first start, interrupted: a start killed outright while initdb runs
// leaves nothing that stops the next one (the cluster is made in DATA_DIR/pg.init-… and renamed
// to pg/ once complete); a Ctrl-C in the terminal, which reaches initdb too, stops the start
// quietly; a pg/ that is not a cluster is refused with a message and left as it is.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { launcher, until, waitFor } from './processes.ts';

const root = await mkdtemp(path.join(tmpdir(), 'royalty-init-'));
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

/** pids of the processes whose command line mentions `text` */
function processesWith(text: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const initdbOf = (dataDir: string) =>
  processesWith('initdb').filter((pid) =>
    readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir),
  );

/** Starts `args` in a process group of its own, as a terminal runs a command, and waits for its initdb. */
async function startUntilInitdb(dataDir: string, args: string[]) {
  const run = launch(args, env(dataDir), undefined, { detached: true });
  await until(
    'initdb runs',
    () => initdbOf(dataDir).length > 0 || run.child.exitCode !== null,
    120_000,
  );
  if (initdbOf(dataDir).length === 0)
    throw new Error(`initdb was not seen; output:\n${run.output()}`);
  return run;
}

t.test(
  'a first start killed outright while initdb runs does not break the next start',
  async (t) => {
    const dataDir = path.join(root, 'killed');
    const first = await startUntilInitdb(dataDir, ['migrate']);
    // the whole process group, initdb with it: what a closed terminal's SIGKILL or a lost machine does
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.exited;
    await until('initdb is gone', () => initdbOf(dataDir).length === 0, 30_000);
    t.notOk(existsSync(path.join(dataDir, 'pg', 'PG_VERSION')), 'no half-made cluster under pg/');

    const second = launch(['migrate'], env(dataDir));
    const { code } = await second.exited;
    t.equal(code, 0, 'the next start initialises a new cluster and migrates');
    if (code !== 0) t.comment(second.output());
    t.ok(existsSync(path.join(dataDir, 'pg', 'PG_VERSION')), 'the cluster is under pg/');
    t.same(
      readdirSync(dataDir).filter((n) => n.startsWith('pg.init-')),
      [],
      'what the killed initialisation left is removed',
    );
    t.same(processesWith(path.join(dataDir, 'pg')), [], 'its embedded PostgreSQL is stopped');
  },
);

t.test('Ctrl-C while initdb runs stops the start quietly, and the next start works', async (t) => {
  const dataDir = path.join(root, 'ctrl-c');
  const first = await startUntilInitdb(dataDir, ['serve']);
  // a terminal's Ctrl-C: SIGINT to the foreground process group, initdb included
  process.kill(-first.child.pid!, 'SIGINT');
  const { code } = await first.exited;
  t.equal(code, 0, 'asked to stop, it stops');
  t.notMatch(first.stderr(), /cannot start|initdb failed/, 'no failure reported');
  t.match(first.output(), /"msg":"stopped"/);
  t.same(processesWith(dataDir), [], 'nothing of it keeps running');

  const second = launch(['migrate'], env(dataDir));
  const next = await second.exited;
  t.equal(next.code, 0, 'the next start works');
  if (next.code !== 0) t.comment(second.output());
  t.ok(existsSync(path.join(dataDir, 'pg', 'PG_VERSION')));
});

t.test(
  'a pg/ that holds something other than a cluster is refused and left untouched',
  async (t) => {
    const dataDir = path.join(root, 'foreign');
    await mkdir(path.join(dataDir, 'pg'), { recursive: true });
    await writeFile(path.join(dataDir, 'pg', 'notes.txt'), 'mine\n');
    const run = launch(['migrate'], env(dataDir));
    const { code } = await run.exited;
    t.equal(code, 1);
    t.match(
      run.stderr(),
      `cannot start migrate: ${path.join(dataDir, 'pg')} is not empty but holds no PostgreSQL data (no PG_VERSION)`,
    );
    t.equal(readFileSync(path.join(dataDir, 'pg', 'notes.txt'), 'utf8'), 'mine\n');
  },
);

t.test(
  "a cluster of another PostgreSQL version: the server's own reason, not the log of earlier runs",
  async (t) => {
    const dataDir = path.join(root, 'other-version');
    const made = launch(['migrate'], env(dataDir));
    t.equal((await made.exited).code, 0);
    await writeFile(path.join(dataDir, 'pg', 'PG_VERSION'), '15\n');
    const run = launch(['migrate'], env(dataDir));
    t.equal((await run.exited).code, 1);
    t.match(
      run.stderr(),
      `cannot start migrate: embedded PostgreSQL did not start (${path.join(dataDir, 'pg.log')}):`,
    );
    t.match(
      run.stderr(),
      'The data directory was initialized by PostgreSQL version 15, which is not compatible',
    );
    t.notMatch(
      run.stderr(),
      /database system is shut down|ready to accept connections/,
      'the earlier runs are not quoted',
    );
  },
);

t.test(
  "a stale postmaster.pid naming another cluster's running server: that server is left alone",
  async (t) => {
    const mine = path.join(root, 'stale-pid');
    const made = launch(['migrate'], env(mine));
    t.equal((await made.exited).code, 0);
    // another DATA_DIR's service, whose server has the pid the stale file names (a reboot reuses pids)
    const other = path.join(root, 'other-service');
    const service = launch(['api'], env(other));
    const url = (await waitFor(service, /running at (\S+)/, 120_000))[1]!;
    const otherPostmaster = Number.parseInt(
      readFileSync(path.join(other, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]!,
      10,
    );
    const stale = readFileSync(path.join(other, 'pg', 'postmaster.pid'), 'utf8').split('\n');
    stale[1] = path.join(mine, 'pg');
    await writeFile(path.join(mine, 'pg', 'postmaster.pid'), stale.join('\n'));

    const run = launch(['migrate'], env(mine));
    t.equal((await run.exited).code, 0, 'the stale file is set aside and the cluster starts');
    t.notMatch(run.output(), /stopping an orphaned embedded PostgreSQL/);
    t.doesNotThrow(() => process.kill(otherPostmaster, 0), "the other cluster's server still runs");
    const health = (await (await fetch(`${url}/trpc/health`)).json()) as {
      result: { data: { checks: unknown } };
    };
    t.same(
      health.result.data.checks,
      { database: 'ok', objectStore: 'ok' },
      'and its service still has its database',
    );
    service.child.kill('SIGINT');
    t.equal((await service.exited).code, 0);
  },
);

t.test(
  'as root, a DATA_DIR the postgres user cannot reach is named with the way out',
  { skip: process.getuid?.() !== 0 && 'runs as root only' },
  async (t) => {
    const closed = path.join(root, 'closed');
    await mkdir(closed, { mode: 0o700 });
    await chmod(closed, 0o700);
    const dataDir = path.join(closed, 'data');
    const run = launch(['migrate'], env(dataDir));
    const { code } = await run.exited;
    t.equal(code, 1);
    t.match(run.stderr(), /cannot start migrate: initdb failed \(1\): .*Permission denied/);
    t.match(
      run.stderr(),
      `runs as the system user "postgres": every directory above ${dataDir} must be searchable by that user`,
    );
    t.same(
      readdirSync(dataDir).filter((n) => n.startsWith('pg')),
      [],
      'nothing half-made is left',
    );
  },
);

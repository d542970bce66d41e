// Starts what a process role needs, in order, and stops it in reverse: the embedded servers
// when nothing is configured, the pool, migrations, the object store, worker threads, the job
// runner and the HTTP server. A forced exit (src/cli/signals.ts) gets a best effort instead:
// the jobs this process holds released for other workers, their work directories removed, the
// embedded PostgreSQL stopped unless another process uses it.
import type { FastifyInstance } from 'fastify';
import type { Task, TaskList } from 'graphile-worker';
import { access, constants as fs, mkdir, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { destination, pino } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { syncMappingLibrary } from './ingest/library.ts';
import { createPool, withTransaction, type Pool } from './db/pool.ts';
import { STATEMENT_INGEST_TASK } from './ingest/queue.ts';
import { startJobRunner, type JobRunner } from './jobs/runner.ts';
import { crontab, taskList as defaultTaskList } from './jobs/tasks.ts';
import {
  bootstrapIn,
  isEmptyInstallation,
  type BootstrapResult,
} from './organizations/bootstrap.ts';
import { startDefaultObjectStore, type DefaultObjectStore } from './storage/embedded.ts';
import { ObjectStore } from './storage/objectStore.ts';
import type { Deps } from './deps.ts';
import { createThreadPool, type ThreadPool } from './workers/threadPool.ts';
import path from 'node:path';

export type Role = 'serve' | 'api' | 'worker' | 'migrate';

export interface Runtime {
  deps: Deps;
  app: FastifyInstance | undefined;
  /** the base URL the API listens on */
  url: string | undefined;
  /** set when this start created the demo organization */
  demo: BootstrapResult | undefined;
  embedded: { database: boolean; objectStore: boolean };
  /**
   * stops everything in reverse order; a running job is finished first (graphile-worker's
   * graceful shutdown), however long it takes: stopWithin bounds it
   */
  stop(): Promise<void>;
  /**
   * Settles with why the process cannot go on: the embedded PostgreSQL stopped and could not be
   * restarted (src/db/embedded.ts). Pending otherwise; the process is to stop and exit 1.
   */
  lost: Promise<Error>;
  /**
   * A forced exit's best effort, for when stop() takes too long: removes the work directories of
   * the statements this process is ingesting, releases its jobs for other workers (not counted as
   * an attempt) and stops the embedded PostgreSQL unless another process uses it. Waits for no
   * running work; the process is to exit right after.
   */
  abandon(): Promise<void>;
}

/** How the process asks a starting or running runtime to stop (src/cli/signals.ts). */
export interface Interruption {
  /** aborted when a shutdown is asked for: a start in progress stops at its next step */
  signal: AbortSignal;
  /** registers the best effort of a forced exit */
  onForce(release: () => Promise<void>): void;
}

export interface RuntimeOptions {
  /** replaces the task list (tests) */
  taskList?: (deps: Deps) => TaskList;
  log?: Deps['log'];
  interruption?: Interruption;
}

/** startRuntime was interrupted (and has stopped what it had started). */
export class StartInterrupted extends Error {
  override name = 'StartInterrupted';
}

/** a job this process runs: the forced exit releases it */
interface HeldJob {
  id: string;
  task: string;
  payload: unknown;
  /** graphile-worker's worker pool that locked it */
  lockedBy: string | null;
  attempts: number;
}

export function createLogger(config: Config): Deps['log'] {
  return pino({ level: config.logLevel, base: { pid: process.pid } }, logDestination(1));
}

/**
 * pino's own destination on a file descriptor (stdout: 1, stderr: 2), except that once a write
 * fails (the terminal was closed: EIO) nothing more is written, as pino does for EPIPE only:
 * otherwise the error is thrown from the next log call (ending a shutdown half-way) and, at the
 * exit, sonic-boom's flushSync retries the failed write every 100 ms for ever.
 */
export function logDestination(fd: number): ReturnType<typeof destination> {
  const stream = destination({ dest: fd, sync: false });
  stream.on('error', () => {
    const quiet = stream as unknown as Record<
      'write' | 'flush' | 'flushSync' | 'end' | 'destroy',
      (...args: unknown[]) => unknown
    >;
    quiet.write = () => true;
    quiet.flush = (cb?: unknown) => void (typeof cb === 'function' && cb());
    quiet.flushSync = () => {};
    quiet.end = () => {};
    quiet.destroy = () => {};
  });
  return stream;
}

/** What a start has made so far: its stop and a forced exit's best effort read it. */
interface Started {
  log: Deps['log'];
  /** the stop of each part started, taken last first */
  stack: (() => Promise<void>)[];
  /** the jobs this process runs now */
  held: Map<string, HeldJob>;
  database?: Database;
  threads?: ThreadPool;
}

/** Stops what was started, last first; a step that fails is logged and the next one taken. */
async function unwind({ stack, log }: Started): Promise<void> {
  while (stack.length > 0) {
    const step = stack.pop()!;
    await step().catch((error: unknown) => log.error({ err: error }, 'shutdown step failed'));
  }
}

/**
 * A forced exit's best effort: the threads interrupted, the running statements' work directories
 * removed, their jobs released for other workers, the embedded PostgreSQL stopped.
 */
async function releaseHeld({ log, held, database, threads }: Started): Promise<void> {
  // first the threads' DuckDB work is interrupted and waited for: the process exits next, and
  // ending a thread inside a DuckDB query aborts the process (workers/duckdb.ts)
  await threads
    ?.close()
    .catch((error: unknown) => log.error({ err: error }, 'could not close the worker threads'));
  const running = [...held.values()];
  // the statements' work directories first: once the jobs are released another worker may make its own
  const statements = running
    .filter((j) => j.task === STATEMENT_INGEST_TASK)
    .map((j) => (j.payload as { statementId?: unknown }).statementId);
  await removeIngestDirs(statements.filter((id): id is string => typeof id === 'string')).catch(
    (error: unknown) =>
      log.error({ err: error }, 'could not remove the work directories of interrupted statements'),
  );
  if (database && running.length > 0) {
    try {
      await releaseJobs(database.pool, running);
      log.warn(
        { jobs: running.map((j) => `${j.task}#${j.id}`) },
        'released the running jobs for other workers',
      );
    } catch (error) {
      log.error(
        { err: error },
        'could not release the running jobs (they stay locked until graphile-worker finds them stale)',
      );
    }
  }
  await database
    ?.abandon()
    .catch((error: unknown) => log.error({ err: error }, 'could not stop the embedded PostgreSQL'));
}

/**
 * A port in use (a second `npm start`) is told at once, before the embedded servers start and a
 * job runner takes jobs it would give up a moment later (PORT=0 too: a HOST that is no address of
 * this machine is told the same way); so is an unusable analytics directory, naming its
 * variable, not by the first query or export.
 */
async function checkPortAndAnalyticsDir(config: Config, role: Role): Promise<void> {
  if (role === 'serve' || role === 'api') await portAvailable(config.host, config.port);
  if (role !== 'migrate') {
    await usableDirectory('ANALYTICS_DIR (by default DATA_DIR/analytics)', config.analytics.dir);
  }
}

/** The configured object store, or the embedded one under DATA_DIR; its bucket made. */
async function openObjectStore(
  config: Config,
  started: Started,
): Promise<{ store: ObjectStore; embedded: boolean }> {
  let embeddedS3: DefaultObjectStore | undefined;
  if (!config.s3) {
    await usableDirectory('DATA_DIR', config.dataDir);
    embeddedS3 = await startDefaultObjectStore(config.dataDir, config.embeddedBucket);
    started.stack.push(() => embeddedS3!.stop());
    started.log.info({ socket: embeddedS3.socketPath }, 'embedded S3 server started');
  }
  const store = config.s3 ? new ObjectStore(config.s3) : embeddedS3!.store;
  started.stack.push(async () => store.destroy());
  await store.ensureBucket().catch((error: unknown) => {
    // a bare `connect ECONNREFUSED` or `Access Denied` would not say which of the configured servers it is
    if (!config.s3) throw error;
    throw new Error(
      `the object store of S3_ENDPOINT ${config.s3.endpoint} (S3_BUCKET ${config.s3.bucket}) cannot be used`,
      { cause: error },
    );
  });
  return { store, embedded: embeddedS3 !== undefined };
}

/**
 * The job runner, with the threads every statement needs warmed and the work directories a
 * killed process left removed. Returns the runner's graceful stop, once: it stops taking jobs,
 * waits for the running ones, then releases the runner.
 */
async function startJobs(
  deps: Deps,
  options: RuntimeOptions,
  started: Started,
): Promise<() => Promise<void>> {
  const { config, pool, threads, log } = deps;
  // the threads every statement needs are started now, not by the first statement
  threads.warm(['locateTable', 'normalize']);
  const runner: JobRunner = await startJobRunner({
    pool,
    taskList: tracked((options.taskList ?? defaultTaskList)(deps), started.held),
    crontab: options.taskList ? '' : crontab(config),
    concurrency: config.worker.concurrency,
    pollIntervalMs: config.worker.pollIntervalMs,
    log,
  });
  deps.jobRunner = runner;
  let stopping: Promise<void> | undefined;
  // and then for this process's own running tasks: graphile-worker's stop resolves even when its
  // graceful shutdown fails, and the threads and pool closed next would fail a task mid-way
  const stopRunner = () =>
    (stopping ??= runner.stop().then(async () => {
      while (started.held.size > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }));
  started.stack.push(stopRunner);
  // after the runner's start, which installs graphile-worker's schema in a new database
  const stale = await removeStaleIngestDirs(pool).catch((error: unknown) => {
    log.warn({ err: error }, 'could not look for work directories left by a killed process');
    return 0;
  });
  if (stale > 0)
    log.info({ directories: stale }, 'removed work directories left by a killed process');
  return stopRunner;
}

/** The HTTP server listening, on the runtime; the demo organization created when wanted. */
async function startHttp(
  runtime: Runtime,
  stopRunner: (() => Promise<void>) | undefined,
  started: Started,
  checkpoint: () => void,
): Promise<void> {
  const { deps } = runtime;
  const { config } = deps;
  const app = await buildApp(deps);
  // closing the server stops taking requests first; the job runner stops taking jobs at the
  // same time, not once the last request has ended
  started.stack.push(async () => {
    await Promise.all([app.close(), stopRunner?.()]);
  });
  const address = await app.listen({ port: config.port, host: config.host });
  runtime.app = app;
  runtime.url = config.publicUrl ?? address;
  checkpoint();
  const demoWanted =
    config.demoBootstrap === 'true' ||
    (config.demoBootstrap === 'auto' && runtime.embedded.database);
  if (demoWanted) runtime.demo = await createDemoOnce(deps);
}

export async function startRuntime(
  config: Config,
  role: Role,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const log = options.log ?? createLogger(config);
  const started: Started = { log, stack: [], held: new Map() };
  const stop = () => unwind(started);
  // once: the grace period's end and a forced exit may both ask for it
  let abandoning: Promise<void> | undefined;
  const abandon = () => (abandoning ??= releaseHeld(started));
  options.interruption?.onForce(abandon);
  const checkpoint = () => {
    if (options.interruption?.signal.aborted)
      throw new StartInterrupted('interrupted while starting');
  };
  try {
    await checkPortAndAnalyticsDir(config, role);
    const database = await openDatabase(config, log);
    started.database = database;
    started.stack.push(() => database.close());
    checkpoint();
    const { store, embedded: embeddedStore } = await openObjectStore(config, started);
    checkpoint();
    const threads = createThreadPool(config.threads);
    started.threads = threads;
    started.stack.push(() => threads.close());
    const deps: Deps = { config, pool: database.pool, store, threads, log };
    const runtime: Runtime = {
      deps,
      app: undefined,
      url: undefined,
      demo: undefined,
      embedded: { database: database.embedded, objectStore: embeddedStore },
      stop,
      lost: database.lost,
      abandon,
    };
    if (role === 'migrate') return runtime;
    /** the job runner's graceful stop, once (under serve it starts with the HTTP server's close) */
    let stopRunner: (() => Promise<void>) | undefined;
    if (role === 'serve' || role === 'worker') {
      stopRunner = await startJobs(deps, options, started);
      checkpoint();
    }
    if (role === 'serve' || role === 'api')
      await startHttp(runtime, stopRunner, started, checkpoint);
    return runtime;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** how long the release of a shutdown whose grace period is over may take */
const RELEASE_TIMEOUT_MS = 15_000;

/**
 * stop(), for at most `graceMs`: a request or job still running then (a hung job would hold the
 * shutdown for ever) is not waited for: the jobs this process runs are released for a retry, as
 * a forced exit releases them (abandon()), and the rest of the stop is left to the process's
 * exit. Whether everything stopped within the grace period.
 */
export async function stopWithin(
  runtime: Runtime,
  graceMs: number,
  log: Deps['log'],
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  const stopped = await Promise.race([runtime.stop().then(() => true as const), over]);
  clearTimeout(timer);
  if (stopped) return true;
  log.warn(
    { graceMs },
    'the shutdown grace period is over: releasing the running jobs for a retry, not waiting for them',
  );
  await Promise.race([
    runtime.abandon(),
    new Promise((resolve) => setTimeout(resolve, RELEASE_TIMEOUT_MS).unref()),
  ]);
  return false;
}

/** errors of a database that was never reached (a server down, a wrong host or port, a missing socket) */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ENOENT',
]);

/**
 * A configured database that cannot be reached, told as DATABASE_URL's (its host and port, never
 * its credentials): `connect ECONNREFUSED 127.0.0.1:5432` alone does not say which server it is.
 * Any other error (a missing database, a refused login) already names what is wrong.
 */
function namedUnreachable(error: unknown, databaseUrl: string): unknown {
  if (!UNREACHABLE.has((error as NodeJS.ErrnoException).code ?? '')) return error;
  const url = new URL(databaseUrl);
  // a socket directory (?host=/path) is where pg connects, whatever the URL's host says
  const where = url.searchParams.get('host') || url.host || 'localhost';
  // the original's message in this one's too: `admin` prints a message, not its causes
  return new Error(
    `the database of DATABASE_URL (${where}) cannot be reached: ${(error as Error).message}`,
    { cause: error },
  );
}

/** Makes `dir` if needed; fails with a message naming its variable when it cannot be written. */
async function usableDirectory(variable: string, dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, fs.W_OK | fs.X_OK);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    const why =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'it (or a directory above it) is a file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EROFS'
            ? 'a read-only file system'
            : (error as Error).message;
    throw new Error(`${variable} ${dir} cannot be used: ${why}`);
  }
}

/** Fails with a message naming PORT when the port cannot be listened on. */
async function portAvailable(host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        reject(
          new Error(
            `port ${port} of ${host} is in use (by another program, or another royalty engine): set PORT to a free port`,
          ),
        );
      else if (error.code === 'EACCES')
        reject(
          new Error(
            `port ${port} of ${host} needs privileges this process does not have: set PORT to 1024 or above`,
          ),
        );
      else if (
        error.code === 'ENOTFOUND' ||
        error.code === 'EAI_AGAIN' ||
        error.code === 'EAI_NONAME'
      )
        reject(
          new Error(
            `HOST ${host} is not a name this machine resolves: set HOST to an address of this machine (127.0.0.1, 0.0.0.0)`,
          ),
        );
      else if (error.code === 'EADDRNOTAVAIL')
        reject(
          new Error(
            `HOST ${host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1, 0.0.0.0)`,
          ),
        );
      else reject(error);
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The task list, noting which jobs run in this process (for a forced exit to release them). */
function tracked(taskList: TaskList, held: Map<string, HeldJob>): TaskList {
  const wrap =
    (task: Task, name: string): Task =>
    async (payload, helpers) => {
      const { id, locked_by: lockedBy, attempts } = helpers.job;
      held.set(id, { id, task: name, payload, lockedBy, attempts });
      try {
        return await task(payload, helpers);
      } finally {
        held.delete(id);
      }
    };
  return Object.fromEntries(
    Object.entries(taskList).map(([name, task]) => [name, wrap(task as Task, name)]),
  );
}

/**
 * Unlocks the jobs for any worker at once (graphile-worker's own SQL functions); a job interrupted
 * this way has not failed, so its attempt is given back (it may have been the last one).
 * WorkerUtils.rescheduleJobs cannot set attempts to 0 (it passes `attempts || null`).
 */
async function releaseJobs(pool: Pool, running: HeldJob[]): Promise<void> {
  const pools = [...new Set(running.map((j) => j.lockedBy).filter((w): w is string => w !== null))];
  await pool.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [pools]);
  for (const job of running) {
    await pool.query(
      'SELECT FROM graphile_worker.reschedule_jobs(ARRAY[$1]::bigint[], run_at := now(), attempts := $2::int)',
      [job.id, Math.max(0, job.attempts - 1)],
    );
  }
}

// Statement ingestion works in <tmp>/royalty-ingest/<statementId>-<random> (src/ingest/pipeline.ts)
// and removes it when done; a process that is killed leaves it.
const ingestRoot = () => path.join(tmpdir(), 'royalty-ingest');
const INGEST_DIR = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-[0-9a-f]+$/;

async function ingestDirs(): Promise<Map<string, string[]>> {
  const byStatement = new Map<string, string[]>();
  const names = await readdir(ingestRoot()).catch(() => [] as string[]);
  for (const name of names) {
    const id = INGEST_DIR.exec(name)?.[1];
    if (id) byStatement.set(id, [...(byStatement.get(id) ?? []), path.join(ingestRoot(), name)]);
  }
  return byStatement;
}

async function removeIngestDirs(statementIds: string[]): Promise<void> {
  if (statementIds.length === 0) return;
  const dirs = await ingestDirs();
  for (const id of statementIds)
    for (const dir of dirs.get(id) ?? []) await rm(dir, { recursive: true, force: true });
}

/**
 * Removes the work directories a killed process left: those of this database's statements that
 * no job holds now (a directory made before the look-up whose job is not locked at it has been
 * given up). Directories of other databases' statements are left to their own workers.
 */
export async function removeStaleIngestDirs(pool: Pool): Promise<number> {
  const dirs = await ingestDirs();
  if (dirs.size === 0) return 0;
  // graphile-worker's public jobs view has no payload
  const { rows } = await pool.query<{ id: string }>(
    `SELECT s.id::text AS id FROM statements s
     WHERE s.id = ANY ($1::uuid[])
       AND NOT EXISTS (
         SELECT 1 FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
         WHERE t.identifier = $2 AND j.locked_at IS NOT NULL AND j.payload->>'statementId' = s.id::text)`,
    [[...dirs.keys()], STATEMENT_INGEST_TASK],
  );
  let removed = 0;
  for (const { id } of rows) {
    for (const dir of dirs.get(id) ?? []) {
      await rm(dir, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

export interface Database {
  pool: Pool;
  /** true when the embedded PostgreSQL serves it */
  embedded: boolean;
  /** ends the pool (after its running queries), then the embedded PostgreSQL unless another process uses it */
  close(): Promise<void>;
  /** a forced exit's: only the embedded PostgreSQL, unless another process uses it; the pool is left to the exit */
  abandon(): Promise<void>;
  /** settles when the embedded PostgreSQL is gone for good (never for a configured database) */
  lost: Promise<Error>;
}

/** The configured database, or the embedded one; migrated. */
export async function openDatabase(config: Config, log: Deps['log']): Promise<Database> {
  let embeddedDb: EmbeddedDatabase | undefined;
  if (!config.databaseUrl) {
    await usableDirectory('DATA_DIR', config.dataDir);
    // sharing the running server of another process (the service, while an admin command runs) is routine
    embeddedDb = await startEmbeddedPostgres(config.dataDir, (m, level = 'warn') => log[level](m));
    if (embeddedDb.owned)
      log.info({ dataDir: path.join(config.dataDir, 'pg') }, 'embedded PostgreSQL started');
  }
  const pool = createPool(config.databaseUrl ?? embeddedDb!.url, config.databasePoolSize);
  const close = async () => {
    await pool.end();
    await embeddedDb?.stop();
  };
  const abandon = async () => {
    await embeddedDb?.stop();
  };
  try {
    const applied = await migrate(pool, (pending) => log.info({ pending }, 'applying migrations'));
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    // the shared library of mappings for well-known statement formats ships as data
    await syncMappingLibrary(pool);
  } catch (error) {
    await close();
    throw config.databaseUrl ? namedUnreachable(error, config.databaseUrl) : error;
  }
  const lost = embeddedDb?.lost ?? new Promise<Error>(() => {});
  void lost.then((error) => log.error({ err: error }, 'embedded PostgreSQL lost'));
  return { pool, embedded: embeddedDb !== undefined, close, abandon, lost };
}

const DEMO_LOCK = 72_100_002;

/** The demo organization, owner and API key, created once: on the first start of an empty database. */
async function createDemoOnce(deps: Deps): Promise<BootstrapResult | undefined> {
  return withTransaction(deps.pool, async (db) => {
    // two processes starting together must not both create it
    await db.query('SELECT pg_advisory_xact_lock($1)', [DEMO_LOCK]);
    if (!(await isEmptyInstallation(db))) return undefined;
    return bootstrapIn(db, { email: 'demo@example.com', organizationName: 'Demo Organization' });
  });
}

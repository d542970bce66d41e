// Starts what a process role needs, in order, and stops it in reverse: the embedded servers
// when nothing is configured, the pool, migrations, the object store, worker threads, the job
// runner and the HTTP server.
import type { FastifyInstance } from 'fastify';
import type { TaskList } from 'graphile-worker';
import { pino } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { syncMappingLibrary } from './ingest/library.ts';
import { createPool, withTransaction, type Pool } from './db/pool.ts';
import { createJobQueue, startJobRunner, type JobRunner } from './jobs/runner.ts';
import { crontab, taskList as defaultTaskList } from './jobs/tasks.ts';
import { bootstrapIn, isEmptyInstallation, type BootstrapResult } from './organizations/bootstrap.ts';
import { startEmbeddedS3, type EmbeddedObjectStore } from './storage/embedded.ts';
import { ObjectStore } from './storage/objectStore.ts';
import type { Deps } from './trpc/context.ts';
import { createThreadPool } from './workers/threadPool.ts';
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
  stop(): Promise<void>;
}

export interface RuntimeOptions {
  /** replaces the task list (tests) */
  taskList?: (deps: Deps) => TaskList;
  log?: Deps['log'];
}

export function createLogger(config: Config): Deps['log'] {
  return pino({ level: config.logLevel, base: { pid: process.pid } });
}

export async function startRuntime(config: Config, role: Role, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? createLogger(config);
  const stack: (() => Promise<void>)[] = [];
  const stop = async () => {
    while (stack.length > 0) {
      const step = stack.pop()!;
      await step().catch((error: unknown) => log.error({ err: error }, 'shutdown step failed'));
    }
  };
  try {
    const database = await openDatabase(config, log);
    stack.push(() => database.close());
    const { pool } = database;

    let embeddedS3: EmbeddedObjectStore | undefined;
    if (!config.s3) {
      embeddedS3 = await startEmbeddedS3(path.join(config.dataDir, 's3'), config.embeddedBucket);
      stack.push(() => embeddedS3!.stop());
      log.info({ endpoint: embeddedS3.settings.endpoint }, 'embedded S3 server started');
    }
    const store = new ObjectStore(config.s3 ?? embeddedS3!.settings);
    stack.push(async () => store.destroy());
    await store.ensureBucket();

    const threads = createThreadPool(config.threads);
    stack.push(() => threads.close());
    const jobs = await createJobQueue(pool, log);
    stack.push(async () => jobs.release());
    const deps: Deps = { config, pool, store, threads, jobs, log };

    const runtime: Runtime = {
      deps,
      app: undefined,
      url: undefined,
      demo: undefined,
      embedded: { database: database.embedded, objectStore: embeddedS3 !== undefined },
      stop,
    };
    if (role === 'migrate') return runtime;

    if (role === 'serve' || role === 'worker') {
      // the threads every statement needs are started now, not by the first statement
      threads.warm(['statementFile', 'normalize']);
      const runner: JobRunner = await startJobRunner({
        pool,
        taskList: (options.taskList ?? defaultTaskList)(deps),
        crontab: options.taskList ? '' : crontab(config),
        concurrency: config.worker.concurrency,
        pollIntervalMs: config.worker.pollIntervalMs,
        log,
      });
      stack.push(() => runner.stop());
    }

    if (role === 'serve' || role === 'api') {
      const app = await buildApp(deps);
      // closing the server stops taking requests first
      stack.push(() => app.close());
      const address = await app.listen({ port: config.port, host: config.host });
      runtime.app = app;
      runtime.url = config.publicUrl ?? address;
      const demoWanted = config.demoBootstrap === 'true' || (config.demoBootstrap === 'auto' && database.embedded);
      if (demoWanted) runtime.demo = await createDemoOnce(deps);
    }
    return runtime;
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface Database {
  pool: Pool;
  /** true when the embedded PostgreSQL serves it */
  embedded: boolean;
  close(): Promise<void>;
}

/** The configured database, or the embedded one; migrated. */
export async function openDatabase(config: Config, log: Deps['log']): Promise<Database> {
  let embeddedDb: EmbeddedDatabase | undefined;
  if (!config.databaseUrl) {
    embeddedDb = await startEmbeddedPostgres(config.dataDir, (m) => log.warn(m));
    log.info({ dataDir: path.join(config.dataDir, 'pg') }, 'embedded PostgreSQL started');
  }
  const pool = createPool(config.databaseUrl ?? embeddedDb!.url, config.databasePoolSize);
  const close = async () => {
    await pool.end();
    await embeddedDb?.stop();
  };
  try {
    const applied = await migrate(pool);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    // the shared library of mappings for well-known statement formats ships as data
    await syncMappingLibrary(pool);
  } catch (error) {
    await close();
    throw error;
  }
  return { pool, embedded: embeddedDb !== undefined, close };
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

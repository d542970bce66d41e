// The long-lived parts of a running service that domain modules use: configuration, the
// database pool, the object store, the thread pool and the logger (jobs are added with
// src/jobs/enqueue.ts, on the pool or in a transaction). Built once in
// src/runtime.ts; the tRPC context, job tasks and the admin CLI all carry the same object.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Pool } from './db/pool.ts';
import type { ObjectStore } from './storage/objectStore.ts';
import type { ThreadPool } from './workers/threadPool.ts';

/** Long-lived parts every procedure may use. */
export interface Deps {
  config: Config;
  pool: Pool;
  store: ObjectStore;
  threads: ThreadPool;
  log: FastifyBaseLogger;
  /** this process's job runner, in the roles that run one (serve, worker): whether jobs can run */
  jobRunner?: { running(): boolean };
}

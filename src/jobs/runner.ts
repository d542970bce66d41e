// graphile-worker inside the serve and worker roles. Several worker processes against one
// database share the jobs: that is how the service scales past one machine.
import { EventEmitter } from 'node:events';
import { Logger, makeWorkerUtils, run, type Runner, type Task, type TaskList, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import { createLiveness, recoverDeadRunnerJobs } from './liveness.ts';

/**
 * graphile-worker's log as ours. `routine`: tasks whose successful runs are logged at debug, not
 * info (the crontab's every-minute tasks would otherwise print a line each, every minute).
 */
export function workerLogger(log: FastifyBaseLogger, routine: ReadonlySet<string> = new Set()): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...meta };
    const job = (meta as { job?: { task_identifier?: string }; success?: boolean } | undefined) ?? {};
    if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else if (level === 'info' && !(job.success === true && routine.has(job.job?.task_identifier ?? ''))) log.info(fields, message);
    else log.debug(fields, message);
  });
}

/** The tasks a crontab runs (graphile-worker's format: five time fields, then the task). */
export function crontabTasks(crontab: string): Set<string> {
  return new Set(
    crontab
      .split('\n')
      .map((line) => line.trim().split(/\s+/)[5])
      .filter((task): task is string => task !== undefined && task !== ''),
  );
}

/** how long a stopping runner waits for its cron once its worker pool is released */
const CRON_STOP_GRACE_MS = 1_000;

export interface JobRunner {
  stop(): Promise<void>;
}

export async function startJobRunner(opts: {
  pool: Pool;
  taskList: TaskList;
  crontab: string;
  concurrency: number;
  pollIntervalMs: number;
  log: FastifyBaseLogger;
}): Promise<JobRunner> {
  // this process's worker pools are announced alive (src/jobs/liveness.ts) as graphile-worker makes them
  const liveness = createLiveness(opts.pool, (error) => opts.log.warn({ err: error }, 'job runner liveness connection failed'));
  const events: WorkerEvents = new EventEmitter();
  const claims = new Map<string, Promise<void>>();
  // the worker pool is done: its running jobs finished (or released), its connections given back
  const poolReleased = new Promise<void>((resolve) => events.once('pool:release', () => resolve()));
  events.on('pool:create', ({ workerPool }) => {
    claims.set(workerPool.id, liveness.claim(workerPool.id).catch(() => {}));
  });
  // graphile-worker may lock a job a moment before the pool's lock is taken (the recovery's grace
  // period covers that moment); no job's work starts before it is taken
  const taskList: TaskList = Object.fromEntries(
    Object.entries(opts.taskList).map(([name, task]) => [
      name,
      async (payload: unknown, helpers: Parameters<Task>[1]) => {
        await claims.get(helpers.job.locked_by ?? '');
        return (task as Task)(payload, helpers);
      },
    ]),
  );
  const runner: Runner = await run({
    events,
    pgPool: opts.pool,
    taskList,
    concurrency: opts.concurrency,
    pollInterval: opts.pollIntervalMs,
    // main.ts owns signals and shuts everything down in order
    noHandleSignals: true,
    logger: workerLogger(opts.log, crontabTasks(opts.crontab)),
    // Batched completion is awaited by graceful shutdown; unbatched completion is fire-and-forget
    // and can be lost when the pool closes right after stop() (a finished job left locked).
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    crontab: opts.crontab,
  });
  // the jobs of runners that died while this one was not running are free again at once
  const recovered = await recoverDeadRunnerJobs(opts.pool).catch((error: unknown) => {
    opts.log.warn({ err: error }, 'could not look for jobs locked by dead job runners');
    return { pools: [], jobs: 0 };
  });
  if (recovered.jobs > 0) opts.log.warn(recovered, 'unlocked the jobs of job runners that died');
  return {
    async stop() {
      // Stops taking jobs, waits for running ones, and releases the rest for other workers.
      // graphile-worker's stop also waits for its cron, which, once it failed to reach the
      // database (PostgreSQL down or restarting), sleeps up to a minute before trying again, in a
      // sleep nothing cuts short: once the worker pool is released the cron is given a moment
      // only (it stops at the end of its sleep without touching the database).
      const stopped = runner.stop().catch((error: unknown) => {
        // the runner had stopped on its own (its worker pool failed): logged by graphile-worker
        opts.log.debug({ err: error }, 'job runner already stopped');
      });
      await Promise.race([stopped, poolReleased.then(() => new Promise((resolve) => setTimeout(resolve, CRON_STOP_GRACE_MS).unref()))]);
      await liveness.release();
    },
  };
}

/** Enqueues jobs; used by procedures. */
export async function createJobQueue(pool: Pool, log: FastifyBaseLogger): Promise<WorkerUtils> {
  return makeWorkerUtils({ pgPool: pool, logger: workerLogger(log) });
}

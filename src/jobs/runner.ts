// graphile-worker inside the serve and worker roles. Several worker processes against one
// database share the jobs: that is how the service scales past one machine.
import { Logger, makeWorkerUtils, run, type Runner, type TaskList, type WorkerUtils } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';

export function workerLogger(log: FastifyBaseLogger): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...meta };
    if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else if (level === 'info') log.info(fields, message);
    else log.debug(fields, message);
  });
}

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
  const runner: Runner = await run({
    pgPool: opts.pool,
    taskList: opts.taskList,
    concurrency: opts.concurrency,
    pollInterval: opts.pollIntervalMs,
    // main.ts owns signals and shuts everything down in order
    noHandleSignals: true,
    logger: workerLogger(opts.log),
    // Batched completion is awaited by graceful shutdown; unbatched completion is fire-and-forget
    // and can be lost when the pool closes right after stop() (a finished job left locked).
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    crontab: opts.crontab,
  });
  return {
    async stop() {
      // Stops taking jobs, waits for running ones, and releases the rest for other workers.
      await runner.stop();
    },
  };
}

/** Enqueues jobs; used by procedures. */
export async function createJobQueue(pool: Pool, log: FastifyBaseLogger): Promise<WorkerUtils> {
  return makeWorkerUtils({ pgPool: pool, logger: workerLogger(log) });
}

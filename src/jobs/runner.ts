// graphile-worker inside the serve and worker roles. Several worker processes against one
// database share the jobs: that is how the service scales past one machine.
import { EventEmitter } from 'node:events';
import {
  Logger,
  run,
  type Runner,
  type Task,
  type TaskList,
  type WorkerEvents,
  type WorkerPool,
} from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import { createLiveness, recoverDeadRunnerJobs, type Liveness } from './liveness.ts';

/**
 * graphile-worker's log as ours. `routine`: tasks whose successful runs are logged at debug, not
 * info (the crontab's every-minute tasks would otherwise print a line each, every minute).
 */
export function workerLogger(
  log: FastifyBaseLogger,
  routine: ReadonlySet<string> = new Set(),
): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...meta };
    const job =
      (meta as { job?: { task_identifier?: string }; success?: boolean } | undefined) ?? {};
    if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else if (
      level === 'info' &&
      !(job.success === true && routine.has(job.job?.task_identifier ?? ''))
    )
      log.info(fields, message);
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

/**
 * How long a job runner that stopped on its own waits before starting again: the first delay,
 * doubled after each start that fails (its database still unreachable) and each runner that
 * fails within STEADY_MS of its start, up to the last.
 */
export const restartSettings = { firstDelayMs: 500, maxDelayMs: 10_000 };
/** a runner that fails sooner than this after its start does not bring the delay back to the first */
const STEADY_MS = 60_000;

export interface JobRunner {
  stop(): Promise<void>;
  /** whether jobs can run: false from the moment its worker pool fails until a new one runs */
  running(): boolean;
}

interface RunnerOptions {
  pool: Pool;
  taskList: TaskList;
  crontab: string;
  concurrency: number;
  pollIntervalMs: number;
  log: FastifyBaseLogger;
}

/** One graphile-worker runner of a JobRunner: the first, or one started after the one before failed. */
interface Generation {
  runner: Runner;
  /** its worker pools (one, unless graphile-worker changes) */
  pools: string[];
  /** its worker pool is done: running jobs finished (or released), connections given back */
  poolReleased: Promise<void>;
  failed: boolean;
  startedAt: number;
}

/**
 * graphile-worker's runner, started again whenever it stops on its own, for as long as it takes.
 * A runner stops for good on the first error marking a job completed or failed: 0.17's batched
 * completion never retries (graphile/worker#636), so PostgreSQL restarting under a running job
 * ended all job processing until the process was restarted. Its jobs it could not mark are
 * unlocked once its worker pool is done (the attempt of a failed one stays counted).
 */
export async function startJobRunner(opts: RunnerOptions): Promise<JobRunner> {
  // this process's worker pools are announced alive (src/jobs/liveness.ts) as graphile-worker makes them
  const liveness = createLiveness(opts.pool, (error) =>
    opts.log.warn({ err: error }, 'job runner liveness connection failed'),
  );
  const claims = new Map<string, Promise<void>>();
  // the queued jobs done as their task returned (completingQueued): their queue is free already
  const doneEarly = new Set<string>();
  const taskList = completingQueued(afterClaim(opts.taskList, claims), opts.pool, doneEarly);
  const claim = (poolId: string) =>
    void claims.set(
      poolId,
      liveness.claim(poolId).catch(() => {}),
    );
  let stopping = false;
  let current: Generation | undefined;
  let launching: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = restartSettings.firstDelayMs;
  const retiring = new Set<Promise<void>>();

  const launch = () => launchGeneration(opts, taskList, claim, failed, doneEarly);
  function failed(generation: Generation, reason: string) {
    if (stopping || generation.failed) return;
    generation.failed = true;
    if (current === generation) current = undefined;
    opts.log.error(
      { reason },
      'the job runner stopped on its own: no jobs run until a new one starts',
    );
    // one that keeps failing soon after its start (a job that makes it fail) is started again ever less often
    const steady = Date.now() - generation.startedAt >= STEADY_MS;
    delay = steady ? restartSettings.firstDelayMs : Math.min(delay * 2, restartSettings.maxDelayMs);
    const retired = retire(generation, opts.pool, liveness, () => stopping).finally(() =>
      retiring.delete(retired),
    );
    retiring.add(retired);
    restartLater();
  }
  function restartLater() {
    if (stopping || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      launching = launch().then(
        (generation) => {
          launching = undefined;
          current = generation;
          opts.log.warn('the job runner started again');
        },
        (error: unknown) => {
          launching = undefined;
          delay = Math.min(delay * 2, restartSettings.maxDelayMs);
          opts.log.warn(
            { err: error },
            `the job runner could not start again: trying again in ${delay} ms`,
          );
          restartLater();
        },
      );
    }, delay);
    timer.unref();
  }

  current = await launch();
  await freeDeadRunnersJobs(opts);
  return {
    running: () => current !== undefined && !current.failed,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await launching;
      await Promise.all([current && stopGeneration(current, opts.log), ...retiring]);
      await liveness.release();
    },
  };
}

/** The jobs of runners that died while this one was not running are free again at once. */
async function freeDeadRunnersJobs(opts: RunnerOptions): Promise<void> {
  const recovered = await recoverDeadRunnerJobs(opts.pool).catch((error: unknown) => {
    opts.log.warn({ err: error }, 'could not look for jobs locked by dead job runners');
    return { pools: [], jobs: 0 };
  });
  if (recovered.jobs > 0) opts.log.warn(recovered, 'unlocked the jobs of job runners that died');
}

/**
 * The task list, each task waiting for its worker pool's liveness lock: graphile-worker may lock
 * a job a moment before the pool's lock is taken (the recovery's grace period covers that
 * moment); no job's work starts before it is taken.
 */
function afterClaim(tasks: TaskList, claims: Map<string, Promise<void>>): TaskList {
  return Object.fromEntries(
    Object.entries(tasks).map(([name, task]) => [
      name,
      async (payload: unknown, helpers: Parameters<Task>[1]) => {
        await claims.get(helpers.job.locked_by ?? '');
        return (task as Task)(payload, helpers);
      },
    ]),
  );
}

/**
 * The task list, each task of a named queue marking its job done as soon as it returns, before
 * graphile-worker's worker asks for its next job: graphile-worker marks a job done (deletes it
 * and unlocks its queue) without its worker waiting for that, so the worker found its own queue
 * still locked and slept until nudged (nudgeWhenQueueFree), a look or more at the job and a
 * second request for a job later. Its own marking then finds the job gone and does nothing. The
 * ids so done go into `doneEarly`; a job that failed, or whose marking here failed, is left to
 * graphile-worker and the nudge.
 */
export function completingQueued(tasks: TaskList, pool: Pool, doneEarly: Set<string>): TaskList {
  return Object.fromEntries(
    Object.entries(tasks).map(([name, task]) => [
      name,
      async (payload: unknown, helpers: Parameters<Task>[1]) => {
        const result: unknown = await (task as Task)(payload, helpers);
        const { job } = helpers;
        if (job.job_queue_id !== null && job.locked_by !== null)
          await completeQueuedJob(pool, job.id, job.locked_by).then(
            () => doneEarly.add(job.id),
            () => {}, // graphile-worker marks it anyway
          );
        return result;
      },
    ]),
  ) as TaskList;
}

/**
 * Marks a job of a named queue done as graphile-worker 0.17 does (its batchCompleteJobs): the
 * job deleted and its queue unlocked if this worker pool (`lockedBy`) still holds it.
 */
async function completeQueuedJob(pool: Pool, jobId: string, lockedBy: string): Promise<void> {
  await pool.query(
    `WITH j AS (DELETE FROM graphile_worker._private_jobs WHERE id = $1 RETURNING job_queue_id)
     UPDATE graphile_worker._private_job_queues q SET locked_by = NULL, locked_at = NULL
     FROM j WHERE q.id = j.job_queue_id AND q.locked_by = $2`,
    [jobId, lockedBy],
  );
}

/** Starts a graphile-worker runner; `failed` is told when it stops without being asked to. */
async function launchGeneration(
  opts: RunnerOptions,
  taskList: TaskList,
  claim: (poolId: string) => void,
  failed: (generation: Generation, reason: string) => void,
  doneEarly: Set<string>,
): Promise<Generation> {
  const events: WorkerEvents = new EventEmitter();
  const pools: string[] = [];
  const poolReleased = new Promise<void>((resolve) => events.once('pool:release', () => resolve()));
  events.on('pool:create', ({ workerPool }) => {
    pools.push(workerPool.id);
    claim(workerPool.id);
  });
  events.on('job:complete', ({ job, worker }) => {
    if (job.job_queue_id !== null && !doneEarly.delete(job.id))
      void nudgeWhenQueueFree(opts.pool, worker.workerPool, job.id, opts.pollIntervalMs);
  });
  const runner = await run({
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
  const generation: Generation = {
    runner,
    pools,
    poolReleased,
    failed: false,
    startedAt: Date.now(),
  };
  // a shutdown this runner did not ask for is graphile-worker giving up (a job it could not mark
  // done or failed, a worker that died); the runner's promise settles once it has stopped
  events.on('pool:gracefulShutdown', ({ message }) => failed(generation, message));
  runner.promise.then(
    () => failed(generation, 'the job runner stopped'),
    (error: unknown) => failed(generation, String(error)),
  );
  return generation;
}

/**
 * Once a failed runner's worker pool is done, its liveness locks are given back and the jobs it
 * still holds locked (those it could not mark) unlocked for any runner; tried until the database
 * answers. If the process stops first, job_runner_recover of any runner unlocks them.
 */
async function retire(
  generation: Generation,
  pool: Pool,
  liveness: Liveness,
  stopping: () => boolean,
): Promise<void> {
  await generation.poolReleased;
  await liveness.unclaim(generation.pools).catch(() => {});
  for (
    let wait = restartSettings.firstDelayMs;
    !stopping();
    wait = Math.min(wait * 2, restartSettings.maxDelayMs)
  ) {
    try {
      await pool.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [
        generation.pools,
      ]);
      return;
    } catch {
      await sleep(wait);
    }
  }
}

/**
 * Stops taking jobs, waits for running ones, and releases the rest for other workers.
 * graphile-worker's stop also waits for its cron, which, once it failed to reach the database
 * (PostgreSQL down or restarting), sleeps up to a minute before trying again, in a sleep nothing
 * cuts short: once the worker pool is released the cron is given a moment only (it stops at the
 * end of its sleep without touching the database).
 */
async function stopGeneration(generation: Generation, log: FastifyBaseLogger): Promise<void> {
  const stopped = generation.runner.stop().catch((error: unknown) => {
    // the runner had stopped on its own (its worker pool failed): logged by graphile-worker
    log.debug({ err: error }, 'job runner already stopped');
  });
  await Promise.race([stopped, generation.poolReleased.then(() => sleep(CRON_STOP_GRACE_MS))]);
}

/** how often the end of a queued job's completion is looked for (nudgeWhenQueueFree) */
const QUEUE_FREE_CHECK_MS = 5;

/**
 * A job of a named queue (a statement's, src/ingest/queue.ts) keeps its queue locked until
 * graphile-worker marks it done, which its worker does not wait for: the worker asks for its next
 * job at once, finds the queue still locked, and sleeps its poll interval; and no notification
 * follows a completion. So a burst of one organization's statements ran with a pause of up to the
 * poll interval between two of a queue. A job that succeeded is marked done before that
 * (completingQueued); for one that failed, or whose marking there failed, once the job is no
 * longer locked (done, or failed and waiting for its retry), an idle worker of the pool is
 * nudged; after the poll interval its own polling has taken over anyway.
 */
async function nudgeWhenQueueFree(
  pool: Pool,
  workerPool: WorkerPool,
  jobId: string,
  withinMs: number,
): Promise<void> {
  const until = Date.now() + withinMs;
  try {
    while (Date.now() < until && !workerPool.abortSignal.aborted) {
      const { rowCount } = await pool.query(
        'SELECT 1 FROM graphile_worker.jobs WHERE id = $1 AND locked_at IS NOT NULL',
        [jobId],
      );
      if (!rowCount) {
        if (!workerPool._shuttingDown) workerPool.nudge(1);
        return;
      }
      await sleep(QUEUE_FREE_CHECK_MS);
    }
  } catch {
    // a courtesy: the workers' own polling finds the job anyway
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

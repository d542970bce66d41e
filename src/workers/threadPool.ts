// The piscina pool for CPU work on statement files: one pool whose threads run every task of
// tasks.ts, so THREADS_MAX is the number of threads there are. Each task is a method of the pool
// typed from tasks.ts (threads.normalize(input)); a worker function answers { ok, ... } and a
// refusal becomes an AppError here again.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError, isErrorCode } from '../errors.ts';
import type { Config } from '../config.ts';
import { fromSource, projectPath, workerModuleUrl } from '../paths.ts';
import {
  taskFunctions,
  type TaskInput,
  type TaskName,
  type TaskOutput,
  type WorkerFailure,
} from './tasks.ts';

export interface TaskOptions {
  /**
   * Aborting it ends the task, a running one by terminating its thread. Only for pure JavaScript
   * work: a thread terminated inside DuckDB takes the process with it (pitfalls.md).
   */
  signal?: AbortSignal | undefined;
  transferList?: ArrayBuffer[];
}

/** One method per task of tasks.ts: its input in, its answer (without `ok`) out, a refusal thrown as an AppError. */
export type ThreadTaskMethods = {
  [K in TaskName]: (input: TaskInput<K>, options?: TaskOptions) => Promise<TaskOutput<K>>;
};

export interface ThreadPool extends ThreadTaskMethods {
  /**
   * Runs `fn` of a worker module that is not one of tasks.ts (workers/<module>.ts, `module` a path
   * from there): for the thread pool's own tests, which need work of their own in its threads.
   */
  runInModule(module: string, fn: string, input: unknown, options?: TaskOptions): Promise<object>;
  readonly stats: { threads: number; queueSize: number; completed: number };
  /**
   * Starts THREADS_WARM threads now with these tasks' modules loaded, and keeps them alive when
   * idle: a statement then finds a thread ready (a fresh one takes about 0.2-0.6 s per module).
   * Call it before the first task: the pool's threads start with what it asks.
   */
  warm(tasks: TaskName[]): void;
  /**
   * Refuses new tasks and the queued ones, interrupts the DuckDB queries of the running ones
   * (they end with SERVICE_UNAVAILABLE, retried as jobs), waits for them, then ends the threads.
   * Once: a later call returns the same promise.
   */
  close(): Promise<void>;
}

/** how often a closing pool interrupts the DuckDB queries of its running tasks (a task may start another) */
const INTERRUPT_EVERY_MS = 100;
/** how long a closing pool waits for its running tasks before ending their threads anyway */
export const CLOSE_TIMEOUT_MS = 10_000;

/** What workers/entry.mjs is given for each task. */
interface ThreadTask {
  module: string;
  fn: string;
  input: unknown;
}

export function createThreadPool(settings: Config['threads']): ThreadPool {
  // where the threads hear that their DuckDB work is to stop (workers/duckdb.ts)
  const interruptChannel = `royalty-threads-${randomUUID()}`;
  let pool: Piscina | undefined;
  const start = (warmModules: string[]): Piscina => {
    pool = new Piscina({
      filename: pathToFileURL(projectPath('workers', 'entry.mjs')).href,
      workerData: { typescript: fromSource, interruptChannel, preload: warmModules },
      minThreads: warmModules.length > 0 ? Math.min(settings.warm, settings.maxThreads) : 0,
      maxThreads: settings.maxThreads,
      maxQueue: settings.maxQueue,
      idleTimeout: settings.idleTimeoutMs,
      resourceLimits: { maxOldGenerationSizeMb: settings.maxOldGenerationMb },
      closeTimeout: CLOSE_TIMEOUT_MS,
    });
    // a thread that dies fails its task (run() rejects); the pool must not take the process with it
    pool.on('error', () => {});
    return pool;
  };
  let closed = false;
  let closing: Promise<void> | undefined;

  const run = async (task: ThreadTask, options: TaskOptions = {}): Promise<object> => {
    if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'The worker pool is shut down');
    let result: { ok: true } | WorkerFailure;
    try {
      result = await (pool ?? start([])).run(task, {
        ...(options.transferList ? { transferList: options.transferList } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (/queue is at limit/i.test((error as Error).message))
        throw new AppError('WORKER_QUEUE_FULL', undefined, { cause: error });
      // queued when the pool closed
      if (closed)
        throw new AppError('SERVICE_UNAVAILABLE', 'The worker pool is shut down', { cause: error });
      throw new AppError('WORKER_FAILED', undefined, { cause: error });
    }
    if (!result.ok) {
      const code = isErrorCode(result.errorCode) ? result.errorCode : 'WORKER_FAILED';
      throw new AppError(
        code,
        result.message ?? 'worker failed',
        result.details ? { details: result.details } : {},
      );
    }
    const { ok: _ok, ...answer } = result;
    return answer;
  };
  const method =
    <K extends TaskName>(name: K) =>
    (input: TaskInput<K>, options?: TaskOptions): Promise<TaskOutput<K>> =>
      run(
        { module: workerModuleUrl(taskFunctions[name].module), fn: taskFunctions[name].fn, input },
        options,
      ) as Promise<TaskOutput<K>>;

  const methods = Object.fromEntries(
    (Object.keys(taskFunctions) as TaskName[]).map((name) => [name, method(name)]),
  ) as ThreadTaskMethods;
  return {
    ...methods,
    runInModule: (module, fn, input, options) =>
      run({ module: workerModuleUrl(module), fn, input }, options),
    warm(tasks: TaskName[]) {
      if (closed || pool || settings.warm === 0) return;
      start([...new Set(tasks.map((t) => workerModuleUrl(taskFunctions[t].module)))]);
    },
    get stats() {
      return pool
        ? { threads: pool.threads.length, queueSize: pool.queueSize, completed: pool.completed }
        : { threads: 0, queueSize: 0, completed: 0 };
    },
    close() {
      closed = true;
      closing ??= pool ? closeInterrupting(pool, interruptChannel) : Promise.resolve();
      return closing;
    },
  };
}

/**
 * Ends the pool's threads only once no DuckDB query runs in them: a thread ended in the middle of
 * one aborts the process (workers/duckdb.ts). Their queries are interrupted until their tasks end;
 * piscina's close waits for the running tasks (CLOSE_TIMEOUT_MS at most) and refuses the queued.
 */
async function closeInterrupting(pool: Piscina, channelName: string): Promise<void> {
  const channel = new BroadcastChannel(channelName);
  const interrupt = () => channel.postMessage('stop');
  interrupt();
  const timer = setInterval(interrupt, INTERRUPT_EVERY_MS);
  try {
    await pool.close({ force: true });
  } finally {
    clearInterval(timer);
    channel.close();
  }
}

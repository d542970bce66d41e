// The piscina pool for CPU work on statement files. Worker files (top-level workers/) export
// plain functions that return { ok, ... }; run() rebuilds an AppError from a failure.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError, isErrorCode } from '../errors.ts';
import type { Config } from '../config.ts';
import { fromSource, projectPath, workerModuleUrl } from '../paths.ts';

export interface ThreadPool {
  /**
   * `signal`: aborting it ends the task, a running one by terminating its thread. Only for pure
   * JavaScript work: a thread terminated inside DuckDB takes the process with it (pitfalls.md).
   */
  run<T extends object>(worker: WorkerFile, fn: string, input: unknown, transferList?: ArrayBuffer[], signal?: AbortSignal): Promise<T>;
  readonly stats: { threads: number; queueSize: number; completed: number };
  /**
   * Starts these files' threads now and keeps `settings.warm` of each alive when idle: a statement
   * then finds its threads with the modules loaded (about 0.2-0.6 s each, a fresh thread).
   */
  warm(files: WorkerFile[]): void;
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

/** The worker files, by name (workers/<name>.ts). */
export type WorkerFile = 'headerHash' | 'normalize' | 'sample' | 'statementFile' | 'cluster';

export function createThreadPool(settings: Config['threads']): ThreadPool {
  const pools = new Map<WorkerFile, Piscina>();
  const warmFiles = new Set<WorkerFile>();
  // where the threads hear that their DuckDB work is to stop (workers/duckdb.ts)
  const interruptChannel = `royalty-threads-${randomUUID()}`;
  const poolFor = (file: WorkerFile): Piscina => {
    let pool = pools.get(file);
    if (!pool) {
      pool = new Piscina({
        filename: pathToFileURL(projectPath('workers', 'entry.mjs')).href,
        workerData: { module: workerModuleUrl(file), typescript: fromSource, interruptChannel },
        minThreads: warmFiles.has(file) ? Math.min(settings.warm, settings.maxThreads) : 0,
        maxThreads: settings.maxThreads,
        maxQueue: settings.maxQueue,
        idleTimeout: settings.idleTimeoutMs,
        resourceLimits: { maxOldGenerationSizeMb: settings.maxOldGenerationMb },
        closeTimeout: CLOSE_TIMEOUT_MS,
      });
      // a thread that dies fails its task (run() rejects); the pool must not take the process with it
      pool.on('error', () => {});
      pools.set(file, pool);
    }
    return pool;
  };
  let closed = false;
  let closing: Promise<void> | undefined;
  return {
    async run<T extends object>(file: WorkerFile, fn: string, input: unknown, transferList?: ArrayBuffer[], signal?: AbortSignal): Promise<T> {
      if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'The worker pool is shut down');
      let result: { ok: boolean; errorCode?: string; message?: string; details?: Record<string, unknown> };
      try {
        result = await poolFor(file).run({ fn, input }, { ...(transferList ? { transferList } : {}), ...(signal ? { signal } : {}) });
      } catch (error) {
        if (/queue is at limit/i.test((error as Error).message)) throw new AppError('WORKER_QUEUE_FULL', undefined, { cause: error });
        // queued when the pool closed
        if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'The worker pool is shut down', { cause: error });
        throw new AppError('WORKER_FAILED', undefined, { cause: error });
      }
      if (!result.ok) {
        const code = isErrorCode(result.errorCode) ? result.errorCode : 'WORKER_FAILED';
        throw new AppError(code, result.message ?? 'worker failed', result.details ? { details: result.details } : {});
      }
      return result as unknown as T;
    },
    warm(files: WorkerFile[]) {
      if (closed || settings.warm === 0) return;
      for (const file of files) {
        if (pools.has(file)) continue;
        warmFiles.add(file);
        poolFor(file);
      }
    },
    get stats() {
      let threads = 0;
      let queueSize = 0;
      let completed = 0;
      for (const p of pools.values()) {
        threads += p.threads.length;
        queueSize += p.queueSize;
        completed += p.completed;
      }
      return { threads, queueSize, completed };
    },
    close() {
      closed = true;
      closing ??= closeInterrupting([...pools.values()], interruptChannel).finally(() => pools.clear());
      return closing;
    },
  };
}

/**
 * Ends the pools' threads only once no DuckDB query runs in them: a thread ended in the middle of
 * one aborts the process (workers/duckdb.ts). Their queries are interrupted until their tasks end;
 * piscina's close waits for the running tasks (CLOSE_TIMEOUT_MS at most) and refuses the queued.
 */
async function closeInterrupting(pools: Piscina[], channelName: string): Promise<void> {
  const channel = new BroadcastChannel(channelName);
  const interrupt = () => channel.postMessage('stop');
  interrupt();
  const timer = setInterval(interrupt, INTERRUPT_EVERY_MS);
  try {
    await Promise.all(pools.map((p) => p.close({ force: true })));
  } finally {
    clearInterval(timer);
    channel.close();
  }
}

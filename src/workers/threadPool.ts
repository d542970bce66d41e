// The piscina pool for CPU work on statement files. Worker files (top-level workers/) export
// plain functions that return { ok, ... }; run() rebuilds an AppError from a failure.
import { Piscina } from 'piscina';
import { AppError, isErrorCode } from '../errors.ts';
import type { Config } from '../config.ts';

export interface ThreadPool {
  run<T extends object>(worker: WorkerFile, fn: string, input: unknown, transferList?: ArrayBuffer[]): Promise<T>;
  readonly stats: { threads: number; queueSize: number; completed: number };
  /**
   * Starts these files' threads now and keeps `settings.warm` of each alive when idle: a statement
   * then finds its threads with tsx and the modules loaded (about 0.2-0.6 s each, a fresh thread).
   */
  warm(files: WorkerFile[]): void;
  close(): Promise<void>;
}

/** The worker files, by name (workers/<name>.ts). */
export type WorkerFile = 'headerHash' | 'normalize' | 'sample' | 'statementFile' | 'cluster';

export function createThreadPool(settings: Config['threads']): ThreadPool {
  const pools = new Map<WorkerFile, Piscina>();
  const warmFiles = new Set<WorkerFile>();
  const poolFor = (file: WorkerFile): Piscina => {
    let pool = pools.get(file);
    if (!pool) {
      pool = new Piscina({
        filename: new URL('../../workers/entry.mjs', import.meta.url).href,
        workerData: { file },
        minThreads: warmFiles.has(file) ? Math.min(settings.warm, settings.maxThreads) : 0,
        maxThreads: settings.maxThreads,
        maxQueue: settings.maxQueue,
        idleTimeout: settings.idleTimeoutMs,
        resourceLimits: { maxOldGenerationSizeMb: settings.maxOldGenerationMb },
      });
      // a thread that dies fails its task (run() rejects); the pool must not take the process with it
      pool.on('error', () => {});
      pools.set(file, pool);
    }
    return pool;
  };
  let closed = false;
  return {
    async run<T extends object>(file: WorkerFile, fn: string, input: unknown, transferList?: ArrayBuffer[]): Promise<T> {
      if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'The worker pool is shut down');
      let result: { ok: boolean; errorCode?: string; message?: string; details?: Record<string, unknown> };
      try {
        result = await poolFor(file).run({ fn, input }, transferList ? { transferList } : {});
      } catch (error) {
        if (/queue is at limit/i.test((error as Error).message)) throw new AppError('WORKER_QUEUE_FULL', undefined, { cause: error });
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
    async close() {
      closed = true;
      await Promise.all([...pools.values()].map((p) => p.destroy()));
      pools.clear();
    },
  };
}

// What a worker returns: errors do not survive a thread boundary with their class, so a worker
// answers { ok: false, errorCode, message } and the pool wrapper rebuilds the AppError.
import type { WorkerFailure } from '../src/workers/tasks.ts';

export type { WorkerResult } from '../src/workers/tasks.ts';

/** A refusal; `details` (plain data) become the AppError's details. */
export function fail(
  errorCode: string,
  message: string,
  details?: Record<string, unknown>,
): WorkerFailure {
  return details === undefined
    ? { ok: false, errorCode, message }
    : { ok: false, errorCode, message, details };
}

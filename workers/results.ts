// What a worker returns: errors do not survive a thread boundary with their class, so a worker
// answers { ok: false, errorCode, message } and the pool wrapper rebuilds the AppError.
export type WorkerResult<T extends object> = ({ ok: true } & T) | { ok: false; errorCode: string; message: string; details?: Record<string, unknown> };

/** A refusal; `details` (plain data) become the AppError's details. */
export function fail(errorCode: string, message: string, details?: Record<string, unknown>): { ok: false; errorCode: string; message: string; details?: Record<string, unknown> } {
  return details === undefined ? { ok: false, errorCode, message } : { ok: false, errorCode, message, details };
}

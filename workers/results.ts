// What a worker returns: errors do not survive a thread boundary with their class, so a worker
// answers { ok: false, errorCode, message } and the pool wrapper rebuilds the AppError.
export type WorkerResult<T extends object> = ({ ok: true } & T) | { ok: false; errorCode: string; message: string };

export function fail(errorCode: string, message: string): { ok: false; errorCode: string; message: string } {
  return { ok: false, errorCode, message };
}

// The specification's recovery table ("Errors") as a tRPC link, so that every call of the typed
// client recovers the same way: UNAUTHORIZED refreshes the credential once and retries,
// INTERNAL_SERVER_ERROR is retried once after a backoff (a rate limit's Retry-After when it gives
// one), TIMEOUT of cube.query switches to the async pair (cube.queryAsync, then cube.queryPoll).
// FORBIDDEN, NOT_FOUND, BAD_REQUEST and CONFLICT are never retried.
import {
  TRPCClientError,
  type Operation,
  type OperationLink,
  type OperationResultEnvelope,
  type TRPCLink,
} from '@trpc/client';
import { observable } from '@trpc/server/observable';
import type { AnyRouter } from '@trpc/server';

export interface RecoveryOptions {
  /** a fresh credential after an UNAUTHORIZED answer; absent: UNAUTHORIZED is final */
  refreshCredential?: () => Promise<void>;
  /** the wait before the one retry of an INTERNAL_SERVER_ERROR (ms) */
  backoffMs: number;
  /** the longest wait a rate limit's Retry-After may impose before that retry (ms) */
  maxBackoffMs: number;
  /** cube.queryPoll: the wait between polls (ms) and how many polls at most */
  pollIntervalMs: number;
  pollAttempts: number;
}

type Next = Parameters<OperationLink<AnyRouter>>[0]['next'];
type Envelope = OperationResultEnvelope<unknown, TRPCClientError<AnyRouter>>;

/** The error's data.code (the specification's code), when the server answered with one. */
export function errorCodeOf(error: unknown): string | undefined {
  const data = (error as { data?: { code?: unknown } } | undefined)?.data;
  return typeof data?.code === 'string' ? data.code : undefined;
}

/** The error's data.errorCode (the specific code, such as RIGHTSHOLDER_NOT_FOUND). */
export function specificCodeOf(error: unknown): string | undefined {
  const data = (error as { data?: { errorCode?: unknown } } | undefined)?.data;
  return typeof data?.errorCode === 'string' ? data.errorCode : undefined;
}

function retryAfterMs(error: unknown): number | undefined {
  const seconds = (error as { data?: { details?: { retryAfterSeconds?: unknown } } }).data?.details
    ?.retryAfterSeconds;
  return typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One call down the rest of the chain, as a promise of its (single) result envelope. */
function send(next: Next, op: Operation): Promise<Envelope> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const subscription = next(op).subscribe({
      next(envelope) {
        settled = true;
        resolve(envelope as Envelope);
      },
      error(error) {
        settled = true;
        reject(error);
      },
      complete() {
        if (!settled) reject(new TRPCClientError(`${op.path}: the call ended without an answer`));
      },
    });
    op.signal?.addEventListener('abort', () => subscription.unsubscribe(), { once: true });
  });
}

/** cube.query answered TIMEOUT: the same body through cube.queryAsync, polled with cube.queryPoll. */
async function asyncAnalytics(
  next: Next,
  op: Operation,
  options: RecoveryOptions,
): Promise<Envelope> {
  let answer = await send(next, { ...op, path: 'cube.queryAsync' });
  for (let attempt = 0; ; attempt++) {
    const value = (answer.result as { data?: { status?: string; data?: unknown } }).data;
    if (value?.status === 'completed')
      return { ...answer, result: { type: 'data', data: value.data } } as Envelope;
    if (attempt >= options.pollAttempts) {
      throw new TRPCClientError(
        `cube.query: no answer after ${options.pollAttempts} polls of cube.queryPoll`,
      );
    }
    await sleep(options.pollIntervalMs);
    answer = await send(next, { ...op, path: 'cube.queryPoll' });
  }
}

async function withRecovery(
  next: Next,
  op: Operation,
  options: RecoveryOptions,
): Promise<Envelope> {
  let refreshed = false;
  let retried = false;
  for (;;) {
    try {
      return await send(next, op);
    } catch (error) {
      const code = errorCodeOf(error);
      if (code === 'UNAUTHORIZED' && !refreshed && options.refreshCredential) {
        refreshed = true;
        await options.refreshCredential();
        continue;
      }
      if (code === 'INTERNAL_SERVER_ERROR' && !retried) {
        retried = true;
        await sleep(Math.min(retryAfterMs(error) ?? options.backoffMs, options.maxBackoffMs));
        continue;
      }
      if (code === 'TIMEOUT' && op.path === 'cube.query') return asyncAnalytics(next, op, options);
      throw error;
    }
  }
}

export function recoveryLink<TRouter extends AnyRouter>(
  options: RecoveryOptions,
): TRPCLink<TRouter> {
  return () =>
    ({ op, next }) =>
      observable((observer) => {
        withRecovery(next as Next, op, options).then(
          (envelope) => {
            observer.next(envelope as never);
            observer.complete();
          },
          (error: unknown) =>
            observer.error(
              error instanceof TRPCClientError ? error : TRPCClientError.from(error as Error),
            ),
        );
      });
}

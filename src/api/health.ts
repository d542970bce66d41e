import { pingDatabase } from '../db/pool.ts';
import { noInput } from '../trpc/schemas.ts';
import { publicProcedure } from '../trpc/procedure.ts';

/** How long a dependency may take to answer before health calls it unavailable. */
export const healthSettings = { checkTimeoutMs: 3_000 };

/**
 * One dependency's check, 'unavailable' when it fails or does not answer in time: a database whose
 * connections are all taken (the pool would wait for one without end) or an object store that does
 * not answer must not hang the health check that load balancers and probes call.
 */
async function check(fn: (signal: AbortSignal) => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), healthSettings.checkTimeoutMs);
  const timedOut = new Promise<never>((_, reject) =>
    abort.signal.addEventListener('abort', () => reject(new Error('timed out')), { once: true }),
  );
  try {
    await Promise.race([fn(abort.signal), timedOut]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

export const health = publicProcedure(
  {
    minRole: 'none',
    scope: '',
    summary: 'Liveness and dependency check; needs no authentication.',
  },
  noInput,
).query(async ({ ctx }) => {
  const [database, objectStore] = await Promise.all([
    // (a query still waiting for a connection after the timeout runs when one is free, and is dropped)
    check(() => pingDatabase(ctx.deps.pool)),
    // the bucket as it is: a bucket removed behind the service's back is reported, not created again
    check((signal) => ctx.deps.store.checkBucket(signal)),
  ]);
  // a process that runs jobs (serve) also says whether its job runner runs: one that gave up (its
  // database gone while it marked a job) is down until it is started again (src/jobs/runner.ts)
  const runner = ctx.deps.jobRunner;
  const jobs = runner ? (runner.running() ? ('ok' as const) : ('unavailable' as const)) : undefined;
  return {
    status:
      database === 'ok' && objectStore === 'ok' && jobs !== 'unavailable'
        ? ('ok' as const)
        : ('degraded' as const),
    checks: { database, objectStore, ...(jobs && { jobs }) },
    time: new Date().toISOString(),
  };
});

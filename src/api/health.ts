import { noInput } from '../trpc/schemas.ts';
import { publicProcedure } from '../trpc/procedure.ts';

async function check(fn: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  try {
    await fn();
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

export const health = publicProcedure(
  { minRole: 'none', scope: '', summary: 'Liveness and dependency check; needs no authentication.' },
  noInput,
).query(async ({ ctx }) => {
  const [database, objectStore] = await Promise.all([
    check(() => ctx.deps.pool.query('SELECT 1')),
    check(() => ctx.deps.store.ensureBucket()),
  ]);
  return {
    status: database === 'ok' && objectStore === 'ok' ? ('ok' as const) : ('degraded' as const),
    checks: { database, objectStore },
    time: new Date().toISOString(),
  };
});

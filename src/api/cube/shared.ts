// What the cube procedures share: the caller as the analytics engine sees them, and the inputs.
import { z } from 'zod';
import { takeSnapshot, type Principal } from '../../auth/principal.ts';
import type { Caller } from '../../analytics/engine.ts';
import { cubeQuerySchema } from '../../analytics/query.ts';

export function callerOf(ctx: {
  org: { id: string; rightsholderScope?: string[] | null };
  principal: Principal | null;
}): Caller {
  // the scope was read with the caller's role, the snapshot with the credentials (a PostgreSQL round trip fewer each)
  const snapshot = takeSnapshot(ctx.principal);
  return {
    organizationId: ctx.org.id,
    userId: ctx.principal!.userId,
    rightsholderScope: ctx.org.rightsholderScope,
    ...(snapshot !== undefined ? { snapshot } : {}),
  };
}

export const queryField = cubeQuerySchema.describe(
  'the query object (Cube query format); validated strictly',
);
export const usePreaggField = z
  .boolean()
  .default(false)
  .describe('answer from a pre-aggregated rollup when one can (identical results)');
export const noCacheField = z
  .boolean()
  .default(false)
  .describe('run the query again even when a cached answer exists');
export const sqlField = z
  .string()
  .trim()
  .min(1)
  .max(100_000)
  .describe('one SELECT statement over the table analytics_full_view');

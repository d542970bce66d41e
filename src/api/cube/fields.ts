// The inputs the cube procedures share.
import { z } from 'zod';
import { cubeQuerySchema } from '../../analytics/query.ts';

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

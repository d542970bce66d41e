import { z } from 'zod';
import { assertBatchSize, resolveSources } from '../../lookups/resolution.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { rawBatch } from '../../lookups/inputs.ts';

export const batchResolveWithAI = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary: 'resolveWithAI for at most 10 raw sources at once (more is RESOLVE_BATCH_TOO_LARGE); results in input order.',
  },
  z.object({ sources: rawBatch, saveToDb: z.boolean().default(false) }),
).mutation(async ({ ctx, input }) => {
  assertBatchSize(input.sources);
  return { results: await resolveSources(ctx.deps.pool, ctx.deps.config, input.sources, input.saveToDb) };
});

import { z } from 'zod';
import { assertBatchSize, resolveSources } from '../../lookups/aiResolution.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { rawBatch } from '../../lookups/inputs.ts';

export const batchResolveWithAI = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'resolveWithAI for at most 10 raw sources at once (more is RESOLVE_BATCH_TOO_LARGE); results in input order. The strings are resolved at once, the whole call within 2 × AI_TIMEOUT_MS: past it, AI_PROVIDER_FAILED with details.results (resolved) and details.unresolved.',
  },
  z.object({ sources: rawBatch, saveToDb: z.boolean().default(false) }),
).mutation(async ({ ctx, input }) => {
  assertBatchSize(input.sources);
  return {
    results: await resolveSources(ctx.deps.pool, ctx.deps.config, input.sources, input.saveToDb),
  };
});

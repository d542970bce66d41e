import { z } from 'zod';
import { createEmbedder } from '../../ai/embedding.ts';
import { updateVectorEntry } from '../../lookups/vectors.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { vectorName } from '../../lookups/inputs.ts';

export const ragUpdate = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary: 'Rename or recategorize a vector entry; the embedding is generated again.',
  },
  z.object({ id: z.uuid(), name: vectorName, category: z.string().trim().min(1).max(100) }),
).mutation(async ({ ctx, input }) =>
  updateVectorEntry(
    ctx.deps.pool,
    createEmbedder(ctx.deps.config.ai),
    input.id,
    input.name,
    input.category,
  ),
);

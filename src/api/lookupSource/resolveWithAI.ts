import { z } from 'zod';
import { resolveSources } from '../../lookups/aiResolution.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { rawString } from '../../lookups/inputs.ts';

export const resolveWithAI = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'Propose a source lookup entry for a raw string (configured provider: built-in resolver over lookups, gold data, rules and vector entries, or an OpenAI-compatible model) with a confidence and the reason; saveToDb writes it with status ai_suggested (never over a verified entry).',
  },
  z.object({ original: rawString, saveToDb: z.boolean().default(false) }),
).mutation(async ({ ctx, input }) => {
  const [result] = await resolveSources(
    ctx.deps.pool,
    ctx.deps.config,
    [input.original],
    input.saveToDb,
  );
  return result!;
});

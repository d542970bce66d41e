import { z } from 'zod';
import { deleteSourceLookup } from '../../lookups/sources.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const deleteEntry = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary: 'Delete a source lookup entry by id; its raw strings become missing again.',
  },
  z.object({ id: z.uuid() }),
).mutation(async ({ ctx, input }) => {
  await deleteSourceLookup(ctx.deps.pool, input.id);
  return { id: input.id, deleted: true };
});

import { z } from 'zod';
import { deleteVectorEntry } from '../../lookups/vectors.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const ragDelete = globalProcedure(
  { minRole: 'c2_superadmin', scope: 'admin', summary: 'Delete a vector entry by id.' },
  z.object({ id: z.uuid() }),
).mutation(async ({ ctx, input }) => {
  await deleteVectorEntry(ctx.deps.pool, input.id);
  return { id: input.id, deleted: true };
});

import { z } from 'zod';
import { deleteGoldData } from '../../lookups/goldData.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const deleteEntry = globalProcedure(
  { minRole: 'c2_superadmin', scope: '', summary: 'Delete a gold-data row by id.' },
  z.object({ id: z.uuid() }),
).mutation(async ({ ctx, input }) => {
  await deleteGoldData(ctx.deps.pool, input.id);
  return { id: input.id, deleted: true };
});

import { z } from 'zod';
import { deleteSalesTypeLookup } from '../../lookups/salesTypes.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const deleteEntry = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary: 'Delete a sales-type lookup entry; its raw strings become missing again.',
  },
  z.object({ id: z.uuid() }),
).mutation(async ({ ctx, input }) => {
  await deleteSalesTypeLookup(ctx.deps.pool, input.id);
  return { id: input.id, deleted: true };
});

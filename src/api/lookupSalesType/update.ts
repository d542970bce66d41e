import { z } from 'zod';
import { updateSalesTypeLookup } from '../../lookups/salesTypes.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { jsonValue } from '../../trpc/schemas.ts';
import { nullableLabel, status } from '../../lookups/inputs.ts';

export const update = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'Change a sales-type lookup entry; fields left out keep their value, null clears a sales type. Analytics shows the change at once.',
  },
  z.object({
    id: z.uuid(),
    cleansed: z.string().trim().min(1).max(500).optional(),
    primarySalesType: nullableLabel,
    secondarySalesType: nullableLabel,
    status: status.optional(),
    reason: jsonValue(10_000).optional(),
  }),
).mutation(async ({ ctx, input }) => {
  const { id, ...patch } = input;
  return updateSalesTypeLookup(ctx.deps.pool, id, patch);
});

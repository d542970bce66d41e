import { z } from 'zod';
import { updateSourceLookup } from '../../lookups/sources.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { jsonValue } from '../../trpc/schemas.ts';
import { nullableLabel, status } from '../../lookups/inputs.ts';

export const update = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'Change a source lookup entry; fields left out keep their value, null clears one. Analytics shows the change at once.',
  },
  z.object({
    id: z.uuid(),
    collectionSource: nullableLabel,
    earningsSource: nullableLabel,
    earningsCategory: nullableLabel,
    earningsParentCompany: nullableLabel,
    publisherSource: nullableLabel,
    status: status.optional(),
    reason: jsonValue(10_000).optional(),
  }),
).mutation(async ({ ctx, input }) => {
  const { id, ...patch } = input;
  return updateSourceLookup(ctx.deps.pool, id, patch);
});

import { z } from 'zod';
import { upsertSalesTypeLookup } from '../../lookups/salesTypes.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { jsonValue } from '../../trpc/schemas.ts';
import { nullableLabel, rawString, status } from '../../lookups/inputs.ts';

export const create = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'Create a sales-type lookup entry, or replace the one whose original normalizes the same (normalizeLookupKey). primarySalesType/secondarySalesType must be in the taxonomy.',
  },
  z.object({
    original: rawString,
    cleansed: z.string().trim().min(1).max(500),
    status: status.default('verified'),
    reason: jsonValue(10_000).optional(),
    primarySalesType: nullableLabel,
    secondarySalesType: nullableLabel,
  }),
).mutation(async ({ ctx, input }) => {
  const { entry, created } = await upsertSalesTypeLookup(ctx.deps.pool, input.original, {
    cleansed: input.cleansed,
    primarySalesType: input.primarySalesType ?? null,
    secondarySalesType: input.secondarySalesType ?? null,
    status: input.status,
    reason: input.reason ?? null,
  });
  return { ...entry, created };
});

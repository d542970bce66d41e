import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { getSalesTypeLookup as find } from '../../lookups/salesTypes.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const getSalesTypeLookup = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'One sales-type lookup entry, by id or by original (matched after normalizeLookupKey).',
  },
  z
    .object({ id: z.uuid().optional(), original: z.string().trim().min(1).max(500).optional() })
    .refine((v) => (v.id === undefined) !== (v.original === undefined), {
      message: 'give exactly one of id and original',
    }),
).query(async ({ ctx, input }) => {
  const entry = await find(ctx.deps.pool, input);
  if (!entry) throw new AppError('SALES_TYPE_LOOKUP_NOT_FOUND');
  return entry;
});

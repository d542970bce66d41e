import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { getSourceLookup as find } from '../../lookups/sources.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const getSourceLookup = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary: 'One source lookup entry, by id or by original (matched after normalizeLookupKey).',
  },
  z
    .object({ id: z.uuid().optional(), original: z.string().trim().min(1).max(500).optional() })
    .refine((v) => (v.id === undefined) !== (v.original === undefined), {
      message: 'give exactly one of id and original',
    }),
).query(async ({ ctx, input }) => {
  const entry = await find(ctx.deps.pool, input);
  if (!entry) throw new AppError('SOURCE_LOOKUP_NOT_FOUND');
  return entry;
});

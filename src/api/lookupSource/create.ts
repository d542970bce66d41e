import { z } from 'zod';
import { upsertSourceLookup } from '../../lookups/sources.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { jsonValue } from '../../trpc/schemas.ts';
import { nullableLabel, rawString, status } from '../../lookups/inputs.ts';

export const create = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'Create a source lookup entry, or replace the one whose original normalizes the same (normalizeLookupKey). Analytics resolves the raw string through it at once.',
  },
  z.object({
    original: rawString,
    collectionSource: nullableLabel,
    earningsSource: nullableLabel,
    earningsCategory: nullableLabel,
    earningsParentCompany: nullableLabel,
    publisherSource: nullableLabel,
    status,
    reason: jsonValue(10_000).optional(),
  }),
).mutation(async ({ ctx, input }) => {
  const { entry, created } = await upsertSourceLookup(ctx.deps.pool, input.original, {
    collectionSource: input.collectionSource ?? null,
    earningsSource: input.earningsSource ?? null,
    earningsCategory: input.earningsCategory ?? null,
    earningsParentCompany: input.earningsParentCompany ?? null,
    publisherSource: input.publisherSource ?? null,
    status: input.status,
    reason: input.reason ?? null,
  });
  return { ...entry, created };
});

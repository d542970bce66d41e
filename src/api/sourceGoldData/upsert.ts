import { z } from 'zod';
import { upsertGoldData } from '../../lookups/goldData.ts';
import { nullableLabel, rawString } from '../../lookups/inputs.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { jsonValue } from '../../trpc/schemas.ts';

export const upsert = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: '',
    summary:
      'Create or change a gold-data row: with id, that row (GOLD_DATA_RAW_VALUE_TAKEN if another row has the same normalized raw value); without, the row with the same normalized raw value, or a new one.',
  },
  z.object({
    id: z.uuid().optional(),
    rawValue: rawString,
    earningsSource: nullableLabel,
    earningsCategory: nullableLabel,
    parentCompany: nullableLabel,
    collectionSource: nullableLabel,
    publisherSource: nullableLabel,
    notes: jsonValue(10_000).optional(),
  }),
).mutation(async ({ ctx, input }) => {
  const { row, created } = await upsertGoldData(
    ctx.deps.pool,
    {
      rawValue: input.rawValue,
      earningsSource: input.earningsSource ?? null,
      earningsCategory: input.earningsCategory ?? null,
      parentCompany: input.parentCompany ?? null,
      collectionSource: input.collectionSource ?? null,
      publisherSource: input.publisherSource ?? null,
      notes: input.notes ?? null,
    },
    input.id,
  );
  return { ...row, created };
});

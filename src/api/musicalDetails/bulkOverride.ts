import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { bulkOverride as apply, partialOverrideValues } from '../../catalog/overrides.ts';
import { afterCorrection } from '../../catalog/followUps.ts';
import { blockIdsOfDetails } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { jsonValue, orgInput } from '../../trpc/schemas.ts';

const item = z
  .strictObject({
    musicalDetailIds: z.array(z.uuid()).min(1).max(5_000).optional(),
    query: jsonValue(50_000, 20).optional(),
    scope: z.enum(['block', 'rightsholder']).optional(),
    values: partialOverrideValues,
  })
  .refine(
    (i) => (i.musicalDetailIds === undefined) !== (i.query === undefined),
    'exactly one of musicalDetailIds and query',
  );

export const bulkOverride = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Override values of many musical details at once. Each item has values and either musicalDetailIds (an override each) or a catalog query: a rule scoped to the block (blockId required) or, with scope "rightsholder", to every block of its rightsholder, applied now and to matching details that appear later. Answers { overrides, rules, musicalDetailIds }.',
  },
  orgInput({ blockId: z.uuid().optional(), overrides: z.array(item).min(1).max(100) }),
).mutation(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const result = await withTransaction(ctx.deps.pool, (db) =>
    apply(db, ctx.principal, caller, input.blockId, input.overrides),
  );
  await afterCorrection(ctx.deps, await blockIdsOfDetails(ctx.deps.pool, result.musicalDetailIds));
  return result;
});

import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import { detailCountsByProvider } from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getDistinctTargetProviders = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'The providers musical details were looked up with (in the organization, or one block with blockId), each with its counts by outcome, and the provider configured now: { configured, providers: [{ provider, musicalDetails, found, notFound, failed }] }.',
  },
  orgInput({ blockId: z.uuid().optional() }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  if (input.blockId) await visibleBlock(ctx.deps.pool, caller, input.blockId);
  return {
    configured: ctx.deps.config.enrichment.provider,
    providers: await detailCountsByProvider(ctx.deps.pool, caller, input.blockId ?? null),
  };
});

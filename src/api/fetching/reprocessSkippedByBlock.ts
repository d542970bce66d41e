import { reprocessSkipped } from '../../catalog/fetchingStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { z } from 'zod';
import { blockAction } from './blockAction.ts';

export const reprocessSkippedByBlock = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Queue the skipped musical details of a block for fetching (those with an ignored title stay skipped); answers { blockId, musicalDetails } with the count queued.',
  },
  orgInput({ blockId: z.uuid() }),
).mutation(({ ctx, input }) =>
  blockAction(
    ctx.deps,
    ctx.principal,
    callerOf(ctx.org),
    input.blockId,
    'fetching.reprocessSkippedByBlock',
    reprocessSkipped,
    true,
  ),
);

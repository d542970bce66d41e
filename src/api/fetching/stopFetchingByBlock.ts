import { stopBlock } from '../../catalog/fetchingStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { z } from 'zod';
import { blockAction } from './blockAction.ts';

export const stopFetchingByBlock = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Stop fetching a block: its pending (and in-flight) musical details become skipped; answers { blockId, musicalDetails } with the count skipped.',
  },
  orgInput({ blockId: z.uuid() }),
).mutation(({ ctx, input }) =>
  blockAction(
    ctx.deps,
    ctx.principal,
    callerOf(ctx.org),
    input.blockId,
    'fetching.stopFetchingByBlock',
    stopBlock,
    false,
  ),
);

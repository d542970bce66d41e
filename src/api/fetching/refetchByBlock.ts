import { refetchBlock } from '../../catalog/fetchingStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { z } from 'zod';
import { blockAction } from './blockAction.ts';

export const refetchByBlock = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Queue the found, not-found and failed musical details of a block for fetching again (ignored titles stay skipped); answers { blockId, musicalDetails } with the count queued.',
  },
  orgInput({ blockId: z.uuid() }),
).mutation(({ ctx, input }) =>
  blockAction(
    ctx.deps,
    ctx.principal,
    callerOf(ctx.org),
    input.blockId,
    'fetching.refetchByBlock',
    refetchBlock,
    true,
  ),
);

import { inQueueCount as countQueue } from '../../catalog/fetchingStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const inQueueCount = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "Musical details of the organization in the enrichment queue (within the caller's data access): { count, pending, fetching }.",
  },
  orgInput({}),
).query(async ({ ctx }) => {
  return countQueue(ctx.deps.pool, callerOf(ctx.org));
});

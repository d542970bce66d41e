import { z } from 'zod';
import { coverageByRightsholders } from '../../catalog/fetchingStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getFetchingCoverageByRightsholders = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Per rightsholder (in the order asked; ids outside the organization or the caller’s data access are left out): musical details in total and resolved (found, not_found, skipped, failed), by state, and the share of them and of their USD earnings resolved, as exact decimal strings (percent, 4 decimals).',
  },
  orgInput({ rightsholderIds: z.array(z.uuid()).max(1_000) }),
).query(async ({ ctx, input }) => {
  return {
    rightsholders: await coverageByRightsholders(
      ctx.deps.pool,
      callerOf(ctx.org),
      input.rightsholderIds,
    ),
  };
});

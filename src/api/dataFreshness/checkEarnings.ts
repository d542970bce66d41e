import { checkEarnings as check } from '../../analytics/freshness.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { rightsholderIdsField } from './fields.ts';

export const checkEarnings = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Earnings data freshness: per rightsholder and per distributor, the latest statement period (id and last day), its statement and when statements were last ingested.',
  },
  orgInput({ rightsholderIds: rightsholderIdsField }),
).query(async ({ ctx, input }) =>
  check(ctx.deps.pool, analyticsCallerOf(ctx), input.rightsholderIds),
);

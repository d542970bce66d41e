import { defaultFxDate } from '../../analytics/freshness.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { rightsholderIdsField } from '../dataFreshness/fields.ts';

export const getDefaultFxDate = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'The default exchange-rate date of the rightsholders: the last day of their latest statement period (null when they have none).',
  },
  orgInput({ rightsholderIds: rightsholderIdsField }),
).query(async ({ ctx, input }) =>
  defaultFxDate(ctx.deps.pool, analyticsCallerOf(ctx), input.rightsholderIds),
);

import { analyticsFor } from '../../analytics/engine.ts';
import { defaultFxRates } from '../../analytics/freshness.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { rightsholderIdsField } from '../dataFreshness/fields.ts';

export const getDefaultFxRates = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "The USD exchange rates at the default date (getDefaultFxDate) for every currency in the rightsholders' rows: US dollars per unit, with the day each rate is from; currencies without a rate are listed in missing.",
  },
  orgInput({ rightsholderIds: rightsholderIdsField }),
).query(async ({ ctx, input }) =>
  defaultFxRates(
    analyticsFor(ctx.deps),
    ctx.deps.pool,
    analyticsCallerOf(ctx),
    input.rightsholderIds,
  ),
);

import { analyticsFor } from '../../analytics/engine.ts';
import { ingestionStats as stats } from '../../analytics/freshness.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { rightsholderIdsField } from './fields.ts';

export const ingestionStats = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Ingestion statistics of the rightsholders together: statements by status, rows read/kept/removed, earnings per currency (and in USD), flags by kind.',
  },
  orgInput({ rightsholderIds: rightsholderIdsField }),
).query(async ({ ctx, input }) =>
  stats(analyticsFor(ctx.deps), ctx.deps.pool, analyticsCallerOf(ctx), input.rightsholderIds),
);

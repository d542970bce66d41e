import { analyticsFor } from '../../analytics/engine.ts';
import { isReady as ready } from '../../analytics/freshness.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { rightsholderIdsField } from './fields.ts';

export const isReady = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Readiness: true when no statement of the rightsholders is still uploaded or processing and the analytics data holds every processed one (at its latest version).',
  },
  orgInput({ rightsholderIds: rightsholderIdsField }),
).query(async ({ ctx, input }) =>
  ready(analyticsFor(ctx.deps), ctx.deps.pool, analyticsCallerOf(ctx), input.rightsholderIds),
);

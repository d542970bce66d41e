import { analyticsFor } from '../../analytics/engine.ts';
import { checkProducts as check } from '../../analytics/freshness.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { rightsholderIdsField } from './fields.ts';

export const checkProducts = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Products data freshness per rightsholder: tracks found in the statement rows (by ISRC, else title and artist) and how many are enriched. Until the catalog exists none is (catalogAvailable false).',
  },
  orgInput({ rightsholderIds: rightsholderIdsField }),
).query(async ({ ctx, input }) =>
  check(analyticsFor(ctx.deps), ctx.deps.pool, analyticsCallerOf(ctx), input.rightsholderIds),
);

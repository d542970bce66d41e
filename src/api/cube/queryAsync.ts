import { analyticsFor } from '../../analytics/engine.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { noCacheField, queryField, usePreaggField } from './fields.ts';

export const queryAsync = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Submits an analytics query: { status: "completed", data: <cube.query answer> } when ready (cached until the data changes), else { status: "processing" }; poll with cube.queryPoll and the same body. noCache runs it again.',
  },
  orgInput({ query: queryField, usePreagg: usePreaggField, noCache: noCacheField }),
).mutation(async ({ ctx, input }) =>
  analyticsFor(ctx.deps).cubeQueryAsync(analyticsCallerOf(ctx), input.query, {
    usePreagg: input.usePreagg,
    noCache: input.noCache,
  }),
);

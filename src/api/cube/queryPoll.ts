import { analyticsFor } from '../../analytics/engine.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { queryField, usePreaggField } from './fields.ts';

export const queryPoll = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Polls an analytics query submitted with cube.queryAsync (send the same body): { status: "processing" } or { status: "completed", data }. A query nobody submitted is started.',
  },
  orgInput({ query: queryField, usePreagg: usePreaggField }),
).mutation(async ({ ctx, input }) =>
  analyticsFor(ctx.deps).cubeQueryAsync(analyticsCallerOf(ctx), input.query, {
    usePreagg: input.usePreagg,
    noCache: false,
  }),
);

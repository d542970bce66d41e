import { analyticsFor } from '../../analytics/engine.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { queryField, usePreaggField } from './fields.ts';

export const query = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "Runs an analytics query (Cube query format) on analytics_full_view within the organization and the caller's data access; needs a filter naming rightsholders (rightsholder_id equals their ids, on every path through or-groups); a filter on organization_id is stripped (the organization is the caller's, injected by the server and echoed as the last filter). Answers the Cube /v1/load envelope { query, lastRefreshTime, annotation, dataSource, dbType, external, slowQuery, total?, data }, or TIMEOUT after the synchronous window (poll with cube.queryPoll).",
  },
  orgInput({ query: queryField, usePreagg: usePreaggField }),
).mutation(async ({ ctx, input }) =>
  analyticsFor(ctx.deps).cubeQuery(analyticsCallerOf(ctx), input.query, input.usePreagg),
);

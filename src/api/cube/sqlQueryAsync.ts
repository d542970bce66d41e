import { analyticsFor } from '../../analytics/engine.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { noCacheField, sqlField } from './fields.ts';

export const sqlQueryAsync = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Submits a SELECT over analytics_full_view: { status: "completed", data: { schema, rows } } when ready, else { status: "processing" }; poll with cube.sqlQueryPoll and the same body.',
  },
  orgInput({ sql: sqlField, noCache: noCacheField }),
).mutation(async ({ ctx, input }) =>
  analyticsFor(ctx.deps).sqlQueryAsync(analyticsCallerOf(ctx), input.sql, input.noCache),
);

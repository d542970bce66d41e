import { analyticsFor } from '../../analytics/engine.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { sqlField } from './fields.ts';

export const sqlQueryPoll = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Polls a SELECT submitted with cube.sqlQueryAsync (send the same body): { status: "processing" } or { status: "completed", data: { schema, rows } }.',
  },
  orgInput({ sql: sqlField }),
).mutation(async ({ ctx, input }) =>
  analyticsFor(ctx.deps).sqlQueryAsync(analyticsCallerOf(ctx), input.sql, false),
);

import { analyticsFor } from '../../analytics/engine.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { analyticsCallerOf } from '../analyticsCaller.ts';
import { sqlField } from './fields.ts';

export const sqlQuery = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "Runs one SELECT over the table analytics_full_view holding only the organization's rows the caller may see, in a sandbox; answers { schema: [{ name, column_type }], rows }.",
  },
  orgInput({ sql: sqlField }),
).mutation(async ({ ctx, input }) =>
  analyticsFor(ctx.deps).sqlQuery(analyticsCallerOf(ctx), input.sql),
);

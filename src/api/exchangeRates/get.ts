import { z } from 'zod';
import { calendarDate } from '../../fx/dates.ts';
import { ratesOn } from '../../fx/rates.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const get = globalProcedure(
  {
    minRole: 'any',
    scope: 'cli',
    summary:
      'Daily reference exchange rates, base USD (units of each currency for one US dollar, exact decimal strings), on `date` (YYYY-MM-DD) or the latest published day before it; latest when absent. earlierDates lists currencies whose rate is from an earlier day.',
  },
  z.object({ date: calendarDate.optional() }).nullish(),
).query(async ({ ctx, input }) => ratesOn(ctx.deps.pool, input?.date));

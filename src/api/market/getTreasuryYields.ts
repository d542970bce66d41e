import { AppError } from '../../errors.ts';
import { calendarDate } from '../../fx/dates.ts';
import { createMarketProvider } from '../../market/provider.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getTreasuryYields = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'US Treasury daily par yield curves (percent by tenor, 1M … 30Y). With from and/or to: every curve in the range (its latest 5000 at most); with date: the curve of that day or the latest before it; with neither: the latest curve. date with from or to, or from after to, is VALIDATION_FAILED.',
  },
  orgInput({
    date: calendarDate.optional(),
    from: calendarDate.optional(),
    to: calendarDate.optional(),
  })
    .refine((v) => v.date === undefined || (v.from === undefined && v.to === undefined), {
      message: 'either date or from/to, not both',
      path: ['date'],
    })
    .refine((v) => v.from === undefined || v.to === undefined || v.from <= v.to, {
      message: 'from must not be after to',
      path: ['from'],
    }),
).query(async ({ ctx, input }) => {
  const ranged = input.from !== undefined || input.to !== undefined;
  const provider = createMarketProvider(ctx.deps.config.market, ctx.deps.pool);
  const curves = ranged
    ? await provider.treasuryYields({ from: input.from, to: input.to, latestOnly: false })
    : await provider.treasuryYields({ to: input.date, latestOnly: true });
  if (curves.length === 0) throw new AppError('TREASURY_YIELDS_NOT_FOUND');
  return { curves };
});

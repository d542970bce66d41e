import { calendarDate } from '../../fx/dates.ts';
import { createMarketProvider } from '../../market/provider.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { symbol } from './getQuotes.ts';

export const getHistory = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Daily prices of one ticker, oldest first, between from and to (YYYY-MM-DD, both optional, from not after to: VALIDATION_FAILED; at most the latest 5000 days); unknown tickers are MARKET_SYMBOL_NOT_FOUND.',
  },
  orgInput({ ticker: symbol, from: calendarDate.optional(), to: calendarDate.optional() }).refine(
    (v) => v.from === undefined || v.to === undefined || v.from <= v.to,
    { message: 'from must not be after to', path: ['from'] },
  ),
).query(async ({ ctx, input }) =>
  createMarketProvider(ctx.deps.config.market, ctx.deps.pool).history(input.ticker, {
    from: input.from,
    to: input.to,
  }),
);

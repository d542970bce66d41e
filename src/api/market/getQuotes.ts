import { z } from 'zod';
import { createMarketProvider } from '../../market/provider.ts';
import { SYMBOL_RE } from '../../market/parse.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, orgInput } from '../../trpc/schemas.ts';

export const symbol = z
  .string()
  .trim()
  .toUpperCase()
  .regex(SYMBOL_RE, 'must be a ticker symbol (letters, digits, . ^ = -; at most 20)');

export const getQuotes = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Latest quotes (price, previous close, change) for up to 50 symbols; an unknown symbol is MARKET_SYMBOL_NOT_FOUND with the unknown ones in data.details.symbols.',
  },
  orgInput({ symbols: list(symbol, 50).min(1) }),
).query(async ({ ctx, input }) => {
  const symbols = [...new Set(input.symbols)];
  return {
    quotes: await createMarketProvider(ctx.deps.config.market, ctx.deps.pool).quotes(symbols),
  };
});

import { z } from 'zod';
import {
  catalogQueryStates,
  catalogQueryTopIds,
  catalogQueryTotals,
} from '../../catalog/musicalDetailStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { parseCatalogQuery } from '../../catalog/query.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { jsonValue, orgInput } from '../../trpc/schemas.ts';

const MAX_IDS = 10_000;

export const executeQuery = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Runs a catalog query (docs/catalog.md) and answers its totals: { total, earningsUsd, byState, musicalDetailIds (highest earnings first, at most 10000), truncated }; the preview of a bulk override.',
  },
  orgInput({
    query: jsonValue(50_000, 20),
    hasBlockRule: z.boolean().default(false),
    hasRightsholderRule: z.boolean().default(false),
  }),
).query(async ({ ctx, input }) => {
  const query = parseCatalogQuery(input.query);
  const caller = callerOf(ctx.org);
  const filters = {
    hasBlockRule: input.hasBlockRule,
    hasRightsholderRule: input.hasRightsholderRule,
  };
  const db = ctx.deps.pool;
  const [{ total, earnings }, states, ids] = await Promise.all([
    catalogQueryTotals(db, caller, query, filters),
    catalogQueryStates(db, caller, query, filters),
    catalogQueryTopIds(db, caller, query, filters, MAX_IDS),
  ]);
  return {
    total,
    earningsUsd: earnings,
    byState: Object.fromEntries(states.map((r) => [r.state, r.n])),
    musicalDetailIds: ids,
    truncated: total > MAX_IDS,
  };
});

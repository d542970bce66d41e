import { z } from 'zod';
import { rightsholderScope } from '../../access/dataAccess.ts';
import { detailScope } from '../../catalog/musicalDetails.ts';
import { compileCatalogQuery, Params, parseCatalogQuery } from '../../catalog/query.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { jsonValue, orgInput } from '../../trpc/schemas.ts';

const MAX_IDS = 10_000;

export const executeQuery = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Runs a catalog query (README "Catalog") and answers its totals: { total, earningsUsd, byState, musicalDetailIds (highest earnings first, at most 10000), truncated }; the preview of a bulk override.',
  },
  orgInput({
    query: jsonValue(50_000, 20),
    hasBlockRule: z.boolean().default(false),
    hasRightsholderRule: z.boolean().default(false),
  }),
).query(async ({ ctx, input }) => {
  const query = parseCatalogQuery(input.query);
  const scope = await rightsholderScope(ctx.deps.pool, ctx.org.id, ctx.principal.userId);
  const params = new Params();
  const where = `${detailScope(params, ctx.org.id, scope, input)} AND ${compileCatalogQuery(query, params)}`;
  const from = 'FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id';
  const [totals, states, ids] = await Promise.all([
    ctx.deps.pool.query<{ total: number; earnings: string }>(`SELECT count(*)::int AS total, coalesce(trim_scale(sum(md.earnings_usd)), 0)::text AS earnings ${from} WHERE ${where}`, params.values),
    ctx.deps.pool.query<{ state: string; n: number }>(`SELECT md.state, count(*)::int AS n ${from} WHERE ${where} GROUP BY md.state ORDER BY md.state`, params.values),
    ctx.deps.pool.query<{ id: string }>(`SELECT md.id ${from} WHERE ${where} ORDER BY md.earnings_usd DESC, md.id LIMIT ${MAX_IDS}`, params.values),
  ]);
  const { total, earnings } = totals.rows[0]!;
  return {
    total,
    earningsUsd: earnings,
    byState: Object.fromEntries(states.rows.map((r) => [r.state, r.n])),
    musicalDetailIds: ids.rows.map((r) => r.id),
    truncated: total > MAX_IDS,
  };
});

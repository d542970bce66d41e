import { z } from 'zod';
import { visibleBlock } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { entriesOf } from './shared.ts';

export const getTopMdsFromBlock = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "The block's musical details with the largest USD earnings, highest first (ties by id): at most limit (default 300, at most 2000), only those whose share of the block's USD earnings is at least minEarningsPercentage (0..100, percent) when given (a block earning nothing or less has no shares: earningsPercentage null, the minimum not applied). Answers { blockId, totalEarnings, data: [entry + clusterId + earningsPercentage (4 decimals)] }.",
  },
  orgInput({
    blockId: z.uuid(),
    limit: z.number().int().min(1).max(2_000).default(300),
    minEarningsPercentage: z.number().min(0).max(100).optional(),
  }),
).query(async ({ ctx, input }) => {
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  const db = ctx.deps.pool;
  const block = await visibleBlock(db, caller, input.blockId);
  const { rows } = await db.query<{ id: string; cluster_id: string | null; pct: string | null }>(
    `WITH t AS (SELECT coalesce(sum(earnings_usd), 0) AS total FROM musical_details WHERE block_id = $1)
     SELECT md.id, md.cluster_id, trim_scale(round(CASE WHEN t.total > 0 THEN 100 * md.earnings_usd / t.total END, 4))::text AS pct
     FROM musical_details md, t WHERE md.block_id = $1
       AND ($3::numeric IS NULL OR t.total <= 0 OR 100 * md.earnings_usd / t.total >= $3::numeric)
     ORDER BY md.earnings_usd DESC, md.id LIMIT $2`,
    [block.id, input.limit, input.minEarningsPercentage ?? null],
  );
  const total = await db.query<{ t: string }>('SELECT coalesce(trim_scale(sum(earnings_usd)), 0)::text AS t FROM musical_details WHERE block_id = $1', [block.id]);
  const entries = await entriesOf(db, caller, block.id, rows.map((r) => r.id));
  return {
    blockId: block.id,
    totalEarnings: total.rows[0]!.t,
    data: rows.map((r) => ({ ...entries.get(r.id)!, clusterId: r.cluster_id, earningsPercentage: r.pct })),
  };
});

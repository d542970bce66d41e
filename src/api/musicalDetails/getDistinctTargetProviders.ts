import { z } from 'zod';
import { rightsholderScope } from '../../access/dataAccess.ts';
import { visibleBlock } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getDistinctTargetProviders = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'The providers musical details were looked up with (in the organization, or one block with blockId), each with its counts by outcome, and the provider configured now: { configured, providers: [{ provider, musicalDetails, found, notFound, failed }] }.',
  },
  orgInput({ blockId: z.uuid().optional() }),
).query(async ({ ctx, input }) => {
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  if (input.blockId) await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const scope = await rightsholderScope(ctx.deps.pool, ctx.org.id, ctx.principal.userId);
  const { rows } = await ctx.deps.pool.query(
    `SELECT md.provider, count(*)::int AS "musicalDetails", count(*) FILTER (WHERE md.state = 'found')::int AS found,
            count(*) FILTER (WHERE md.state = 'not_found')::int AS "notFound", count(*) FILTER (WHERE md.state = 'failed')::int AS failed
     FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id
     WHERE md.organization_id = $1 AND md.provider IS NOT NULL AND ($2::uuid IS NULL OR md.block_id = $2)
       AND ($3::uuid[] IS NULL OR b.rightsholder_id = ANY ($3::uuid[]))
     GROUP BY md.provider ORDER BY md.provider`,
    [ctx.org.id, input.blockId ?? null, scope],
  );
  return { configured: ctx.deps.config.enrichment.provider, providers: rows };
});

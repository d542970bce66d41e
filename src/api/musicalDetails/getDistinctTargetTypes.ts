import { z } from 'zod';
import { rightsholderScope } from '../../access/dataAccess.ts';
import { visibleBlock } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

const TYPES = ['track', 'album'] as const;

export const getDistinctTargetTypes = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'The kinds of catalog entry musical details resolve to (in the organization, or one block with blockId): { types: [{ type: track | album, products, musicalDetails }] }, both kinds always listed.',
  },
  orgInput({ blockId: z.uuid().optional() }),
).query(async ({ ctx, input }) => {
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  if (input.blockId) await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const scope = await rightsholderScope(ctx.deps.pool, ctx.org.id, ctx.principal.userId);
  const { rows } = await ctx.deps.pool.query<{ type: string; products: number; musicalDetails: number }>(
    `SELECT p.kind AS type, count(DISTINCT p.id)::int AS products, count(DISTINCT pmd.musical_detail_id)::int AS "musicalDetails"
     FROM products p JOIN catalog_blocks b ON b.id = p.block_id
     LEFT JOIN product_musical_details pmd ON pmd.product_id = p.id
     WHERE p.organization_id = $1 AND ($2::uuid IS NULL OR p.block_id = $2) AND ($3::uuid[] IS NULL OR b.rightsholder_id = ANY ($3::uuid[]))
     GROUP BY p.kind`,
    [ctx.org.id, input.blockId ?? null, scope],
  );
  return { types: TYPES.map((type) => rows.find((r) => r.type === type) ?? { type, products: 0, musicalDetails: 0 }) };
});

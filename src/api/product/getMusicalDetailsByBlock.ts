import { z } from 'zod';
import { visibleBlock, visibleDetails } from '../../catalog/musicalDetails.ts';
import { paginated } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { visibleProducts } from './shared.ts';

const sortColumns = {
  title: 'lower(md.title)',
  artist: 'lower(md.artist)',
  earnings: 'md.earnings_usd',
  rowCount: 'md.row_count',
  state: 'md.state',
  createdAt: 'md.created_at',
} as const;
type SortBy = keyof typeof sortColumns;

export const getMusicalDetailsByBlock = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'The musical details linked to one product of the block, in the pagination envelope: pagination optional { page (1), limit (5000, at most 5000), sortBy title (default), artist, earnings, rowCount, state, createdAt, sortOrder asc (default) | desc }; each with its effective values and linkSource.',
  },
  orgInput({
    blockId: z.uuid(),
    productId: z.uuid(),
    pagination: z
      .object({
        page: z.number().int().min(1).max(1_000_000).default(1),
        limit: z.number().int().min(1).max(5_000).default(5_000),
        sortBy: z.enum(Object.keys(sortColumns) as [SortBy, ...SortBy[]]).default('title'),
        sortOrder: z.enum(['asc', 'desc']).default('asc'),
      })
      .optional(),
  }),
).query(async ({ ctx, input }) => {
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  const block = await visibleBlock(ctx.deps.pool, caller, input.blockId);
  const [product] = await visibleProducts(ctx.deps.pool, caller, [input.productId], { blockId: block.id });
  const { page, limit, sortBy, sortOrder } = input.pagination ?? { page: 1, limit: 5_000, sortBy: 'title' as SortBy, sortOrder: 'asc' as const };
  const order = `${sortColumns[sortBy]} ${sortOrder === 'desc' ? 'DESC' : 'ASC'} NULLS LAST, md.id`;
  const { rows } = await ctx.deps.pool.query<{ id: string; source: 'auto' | 'user'; total: number }>(
    `SELECT md.id, pmd.source, count(*) OVER ()::int AS total FROM product_musical_details pmd JOIN musical_details md ON md.id = pmd.musical_detail_id
     WHERE pmd.product_id = $1 ORDER BY ${order} LIMIT $2 OFFSET $3`,
    [product!.id, limit, (page - 1) * limit],
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    const count = await ctx.deps.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product_musical_details WHERE product_id = $1', [product!.id]);
    total = count.rows[0]!.n;
  }
  const records = rows.length ? await visibleDetails(ctx.deps.pool, caller, rows.map((r) => r.id), block.id) : [];
  const byId = new Map(records.map((r) => [r.id, r]));
  const data = rows.map((r) => ({ ...byId.get(r.id)!, linkSource: r.source }));
  return paginated(data, { page, limit, offset: (page - 1) * limit, sortBy, sortOrder }, total);
});

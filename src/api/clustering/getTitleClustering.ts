import { z } from 'zod';
import { visibleBlock } from '../../catalog/musicalDetails.ts';
import { AppError } from '../../errors.ts';
import { MAX_LIMIT, paginated } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { CLUSTER_COLUMNS, clusterRecord, entriesOf } from './shared.ts';

const sortColumns = { entries: 'c.entries', titleDisplay: 'c.display_title COLLATE "C"', similarity: 'c.similarity', earnings: 'c.earnings' } as const;
// the maximum is checked after parsing, as every list's limit, so that it answers with its own errorCode
const limit = (fallback: number) => z.number().int().min(1).default(fallback);

export const getTitleClustering = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'The title clusters of a block with their entries, paginated twice: pagination { page (1), limit (50 without pagination, 20 when pagination is given without it), innerPage (1), innerLimit (20) } (limits at most 2000); clusters sorted by sortField entries (default) | titleDisplay | similarity | earnings, sortDirection desc (default) | asc, ties by id; the entries of each cluster highest USD earnings first, each cluster with musicalDetails: { data, pagination } in the shared envelope (entries is the count).',
  },
  orgInput({
    blockId: z.uuid(),
    // the specification's defaults: page 1 and limit 50 without pagination, but limit 20 when
    // pagination is given without one (its inner default), like the shared envelope's 300 and 200
    pagination: z
      .object({ page: z.number().int().min(1).max(1_000_000).default(1), limit: limit(20), innerPage: z.number().int().min(1).max(1_000_000).default(1), innerLimit: limit(20) })
      .default({ page: 1, limit: 50, innerPage: 1, innerLimit: 20 }),
    sortField: z.enum(['entries', 'titleDisplay', 'similarity', 'earnings']).default('entries'),
    sortDirection: z.enum(['asc', 'desc']).default('desc'),
  }),
).query(async ({ ctx, input }) => {
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  const db = ctx.deps.pool;
  const block = await visibleBlock(db, caller, input.blockId);
  const { page, limit: size, innerPage, innerLimit } = input.pagination;
  for (const [field, value] of [['limit', size], ['innerLimit', innerLimit]] as const) {
    if (value > MAX_LIMIT) throw new AppError('PAGINATION_LIMIT_EXCEEDED', `pagination.${field} must be at most ${MAX_LIMIT}`);
  }
  const dir = input.sortDirection === 'asc' ? 'ASC' : 'DESC';
  const total = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM title_clusters WHERE block_id = $1', [block.id]);
  const { rows } = await db.query<Parameters<typeof clusterRecord>[0]>(
    `SELECT ${CLUSTER_COLUMNS} FROM title_clusters c WHERE c.block_id = $1 ORDER BY ${sortColumns[input.sortField]} ${dir}, c.id LIMIT $2 OFFSET $3`,
    [block.id, size, (page - 1) * size],
  );
  const { rows: members } = await db.query<{ cluster_id: string; id: string }>(
    `SELECT cluster_id, id FROM (
       SELECT cluster_id, id, row_number() OVER (PARTITION BY cluster_id ORDER BY earnings_usd DESC, id) AS n
       FROM musical_details WHERE block_id = $1 AND cluster_id = ANY ($2::uuid[])) x
     WHERE n > $3 AND n <= $4 ORDER BY cluster_id, n`,
    [block.id, rows.map((r) => r.id), (innerPage - 1) * innerLimit, innerPage * innerLimit],
  );
  const entries = await entriesOf(db, caller, block.id, members.map((m) => m.id));
  const inner = { page: innerPage, limit: innerLimit, offset: (innerPage - 1) * innerLimit, sortBy: 'earnings', sortOrder: 'desc' as const };
  const data = rows.map((r) => {
    const c = clusterRecord(r);
    return { ...c, musicalDetails: paginated(members.filter((m) => m.cluster_id === c.id).map((m) => entries.get(m.id)!), inner, c.entries) };
  });
  return paginated(data, { page, limit: size, offset: (page - 1) * size, sortBy: input.sortField, sortOrder: input.sortDirection }, total.rows[0]!.n);
});

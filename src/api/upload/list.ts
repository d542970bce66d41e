import { z } from 'zod';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { dateFilter, orgInput } from '../../trpc/schemas.ts';
import { callerScope, dateRangeCondition } from './shared.ts';
import { likeContains } from '../../db/sql.ts';

const isoDate = dateFilter();

const sortColumns = { createdAt: 'u.created_at', updatedAt: 'u.updated_at', fileCount: '"fileCount"' } as const;
const uploadSorts = Object.keys(sortColumns) as [keyof typeof sortColumns, ...(keyof typeof sortColumns)[]];

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary: 'Uploads of the organization, with their files counted by status; sortBy createdAt (default), updatedAt, fileCount, sortOrder asc (default) or desc; filter by search (file name) and created date range.',
  },
  orgInput({
    pagination: paginationSchema(uploadSorts),
    filter: z.strictObject({ search: z.string().max(255).optional(), date_start: isoDate.optional(), date_end: isoDate.optional() }).optional(),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'createdAt' });
  const scope = await callerScope(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId });
  const search = input.filter?.search ? likeContains(input.filter.search) : null;
  // an upload is visible when the caller may see at least one of its files
  const where = `u.organization_id = $1
    AND EXISTS (SELECT 1 FROM statements s WHERE s.upload_id = u.id AND ($2::uuid[] IS NULL OR s.rightsholder_id = ANY ($2))
      AND ($3::text IS NULL OR s.file_name ILIKE $3))
    AND ${dateRangeCondition('u.created_at', '$4', '$5')}`;
  const params = [ctx.org.id, scope, search, input.filter?.date_start ?? null, input.filter?.date_end ?? null];
  const dir = page.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const [rows, count] = await Promise.all([
    ctx.deps.pool.query(
      `SELECT u.id, u.created_at AS "createdAt", u.updated_at AS "updatedAt", u.created_by AS "createdBy",
         (SELECT count(*) FROM statements s WHERE s.upload_id = u.id AND s.deleted_at IS NULL AND ($2::uuid[] IS NULL OR s.rightsholder_id = ANY ($2)))::int AS "fileCount",
         coalesce((SELECT json_object_agg(status, n) FROM (SELECT s.status, count(*) AS n FROM statements s
            WHERE s.upload_id = u.id AND ($2::uuid[] IS NULL OR s.rightsholder_id = ANY ($2)) GROUP BY s.status) c), '{}'::json) AS "statusCounts"
       FROM uploads u WHERE ${where} ORDER BY ${sortColumns[page.sortBy ?? 'createdAt']} ${dir}, u.id ${dir} LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    ),
    ctx.deps.pool.query<{ n: number }>(`SELECT count(*) AS n FROM uploads u WHERE ${where}`, params),
  ]);
  return paginated(rows.rows, page, count.rows[0]!.n);
});

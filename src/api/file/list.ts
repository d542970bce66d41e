import { z } from 'zod';
import { STATEMENT_SELECT, type StatementRecord } from '../../ingest/statements.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { dateFilter, orgInput } from '../../trpc/schemas.ts';
import { callerScope, customNameFilter, dateRangeCondition } from '../upload/shared.ts';
import { likeContains } from '../../db/sql.ts';

const isoDate = dateFilter();
const sortColumns = { createdAt: 's.created_at', name: 'lower(s.file_name)', updatedAt: 's.updated_at' } as const;

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary: 'Files (statements) of the organization, not deleted, with filters fileId, dateStart, dateEnd (created), rightsholderId, distributorId, customName and name (substrings, case-insensitive).',
  },
  orgInput({
    pagination: paginationSchema(['createdAt', 'name', 'updatedAt']),
    filters: z
      .strictObject({
        fileId: z.array(z.uuid()).max(2000).optional(),
        dateStart: isoDate.optional(),
        dateEnd: isoDate.optional(),
        rightsholderId: z.uuid().optional(),
        distributorId: z.uuid().optional(),
        customName: customNameFilter.optional(),
        name: z.string().max(255).optional(),
      })
      .optional(),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'createdAt' });
  const f = input.filters ?? {};
  const scope = await callerScope(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId });
  const params = [
    ctx.org.id,
    scope,
    f.fileId ?? null,
    f.dateStart ?? null,
    f.dateEnd ?? null,
    f.rightsholderId ?? null,
    f.distributorId ?? null,
    f.customName ?? null,
    f.name ? likeContains(f.name) : null,
  ];
  const where = `s.organization_id = $1 AND s.deleted_at IS NULL AND ($2::uuid[] IS NULL OR s.rightsholder_id = ANY ($2))
    AND ($3::uuid[] IS NULL OR s.id = ANY ($3)) AND ${dateRangeCondition('s.created_at', '$4', '$5')}
    AND ($6::uuid IS NULL OR s.rightsholder_id = $6) AND ($7::uuid IS NULL OR s.distributor_id = $7)
    AND ($8::text IS NULL OR s.custom_name ILIKE $8) AND ($9::text IS NULL OR s.file_name ILIKE $9)`;
  const order = `${sortColumns[(page.sortBy ?? 'createdAt') as keyof typeof sortColumns]} ${page.sortOrder === 'desc' ? 'DESC' : 'ASC'}, s.id`;
  const [items, count] = await Promise.all([
    ctx.deps.pool.query<StatementRecord>(`SELECT ${STATEMENT_SELECT} FROM statements s WHERE ${where} ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}`, params),
    ctx.deps.pool.query<{ n: number }>(`SELECT count(*) AS n FROM statements s WHERE ${where}`, params),
  ]);
  return paginated(items.rows, page, count.rows[0]!.n);
});

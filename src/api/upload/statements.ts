import { z } from 'zod';
import { STATEMENT_SELECT, statementStatuses, type StatementRecord } from '../../ingest/statements.ts';
import { resolvePage, paginationSchema, paginated } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { callerScope, customNameFilter } from './shared.ts';
import { likeContains } from '../../db/sql.ts';

const sortColumns = { createdAt: 's.created_at', fileName: 'lower(s.file_name)', status: 's.status', updatedAt: 's.updated_at' } as const;

export const statements = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Statements of the organization (or of one rightsholder), with status, progress, flags and totals; customName and filters statementStatus, statementIds, includeDeleted (also implied by statementStatus deleted), fileName (substrings, case-insensitive). Returns { items, totalFiles, pagination }.',
  },
  orgInput({
    rightsholderId: z.uuid().optional(),
    customName: customNameFilter.optional(),
    pagination: paginationSchema(['createdAt', 'fileName', 'status', 'updatedAt']),
    filter: z
      .strictObject({
        statementStatus: z.array(z.enum(statementStatuses)).max(20).optional(),
        statementIds: z.array(z.uuid()).max(2000).optional(),
        includeDeleted: z.boolean().default(false),
        fileName: z.string().max(255).optional(),
        uploadId: z.uuid().optional(),
      })
      .optional(),
  }),
).mutation(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'createdAt' });
  const scope = await callerScope(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId });
  const f = input.filter;
  const like = f?.fileName ? likeContains(f.fileName) : null;
  const params = [
    ctx.org.id,
    scope,
    input.rightsholderId ?? null,
    input.customName ?? null,
    f?.statementStatus ?? null,
    f?.statementIds ?? null,
    // naming the status deleted asks for deleted statements: without includeDeleted it could match nothing
    (f?.includeDeleted ?? false) || (f?.statementStatus?.includes('deleted') ?? false),
    like,
    f?.uploadId ?? null,
  ];
  const where = `s.organization_id = $1 AND ($2::uuid[] IS NULL OR s.rightsholder_id = ANY ($2))
    AND ($3::uuid IS NULL OR s.rightsholder_id = $3) AND ($4::text IS NULL OR s.custom_name ILIKE $4)
    AND ($5::text[] IS NULL OR s.status = ANY ($5)) AND ($6::uuid[] IS NULL OR s.id = ANY ($6))
    AND ($7 OR s.deleted_at IS NULL) AND ($8::text IS NULL OR s.file_name ILIKE $8) AND ($9::uuid IS NULL OR s.upload_id = $9)`;
  const order = `${sortColumns[(page.sortBy ?? 'createdAt') as keyof typeof sortColumns]} ${page.sortOrder === 'desc' ? 'DESC' : 'ASC'}, s.id`;
  const [items, count] = await Promise.all([
    ctx.deps.pool.query<StatementRecord>(
      `SELECT ${STATEMENT_SELECT} FROM statements s WHERE ${where} ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    ),
    ctx.deps.pool.query<{ n: number }>(`SELECT count(*) AS n FROM statements s WHERE ${where}`, params),
  ]);
  const total = count.rows[0]!.n;
  const envelope = paginated(items.rows, page, total);
  return { items: envelope.data, totalFiles: total, pagination: envelope.pagination };
});

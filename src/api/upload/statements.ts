import { z } from 'zod';
import { statementStatuses } from '../../ingest/statements.ts';
import { countStatements, listStatements, type StatementFilter } from '../../ingest/uploadStore.ts';
import { resolvePage, paginationSchema, paginated } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { customNameFilter } from './inputs.ts';

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
  const f = input.filter;
  const filter: StatementFilter = {
    rightsholderId: input.rightsholderId,
    customName: input.customName,
    statementStatus: f?.statementStatus,
    statementIds: f?.statementIds,
    // naming the status deleted asks for deleted statements: without includeDeleted it could match nothing
    includeDeleted:
      (f?.includeDeleted ?? false) || (f?.statementStatus?.includes('deleted') ?? false),
    fileName: f?.fileName,
    uploadId: f?.uploadId,
  };
  const [items, total] = await Promise.all([
    listStatements(ctx.deps.pool, ctx.org, filter, { ...page, sortBy: page.sortBy ?? 'createdAt' }),
    countStatements(ctx.deps.pool, ctx.org, filter),
  ]);
  const envelope = paginated(items, page, total);
  return { items: envelope.data, totalFiles: total, pagination: envelope.pagination };
});

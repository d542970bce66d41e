import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { AppError } from '../../errors.ts';
import { withTransaction } from '../../db/pool.ts';
import { exportFiltersSchema, exportFormats, exportTypes, partRowsFor } from '../../exports/definitions.ts';
import { enqueueExportBuild } from '../../exports/queue.ts';
import { exportView, insertExport } from '../../exports/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { callerScope } from './shared.ts';

export const trigger = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "Queues an export of the organization's data for the given rightsholders (within the caller's data access): type royalty_lines, earnings_summary, statements or catalog; format csv, xlsx or parquet; optional filters. Answers { exportId, status: 'queued', export }; follow it with export.status and export.listFiles.",
  },
  orgInput({
    type: z.enum(exportTypes).describe('royalty_lines: normalized rows with provenance; earnings_summary: sums by rightsholder, period, distributor, source, territory, currency; statements: the statement inventory with reconciliation figures; catalog: musical details with enrichment, corrections and products (no filters)'),
    format: z.enum(exportFormats).describe('csv (UTF-8, exact decimal text), xlsx (numeric cells), parquet (DECIMAL columns)'),
    rightsholderIds: z
      .array(z.uuid().transform((v) => v.toLowerCase()))
      .min(1)
      .max(1_000)
      .describe('the rightsholders whose data is exported; each must be visible to the caller'),
    filters: exportFiltersSchema.default({}),
  }),
).mutation(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const org = ctx.org.id;
  const scope = await callerScope(db, ctx);
  const filters = input.filters;
  if (input.type === 'statements' && (filters.sources || filters.territories)) {
    throw new AppError('EXPORT_FILTER_NOT_APPLICABLE', 'The statements export lists whole statements: filters.sources and filters.territories do not apply');
  }
  if (input.type === 'catalog' && Object.keys(filters).length > 0) {
    throw new AppError('EXPORT_FILTER_NOT_APPLICABLE', 'The catalog export lists the musical details of whole rightsholders: it takes no filters');
  }
  const rightsholderIds = [...new Set(input.rightsholderIds)];
  const found = await db.query<{ id: string }>('SELECT id::text FROM rightsholders WHERE organization_id = $1 AND id = ANY ($2::uuid[]) AND deleted_at IS NULL', [org, rightsholderIds]);
  const known = new Set(found.rows.map((r) => r.id).filter((id) => scope === null || scope.includes(id)));
  const missing = rightsholderIds.filter((id) => !known.has(id));
  if (missing.length > 0) throw new AppError('RIGHTSHOLDER_NOT_FOUND', `No rightsholder ${missing.join(', ')} is visible in the organization`, { details: { ids: missing } });
  if (filters.distributorIds) {
    const { rows } = await db.query<{ id: string }>(
      'SELECT id::text FROM distributors WHERE (organization_id = $1 OR organization_id IS NULL) AND id = ANY ($2::uuid[])',
      [org, filters.distributorIds],
    );
    const seen = new Set(rows.map((r) => r.id));
    const unknown = filters.distributorIds.filter((id) => !seen.has(id));
    if (unknown.length > 0) throw new AppError('DISTRIBUTOR_NOT_FOUND', `No distributor ${unknown.join(', ')} is visible in the organization`, { details: { ids: unknown } });
  }
  if (filters.statementIds) {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id::text FROM statements WHERE organization_id = $1 AND id = ANY ($2::uuid[]) AND deleted_at IS NULL AND ($3::uuid[] IS NULL OR rightsholder_id = ANY ($3))`,
      [org, filters.statementIds, scope],
    );
    const seen = new Set(rows.map((r) => r.id));
    const unknown = filters.statementIds.filter((id) => !seen.has(id));
    if (unknown.length > 0) throw new AppError('STATEMENT_NOT_FOUND', `No statement ${unknown.join(', ')} is visible in the organization`, { details: { ids: unknown } });
  }
  const created = await withTransaction(db, async (client) => {
    const row = await insertExport(client, {
      organizationId: org,
      requestedBy: ctx.principal!.userId,
      type: input.type,
      format: input.format,
      rightsholderIds: rightsholderIds.sort(),
      filters,
      partRows: partRowsFor(input.format, ctx.deps.config.exports.partRows),
    });
    await recordActivity(client, ctx.principal, {
      organizationId: org,
      action: 'export.trigger',
      subjectType: 'export',
      subjectId: row.id,
      subjectLabel: `${input.type} (${input.format})`,
      changes: { status: { before: null, after: 'queued' } },
    });
    return row;
  });
  await enqueueExportBuild(ctx.deps, org, created.id);
  return { exportId: created.id, status: created.status, export: exportView(created) };
});

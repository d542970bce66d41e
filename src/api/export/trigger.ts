import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { AppError } from '../../errors.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  exportFiltersSchema,
  exportFormats,
  exportTypes,
  partRowsFor,
} from '../../exports/definitions.ts';
import { enqueueExportBuild } from '../../exports/queue.ts';
import { exportView, insertExport, visibleStatementIds } from '../../exports/store.ts';
import { visibleDistributorIds } from '../../ingest/distributors.ts';
import { visibleLiveRightsholderIds } from '../../rightsholders/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

/** Refuses the export when it names an id the caller cannot see, listing every such id. */
function assertAllVisible(
  code: 'RIGHTSHOLDER_NOT_FOUND' | 'DISTRIBUTOR_NOT_FOUND' | 'STATEMENT_NOT_FOUND',
  noun: string,
  requested: readonly string[],
  visible: readonly string[],
): void {
  const seen = new Set(visible);
  const missing = requested.filter((id) => !seen.has(id));
  if (missing.length > 0)
    throw new AppError(code, `No ${noun} ${missing.join(', ')} is visible in the organization`, {
      details: { ids: missing },
    });
}

export const trigger = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "Queues an export of the organization's data for the given rightsholders (within the caller's data access): type royalty_lines, earnings_summary, statements or catalog; format csv, xlsx or parquet; optional filters. Answers { exportId, status: 'queued', export }; follow it with export.status and export.listFiles.",
  },
  orgInput({
    type: z
      .enum(exportTypes)
      .describe(
        'royalty_lines: normalized rows with provenance; earnings_summary: sums by rightsholder, period, distributor, source, territory, currency; statements: the statement inventory with reconciliation figures; catalog: musical details with enrichment, corrections and products (no filters)',
      ),
    format: z
      .enum(exportFormats)
      .describe('csv (UTF-8, exact decimal text), xlsx (numeric cells), parquet (DECIMAL columns)'),
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
  const scope = ctx.org.rightsholderScope;
  const filters = input.filters;
  if (input.type === 'statements' && (filters.sources || filters.territories)) {
    throw new AppError(
      'EXPORT_FILTER_NOT_APPLICABLE',
      'The statements export lists whole statements: filters.sources and filters.territories do not apply',
    );
  }
  if (input.type === 'catalog' && Object.keys(filters).length > 0) {
    throw new AppError(
      'EXPORT_FILTER_NOT_APPLICABLE',
      'The catalog export lists the musical details of whole rightsholders: it takes no filters',
    );
  }
  const rightsholderIds = [...new Set(input.rightsholderIds)];
  assertAllVisible(
    'RIGHTSHOLDER_NOT_FOUND',
    'rightsholder',
    rightsholderIds,
    await visibleLiveRightsholderIds(db, { organizationId: org, scope }, rightsholderIds),
  );
  if (filters.distributorIds) {
    assertAllVisible(
      'DISTRIBUTOR_NOT_FOUND',
      'distributor',
      filters.distributorIds,
      await visibleDistributorIds(db, org, filters.distributorIds),
    );
  }
  if (filters.statementIds) {
    assertAllVisible(
      'STATEMENT_NOT_FOUND',
      'statement',
      filters.statementIds,
      await visibleStatementIds(db, org, scope, filters.statementIds),
    );
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

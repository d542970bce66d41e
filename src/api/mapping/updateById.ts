import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { matchColumns } from '../../ingest/mappingFields.ts';
import {
  assertChangeable,
  getMapping,
  patchedMapping,
  redriveStatements,
  updateMapping,
  verifyMapping,
  type MappingRecord,
  type Verification,
} from '../../ingest/mappings.ts';
import { enqueueStatementIngest } from '../../ingest/queue.ts';
import { markRedriven } from '../../ingest/statementStatus.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, orgInput } from '../../trpc/schemas.ts';
import { mappingPatchShape } from './inputs.ts';

export interface MappingUpdateResult extends MappingRecord {
  /** whether this call made a new revision */
  changed: boolean;
  /** the statements queued for reprocessing with the saved mapping */
  redriven: string[];
  /** with verify: what was checked (a failing check refuses the update instead) */
  verification: Verification | null;
}

export const updateById = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "Change one of the organization's own mappings (name, headers, fields, distributorId, fileCategories); every change is a new revision. verify: first check it against the headers of the statements it would apply to. redriveFileIds: reprocess those statements with it.",
  },
  orgInput({
    id: z.uuid(),
    ...mappingPatchShape,
    verify: z.boolean().default(false),
    redriveFileIds: list(z.uuid(), 1_000).default([]),
  }),
).mutation(async ({ ctx, input }) => {
  const organizationId = ctx.org.id;
  const result = await withTransaction(ctx.deps.pool, async (db): Promise<MappingUpdateResult> => {
    const current = await getMapping(db, organizationId, input.id, { lock: true });
    assertChangeable(current);
    const after = patchedMapping(current, input);
    const scope = ctx.org.rightsholderScope;
    const redrive = await redriveStatements(db, organizationId, input.redriveFileIds, scope);
    // the pipeline finds a statement's mapping by header hash, else by its columns (the same
    // columns in another order: src/ingest/library.ts): another layout would not use this one
    const mismatched = redrive.filter(
      (s) =>
        s.headerHash !== null &&
        s.headerHash !== after.headerHash &&
        !(
          s.headers !== null &&
          'match' in matchColumns(s.headers, { headers: after.headers, fields: after.fields })
        ),
    );
    if (mismatched.length > 0) {
      throw new AppError('MAPPING_REDRIVE_HEADER_MISMATCH', undefined, {
        details: { statementIds: mismatched.slice(0, 50).map((s) => s.id) },
      });
    }
    let verification: Verification | null = null;
    if (input.verify) {
      verification = await verifyMapping(db, organizationId, after, redrive);
      if (verification.problems.length > 0) {
        throw new AppError(
          'MAPPING_VERIFY_FAILED',
          `${verification.problems.length} statement(s) do not fit the mapping`,
          {
            details: {
              statements: verification.statements,
              problems: verification.problems.slice(0, 50),
            },
          },
        );
      }
    }
    const { mapping, changed } = await updateMapping(
      db,
      ctx.principal,
      organizationId,
      current,
      input,
      'mapping.updateById',
    );
    const redriven = redrive.map((s) => s.id);
    if (redriven.length > 0) {
      // queued, as upload.uploadAction reprocess and upload.callback leave them: a statement that
      // waited for a mapping no longer says needs_mapping once it has one (its rows, if any, stay
      // visible until the new ones replace them)
      await markRedriven(db, organizationId, redriven);
      await recordActivity(db, ctx.principal, {
        organizationId,
        action: 'mapping.redrive',
        subjectType: 'mapping',
        subjectId: mapping.id,
        subjectLabel: mapping.name || null,
        changes: { statementIds: { before: null, after: redriven } },
      });
    }
    return { ...mapping, changed, redriven, verification };
  });
  // queued once the new revision is committed, so the jobs can only read the saved mapping
  await enqueueStatementIngest(ctx.deps, organizationId, result.redriven, 'redrive');
  return result;
});

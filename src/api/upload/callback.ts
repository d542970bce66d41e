import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { enqueueBlockRefresh } from '../../catalog/blocks.ts';
import { enqueueStatementIngest } from '../../ingest/queue.ts';
import { settleWaiting } from '../../ingest/statementStatus.ts';
import {
  distributorUsable,
  mappingHeaderHash,
  statementVisible,
  uploadVisible,
} from '../../ingest/uploadStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

/** What the callback does with the waiting statements: its edge, and the status that gives them. */
const OUTCOME = {
  release: { edge: 'release', status: 'uploaded' },
  skip: { edge: 'skipWaiting', status: 'skipped' },
  bad: { edge: 'markWaitingBad', status: 'bad' },
} as const;

/**
 * Releases statements waiting in needs_mapping once a mapping exists for their header hash:
 * those of `file_id` (one statement), else of `upload_id`, else every one of the organization
 * with that mapping's header hash. With `action` skip or bad they are set aside instead.
 * `distributor_id` assigns the distributor on the way. `type` names the event
 * (e.g. "mapping_created") and is recorded in the activity log.
 */
export const callback = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      "Release statements waiting in needs_mapping after a mapping was created (or skip / mark them bad): by file_id, upload_id or the mapping's header hash.",
  },
  orgInput({
    type: z.string().trim().min(1).max(100),
    mapping_id: z.uuid(),
    file_id: z.uuid().optional(),
    upload_id: z.uuid().optional(),
    distributor_id: z.uuid().optional(),
    action: z.enum(['skip', 'bad']).optional(),
  }),
).mutation(async ({ ctx, input }) => {
  const organizationId = ctx.org.id;
  const released = await withTransaction(ctx.deps.pool, async (db) => {
    const headerHash = await mappingHeaderHash(db, organizationId, input.mapping_id);
    if (headerHash === null) throw new AppError('MAPPING_NOT_FOUND');
    if (
      input.distributor_id &&
      !(await distributorUsable(db, organizationId, input.distributor_id))
    )
      throw new AppError('DISTRIBUTOR_NOT_FOUND');
    const { edge, status } = OUTCOME[input.action ?? 'release'];
    const rows = await settleWaiting(db, edge, {
      organizationId,
      headerHash,
      statementId: input.file_id ?? null,
      uploadId: input.upload_id ?? null,
      scope: ctx.org.rightsholderScope,
      distributorId: input.distributor_id ?? null,
    });
    if (input.file_id && rows.length === 0) {
      // with upload_id too, a file of another upload is not found there (as file.* answer), not "not waiting"
      if (!(await statementVisible(db, ctx.org, input.file_id, input.upload_id ?? null))) {
        throw new AppError(
          'STATEMENT_NOT_FOUND',
          input.upload_id ? 'No statement with that file_id in that upload' : undefined,
        );
      }
      throw new AppError('STATEMENT_NOT_WAITING', 'That statement is not waiting for this mapping');
    }
    // an upload the caller cannot see is not found (as in upload.uploadAction), not "nothing waiting"
    if (
      input.upload_id &&
      rows.length === 0 &&
      !(await uploadVisible(db, ctx.org, input.upload_id))
    )
      throw new AppError('UPLOAD_NOT_FOUND');
    // set aside, a statement that had rows from an earlier run (a reprocess that now waits for a
    // mapping) leaves analytics, and its rightsholder's catalog follows, as with uploadAction skip / bad
    const setAside = input.action ? rows.filter((r) => r.had_rows) : [];
    if (setAside.length > 0)
      await enqueueBlockRefresh(
        db,
        organizationId,
        setAside.map((r) => r.rightsholder_id),
        `upload.callback.${input.action}`,
      );
    for (const r of rows) {
      await recordActivity(db, ctx.principal, {
        organizationId,
        action: `upload.callback.${input.type}`,
        subjectType: 'file',
        subjectId: r.id,
        subjectLabel: r.file_name,
        changes: { status: { before: 'needs_mapping', after: status } },
      });
    }
    return rows.map((r) => r.id);
  });
  if (!input.action) await enqueueStatementIngest(ctx.deps, organizationId, released, 'callback');
  return {
    statementIds: released,
    status: input.action === 'skip' ? 'skipped' : input.action === 'bad' ? 'bad' : 'queued',
  };
});

import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { enqueueBlockRefresh } from '../../catalog/blocks.ts';
import { enqueueStatementIngest } from '../../ingest/queue.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { callerScope } from './shared.ts';

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
    summary: 'Release statements waiting in needs_mapping after a mapping was created (or skip / mark them bad): by file_id, upload_id or the mapping\'s header hash.',
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
    const m = await db.query<{ header_hash: string }>(
      'SELECT header_hash FROM mappings WHERE id = $1 AND (organization_id = $2 OR organization_id IS NULL)',
      [input.mapping_id, organizationId],
    );
    if (!m.rows[0]) throw new AppError('MAPPING_NOT_FOUND');
    if (input.distributor_id) {
      const d = await db.query('SELECT 1 FROM distributors WHERE id = $1 AND (organization_id = $2 OR organization_id IS NULL)', [input.distributor_id, organizationId]);
      if (!d.rows[0]) throw new AppError('DISTRIBUTOR_NOT_FOUND');
    }
    const scope = await callerScope(db, { organizationId, userId: ctx.principal.userId });
    const status = input.action === 'skip' ? 'skipped' : input.action === 'bad' ? 'bad' : 'uploaded';
    const { rows } = await db.query<{ id: string; file_name: string; rightsholder_id: string; had_rows: boolean }>(
      `UPDATE statements SET status = $7, distributor_id = coalesce($6, distributor_id), updated_at = clock_timestamp()
       WHERE organization_id = $1 AND status = 'needs_mapping' AND header_hash = $2 AND deleted_at IS NULL
         AND ($3::uuid IS NULL OR id = $3) AND ($4::uuid IS NULL OR upload_id = $4) AND ($5::uuid[] IS NULL OR rightsholder_id = ANY ($5))
       RETURNING id, file_name, rightsholder_id, normalized_key IS NOT NULL AS had_rows`,
      [organizationId, m.rows[0].header_hash, input.file_id ?? null, input.upload_id ?? null, scope, input.distributor_id ?? null, status],
    );
    if (input.file_id && rows.length === 0) {
      // with upload_id too, a file of another upload is not found there (as file.* answer), not "not waiting"
      const seen = await db.query(
        `SELECT 1 FROM statements WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL AND ($3::uuid[] IS NULL OR rightsholder_id = ANY ($3))
           AND ($4::uuid IS NULL OR upload_id = $4)`,
        [input.file_id, organizationId, scope, input.upload_id ?? null],
      );
      if (!seen.rows[0]) throw new AppError('STATEMENT_NOT_FOUND', input.upload_id ? 'No statement with that file_id in that upload' : undefined);
      throw new AppError('STATEMENT_NOT_WAITING', 'That statement is not waiting for this mapping');
    }
    if (input.upload_id && rows.length === 0) {
      // an upload the caller cannot see is not found (as in upload.uploadAction), not "nothing waiting"
      const seen = await db.query(`SELECT 1 FROM statements WHERE upload_id = $1 AND organization_id = $2 AND ($3::uuid[] IS NULL OR rightsholder_id = ANY ($3)) LIMIT 1`, [
        input.upload_id,
        organizationId,
        scope,
      ]);
      if (!seen.rows[0]) throw new AppError('UPLOAD_NOT_FOUND');
    }
    // set aside, a statement that had rows from an earlier run (a reprocess that now waits for a
    // mapping) leaves analytics, and its rightsholder's catalog follows, as with uploadAction skip / bad
    const setAside = input.action ? rows.filter((r) => r.had_rows) : [];
    if (setAside.length > 0) await enqueueBlockRefresh(db, organizationId, setAside.map((r) => r.rightsholder_id), `upload.callback.${input.action}`);
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
  return { statementIds: released, status: input.action === 'skip' ? 'skipped' : input.action === 'bad' ? 'bad' : 'queued' };
});

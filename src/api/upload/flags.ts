import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction, type Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { getStatement } from '../../ingest/statements.ts';
import type { Principal } from '../../auth/principal.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { storedId, visibleStatement } from './shared.ts';

async function statementOfUpload(db: Queryable, principal: Principal, organizationId: string, uploadId: string, statementId: string) {
  const s = await visibleStatement(db, { organizationId, userId: principal.userId }, statementId, { lock: true });
  if (s.uploadId !== uploadId) throw new AppError('STATEMENT_NOT_FOUND');
  return s;
}

const ids = { uploadId: storedId(), statementId: storedId() };

export const resolveFlag = orgProcedure(
  { minRole: 'writer', scope: '', summary: 'Mark one flag of a statement resolved.' },
  orgInput({ ...ids, flagId: z.uuid() }),
).mutation(async ({ ctx, input }) => {
  await withTransaction(ctx.deps.pool, async (db) => {
    const s = await statementOfUpload(db, ctx.principal, ctx.org.id, input.uploadId, input.statementId);
    const { rows } = await db.query<{ kind: string }>(
      `UPDATE statement_flags SET resolved = true, resolved_at = coalesce(resolved_at, clock_timestamp()), resolved_by = coalesce(resolved_by, $3)
       WHERE id = $1 AND statement_id = $2 RETURNING kind`,
      [input.flagId, input.statementId, ctx.principal.userId],
    );
    if (!rows[0]) throw new AppError('FLAG_NOT_FOUND');
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'upload.resolveFlag',
      subjectType: 'file',
      subjectId: input.statementId,
      subjectLabel: s.fileName,
      changes: { [`flag:${rows[0].kind}`]: { before: 'unresolved', after: 'resolved' } },
    });
  });
  return getStatement(ctx.deps.pool, ctx.org.id, input.statementId);
});

export const resolveAllFlags = orgProcedure(
  { minRole: 'writer', scope: '', summary: 'Mark every flag of a statement resolved.' },
  orgInput(ids),
).mutation(async ({ ctx, input }) => {
  await withTransaction(ctx.deps.pool, async (db) => {
    const s = await statementOfUpload(db, ctx.principal, ctx.org.id, input.uploadId, input.statementId);
    const { rowCount } = await db.query(
      `UPDATE statement_flags SET resolved = true, resolved_at = clock_timestamp(), resolved_by = $2 WHERE statement_id = $1 AND NOT resolved`,
      [input.statementId, ctx.principal.userId],
    );
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'upload.resolveAllFlags',
      subjectType: 'file',
      subjectId: input.statementId,
      subjectLabel: s.fileName,
      changes: { unresolvedFlags: { before: rowCount ?? 0, after: 0 } },
    });
  });
  return getStatement(ctx.deps.pool, ctx.org.id, input.statementId);
});

export const setFlagShown = orgProcedure(
  { minRole: 'writer', scope: '', summary: 'Show or hide one flag of a statement (shown = the given boolean).' },
  orgInput({ ...ids, flagId: z.uuid(), shown: z.boolean() }),
).mutation(async ({ ctx, input }) => {
  await withTransaction(ctx.deps.pool, async (db) => {
    const s = await statementOfUpload(db, ctx.principal, ctx.org.id, input.uploadId, input.statementId);
    const { rows } = await db.query<{ before: boolean }>(
      `UPDATE statement_flags f SET shown = $3 FROM (SELECT id, shown AS before FROM statement_flags WHERE id = $1 AND statement_id = $2) old
       WHERE f.id = old.id RETURNING old.before`,
      [input.flagId, input.statementId, input.shown],
    );
    if (!rows[0]) throw new AppError('FLAG_NOT_FOUND');
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'upload.setFlagShown',
      subjectType: 'file',
      subjectId: input.statementId,
      subjectLabel: s.fileName,
      changes: { shown: { before: rows[0].before, after: input.shown } },
    });
  });
  return getStatement(ctx.deps.pool, ctx.org.id, input.statementId);
});

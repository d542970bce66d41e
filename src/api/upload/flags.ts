import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction, type Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { getStatement } from '../../ingest/statements.ts';
import {
  resolveAllFlags as resolveAllFlagsOf,
  resolveFlag as resolveFlagOf,
  setFlagShown as setFlagShownOf,
  visibleStatement,
  type VisibleTo,
} from '../../ingest/uploadStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { storedId } from './inputs.ts';

/** The statement, locked, if the caller may see it and it is of that upload. */
async function statementOfUpload(
  db: Queryable,
  org: VisibleTo,
  uploadId: string,
  statementId: string,
) {
  const s = await visibleStatement(db, org, statementId, { lock: true });
  if (s.uploadId !== uploadId) throw new AppError('STATEMENT_NOT_FOUND');
  return s;
}

const ids = { uploadId: storedId(), statementId: storedId() };

export const resolveFlag = orgProcedure(
  { minRole: 'writer', scope: '', summary: 'Mark one flag of a statement resolved.' },
  orgInput({ ...ids, flagId: z.uuid() }),
).mutation(async ({ ctx, input }) => {
  await withTransaction(ctx.deps.pool, async (db) => {
    const s = await statementOfUpload(db, ctx.org, input.uploadId, input.statementId);
    const kind = await resolveFlagOf(db, input.statementId, input.flagId, ctx.principal.userId);
    if (kind === null) throw new AppError('FLAG_NOT_FOUND');
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'upload.resolveFlag',
      subjectType: 'file',
      subjectId: input.statementId,
      subjectLabel: s.fileName,
      changes: { [`flag:${kind}`]: { before: 'unresolved', after: 'resolved' } },
    });
  });
  return getStatement(ctx.deps.pool, ctx.org.id, input.statementId);
});

export const resolveAllFlags = orgProcedure(
  { minRole: 'writer', scope: '', summary: 'Mark every flag of a statement resolved.' },
  orgInput(ids),
).mutation(async ({ ctx, input }) => {
  await withTransaction(ctx.deps.pool, async (db) => {
    const s = await statementOfUpload(db, ctx.org, input.uploadId, input.statementId);
    const resolved = await resolveAllFlagsOf(db, input.statementId, ctx.principal.userId);
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'upload.resolveAllFlags',
      subjectType: 'file',
      subjectId: input.statementId,
      subjectLabel: s.fileName,
      changes: { unresolvedFlags: { before: resolved, after: 0 } },
    });
  });
  return getStatement(ctx.deps.pool, ctx.org.id, input.statementId);
});

export const setFlagShown = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary: 'Show or hide one flag of a statement (shown = the given boolean).',
  },
  orgInput({ ...ids, flagId: z.uuid(), shown: z.boolean() }),
).mutation(async ({ ctx, input }) => {
  await withTransaction(ctx.deps.pool, async (db) => {
    const s = await statementOfUpload(db, ctx.org, input.uploadId, input.statementId);
    const before = await setFlagShownOf(db, input.statementId, input.flagId, input.shown);
    if (before === null) throw new AppError('FLAG_NOT_FOUND');
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'upload.setFlagShown',
      subjectType: 'file',
      subjectId: input.statementId,
      subjectLabel: s.fileName,
      changes: { shown: { before, after: input.shown } },
    });
  });
  return getStatement(ctx.deps.pool, ctx.org.id, input.statementId);
});

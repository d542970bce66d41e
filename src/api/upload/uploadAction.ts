import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction, type Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { enqueueBlockRefresh } from '../../catalog/blocks.ts';
import { enqueueStatementIngest } from '../../ingest/queue.ts';
import { encodingSchema, variablesSchema } from '../../ingest/mappingFields.ts';
import { getStatement, type StatementRecord } from '../../ingest/statements.ts';
import {
  completeUpload,
  deleteStatement,
  expireDueUploads,
  markStatementBad,
  moved,
  reprocessStatement,
  restoreStatement,
  skipStatement,
  transitionAllows,
  type StatementTransition,
} from '../../ingest/statementStatus.ts';
import {
  setStatementEncoding,
  setStatementVariables,
  statementRecordsOfUpload,
  visibleStatement,
  visibleStatementsOfUpload,
  type VisibleStatement,
  type VisibleTo,
} from '../../ingest/uploadStore.ts';
import type { ObjectStore } from '../../storage/objectStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { storedId } from './inputs.ts';
import { knownEncoding } from './uploadFile.ts';

/**
 * The actions on a statement, as `action: { type, statementId }`, or on every statement of an
 * upload whose status allows it, as `action: { type, uploadId }`:
 * - complete: the bytes were PUT; checks the object and queues processing.
 * - reprocess: processes it again (same file, current mapping); rows are replaced atomically.
 * Both take `variables`, the values of the mapping's variable fields, kept with the statement, and
 * `encoding`, the file's text encoding (null: detect it again), kept likewise.
 * - skip / bad: keeps the file but takes its rows out of analytics (`skipped`, `bad`).
 * - delete: soft delete (`deleted`); restore: undo a delete, back to the previous status.
 */
export const uploadActionTypes = [
  'complete',
  'reprocess',
  'skip',
  'bad',
  'delete',
  'restore',
] as const;
type UploadActionType = (typeof uploadActionTypes)[number];

/**
 * Each action's edge of the statement state machine (src/ingest/statementStatus.ts), whose `from`
 * says which statuses allow it. reprocess, skip, bad and delete take a statement being processed
 * too, as mapping.updateById redriveFileIds: its run commits nothing (src/ingest/pipeline.ts); a
 * reprocessed one is read by the next run after that one, in the statement's own job queue, and a
 * deleted one comes back queued on restore (remembered as uploaded: its run has ended by then).
 */
const EDGE: Record<UploadActionType, StatementTransition> = {
  complete: 'complete',
  reprocess: 'reprocess',
  skip: 'skip',
  bad: 'markBad',
  delete: 'delete',
  restore: 'restore',
};

/**
 * Whether the statement's status allows the action. `complete` takes a direct upload: one in
 * progress, or completed and not read yet (a second complete checks the object again); a statement
 * the pipeline has read (sent back to `uploaded` by a reprocess or a mapping's release) is no
 * upload any more, and its object is not checked and taken again.
 */
function allows(type: UploadActionType, s: VisibleStatement): boolean {
  if (type === 'complete' && s.wasRead) return false;
  return transitionAllows(EDGE[type], s.status);
}

/** Why an action is refused on one statement (STATEMENT_STATE_CONFLICT). */
function refusal(type: UploadActionType, s: VisibleStatement): string {
  return type === 'complete' && s.wasRead && transitionAllows('complete', s.status)
    ? 'The statement was already read: complete takes an upload in progress (reprocess reads a statement again)'
    : `A statement that is ${s.status} cannot take the action ${type}`;
}

/** The uploaded object as `complete` takes it: there, not empty, of the announced size. */
async function checkedObject(
  store: ObjectStore,
  s: VisibleStatement,
): Promise<{ size: number; etag: string | null }> {
  const object = await store.head(s.objectKey);
  if (!object)
    throw new AppError(
      'UPLOAD_OBJECT_MISSING',
      `Nothing was uploaded to the URL of ${s.fileName} yet: PUT the file first`,
    );
  if (object.size === 0)
    throw new AppError('UPLOAD_EMPTY', `The uploaded file ${s.fileName} is empty`);
  if (s.declaredSize !== null && object.size !== s.declaredSize) {
    throw new AppError(
      'UPLOAD_SIZE_MISMATCH',
      `The uploaded file ${s.fileName} has ${object.size} bytes; ${s.declaredSize} were announced`,
    );
  }
  return { size: object.size, etag: object.etag ?? null };
}

/**
 * Moves one locked statement along its action's edge (its status was checked: an edge that moves
 * nothing here is a conflict); whether it came back `uploaded` (a restore: to be queued again).
 */
async function act(
  db: Queryable,
  store: ObjectStore,
  type: UploadActionType,
  s: VisibleStatement,
): Promise<boolean> {
  const conflict = refusal(type, s);
  switch (type) {
    case 'complete':
      // the object as checked: every read of it compares its ETag (bytes PUT again later are not read)
      moved(await completeUpload(db, s.id, await checkedObject(store, s)), conflict);
      return false;
    case 'reprocess':
      moved(await reprocessStatement(db, s.id), conflict);
      return false;
    case 'skip':
      moved(await skipStatement(db, s.id), conflict);
      return false;
    case 'bad':
      moved(await markStatementBad(db, s.id), conflict);
      return false;
    case 'delete':
      moved(await deleteStatement(db, s.id), conflict);
      return false;
    case 'restore':
      return moved(await restoreStatement(db, s.id), conflict)[0]!.status === 'uploaded';
  }
}

/** Where an action applies: one statement, or the statements of one upload. */
interface ActionSubject {
  statementId?: string | undefined;
  uploadId?: string | undefined;
}

/**
 * The statements the action applies to, locked: the one named, whose status must allow it, or
 * those of the upload whose status allows it (one at least).
 */
async function actionTargets(
  db: Queryable,
  org: VisibleTo,
  type: UploadActionType,
  { statementId, uploadId }: ActionSubject,
): Promise<VisibleStatement[]> {
  if (statementId !== undefined) {
    const s = await visibleStatement(db, org, statementId, { lock: true });
    if (!allows(type, s)) throw new AppError('STATEMENT_STATE_CONFLICT', refusal(type, s));
    return [s];
  }
  const targets = (await visibleStatementsOfUpload(db, org, uploadId!)).filter((s) =>
    allows(type, s),
  );
  if (targets.length === 0)
    throw new AppError(
      'STATEMENT_STATE_CONFLICT',
      `No file of the upload can take the action ${type}`,
    );
  return targets;
}

/**
 * skip, bad, delete and restore change which statements analytics reads, and so does a reprocess
 * of a skipped or bad one (its processed version counts again at once, whatever the run ends in):
 * the catalog follows.
 */
async function refreshChangedBlocks(
  db: Queryable,
  organizationId: string,
  type: UploadActionType,
  targets: VisibleStatement[],
): Promise<void> {
  const changing =
    type === 'complete'
      ? []
      : type === 'reprocess'
        ? targets.filter((s) => s.status === 'skipped' || s.status === 'bad')
        : targets;
  if (changing.length > 0)
    await enqueueBlockRefresh(
      db,
      organizationId,
      changing.map((s) => s.rightsholderId),
      `statement.${type}`,
    );
}

/** The answer: the statement, or the upload's statements, as the action left them. */
async function actionAnswer(
  db: Queryable,
  org: VisibleTo,
  { statementId, uploadId }: ActionSubject,
  acted: string[],
): Promise<
  StatementRecord | { uploadId: string; statementIds: string[]; items: StatementRecord[] }
> {
  if (statementId !== undefined) return getStatement(db, org.id, statementId);
  return {
    uploadId: uploadId!,
    statementIds: acted,
    items: await statementRecordsOfUpload(db, org, uploadId!),
  };
}

export const uploadAction = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      "Act on a statement or an upload: action { type: complete | reprocess | skip | bad | delete | restore, statementId | uploadId, variables?, encoding? }. complete checks the uploaded object and queues processing; complete and reprocess take variables, the values of the mapping's variable fields, and encoding, the file's text encoding (null: detect it); on an upload the action applies to each of its files whose status allows it.",
  },
  orgInput({
    action: z
      .strictObject({
        type: z.enum(uploadActionTypes),
        statementId: storedId().optional(),
        uploadId: storedId().optional(),
        variables: variablesSchema.optional(),
        encoding: encodingSchema.nullable().optional(),
      })
      .refine((a) => (a.statementId === undefined) !== (a.uploadId === undefined), {
        message: 'give statementId or uploadId, not both',
        path: ['statementId'],
      })
      .refine((a) => a.variables === undefined || a.type === 'complete' || a.type === 'reprocess', {
        message: 'variables go with complete or reprocess, the actions that read the file',
        path: ['variables'],
      })
      .refine((a) => a.encoding === undefined || a.type === 'complete' || a.type === 'reprocess', {
        message: 'encoding goes with complete or reprocess, the actions that read the file',
        path: ['encoding'],
      }),
  }),
).mutation(async ({ ctx, input }) => {
  const { type, statementId, uploadId, variables } = input.action;
  const encoding =
    input.action.encoding === undefined || input.action.encoding === null
      ? input.action.encoding
      : knownEncoding(input.action.encoding);
  const org = ctx.org.id;
  // an upload past its TTL is expired before anything acts on it: a late complete is refused
  await expireDueUploads(
    ctx.deps.pool,
    statementId !== undefined
      ? { organizationId: org, statementIds: [statementId] }
      : { organizationId: org, uploadId: uploadId! },
  );
  // restored to uploaded: queued again (the job of its complete or reprocess found it deleted and ended)
  const requeue: string[] = [];
  const acted = await withTransaction(ctx.deps.pool, async (db) => {
    requeue.length = 0;
    const targets = await actionTargets(db, ctx.org, type, { statementId, uploadId });
    for (const s of targets) {
      // the values of the mapping's variables and the file's text encoding, for this reading and the ones after it
      if (variables !== undefined) await setStatementVariables(db, s.id, variables);
      if (encoding !== undefined) await setStatementEncoding(db, s.id, encoding);
      if (await act(db, ctx.deps.store, type, s)) requeue.push(s.id);
      await recordActivity(db, ctx.principal, {
        organizationId: org,
        action: `upload.uploadAction.${type}`,
        subjectType: 'file',
        subjectId: s.id,
        subjectLabel: s.fileName,
        changes: { status: { before: s.status, after: type } },
      });
    }
    await refreshChangedBlocks(db, org, type, targets);
    return targets.map((s) => s.id);
  });
  // the answer is the statements as the action left them, read before their jobs are queued (a job
  // taken at once would otherwise show them processing, or processed, at random)
  const answer = await actionAnswer(ctx.deps.pool, ctx.org, { statementId, uploadId }, acted);
  if (type === 'complete' || type === 'reprocess')
    await enqueueStatementIngest(ctx.deps, org, acted, type);
  if (requeue.length > 0) await enqueueStatementIngest(ctx.deps, org, requeue, 'restore');
  return answer;
});

// The attempts of an export: the job may run twice at once (the dead-runner recovery can take a
// live but slow runner for dead and hand its job to another). Each attempt writes its objects under
// a prefix of its own (`attempt-<n>/`, n from the claim), so no attempt can overwrite another's;
// the first attempt to complete wins, atomically, in the transaction that writes the file rows and
// `completed` under the export's row lock; the other attempts find the export finished (at their
// next part or at their own completion), remove what they wrote and end. Only the latest attempt
// reports progress, and a retryable failure requeues or fails the export only when no later
// attempt runs it. A failure removes every object under the export's prefix, after it is
// recorded; a completion removes the objects of the other attempts after it commits.
import { recordActivity } from '../activity/record.ts';
import { withTransaction } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { organizationLive, rightsholdersLive } from './access.ts';
import { retentionSeconds, scheduleExpiry } from './expire.ts';
import { attemptPrefix, removeObjects } from './objects.ts';
import {
  claimExport,
  deleteExportFiles,
  exportPrefix,
  insertExportFile,
  lockExport,
  lockOpenExport,
  markExportCompleted,
  markExportFailed,
  markExportPurged,
  reportExportProgress,
  requeueExportAttempt,
  type ExportRow,
} from './store.ts';
import type { WrittenFile } from './writers.ts';

/** A new attempt of the export, when it is open (its number: the export's attempts). */
export async function claim(deps: Deps, exportId: string): Promise<ExportRow | undefined> {
  return claimExport(deps.pool, exportId);
}

const actorOf = (e: ExportRow) =>
  e.requested_by ? { userId: e.requested_by, apiKey: null } : null;
const labelOf = (e: ExportRow) => `${e.type} (${e.format})`;

/** An attempt that found the export finished by another one (or failed): it removes its objects and ends. */
export class AttemptEnded extends Error {}

/**
 * Marks the export failed with its errorCode and reason; none of its objects stays. With `attempt`
 * (a retryable failure of that attempt) only when no later attempt runs the export: otherwise only
 * that attempt's objects go. The failure is committed before any object is removed, so an attempt
 * completing meanwhile either committed first (and the export stays completed, its files intact)
 * or finds the export failed.
 */
export async function failExport(
  deps: Deps,
  exportId: string,
  errorCode: string,
  reason: string,
  attempt?: number,
): Promise<void> {
  // the export as found (own), and whether this call failed it
  const { own, failed } = await withTransaction(deps.pool, async (client) => {
    const e = await lockExport(client, exportId);
    if (
      !e ||
      !(e.status === 'queued' || e.status === 'running') ||
      (attempt !== undefined && e.attempts !== attempt)
    )
      return { own: e, failed: undefined };
    await deleteExportFiles(client, exportId);
    await markExportFailed(client, exportId, errorCode, reason);
    await recordActivity(client, actorOf(e), {
      organizationId: e.organization_id,
      action: 'export.failed',
      subjectType: 'export',
      subjectId: e.id,
      subjectLabel: labelOf(e),
      changes: {
        status: { before: e.status, after: 'failed' },
        errorCode: { before: null, after: errorCode },
      },
    });
    return { own: e, failed: e };
  });
  if (failed) {
    // the export is failed whatever happens here; objects a failed removal leaves are the expiry
    // sweep's (it purges failed exports not yet purged)
    const id = failed.id;
    await removeObjects(deps, exportPrefix(failed.organization_id, id))
      .then(() => markExportPurged(deps.pool, id))
      .catch((error: unknown) =>
        deps.log.warn(
          { err: error, exportId: id },
          'export failed; removing its objects failed (the expiry sweep removes them)',
        ),
      );
  } else if (own && attempt !== undefined) await removeObjects(deps, attemptPrefix(own, attempt));
}

/**
 * Back to queued for the next attempt, when this attempt is the latest one (a later attempt runs
 * the export otherwise); this attempt's objects are removed either way (the retry writes its own).
 */
export async function requeueExport(deps: Deps, exportId: string, attempt: number): Promise<void> {
  const e = await requeueExportAttempt(deps.pool, exportId, attempt);
  if (e) await removeObjects(deps, attemptPrefix(e, attempt));
}

/**
 * Completes the export with this attempt's files, if no other attempt completed or failed it first
 * (answers false then). The other attempts' objects (and any stray one) go once it is committed.
 */
export async function complete(
  deps: Deps,
  e: ExportRow,
  attempt: number,
  files: WrittenFile[],
): Promise<boolean> {
  const rowCount = files.reduce((n, f) => n + f.rowCount, 0);
  const bytes = files.reduce((n, f) => n + f.sizeBytes, 0);
  const won = await withTransaction(deps.pool, async (client) => {
    // under the export's lock: the first attempt to get here while the export is open wins
    const locked = await lockOpenExport(client, e.id);
    if (!locked) return false;
    // deleted while the export ran: the caller fails it, which removes its objects
    await organizationLive(client, e, true);
    await rightsholdersLive(client, e, true);
    await deleteExportFiles(client, e.id);
    for (const f of files) await insertExportFile(client, e, f);
    const expiresAt = await markExportCompleted(
      client,
      e.id,
      { rowCount, fileCount: files.length, bytes },
      retentionSeconds(deps.config),
    );
    // the files go when they expire (with the export's own commit, so no completed export lacks it)
    await scheduleExpiry(client, e.id, expiresAt);
    await recordActivity(client, actorOf(e), {
      organizationId: e.organization_id,
      action: 'export.completed',
      subjectType: 'export',
      subjectId: e.id,
      subjectLabel: labelOf(e),
      changes: {
        status: { before: locked.status, after: 'completed' },
        rowCount: { before: null, after: rowCount },
        fileCount: { before: null, after: files.length },
      },
    });
    return true;
  });
  if (!won) return false;
  // the objects of the other attempts (and of a crashed one) go; an attempt still uploading finds
  // the export completed at its next part and removes its own. The export is completed whatever
  // happens here: a failure must not reach the attempt's failure path, which would remove this
  // attempt's (the export's) files; what stays goes with the whole prefix when the export expires.
  await removeObjects(
    deps,
    exportPrefix(e.organization_id, e.id),
    new Set(files.map((f) => f.objectKey)),
  ).catch((error: unknown) =>
    deps.log.warn(
      { err: error, exportId: e.id },
      'export completed; removing the objects of its other attempts failed (they go when it expires)',
    ),
  );
  return true;
}

/**
 * Reports progress (the latest attempt only) and ends this attempt (AttemptEnded) when the export
 * is no longer open: another attempt completed it, or it failed.
 */
export async function progress(
  deps: Deps,
  exportId: string,
  attempt: number,
  done: number,
  total: number,
): Promise<void> {
  const status = await reportExportProgress(deps.pool, exportId, attempt, done, total);
  if (status !== 'queued' && status !== 'running')
    throw new AttemptEnded(`export ${exportId}: ${status ?? 'gone'}, attempt ${attempt} ends`);
}

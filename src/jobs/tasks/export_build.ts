// export_build: one attempt of one export through src/exports/run.ts, which records the outcome:
// a permanent failure (an AppError, e.g. the requester lost access) fails the export at once with
// its errorCode; anything else is thrown for graphile-worker to retry with backoff, the export back
// in queued meanwhile, and the last attempt fails it with EXPORT_FAILED. Either way no object of a
// failed attempt stays in the store. Two attempts at once (a live runner taken for dead) are safe:
// the first to complete wins and the other removes its objects (see run.ts).
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { expireExports } from '../exports/expire.ts';
import { buildExport } from '../exports/run.ts';
import type { Deps } from '../deps.ts';

const payloadSchema = z.object({ organizationId: z.uuid(), exportId: z.uuid() });

export function exportBuildTask(deps: Deps): Task {
  return async (payload, helpers) => {
    const parsed = payloadSchema.safeParse(payload);
    if (!parsed.success) {
      helpers.logger.error(`export_build: invalid payload, dropped: ${parsed.error.message}`);
      return;
    }
    const { exportId } = parsed.data;
    const result = await buildExport(deps, exportId, { finalAttempt: helpers.job.attempts >= helpers.job.max_attempts });
    helpers.logger.info(`export ${exportId}: ${result}`);
  };
}

/**
 * export_expire: scheduled by each completed export for its expiry time; deletes the files of
 * every export that is due (src/exports/expire.ts), so one whose job was lost goes with the next.
 * Also export_expire_sweep, every hour from the crontab. Runs at once are safe: each locks the
 * exports it expires (SKIP LOCKED), and deleting an object twice is harmless.
 */
export function exportExpireTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const { expired, purged } = await expireExports(deps);
    if (expired + purged > 0) helpers.logger.info(`exports: ${expired} expired, ${purged} purged of their files`);
  };
}

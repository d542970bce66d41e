// export_build: one attempt of one export through src/exports/run.ts, which records the outcome:
// a permanent failure (an AppError, e.g. the requester lost access) fails the export at once with
// its errorCode; anything else is thrown for graphile-worker to retry with backoff, the export back
// in queued meanwhile, and the last attempt fails it with EXPORT_FAILED. Either way no object of a
// failed attempt stays in the store. Two attempts at once (a live runner taken for dead) are safe:
// the first to complete wins and the other removes its objects (see run.ts).
import { buildExport } from '../../exports/run.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

export const exportBuildTask = defineTask(
  TASK.export_build,
  async ({ exportId }, { deps, helpers }) => {
    const result = await buildExport(deps, exportId, {
      finalAttempt: helpers.job.attempts >= helpers.job.max_attempts,
    });
    helpers.logger.info(`export ${exportId}: ${result}`);
  },
);

// export_build: one export through src/exports/run.ts. A permanent failure (an AppError, e.g. the
// requester lost access) fails the export at once with its errorCode; anything else is retried by
// graphile-worker with backoff, the export back in queued meanwhile, and the last attempt fails it
// with EXPORT_FAILED. Either way no object of a failed attempt stays in the store.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { buildExport, failExport, requeueExport } from '../exports/run.ts';
import type { Deps } from '../trpc/context.ts';

const payloadSchema = z.object({ organizationId: z.uuid(), exportId: z.uuid() });

export function exportBuildTask(deps: Deps): Task {
  return async (payload, helpers) => {
    const parsed = payloadSchema.safeParse(payload);
    if (!parsed.success) {
      helpers.logger.error(`export_build: invalid payload, dropped: ${parsed.error.message}`);
      return;
    }
    const { exportId } = parsed.data;
    try {
      const result = await buildExport(deps, exportId);
      helpers.logger.info(`export ${exportId}: ${result}`);
    } catch (error) {
      if (error instanceof AppError) {
        await failExport(deps, exportId, error.errorCode, error.message);
        return;
      }
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        await failExport(deps, exportId, 'EXPORT_FAILED', 'Building the export failed on every attempt; the cause is in the server log.');
      } else {
        await requeueExport(deps, exportId);
      }
      throw error;
    }
  };
}

// fx_rates_import: loads an exchange-rate file ({ url } or { file }, optional format ecb|plain)
// into fx_rates. A payload or file that cannot be imported is recorded in reference_imports and
// not retried; a network failure is thrown, so graphile-worker retries it with backoff.
import { describeOrigin, importFxRates, recordImport, type ImportOrigin } from '../../fx/import.ts';
import { ReferenceFileError } from '../../lookups/csv.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

export const fxRatesImportTask = defineTask(
  TASK.fx_rates_import,
  async (payload, { deps, helpers }) => {
    const origin: ImportOrigin = 'url' in payload ? { url: payload.url } : { file: payload.file };
    try {
      const summary = await importFxRates(deps.pool, origin, payload.format);
      helpers.logger.info(
        `${TASK.fx_rates_import}: ${summary.rows} rates for ${summary.days} days from ${describeOrigin(origin)}`,
      );
    } catch (error) {
      if (
        error instanceof ReferenceFileError ||
        (error as NodeJS.ErrnoException).code === 'ENOENT'
      ) {
        helpers.logger.error(
          `${TASK.fx_rates_import}: ${describeOrigin(origin)} cannot be imported: ${(error as Error).message}`,
        );
        return;
      }
      throw error;
    }
  },
  {
    // a refused payload is recorded as a failed import, as a refused file is
    onInvalid: async (problems, { deps, helpers }) => {
      await recordImport(deps.pool, 'fx', `job:${helpers.job.id}`, {
        error: `invalid payload: ${problems}`,
      });
    },
  },
);

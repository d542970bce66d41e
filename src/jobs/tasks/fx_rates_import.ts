// fx_rates_import: loads an exchange-rate file ({ url } or { file }, optional format ecb|plain)
// into fx_rates. A payload or file that cannot be imported is recorded in reference_imports and
// not retried; a network failure is thrown, so graphile-worker retries it with backoff.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { describeOrigin, importFxRates, recordImport, type ImportOrigin } from '../fx/import.ts';
import { ReferenceFileError } from '../lookups/csv.ts';
import type { Deps } from '../deps.ts';

export const FX_RATES_IMPORT_TASK = 'fx_rates_import';

const format = z.enum(['ecb', 'plain']).optional();
export const fxRatesImportPayload = z.union([
  z.object({ url: z.url({ protocol: /^https?$/ }).max(2000), format }).strict(),
  z.object({ file: z.string().min(1).max(4096), format }).strict(),
]);
export type FxRatesImportPayload = z.infer<typeof fxRatesImportPayload>;

export function fxRatesImportTask(deps: Pick<Deps, 'pool'>): Task {
  return async (raw, helpers) => {
    const parsed = fxRatesImportPayload.safeParse(raw);
    if (!parsed.success) {
      const message = `invalid payload: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ')}`;
      await recordImport(deps.pool, 'fx', `job:${helpers.job.id}`, { error: message });
      helpers.logger.error(`${FX_RATES_IMPORT_TASK}: ${message}`);
      return;
    }
    const origin: ImportOrigin = 'url' in parsed.data ? { url: parsed.data.url } : { file: parsed.data.file };
    try {
      const summary = await importFxRates(deps.pool, origin, parsed.data.format);
      helpers.logger.info(`${FX_RATES_IMPORT_TASK}: ${summary.rows} rates for ${summary.days} days from ${describeOrigin(origin)}`);
    } catch (error) {
      if (error instanceof ReferenceFileError || (error as NodeJS.ErrnoException).code === 'ENOENT') {
        helpers.logger.error(`${FX_RATES_IMPORT_TASK}: ${describeOrigin(origin)} cannot be imported: ${(error as Error).message}`);
        return;
      }
      throw error;
    }
  };
}

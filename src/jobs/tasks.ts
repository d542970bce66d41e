// The graphile-worker task list: stable snake_case identifiers, one file per task, each checking
// its payload with zod (old jobs outlive deploys).
import type { TaskList } from 'graphile-worker';
import { STATEMENT_INGEST_TASK } from '../ingest/queue.ts';
import { BLOCK_REFRESH_TASK } from '../catalog/blocks.ts';
import { ENRICH_TASK } from '../catalog/enrichQueue.ts';
import { catalogBlockRefreshTask, catalogEnrichTask, catalogEnrichTickTask, ENRICH_TICK_TASK } from '../catalog/tasks.ts';
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { EXPORT_BUILD_TASK } from '../exports/queue.ts';
import { LOOKUP_FLAGS_TASK, lookupFlagsTask } from '../lookups/flags.ts';
import { EXPORT_EXPIRE_SWEEP_TASK, EXPORT_EXPIRE_TASK } from '../exports/expire.ts';
import { exportBuildTask, exportExpireTask } from './exportBuild.ts';
import { FX_RATES_IMPORT_TASK, fxRatesImportTask } from './fxRatesImport.ts';
import { RUNNER_RECOVER_TASK, runnerRecoverTask } from './liveness.ts';
import { statementIngestTask } from './statementIngest.ts';
import { recoverStrandedWork } from './stranded.ts';
import { statementUploadExpireTask } from './statementUploadExpire.ts';

export function taskList(deps: Deps): TaskList {
  return {
    [STATEMENT_INGEST_TASK]: statementIngestTask(deps),
    statement_upload_expire: statementUploadExpireTask(deps),
    [FX_RATES_IMPORT_TASK]: fxRatesImportTask(deps),
    [EXPORT_BUILD_TASK]: exportBuildTask(deps),
    [EXPORT_EXPIRE_TASK]: exportExpireTask(deps),
    [EXPORT_EXPIRE_SWEEP_TASK]: exportExpireTask(deps),
    [BLOCK_REFRESH_TASK]: catalogBlockRefreshTask(deps),
    [ENRICH_TASK]: catalogEnrichTask(deps),
    [ENRICH_TICK_TASK]: catalogEnrichTickTask(deps),
    [RUNNER_RECOVER_TASK]: runnerRecoverTask(deps.pool, () => recoverStrandedWork(deps)),
    [LOOKUP_FLAGS_TASK]: lookupFlagsTask(deps.pool),
  };
}

/** Periodic tasks, in graphile-worker's crontab format. */
export function crontab(config: Config): string {
  const lines = ['* * * * * statement_upload_expire ?max=1', '* * * * * catalog_enrich_tick ?max=1', `* * * * * ${RUNNER_RECOVER_TASK} ?max=1`, `* * * * * ${LOOKUP_FLAGS_TASK} ?max=1`];
  // exports past their expiry, whether or not their own export_expire job ever runs
  lines.push(`0 * * * * ${EXPORT_EXPIRE_SWEEP_TASK} ?max=1`);
  // the ECB publishes its reference rates around 16:00 CET on working days
  if (config.fxImport.url && config.fxImport.cron) {
    lines.push(`${config.fxImport.cron} fx_rates_import ?max=5&id=fx_rates_daily ${JSON.stringify({ url: config.fxImport.url, format: 'ecb' })}`);
  }
  return lines.join('\n');
}

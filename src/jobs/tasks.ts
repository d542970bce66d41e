// The graphile-worker task list: one executor per task of src/jobs/payloads.ts, each in
// src/jobs/tasks/<task_identifier>.ts, written with defineTask (its payload checked with zod:
// old jobs outlive deploys).
import type { TaskList } from 'graphile-worker';
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import type { TaskDefinition } from './defineTask.ts';
import { TASK, type TaskId } from './payloads.ts';
import { catalogBlockRefreshTask } from './tasks/catalog_block_refresh.ts';
import { catalogEnrichTask } from './tasks/catalog_enrich.ts';
import { catalogEnrichTickTask } from './tasks/catalog_enrich_tick.ts';
import { exportBuildTask } from './tasks/export_build.ts';
import { exportExpireTask } from './tasks/export_expire.ts';
import { exportExpireSweepTask } from './tasks/export_expire_sweep.ts';
import { fxRatesImportTask } from './tasks/fx_rates_import.ts';
import { jobRunnerRecoverTask } from './tasks/job_runner_recover.ts';
import { statementIngestTask } from './tasks/statement_ingest.ts';
import { statementLookupFlagsTask } from './tasks/statement_lookup_flags.ts';
import { statementUploadExpireTask } from './tasks/statement_upload_expire.ts';

/** Every task's executor, by identifier: tsc refuses a task of payloads.ts left without one. */
const executors: { [K in TaskId]: TaskDefinition<K> } = {
  statement_ingest: statementIngestTask,
  statement_upload_expire: statementUploadExpireTask,
  statement_lookup_flags: statementLookupFlagsTask,
  fx_rates_import: fxRatesImportTask,
  export_build: exportBuildTask,
  export_expire: exportExpireTask,
  export_expire_sweep: exportExpireSweepTask,
  catalog_block_refresh: catalogBlockRefreshTask,
  catalog_enrich: catalogEnrichTask,
  catalog_enrich_tick: catalogEnrichTickTask,
  job_runner_recover: jobRunnerRecoverTask,
};

export function taskList(deps: Deps): TaskList {
  return Object.fromEntries(Object.values(executors).map((define) => [define.id, define(deps)]));
}

/** Periodic tasks, in graphile-worker's crontab format. */
export function crontab(config: Config): string {
  const everyMinute = [
    TASK.statement_upload_expire,
    TASK.catalog_enrich_tick,
    TASK.job_runner_recover,
    TASK.statement_lookup_flags,
  ];
  const lines = everyMinute.map((task) => `* * * * * ${task} ?max=1`);
  // exports past their expiry, whether or not their own export_expire job ever runs
  lines.push(`0 * * * * ${TASK.export_expire_sweep} ?max=1`);
  // the ECB publishes its reference rates around 16:00 CET on working days
  if (config.fxImport.url && config.fxImport.cron) {
    lines.push(
      `${config.fxImport.cron} ${TASK.fx_rates_import} ?max=5&id=fx_rates_daily ${JSON.stringify({ url: config.fxImport.url, format: 'ecb' })}`,
    );
  }
  return lines.join('\n');
}

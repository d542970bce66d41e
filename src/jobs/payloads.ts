// The graphile-worker tasks and their payloads, in one place: each task identifier (stable,
// snake_case: jobs already queued outlive deploys) with the zod schema its payload must pass.
// Everything that names a task takes it from TASK, so tsc checks the name and `enqueue` the
// payload; the executor of each is src/jobs/tasks/<task_identifier>.ts.
import { z } from 'zod';

const uuid = z.uuid();
/** why a job runs ('complete', 'reprocess', 'statement.processed', ...): logged */
const reason = z.string().max(100);
/**
 * A crontab task's payload: graphile-worker adds `_cron` (its time stamp) to it; the task reads
 * nothing of it, so any object passes.
 */
const scheduled = z.object({});
const fxFormat = z.enum(['ecb', 'plain']).optional();

export const taskPayloads = {
  /** one statement through the pipeline (src/ingest/queue.ts queues it) */
  statement_ingest: z.object({ organizationId: uuid, statementId: uuid, reason }),
  /** every minute: unfinished direct uploads expire, abandoned objects go */
  statement_upload_expire: scheduled,
  /** every minute: the unknown lookup flags follow the lookup tables */
  statement_lookup_flags: scheduled,
  /** an exchange-rate file into fx_rates */
  fx_rates_import: z.union([
    z.object({ url: z.url({ protocol: /^https?$/ }).max(2000), format: fxFormat }).strict(),
    z.object({ file: z.string().min(1).max(4096), format: fxFormat }).strict(),
  ]),
  /** one attempt of one export (src/exports/queue.ts) */
  export_build: z.object({ organizationId: uuid, exportId: uuid }),
  /** an export's expiry (its exportId is for the job key and the log: every due export goes) */
  export_expire: z.object({ exportId: z.string().optional() }),
  /** every hour: the same sweep as export_expire */
  export_expire_sweep: scheduled,
  /** a rightsholder's catalog block rebuilt (src/catalog/blocks.ts) */
  catalog_block_refresh: z.object({
    organizationId: uuid,
    rightsholderId: uuid,
    reason: reason.optional(),
    /** since when (ms since the epoch) the refresh has waited for the rightsholder's statements in flight */
    waitingSince: z.number().int().nonnegative().optional(),
  }),
  /** a drain of the enrichment queue (src/catalog/enrichQueue.ts) */
  catalog_enrich: z.object({}),
  /** every minute: stale enrichment claims back, a drain queued when work is due */
  catalog_enrich_tick: scheduled,
  /** every minute: dead runners' jobs unlocked, work left without a job seen to */
  job_runner_recover: scheduled,
} as const;

export type TaskId = keyof typeof taskPayloads;
/** What a task's job carries, as enqueued (before parsing: optional fields may be left out). */
export type TaskPayload<T extends TaskId> = z.input<(typeof taskPayloads)[T]>;
/** What a task's executor receives, parsed. */
export type ParsedPayload<T extends TaskId> = z.output<(typeof taskPayloads)[T]>;

/** The task identifiers by name: `TASK.statement_ingest`. */
export const TASK = Object.fromEntries(Object.keys(taskPayloads).map((id) => [id, id])) as {
  readonly [K in TaskId]: K;
};

/** The payload's problems, one line: `path: message; ...`. */
export function payloadProblems(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ');
}

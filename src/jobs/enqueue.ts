// Adds a job: the task from TASK, its payload as src/jobs/payloads.ts types it. `db` is the pool
// (the job is added at once) or a transaction's client (the job is added if and only if the
// transaction commits). The SQL is graphile-worker's own add_job, as its WorkerUtils.addJob calls it.
import type { Queryable } from '../db/pool.ts';
import type { TaskId, TaskPayload } from './payloads.ts';

export interface JobSpec {
  /** jobs of one queue run one at a time, in order */
  queueName?: string;
  /** when it may run: a time, or this many seconds from the database's now */
  runAt?: Date;
  runInSeconds?: number;
  maxAttempts?: number;
  /** a second job of the same key replaces (or, with jobKeyMode, updates) the waiting one */
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  /** lower runs first (a smallint) */
  priority?: number;
}

export async function enqueue<T extends TaskId>(
  db: Queryable,
  task: T,
  payload: TaskPayload<T>,
  spec: JobSpec = {},
): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job(
       identifier => $1::text, payload => $2::json, queue_name => $3::text,
       run_at => coalesce($4::timestamptz, now() + make_interval(secs => $5::double precision)),
       max_attempts => $6::int, job_key => $7::text, priority => $8::int, job_key_mode => $9::text)`,
    [
      task,
      JSON.stringify(payload),
      spec.queueName ?? null,
      spec.runAt ?? null,
      spec.runInSeconds ?? null,
      spec.maxAttempts ?? null,
      spec.jobKey ?? null,
      spec.priority ?? null,
      spec.jobKeyMode ?? null,
    ],
  );
}

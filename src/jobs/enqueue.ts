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

/**
 * Adds jobs of one task in one statement (graphile-worker's add_jobs, which add_job calls with
 * one): each as `enqueue` adds it, a job key replacing the waiting job of that key. The keys must
 * differ from one another.
 */
export async function enqueueAll<T extends TaskId>(
  db: Queryable,
  task: T,
  jobs: readonly { payload: TaskPayload<T>; spec?: Omit<JobSpec, 'jobKeyMode'> }[],
): Promise<void> {
  if (jobs.length === 0) return;
  const column = <V>(pick: (spec: Omit<JobSpec, 'jobKeyMode'>) => V | undefined): (V | null)[] =>
    jobs.map((job) => pick(job.spec ?? {}) ?? null);
  await db.query(
    `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
       SELECT ROW($1::text, payload, queue_name,
           coalesce(run_at, now() + make_interval(secs => run_in_seconds)),
           max_attempts::smallint, job_key, priority::smallint, NULL::text[])::graphile_worker.job_spec
       FROM unnest($2::json[], $3::text[], $4::timestamptz[], $5::double precision[], $6::int[], $7::text[], $8::int[])
         WITH ORDINALITY AS spec(payload, queue_name, run_at, run_in_seconds, max_attempts, job_key, priority, n)
       ORDER BY n))`,
    [
      task,
      jobs.map((job) => JSON.stringify(job.payload)),
      column((s) => s.queueName),
      column((s) => s.runAt),
      column((s) => s.runInSeconds),
      column((s) => s.maxAttempts),
      column((s) => s.jobKey),
      column((s) => s.priority),
    ],
  );
}

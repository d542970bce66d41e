// Enqueues statement ingestion. The job key makes a second request for the same statement
// replace the queued one instead of running twice; the job itself is idempotent. Each statement's
// jobs run in a queue of its own, one after the other: a request made while a run is under way (a
// redrive of a statement being processed) waits for it instead of running beside it, which would
// have the two write the same version.
import type { Deps } from '../trpc/context.ts';

export const STATEMENT_INGEST_TASK = 'statement_ingest';

export interface StatementIngestPayload {
  organizationId: string;
  statementId: string;
  /** why it runs: 'complete', 'reprocess', 'redrive', 'callback', ... (logged) */
  reason: string;
}

export async function enqueueStatementIngest(
  deps: Pick<Deps, 'jobs'>,
  organizationId: string,
  statementIds: readonly string[],
  reason: string,
): Promise<void> {
  for (const statementId of statementIds) {
    const payload: StatementIngestPayload = { organizationId, statementId, reason };
    const key = `${STATEMENT_INGEST_TASK}:${statementId}`;
    await deps.jobs.addJob(STATEMENT_INGEST_TASK, payload, { jobKey: key, queueName: key, maxAttempts: 5 });
  }
}

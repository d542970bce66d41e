// statement_ingest: one statement through the pipeline. A bad file is a permanent, explained
// failure on its statement (the pipeline records it and returns); only unexpected errors throw,
// and graphile-worker retries those with backoff. The last attempt marks the statement failed.
// A statement of a deleted organization is not processed (the run is skipped; it fails with
// ORGANIZATION_NOT_FOUND).
// A run has INGEST_JOB_TIMEOUT_MS: a timer ends it wherever it is, even in a promise that would
// never settle, fails the statement (INGEST_TIME_BUDGET_EXCEEDED) and frees the job's slot.
import { ingestStatement, type IngestResult } from '../../ingest/pipeline.ts';
import { failRun, failWaiting, retryRun } from '../../ingest/statementStatus.ts';
import type { Deps } from '../../deps.ts';
import { organizationIsLive } from '../../organizations/organizations.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

export const statementIngestTask = defineTask(
  TASK.statement_ingest,
  async ({ organizationId, statementId, reason }, { deps, helpers }) => {
    const budgetMs = deps.config.ingest.jobTimeoutMs;
    const deadline = Date.now() + budgetMs;
    const signal = AbortSignal.timeout(budgetMs);
    try {
      const result = await untilAborted(
        ingestStatement(deps, organizationId, statementId, { signal, deadline }),
        signal,
      );
      // nothing is processed for a deleted organization, and a run whose organization was deleted
      // while it worked commits nothing: both are skipped, and the statement fails (so the
      // stranded-work recovery does not queue it again); any other statement is left as it is
      if (
        result.status === 'skipped' &&
        (await failIfOrganizationDeleted(deps, organizationId, statementId))
      ) {
        helpers.logger.info(
          `statement ${statementId} (${reason}): its organization is deleted, nothing processed or kept`,
        );
        return;
      }
      helpers.logger.info(
        `statement ${statementId} (${reason}): ${result.status}${result.timings ? ` ${JSON.stringify(result.timings)} ms` : ''}`,
      );
    } catch (error) {
      if (signal.aborted) {
        // not retried: the same file takes as long again (a run that committed meanwhile keeps its result: failRun ends only a statement still processing)
        await failRun(
          deps.pool,
          statementId,
          'INGEST_TIME_BUDGET_EXCEEDED',
          `Processing the statement took longer than its time budget (${formatMs(budgetMs)}); it was stopped.`,
        );
        helpers.logger.warn(
          `statement ${statementId} (${reason}): stopped after its time budget of ${budgetMs} ms`,
        );
        return;
      }
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        // a statement that had rows keeps them (withRows): analytics and its catalog block stay as they were
        await failRun(
          deps.pool,
          statementId,
          'INGEST_FAILED',
          'Processing failed repeatedly; see the server log.',
        );
      } else {
        // back to a state a retry can pick up; the previous version's rows stay in place meanwhile
        await retryRun(deps.pool, statementId);
      }
      throw error;
    }
  },
);

/**
 * The run's outcome, or the signal's reason once it aborts, whether or not the run ever settles
 * (a stream that never ends, an event that never comes): the job is not held by it.
 */
export function untilAborted(
  run: Promise<IngestResult>,
  signal: AbortSignal,
): Promise<IngestResult> {
  // the run's own failure after the abort is its stage's reaction to it: nobody waits for it
  run.catch(() => {});
  return new Promise<IngestResult>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function formatMs(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`;
}

/** Fails the statement if its organization is deleted (when it is still waiting); whether the organization is deleted. */
async function failIfOrganizationDeleted(
  deps: Pick<Deps, 'pool'>,
  organizationId: string,
  statementId: string,
): Promise<boolean> {
  if (await organizationIsLive(deps.pool, organizationId)) return false;
  await failWaiting(
    deps.pool,
    statementId,
    'ORGANIZATION_NOT_FOUND',
    'The organization was deleted before the statement was processed',
    { organizationId },
  );
  return true;
}

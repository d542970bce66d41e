// statement_ingest: one statement through the pipeline. A bad file is a permanent, explained
// failure on its statement (the pipeline records it and returns); only unexpected errors throw,
// and graphile-worker retries those with backoff. The last attempt marks the statement failed.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { ingestStatement } from '../ingest/pipeline.ts';
import { failStatement } from '../ingest/statements.ts';
import type { Deps } from '../trpc/context.ts';

const payloadSchema = z.object({ organizationId: z.uuid(), statementId: z.uuid(), reason: z.string().max(100) });

export function statementIngestTask(deps: Deps): Task {
  return async (payload, helpers) => {
    const parsed = payloadSchema.safeParse(payload);
    if (!parsed.success) {
      helpers.logger.error(`statement_ingest: invalid payload, dropped: ${parsed.error.message}`);
      return;
    }
    const { organizationId, statementId, reason } = parsed.data;
    try {
      const result = await ingestStatement(deps, organizationId, statementId);
      helpers.logger.info(`statement ${statementId} (${reason}): ${result.status}${result.timings ? ` ${JSON.stringify(result.timings)} ms` : ''}`);
    } catch (error) {
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        // a statement that had rows keeps them (withRows): analytics and its catalog block stay as they were
        await failStatement(deps.pool, statementId, 'INGEST_FAILED', 'Processing failed repeatedly; see the server log.');
      } else {
        // back to a state a retry can pick up; the previous version's rows stay in place meanwhile
        await deps.pool.query(`UPDATE statements SET status = 'uploaded' WHERE id = $1 AND status = 'processing'`, [statementId]);
      }
      throw error;
    }
  };
}

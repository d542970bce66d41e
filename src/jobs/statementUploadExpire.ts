// statement_upload_expire: direct uploads that nobody finished (no `complete`, no heartbeat
// before their TTL ran out) become `expired`. Runs every minute from the job runner's crontab.
import type { Task } from 'graphile-worker';
import type { Deps } from '../trpc/context.ts';

export async function expireUploads(deps: Pick<Deps, 'pool'>): Promise<number> {
  const { rowCount } = await deps.pool.query(
    `UPDATE statements SET status = 'expired', updated_at = clock_timestamp()
     WHERE status = 'uploading' AND upload_expires_at < clock_timestamp()`,
  );
  return rowCount ?? 0;
}

export function statementUploadExpireTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const n = await expireUploads(deps);
    if (n > 0) helpers.logger.info(`expired ${n} unfinished uploads`);
  };
}

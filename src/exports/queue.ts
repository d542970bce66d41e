// Enqueues an export build. The job key makes a second request for the same export replace the
// queued job instead of running twice; the build itself is idempotent (src/exports/run.ts). An
// organization's exports share one job queue, so they are built one at a time: however many a
// member asks for at once, they take one job runner slot, and the other organizations' work
// (statements, their exports) keeps the rest.
import type { Deps } from '../deps.ts';

export const EXPORT_BUILD_TASK = 'export_build';
export const EXPORT_MAX_ATTEMPTS = 3;

export interface ExportBuildPayload {
  organizationId: string;
  exportId: string;
}

export async function enqueueExportBuild(deps: Pick<Deps, 'jobs'>, organizationId: string, exportId: string): Promise<void> {
  const payload: ExportBuildPayload = { organizationId, exportId };
  await deps.jobs.addJob(EXPORT_BUILD_TASK, payload, {
    jobKey: `${EXPORT_BUILD_TASK}:${exportId}`,
    queueName: `${EXPORT_BUILD_TASK}:${organizationId}`,
    maxAttempts: EXPORT_MAX_ATTEMPTS,
  });
}

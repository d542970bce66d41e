// Enqueues an export build. The job key makes a second request for the same export replace the
// queued job instead of running twice; the build itself is idempotent (src/exports/run.ts).
import type { Deps } from '../trpc/context.ts';

export const EXPORT_BUILD_TASK = 'export_build';
export const EXPORT_MAX_ATTEMPTS = 3;

export interface ExportBuildPayload {
  organizationId: string;
  exportId: string;
}

export async function enqueueExportBuild(deps: Pick<Deps, 'jobs'>, organizationId: string, exportId: string): Promise<void> {
  const payload: ExportBuildPayload = { organizationId, exportId };
  await deps.jobs.addJob(EXPORT_BUILD_TASK, payload, { jobKey: `${EXPORT_BUILD_TASK}:${exportId}`, maxAttempts: EXPORT_MAX_ATTEMPTS });
}

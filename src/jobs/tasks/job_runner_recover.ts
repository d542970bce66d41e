// job_runner_recover: runs every minute from the crontab, on whichever runner is alive: the dead
// runners' jobs are unlocked (src/jobs/liveness.ts), then work left without a job that may run is
// seen to (src/jobs/stranded.ts).
import { recoverDeadRunnerJobs } from '../liveness.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';
import { recoverStrandedWork } from '../stranded.ts';

export const jobRunnerRecoverTask = defineTask(
  TASK.job_runner_recover,
  async (_payload, { deps, helpers }) => {
    const recovered = await recoverDeadRunnerJobs(deps.pool);
    if (recovered.jobs > 0)
      helpers.logger.warn(
        `unlocked ${recovered.jobs} jobs of job runners that died (${recovered.pools.join(', ')})`,
      );
    const { requeued, failed } = await recoverStrandedWork(deps);
    if (requeued + failed > 0)
      helpers.logger.warn(
        `work left without a job: ${requeued} queued again, ${failed} failed (their last attempt's runner died)`,
      );
  },
);

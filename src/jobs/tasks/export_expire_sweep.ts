// export_expire_sweep: every hour from the crontab, the sweep of export_expire with no export of
// its own, so exports fall due (and their objects go) even when no export completes for a long time.
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';
import { sweepExpiredExports } from './export_expire.ts';

export const exportExpireSweepTask = defineTask(TASK.export_expire_sweep, (_payload, ctx) =>
  sweepExpiredExports(ctx),
);

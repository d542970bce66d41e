// export_expire: scheduled by each completed export for its expiry time; deletes the files of
// every export that is due (src/exports/expire.ts), so one whose job was lost goes with the next.
// Runs at once are safe: each locks the exports it expires (SKIP LOCKED), and deleting an object
// twice is harmless. export_expire_sweep (every hour, from the crontab) runs the same sweep.
import { expireExports } from '../../exports/expire.ts';
import { defineTask, type TaskContext } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

export async function sweepExpiredExports({ deps, helpers }: TaskContext): Promise<void> {
  const { expired, purged } = await expireExports(deps);
  if (expired + purged > 0)
    helpers.logger.info(`exports: ${expired} expired, ${purged} purged of their files`);
}

export const exportExpireTask = defineTask(TASK.export_expire, (_payload, ctx) =>
  sweepExpiredExports(ctx),
);

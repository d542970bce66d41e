// A job runner in a process of its own whose one task never ends, for the test of a runner that is
// killed outright (test/jobs/deadRunner.test.ts). DATABASE_URL names the database; prints
// "running <jobId> <lockedBy>" when it has taken the job.
import { pino } from 'pino';
import { createPool } from '../../src/db/pool.ts';
import { startJobRunner } from '../../src/jobs/runner.ts';

const pool = createPool(process.env.DATABASE_URL!, 4);
await startJobRunner({
  pool,
  taskList: {
    test_hang: async (_payload, helpers) => {
      process.stdout.write(`running ${helpers.job.id} ${helpers.job.locked_by}\n`);
      await new Promise(() => {});
    },
  },
  crontab: '',
  concurrency: 1,
  pollIntervalMs: 50,
  log: pino({ level: 'silent' }),
});

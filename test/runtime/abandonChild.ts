// For test/runtime/threadsClose.test.ts: a process that gives up its work as the service does when
// its shutdown grace period is over or a forced exit is asked for (runtime.abandon(), then
// process.exit) while DuckDB runs a query in one of its threads. Prints `abandoned` before exiting.
import { existsSync, writeFileSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { startRuntime } from '../../src/runtime.ts';

const startedFile = process.argv[2]!;
const runtime = await startRuntime(loadConfig(), 'api');
const task = runtime.deps.threads
  .runInModule('../test/runtime/duckdbWorker', 'slowQuery', { startedFile })
  .then(
    () => 'completed',
    (error: { errorCode?: string }) => error.errorCode,
  );
while (!existsSync(startedFile)) await new Promise((r) => setTimeout(r, 20));
await runtime.abandon();
// the process exits right after, as main.ts's does: it waits for no running task
writeFileSync(
  `${startedFile}.outcome`,
  String(await Promise.race([task, new Promise((r) => setTimeout(() => r('still running'), 100))])),
);
process.stdout.write('abandoned\n');
process.exit(0);

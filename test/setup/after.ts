// tap `after`: stops the S3 server of before.ts, and its embedded PostgreSQL if it started one.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { stopObjectStoreServer } from './objectStoreControl.ts';
import { databaseUrlFile, testDataDir } from './paths.ts';
import { ownsTestRun, releaseTestRun } from './runLock.ts';

// a second run refused by before.ts leaves the first run's servers alone
if (!ownsTestRun()) process.exit(0);
await stopObjectStoreServer();

const pidFile = path.join(testDataDir, 'pg', 'postmaster.pid');
if (!process.env.DATABASE_URL && existsSync(databaseUrlFile) && existsSync(pidFile)) {
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  try {
    process.kill(pid, 'SIGINT');
    for (let i = 0; i < 200; i++) {
      process.kill(pid, 0);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch {
    // gone
  }
}

await releaseTestRun();

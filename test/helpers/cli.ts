// Runs `npm run admin -- …` (dist/src/main.js admin) as the operator would, against a database URL,
// or the same command in the test's own process (src/cli/admin.ts's admin), as the binary would
// run it with that environment.
import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { admin } from '../../src/cli/admin.ts';
import { loadConfig } from '../../src/config.ts';
import { repoRoot, serviceEntry } from '../setup/paths.ts';

const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An `admin` command runner bound to one database; the exit code is returned, never thrown. */
export function adminCli(
  databaseUrl: string | undefined,
): (...args: string[]) => Promise<CliResult> {
  return async (...args) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [serviceEntry, 'admin', ...args], {
        cwd: repoRoot,
        env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
}

/**
 * The same runner in this process: the command's behaviour without a process started for each
 * (seconds each on a busy machine). Its stdin is empty, its signals come from no one and its log
 * goes to its stderr; a fault (a thrown error, which the binary prints as `fatal:`) rejects.
 */
export function adminInProcess(
  databaseUrl: string | undefined,
): (...args: string[]) => Promise<CliResult> {
  return async (...args) => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' });
    const code = await admin(config, args, {
      stdout: { write: (text) => stdout.push(text) },
      stderr: { write: (text) => stderr.push(text) },
      stdin: Readable.from([]),
      log: () => ({ write: (text) => stderr.push(text) }),
      signals: new EventEmitter(),
    });
    return { code, stdout: stdout.join(''), stderr: stderr.join('') };
  };
}

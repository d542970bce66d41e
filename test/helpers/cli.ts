// Runs `npm run admin -- …` (dist/src/main.js admin) as the operator would, against a database URL.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
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

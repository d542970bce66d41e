// `npm run admin -- …` with text on its standard input (test/helpers/cli.ts gives it none).
import { spawn } from 'node:child_process';
import type { CliResult } from '../helpers/cli.ts';
import { repoRoot, serviceEntry } from '../setup/paths.ts';

export function adminWithInput(
  databaseUrl: string | undefined,
  input: string,
  ...args: string[]
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [serviceEntry, 'admin', ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

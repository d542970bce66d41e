// Runs the command-line client as a person does: the compiled `royalty` (bin/royalty.mjs) as a
// subprocess, with its own config directory and only the environment given.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../setup/paths.ts';

export const royaltyBin = path.join(repoRoot, 'bin', 'royalty.mjs');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcessWithoutNullStreams;
  /** resolves with the first match of the pattern in standard error */
  stderrMatch(pattern: RegExp): Promise<RegExpExecArray>;
  done: Promise<Run>;
}

export function start(env: Record<string, string>, args: string[]): Running {
  const child = spawn(process.execPath, [royaltyBin, ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const w of [...waiters]) {
      const m = w.pattern.exec(stderr);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
  return {
    child,
    done,
    stderrMatch: (pattern) =>
      new Promise((resolve, reject) => {
        const m = pattern.exec(stderr);
        if (m) return resolve(m);
        waiters.push({ pattern, resolve });
        void done.then((run) =>
          reject(new Error(`royalty ended (${run.code}) before ${pattern}: ${run.stderr}`)),
        );
      }),
  };
}

export function royalty(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const running = start(env, args);
  running.child.stdin.end();
  return running.done;
}

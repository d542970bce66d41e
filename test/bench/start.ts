// npm run bench:start [-- --runs 5]
// How long the commands take to answer, as an operator runs them (the compiled program in dist/,
// through npm where the operator goes through npm), against a yardstick in the same run: Node
// starting and exiting with nothing to do (`node -e 0`), the floor of every command here.
//
//   --help            `node dist/src/main.js --help`
//   admin --help      `npm run -s admin -- --help`
//   admin command     `npm run -s admin -- api-key list --json` beside the running service
//   first start       `npm start` on an empty DATA_DIR until "is running at" (initdb, migrations,
//                     the demo data), then Ctrl-C
//   start             `npm start` again on the same DATA_DIR until "is running at"
//
// Goals (issue: compiled JavaScript): --help under 0.5 s, an admin command under 1.5 s, a start
// under 5 s on an existing data directory and under 15 s on the very first one. The medians are
// printed; run it on an idle machine.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, serviceEntry } from '../setup/paths.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Number(values.runs);

spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs'), '--if-stale'], {
  stdio: 'inherit',
});

function timed(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd: repoRoot, env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** `npm start` until it says it runs; the time it took, and a function that stops it (Ctrl-C). */
async function started(
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; stop: () => Promise<unknown> }> {
  const t0 = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const ms = await new Promise<number>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      if (out.includes('is running at')) resolve(performance.now() - t0);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) =>
      reject(new Error(`npm start exited ${code} before it was ready:\n${out}`)),
    );
  });
  return { ms, stop: () => (process.kill(-child.pid!, 'SIGINT'), exited) };
}

async function timedStart(env: NodeJS.ProcessEnv): Promise<number> {
  const { ms, stop } = await started(env);
  await stop();
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const row = (name: string, xs: number[], goal?: number) =>
  console.log(
    `${name.padEnd(16)} median ${(median(xs) / 1000).toFixed(2)} s   (${xs.map((x) => (x / 1000).toFixed(2)).join(', ')})${goal ? `   goal < ${goal} s` : ''}`,
  );

const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-start-'));
// the embedded PostgreSQL runs as the user postgres when started by root: it must reach DATA_DIR
chmodSync(dataDir, 0o755);
const port = String(20000 + Math.floor(Math.random() * 20000));
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATA_DIR: dataDir,
  PORT: port,
  LOG_LEVEL: 'warn',
};
try {
  const yardstick: number[] = [];
  const help: number[] = [];
  const adminHelp: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    yardstick.push(timed(process.execPath, ['-e', '0']));
    help.push(timed(process.execPath, [serviceEntry, '--help']));
    adminHelp.push(timed('npm', ['run', '-s', 'admin', '--', '--help']));
  }
  const first = [await timedStart(env)];
  const again: number[] = [];
  for (let i = 0; i < RUNS; i++) again.push(await timedStart(env));
  // beside the running service, as an operator runs them (sharing its embedded PostgreSQL)
  const service = await started(env);
  const adminCommand: number[] = [];
  for (let i = 0; i < RUNS; i++)
    adminCommand.push(timed('npm', ['run', '-s', 'admin', '--', 'api-key', 'list', '--json'], env));
  await service.stop();
  row('node -e 0', yardstick);
  row('--help', help, 0.5);
  row('admin --help', adminHelp, 0.5);
  row('admin command', adminCommand, 1.5);
  row('first start', first, 15);
  row('start', again, 5);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

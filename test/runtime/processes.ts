// Helpers for tests about processes and signals: the program started as an operator starts it
// (`node dist/src/main.js …`, what `npm start` runs), and a statement held in the middle of its ingestion.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Config } from '../../src/config.ts';
import { repoRoot, serviceEntry } from '../setup/paths.ts';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface Running {
  child: ChildProcess;
  /** stdout and stderr as they came */
  output: () => string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the service (dist/src/main.js) with exactly `env` (plus PATH, HOME, TMPDIR); SIGKILLed at teardown if still running. */
export function launcher(
  t: Teardown,
): (
  args: string[],
  env: NodeJS.ProcessEnv,
  command?: string[],
  opts?: { detached?: boolean },
) => Running {
  const children = new Set<ChildProcess>();
  t.teardown(() => {
    for (const c of children) c.kill('SIGKILL');
  });
  return (args, env, command = [process.execPath, serviceEntry], opts = {}) => {
    const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
    if (process.env.TMPDIR) base.TMPDIR = process.env.TMPDIR;
    const child = spawn(command[0]!, [...command.slice(1), ...args], {
      cwd: repoRoot,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: opts.detached ?? false,
    });
    children.add(child);
    let out = '';
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => ((out += c.toString()), (stdout += c.toString())));
    child.stderr!.on('data', (c: Buffer) => ((out += c.toString()), (stderr += c.toString())));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => (children.delete(child), resolve({ code, signal }))),
    );
    return { child, output: () => out, stdout: () => stdout, stderr: () => stderr, exited };
  };
}

export async function waitFor(
  run: Running,
  pattern: RegExp,
  ms = 60_000,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = run.output().match(pattern);
    if (m) return m;
    if (Date.now() > deadline || run.child.exitCode !== null || run.child.signalCode !== null) {
      throw new Error(`did not see ${pattern}; output:\n${run.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The environment of a service process against the test server's database and object store. */
export function serviceEnv(config: Config, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: config.databaseUrl,
    S3_ENDPOINT: config.s3!.endpoint,
    S3_BUCKET: config.s3!.bucket,
    S3_ACCESS_KEY_ID: config.s3!.accessKeyId,
    S3_SECRET_ACCESS_KEY: config.s3!.secretAccessKey,
    DATA_DIR: config.dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    DEMO_BOOTSTRAP: 'false',
    FX_RATES_URL: '',
    WORKER_POLL_INTERVAL_MS: '100',
    THREADS_WARM: '0',
    ...extra,
  };
}

const HOLD_KEY = 72_100_777;

/**
 * Holds statement ingestion in the middle, where its work directory holds the downloaded file:
 * a trigger makes the pipeline's update after locating the table wait on an advisory lock this
 * test holds while `hold()` is in force (the job is running, locked by its worker).
 */
export async function ingestHold(url: string) {
  const admin = new pg.Client({ connectionString: url });
  // a test that restarts the server loses this session (and the hold with it)
  admin.on('error', () => {});
  await admin.connect();
  await admin.query(`
    CREATE OR REPLACE FUNCTION test_ingest_hold() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.status = 'processing' AND NEW.status = 'processing' AND NEW.sha256 IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock_shared(${HOLD_KEY});
      END IF;
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS test_ingest_hold ON statements;
    CREATE TRIGGER test_ingest_hold BEFORE UPDATE ON statements FOR EACH ROW EXECUTE FUNCTION test_ingest_hold();`);
  return {
    hold: async () => void (await admin.query('SELECT pg_advisory_lock($1)', [HOLD_KEY])),
    release: async () => void (await admin.query('SELECT pg_advisory_unlock($1)', [HOLD_KEY])),
    /** a statement's ingestion waits at the hold */
    waiting: async () =>
      (
        await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          [HOLD_KEY],
        )
      ).rows[0]!.n > 0,
    /** the statement's ingest job as graphile-worker has it, if any */
    job: async (statementId: string) =>
      (
        await admin.query<{ locked: boolean; attempts: number; due: boolean }>(
          `SELECT locked_at IS NOT NULL AS locked, attempts, run_at <= now() AS due FROM graphile_worker.jobs WHERE key = $1`,
          [`statement_ingest:${statementId}`],
        )
      ).rows[0],
    status: async (statementId: string) =>
      (
        await admin.query<{ status: string }>('SELECT status FROM statements WHERE id = $1', [
          statementId,
        ])
      ).rows[0]?.status,
    close: () => admin.end(),
  };
}

/** The statement's ingestion work directories (src/ingest/pipeline.ts). */
export function ingestDirs(statementId: string): string[] {
  try {
    return readdirSync(path.join(tmpdir(), 'royalty-ingest')).filter((name) =>
      name.startsWith(`${statementId}-`),
    );
  } catch {
    return [];
  }
}

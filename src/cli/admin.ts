// `npm run admin -- <command>`: operator commands against the configured database, whether or
// not the service is running. Machine-readable output (--json) is exactly one JSON object on
// stdout; logs go to stderr. Ctrl-C (SIGINT) or SIGTERM stops a command cleanly (src/cli/signals.ts):
// it stops waiting, finishes or releases the jobs of its local worker, closes the database and
// the embedded servers it uses, and exits with 128 + the signal's number (130 for Ctrl-C).
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createApiKey, deleteApiKey, listApiKeys, PATTERN_RE } from '../auth/apiKeys.ts';
import type { Config } from '../config.ts';
import { bootstrap } from '../organizations/bootstrap.ts';
import { organizationIsLive } from '../organizations/organizations.ts';
import {
  logDestination,
  openDatabase,
  startRuntime,
  StartInterrupted,
  stopWithin,
} from '../runtime.ts';
import {
  DatabaseLost,
  followReprocess,
  queueReprocess,
  REPROCESSABLE,
  type ReprocessFilter,
} from './reprocess.ts';
import { liveRunnerPools } from '../jobs/liveness.ts';
import { handleSignals, type Shutdown } from './signals.ts';
import { fxImport, marketImport } from './reference.ts';
import { platformRoles } from '../access/roles.ts';
import { rotateKeys } from '../oauth/keys.ts';
import { pino } from 'pino';
import type { Pool } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { ADMIN_USAGE } from './adminUsage.ts';
import { CommandError, UsageError } from './errors.ts';

type CliValues = Record<string, string | boolean | undefined>;

/** Where output is written: a terminal, a pipe or a file (isTTY says which). */
interface Writer {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/**
 * What a command reads and writes besides the database: the process's streams and signals when
 * run as `npm run admin`, or a caller's own (the tests run the commands in their process).
 */
export interface AdminIo {
  stdout: Writer;
  stderr: Writer;
  stdin: AsyncIterable<Buffer | string> & { readonly isTTY?: boolean };
  /** where the log's lines go (pino's destination) */
  log(): Writer;
  /** where SIGINT, SIGTERM and SIGHUP come from */
  signals: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

/** The process's own streams and signals; the log is written to fd 2 as the service's. */
function processIo(): AdminIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    log: () => logDestination(2),
    signals: process,
  };
}

async function reprocessCommand(
  config: Config,
  values: CliValues,
  log: Deps['log'],
  shutdown: Shutdown,
  io: AdminIo,
): Promise<number> {
  const filter = reprocessFilter(values);
  // without --no-local-worker this process works on the queue too, next to any running workers
  const role = values['no-local-worker'] || values['no-wait'] ? 'migrate' : 'worker';
  const runtime = await startRuntime(config, role, { log, interruption: shutdown }).catch(
    (error: unknown) => {
      if (error instanceof StartInterrupted) throw error;
      throw new CommandError(`cannot start: ${(error as Error).message}`);
    },
  );
  try {
    if (shutdown.received) return shutdown.exitCode();
    await checkFilterNamesRows(runtime.deps.pool, filter);
    const ids = await queueReprocess(runtime.deps, filter);
    if (
      role === 'migrate' &&
      !values['no-wait'] &&
      ids.length > 0 &&
      (await liveRunnerPools(runtime.deps.pool)) === 0
    ) {
      // --no-local-worker with no worker running: say why the bar will not move, rather than wait in silence
      io.stderr.write(
        'admin: no job runner is running against this database: the statements wait for a `worker` or `serve` process (start one, or leave out --no-local-worker)\n',
      );
    }
    const counts = values['no-wait']
      ? { queued: ids.length }
      : await followReprocess(runtime.deps.pool, ids, {
          draw: !values.json,
          signal: shutdown.signal,
          stderr: io.stderr,
        }).catch((error: unknown) => {
          throw error instanceof DatabaseLost ? new CommandError(error.message) : error;
        });
    return await reportReprocess(runtime.deps.pool, values, shutdown, io, filter, ids, counts);
  } finally {
    // the local worker's running jobs are finished first, for SHUTDOWN_GRACE_MS at most (then,
    // or on a forced exit, they are released instead)
    await stopWithin(runtime, config.shutdownGraceMs, log);
  }
}

/** The statements to reprocess, from the command's flags. */
function reprocessFilter(values: CliValues): ReprocessFilter {
  const optionalUuid = (flag: string) =>
    typeof values[flag] === 'string' ? parse(uuid, values[flag], flag) : undefined;
  const statuses =
    typeof values.status === 'string'
      ? [...new Set(values.status.split(',').map((s) => s.trim()))]
      : REPROCESSABLE;
  for (const s of statuses) {
    if (!REPROCESSABLE.includes(s))
      throw new UsageError(
        `--status: ${s === '' ? 'an empty status' : `'${s}'`} is not one of ${REPROCESSABLE.join(', ')}`,
      );
  }
  const since =
    typeof values.since === 'string' ? parse(sinceSchema, values.since, 'since') : undefined;
  return {
    organizationId: parse(uuid, required(values, 'org'), 'org'),
    rightsholderId: optionalUuid('rightsholder'),
    distributorId: optionalUuid('distributor'),
    mappingId: optionalUuid('mapping'),
    statuses,
    since,
  };
}

/**
 * Each id the filter names is a row of the organization: a mistyped id would otherwise report 0
 * statements, as if there were nothing to do.
 */
async function checkFilterNamesRows(pool: Pool, filter: ReprocessFilter): Promise<void> {
  if (!(await organizationIsLive(pool, filter.organizationId)))
    throw new UsageError('no organization with that id');
  // nor does a filter naming nothing (or another organization's) mean there is nothing to do
  const named: [string, string | undefined, string][] = [
    [
      'rightsholder',
      filter.rightsholderId,
      'SELECT 1 FROM rightsholders WHERE id = $1 AND organization_id = $2',
    ],
    [
      'distributor',
      filter.distributorId,
      'SELECT 1 FROM distributors WHERE id = $1 AND (organization_id IS NULL OR organization_id = $2)',
    ],
    [
      'mapping',
      filter.mappingId,
      'SELECT 1 FROM mappings WHERE id = $1 AND (organization_id IS NULL OR organization_id = $2)',
    ],
  ];
  for (const [flag, id, sql] of named) {
    if (id !== undefined && !(await pool.query(sql, [id, filter.organizationId])).rowCount) {
      throw new UsageError(`--${flag}: no ${flag} with that id in the organization`);
    }
  }
}

/** The outcome on stdout (and failures on stderr), and the exit code it means. */
async function reportReprocess(
  pool: Pool,
  values: CliValues,
  shutdown: Shutdown,
  io: AdminIo,
  filter: ReprocessFilter,
  ids: string[],
  counts: Record<string, number>,
): Promise<number> {
  // not yet done: queued or processing, or not known (interrupted while the database did not answer)
  const settled = Object.entries(counts).reduce(
    (n, [state, count]) => (state === 'uploaded' || state === 'processing' ? n : n + count),
    0,
  );
  const pending = values['no-wait'] ? 0 : ids.length - settled;
  if (shutdown.received && pending > 0) {
    // interrupted: what is not done stays queued for the service's workers
    io.stderr.write(
      `\nadmin: interrupted with ${pending} of ${ids.length} statements not done: those running here are finished (or released) before the exit, the others stay queued for the workers\n`,
    );
    return shutdown.exitCode();
  }
  const out = { organizationId: filter.organizationId, statements: ids.length, counts };
  io.stdout.write(
    values.json
      ? `${JSON.stringify(out)}\n`
      : `${printHuman({ statements: ids.length, ...counts })}\n`,
  );
  // a script must be able to tell: any statement that ended failed is exit 3 (1 and 2 are the
  // command's own failures), with the failed ones named on stderr; --no-wait waited for nothing
  const failedCount = values['no-wait'] ? 0 : (counts.failed ?? 0);
  if (failedCount > 0) {
    const { rows } = await pool.query<{ id: string; code: string | null }>(
      `SELECT id, failure_code AS code FROM statements WHERE id = ANY ($1) AND status = 'failed' ORDER BY id LIMIT ${FAILED_NAMED}`,
      [ids],
    );
    const named = rows.map((r) => `${r.id} (${r.code ?? 'no errorCode'})`).join(', ');
    const more = failedCount > rows.length ? `, and ${failedCount - rows.length} more` : '';
    io.stderr.write(`admin: ${failedCount} of ${ids.length} statements failed: ${named}${more}\n`);
    return REPROCESS_FAILED_EXIT;
  }
  return 0;
}

const email = z.email();
/** an id as stored and answered: lower case (an id typed in capitals names the same row) */
const uuid = z
  .string()
  .trim()
  .pipe(z.uuid({ error: 'must be an id (a UUID such as 3f78dfbf-47a8-4f7d-b5f2-4f35be413b3d)' }))
  .transform((id) => id.toLowerCase());
/** as the API's keys (apiKey.update): a trimmed name of 1 to 100 characters */
const keyName = z.string().trim().min(1).max(100);
/** a calendar date is its whole day from 00:00 UTC, as the API's date filters; a date-time is that instant */
const SINCE =
  'must be a date (YYYY-MM-DD) or an ISO date-time with its offset (2024-01-31T12:00:00Z)';
const sinceSchema = z.union([
  z.iso.date({ error: SINCE }).transform((d) => `${d}T00:00:00Z`),
  z.iso.datetime({ offset: true, error: SINCE }),
]);

function required(values: Record<string, unknown>, key: string): string {
  const value = values[key];
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${key} is required`);
  return value.trim();
}

function parse<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new UsageError(`--${flag}: ${result.error.issues[0]?.message ?? 'invalid'}`);
  return result.data;
}

type Output = Record<string, unknown> | Record<string, unknown>[];

/** Each command and the options it takes: any other option, or a word more, is a usage error rather than ignored. */
const COMMANDS: Record<string, readonly string[]> = {
  bootstrap: ['email', 'org-name', 'platform-role'],
  'api-key create': ['email', 'org', 'name', 'patterns'],
  'api-key list': ['email', 'org'],
  'api-key delete': ['id'],
  'user set-password': ['email'],
  'oauth rotate-keys': [],
  'fx import': ['file', 'url', 'format'],
  'market import': ['kind', 'file', 'url', 'symbol'],
  reprocess: [
    'org',
    'rightsholder',
    'distributor',
    'mapping',
    'status',
    'since',
    'no-wait',
    'no-local-worker',
  ],
};

/** The command the positionals name; an unquoted value's second word (`--org-name My Label`) is refused here. */
function commandOf(positionals: string[], values: Record<string, unknown>): string {
  const command = [positionals.slice(0, 2).join(' '), positionals[0] ?? ''].find((c) =>
    Object.hasOwn(COMMANDS, c),
  );
  if (command === undefined) throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  const extra = positionals.slice(command.split(' ').length);
  if (extra.length > 0)
    throw new UsageError(`unexpected argument: ${extra.join(' ')} (quote a value that has spaces)`);
  const allowed = [...COMMANDS[command]!, 'json'];
  for (const [option, value] of Object.entries(values)) {
    if (value !== undefined && !allowed.includes(option))
      throw new UsageError(`--${option} does not apply to ${command}`);
  }
  return command;
}

type CommandRun = (pool: Pool, values: CliValues, io: AdminIo) => Promise<Output>;

/** What each command (but reprocess, which starts a runtime of its own) does with the database. */
const COMMAND_RUNS: Record<string, CommandRun> = {
  bootstrap: bootstrapCommand,
  'api-key create': createApiKeyCommand,
  'api-key list': listApiKeysCommand,
  'api-key delete': deleteApiKeyCommand,
  'user set-password': setPasswordCommand,
  'oauth rotate-keys': async (pool) => (await rotateKeys(pool)) as unknown as Output,
  'fx import': fxImport,
  'market import': marketImport,
};

async function bootstrapCommand(pool: Pool, values: CliValues): Promise<Output> {
  const platformRole = values['platform-role'];
  return bootstrap(pool, {
    email: parse(email, required(values, 'email'), 'email'),
    organizationName: parse(
      z.string().trim().min(1).max(200),
      required(values, 'org-name'),
      'org-name',
    ),
    platformRole:
      platformRole === undefined
        ? undefined
        : parse(z.enum(platformRoles), platformRole, 'platform-role'),
  }) as unknown as Promise<Output>;
}

async function createApiKeyCommand(pool: Pool, values: CliValues): Promise<Output> {
  const organizationId = parse(uuid, required(values, 'org'), 'org');
  const patterns = (typeof values.patterns === 'string' ? values.patterns : '*')
    .split(',')
    .map((p) => p.trim());
  for (const p of patterns)
    if (!PATTERN_RE.test(p)) throw new UsageError(`--patterns: ${p} is not a procedure pattern`);
  const name = typeof values.name === 'string' ? parse(keyName, values.name, 'name') : 'cli';
  // a member is an existing user: a stranger's email must not leave a user behind
  const { rows } = await pool.query<{ id: string }>(
    `SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id JOIN organizations o ON o.id = m.organization_id
     WHERE lower(u.email) = lower($1) AND m.organization_id = $2 AND o.deleted_at IS NULL`,
    [parse(email, required(values, 'email'), 'email'), organizationId],
  );
  if (!rows[0]) throw new UsageError('the user is not a member of that organization');
  const { key, record } = await createApiKey(pool, {
    userId: rows[0].id,
    name,
    organizationIds: [organizationId],
    patterns,
  });
  return { ...record, apiKey: key };
}

async function listApiKeysCommand(pool: Pool, values: CliValues): Promise<Output> {
  const organizationId =
    typeof values.org === 'string' ? parse(uuid, values.org, 'org') : undefined;
  let userId: string | undefined;
  if (typeof values.email === 'string') {
    // a mistyped address is told, not answered with an empty list as if its owner had no key
    const address = parse(email, values.email.trim(), 'email');
    const { rows } = await pool.query<{ id: string }>(
      'SELECT id FROM users WHERE lower(email) = lower($1)',
      [address],
    );
    if (!rows[0]) return [];
    userId = rows[0].id;
  }
  return (await listApiKeys(pool, { userId, organizationId })) as unknown as Output;
}

async function deleteApiKeyCommand(pool: Pool, values: CliValues): Promise<Output> {
  const id = parse(uuid, required(values, 'id'), 'id');
  const { rowCount } = await pool.query('SELECT 1 FROM api_keys WHERE id = $1', [id]);
  if (!rowCount) throw new UsageError('no API key with that id');
  await deleteApiKey(pool, id);
  return { id, deleted: true };
}

async function setPasswordCommand(pool: Pool, values: CliValues, io: AdminIo): Promise<Output> {
  const address = parse(email, required(values, 'email'), 'email');
  const { passwordProblem, setPassword } = await import('../oauth/passwords.ts');
  const password = await readPassword(io);
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(`the password read from standard input is refused: ${problem}`);
  if (!(await setPassword(pool, address, password)))
    throw new UsageError('no user with that e-mail');
  return { email: address, passwordSet: true };
}

/** The password on standard input, less one trailing line break; a terminal is prompted on stderr. */
async function readPassword(io: AdminIo): Promise<string> {
  if (io.stdin.isTTY) io.stderr.write('New password (then Enter and Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function printHuman(out: Output): string {
  const rows = Array.isArray(out) ? out : [out];
  // a list is `api-key list`'s: an empty one says so rather than printing a blank line
  if (rows.length === 0) return 'no API keys';
  const text = (v: unknown) =>
    Array.isArray(v) ? v.join(', ') : v instanceof Date ? v.toISOString() : String(v);
  return rows
    .map((r) =>
      Object.entries(r)
        .map(([k, v]) => `${k}: ${text(v)}`)
        .join('\n'),
    )
    .join('\n\n');
}

/** Every option of every command (COMMANDS says which command takes which). */
const OPTIONS = {
  email: { type: 'string' },
  'org-name': { type: 'string' },
  org: { type: 'string' },
  'platform-role': { type: 'string' },
  name: { type: 'string' },
  patterns: { type: 'string' },
  id: { type: 'string' },
  file: { type: 'string' },
  url: { type: 'string' },
  format: { type: 'string' },
  kind: { type: 'string' },
  symbol: { type: 'string' },
  rightsholder: { type: 'string' },
  distributor: { type: 'string' },
  mapping: { type: 'string' },
  status: { type: 'string' },
  since: { type: 'string' },
  'no-wait': { type: 'boolean' },
  'no-local-worker': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

interface CommandLine {
  command: string;
  values: CliValues;
}

/** The command and its options, or the exit code of a line that runs none (help, a usage error). */
function parseCommandLine(argv: string[], io: AdminIo): CommandLine | number {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, tokens: true, options: OPTIONS });
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n\n${ADMIN_USAGE}`);
    return 2;
  }
  // an option given twice (`--org A --org B`) is refused: parseArgs would keep the last one only
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) {
      io.stderr.write(`admin: --${token.name} is given more than once\n`);
      return 2;
    }
    seen.add(token.name);
  }
  if (parsed.values.help) {
    io.stdout.write(ADMIN_USAGE);
    return 0;
  }
  if (parsed.positionals.length === 0) {
    io.stderr.write(ADMIN_USAGE);
    return 2;
  }
  try {
    return { command: commandOf(parsed.positionals, parsed.values), values: parsed.values };
  } catch (error) {
    return failed(error, io);
  }
}

/**
 * Runs an admin command (`argv`: the words after `admin`) with the configuration given, writing
 * to `io`; returns the exit code. src/main.ts runs it with the process's streams; the tests run it
 * in their own process.
 */
export async function admin(
  config: Config,
  argv: string[],
  io: AdminIo = processIo(),
): Promise<number> {
  const line = parseCommandLine(argv, io);
  if (typeof line === 'number') return line;
  const log: Deps['log'] = pino(
    { level: config.logLevel === 'info' ? 'warn' : config.logLevel },
    io.log(),
  );
  const shutdown = handleSignals({ log, level: 'warn', source: io.signals });
  if (line.command === 'reprocess') {
    try {
      return await reprocessCommand(config, line.values, log, shutdown, io);
    } catch (error) {
      if (error instanceof StartInterrupted) return shutdown.exitCode();
      return failed(error, io);
    }
  }
  return databaseCommand(config, line, log, shutdown, io);
}

/** A command that needs the database only: run until it ends or a signal interrupts it. */
async function databaseCommand(
  config: Config,
  { command, values }: CommandLine,
  log: Deps['log'],
  shutdown: Shutdown,
  io: AdminIo,
): Promise<number> {
  let database;
  try {
    database = await openDatabase(config, log);
  } catch (error) {
    return failed(new CommandError(`cannot open the database: ${(error as Error).message}`), io);
  }
  shutdown.onForce(() => database.abandon());
  try {
    if (shutdown.received) return shutdown.exitCode();
    const run = COMMAND_RUNS[command]!(database.pool, values, io);
    // an interrupted command is not waited for; its transaction ends with its connection
    run.catch(() => {});
    const out = await Promise.race([run, shutdown.requested.then(() => undefined)]);
    if (out === undefined) {
      io.stderr.write('admin: interrupted\n');
      return shutdown.exitCode();
    }
    io.stdout.write(values.json ? `${JSON.stringify(out)}\n` : `${printHuman(out)}\n`);
    return 0;
  } catch (error) {
    return failed(error, io);
  } finally {
    await database.close();
  }
}

/** `reprocess`: every statement ended, and at least one of them `failed` */
export const REPROCESS_FAILED_EXIT = 3;
/** how many failed statements the summary line names */
const FAILED_NAMED = 20;

/** A CommandError's message and exit code; anything else is a fault, with its stack trace (src/main.ts). */
function failed(error: unknown, io: AdminIo): number {
  if (!(error instanceof CommandError)) throw error;
  io.stderr.write(`admin: ${error.message}\n`);
  return error.exitCode;
}

// `npm run admin -- <command>`: operator commands against the configured database, whether or
// not the service is running. Machine-readable output (--json) is exactly one JSON object on
// stdout; logs go to stderr. Ctrl-C (SIGINT) or SIGTERM stops a command cleanly (src/cli/signals.ts):
// it stops waiting, finishes or releases the jobs of its local worker, closes the database and
// the embedded servers it uses, and exits with 128 + the signal's number (130 for Ctrl-C).
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createApiKey, deleteApiKey, listApiKeys, PATTERN_RE } from '../auth/apiKeys.ts';
import type { Config } from '../config.ts';
import { bootstrap, upsertUser } from '../organizations/bootstrap.ts';
import { openDatabase, startRuntime, StartInterrupted } from '../runtime.ts';
import { followReprocess, queueReprocess, REPROCESSABLE } from './reprocess.ts';
import { handleSignals, type Shutdown } from './signals.ts';
import { fxImport, marketImport } from './reference.ts';
import { platformRoles } from '../trpc/roles.ts';
import { destination, pino } from 'pino';
import type { Pool } from '../db/pool.ts';
import type { Deps } from '../trpc/context.ts';

export const ADMIN_USAGE = `Usage: npm run admin -- <command> [options]

  bootstrap --email EMAIL --org-name NAME [--platform-role c2_superadmin|c2_customer_support] [--json]
      Create (or reuse) the user as owner of a new organization with an API key of full scope.
  api-key create --email EMAIL --org ORG_ID [--name NAME] [--patterns 'rightsholder.*,cube.query'] [--json]
      Create an API key for a member of the organization (default scope: every procedure).
  api-key list [--email EMAIL] [--org ORG_ID] [--json]
  api-key delete --id KEY_ID [--json]
  fx import (--file F | --url U) [--format ecb|plain] [--json]
      Load exchange rates: the ECB reference-rate CSV (daily or historical, zipped or not; euro base,
      stored against the US dollar) or a plain date,currency,rate CSV (units per US dollar).
  market import --kind history|symbols|treasury (--file F | --url U) [--symbol S] [--json]
      Load market data: prices (symbol,date,open,high,low,close,volume, or a one-symbol
      Date,Open,High,Low,Close,Volume download with --symbol), symbols (symbol,name,currency,exchange),
      or the US Treasury daily par yield curve CSV.
  reprocess --org ORG_ID [--rightsholder ID] [--distributor ID] [--mapping ID] [--status processed,failed,...]
            [--since DATE] [--no-wait] [--no-local-worker] [--json]
      Reprocess every matching statement (default statuses: processed, failed, needs_mapping, skipped, bad),
      showing counts by state until done. Rows are replaced atomically per statement.
`;

async function reprocessCommand(
  config: Config,
  values: Record<string, string | boolean | undefined>,
  log: Deps['log'],
  shutdown: Shutdown,
): Promise<number> {
  const optionalUuid = (flag: string) => (typeof values[flag] === 'string' ? parse(uuid, values[flag], flag) : undefined);
  const statuses = typeof values.status === 'string' ? values.status.split(',').map((s) => s.trim()) : REPROCESSABLE;
  for (const s of statuses) if (!REPROCESSABLE.includes(s)) throw new UsageError(`--status: ${s} is not one of ${REPROCESSABLE.join(', ')}`);
  const since = typeof values.since === 'string' ? parse(z.iso.date().or(z.iso.datetime()), values.since, 'since') : undefined;
  const filter = {
    organizationId: parse(uuid, required(values, 'org'), 'org'),
    rightsholderId: optionalUuid('rightsholder'),
    distributorId: optionalUuid('distributor'),
    mappingId: optionalUuid('mapping'),
    statuses,
    since,
  };
  // without --no-local-worker this process works on the queue too, next to any running workers
  const role = values['no-local-worker'] || values['no-wait'] ? 'migrate' : 'worker';
  const runtime = await startRuntime(config, role, { log, interruption: shutdown });
  try {
    if (shutdown.received) return shutdown.exitCode();
    const ids = await queueReprocess(runtime.deps, filter);
    const counts = values['no-wait'] ? { queued: ids.length } : await followReprocess(runtime.deps.pool, ids, { draw: !values.json, signal: shutdown.signal });
    const pending = (counts.uploaded ?? 0) + (counts.processing ?? 0);
    if (shutdown.received && pending > 0) {
      // interrupted: what is not done stays queued for the service's workers
      process.stderr.write(
        `\nadmin: interrupted with ${pending} of ${ids.length} statements not done: those running here are finished (or released) before the exit, the others stay queued for the workers\n`,
      );
      return shutdown.exitCode();
    }
    const out = { organizationId: filter.organizationId, statements: ids.length, counts };
    process.stdout.write(values.json ? `${JSON.stringify(out)}\n` : `${printHuman({ statements: ids.length, ...counts })}\n`);
    return 0;
  } finally {
    // the local worker's running jobs are finished first (a forced exit releases them instead)
    await runtime.stop();
  }
}

export class UsageError extends Error {
  override name = 'UsageError';
}

const email = z.email();
const uuid = z.uuid();

function required(values: Record<string, unknown>, key: string): string {
  const value = values[key];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${key} is required`);
  return value.trim();
}

function parse<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(`--${flag}: ${result.error.issues[0]?.message ?? 'invalid'}`);
  return result.data;
}

type Output = Record<string, unknown> | Record<string, unknown>[];

async function runCommand(pool: Pool, command: string[], values: Record<string, string | boolean | undefined>): Promise<Output> {
  const [verb, sub] = command;
  if (verb === 'bootstrap') {
    const platformRole = values['platform-role'];
    return bootstrap(pool, {
      email: parse(email, required(values, 'email'), 'email'),
      organizationName: parse(z.string().trim().min(1).max(200), required(values, 'org-name'), 'org-name'),
      platformRole: platformRole === undefined ? undefined : parse(z.enum(platformRoles), platformRole, 'platform-role'),
    }) as unknown as Promise<Output>;
  }
  if (verb === 'api-key' && sub === 'create') {
    const organizationId = parse(uuid, required(values, 'org'), 'org');
    const patterns = (typeof values.patterns === 'string' ? values.patterns : '*').split(',').map((p) => p.trim());
    for (const p of patterns) if (!PATTERN_RE.test(p)) throw new UsageError(`--patterns: ${p} is not a procedure pattern`);
    const userId = await upsertUser(pool, parse(email, required(values, 'email'), 'email'));
    const { rows } = await pool.query(
      `SELECT 1 FROM memberships m JOIN organizations o ON o.id = m.organization_id
       WHERE m.organization_id = $1 AND m.user_id = $2 AND o.deleted_at IS NULL`,
      [organizationId, userId],
    );
    if (rows.length === 0) throw new UsageError('the user is not a member of that organization');
    const name = typeof values.name === 'string' ? values.name : 'cli';
    const { key, record } = await createApiKey(pool, { userId, name, organizationIds: [organizationId], patterns });
    return { ...record, apiKey: key };
  }
  if (verb === 'api-key' && sub === 'list') {
    let userId: string | undefined;
    if (typeof values.email === 'string') {
      const { rows } = await pool.query<{ id: string }>('SELECT id FROM users WHERE lower(email) = lower($1)', [values.email]);
      if (!rows[0]) return [];
      userId = rows[0].id;
    }
    const organizationId = typeof values.org === 'string' ? parse(uuid, values.org, 'org') : undefined;
    return (await listApiKeys(pool, { userId, organizationId })) as unknown as Output;
  }
  if (verb === 'api-key' && sub === 'delete') {
    const id = parse(uuid, required(values, 'id'), 'id');
    const { rowCount } = await pool.query('SELECT 1 FROM api_keys WHERE id = $1', [id]);
    if (!rowCount) throw new UsageError('no API key with that id');
    await deleteApiKey(pool, id);
    return { id, deleted: true };
  }
  if (verb === 'fx' && sub === 'import') return fxImport(pool, values);
  if (verb === 'market' && sub === 'import') return marketImport(pool, values);
  throw new UsageError(`unknown command: ${command.join(' ') || '(none)'}`);
}

function printHuman(out: Output): string {
  const rows = Array.isArray(out) ? out : [out];
  return rows.map((r) => Object.entries(r).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`).join('\n')).join('\n\n');
}

/** Runs an admin command; returns the process exit code. */
export async function admin(config: Config, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
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
        'no-wait': { type: 'boolean', default: false },
        'no-local-worker': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${ADMIN_USAGE}`);
    return 2;
  }
  if (parsed.values.help || parsed.positionals.length === 0) {
    process.stdout.write(ADMIN_USAGE);
    return parsed.values.help ? 0 : 2;
  }
  const log: Deps['log'] = pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel }, destination(2));
  const shutdown = handleSignals({ log, level: 'warn' });
  if (parsed.positionals[0] === 'reprocess') {
    try {
      return await reprocessCommand(config, parsed.values, log, shutdown);
    } catch (error) {
      if (error instanceof UsageError) {
        process.stderr.write(`admin: ${error.message}\n`);
        return 2;
      }
      if (error instanceof StartInterrupted) return shutdown.exitCode();
      throw error;
    }
  }
  const database = await openDatabase(config, log);
  shutdown.onForce(() => database.abandon());
  try {
    if (shutdown.received) return shutdown.exitCode();
    const command = runCommand(database.pool, parsed.positionals, parsed.values);
    // an interrupted command is not waited for; its transaction ends with its connection
    command.catch(() => {});
    const out = await Promise.race([command, shutdown.requested.then(() => undefined)]);
    if (out === undefined) {
      process.stderr.write('admin: interrupted\n');
      return shutdown.exitCode();
    }
    process.stdout.write(parsed.values.json ? `${JSON.stringify(out)}\n` : `${printHuman(out)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`admin: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await database.close();
  }
}

// Command-line entry: serve (API + job runner, the default) | api | worker | migrate | admin.
// Signals are handled from before anything starts until the process exits (src/cli/signals.ts).
// Only what every command needs is imported up front: the rest (the configuration with its
// settings schema, the runtime with fastify, graphile-worker, DuckDB and the S3 client, the admin
// commands) is loaded when the command asks for it, so `--help` answers at once.
import { ADMIN_USAGE, asksForHelp } from './cli/adminUsage.ts';
import { endHangup, handleSignals, shutdownRequested } from './cli/signals.ts';
import type { Config } from './config.ts';
import type { Deps } from './deps.ts';
import type { Role, Runtime } from './runtime.ts';

// The AWS SDK's versions pinned here run on Node 20 (docs/decisions/compiled-javascript-node-20.md):
// its notice that later versions will need Node 22 is for whoever upgrades it, not for every start
// of the service.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const roles: Role[] = ['serve', 'api', 'worker', 'migrate'];
/** the service stopped on its own (its embedded PostgreSQL lost), not asked to */
let stoppedByFault = false;

const USAGE = `usage: royalty-engine [command]   (npm start, npm run api|worker|migrate|admin)

  serve     the API and the job runner in one process (the default)
  api       the API only
  worker    the job runner only
  migrate   applies the migrations and exits
  admin     operator commands (admin --help lists them)

Configuration is read from the environment (docs/configuration.md).
`;

/** The usage a help request asks for, answered before the configuration is read. */
function usageAskedFor(command: string, rest: string[]): string | undefined {
  if (command === '--help' || command === '-h' || command === 'help') return USAGE;
  if (command === 'admin' && asksForHelp(rest)) return ADMIN_USAGE;
  return undefined;
}

/** A service command checked: its role, or the exit code once its usage or mistake is told. */
function roleOf(command: string, rest: string[]): Role | number {
  if (!roles.includes(command as Role)) {
    process.stderr.write(`unknown command ${command}\n\n${USAGE}`);
    return 2;
  }
  if (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h')) {
    // `npm start -- --help`
    process.stdout.write(USAGE);
    return 0;
  }
  if (rest.length > 0) {
    // an option meant for another command, or a typo: never silently ignored
    process.stderr.write(`${command} takes no arguments: ${rest.join(' ')}\n\n${USAGE}`);
    return 2;
  }
  return command as Role;
}

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  const usage = usageAskedFor(command, rest);
  if (usage !== undefined) {
    process.stdout.write(usage);
    return 0;
  }
  const { loadConfig } = await import('./config.ts');
  const config = loadConfig();
  if (command === 'admin') {
    const { admin } = await import('./cli/admin.ts');
    return admin(config, rest);
  }
  const role = roleOf(command, rest);
  if (typeof role === 'number') return role;
  return runService(config, role);
}

/** Starts the role, runs it until a shutdown is asked for (or its database is lost), stops it. */
async function runService(config: Config, role: Role): Promise<number> {
  const { createLogger, startRuntime, StartInterrupted, stopWithin } = await import('./runtime.ts');
  const log = createLogger(config);
  const shutdown = handleSignals({ log });
  let runtime: Runtime;
  try {
    runtime = await startRuntime(config, role, { log, interruption: shutdown });
  } catch (error) {
    return startFailed(error, role, log, {
      interrupted: error instanceof StartInterrupted,
      shutdownAsked: shutdown.received !== undefined,
    });
  }
  if (role === 'migrate') {
    await runtime.stop();
    log.info('migrations are up to date');
    return 0;
  }
  announce(runtime, role, log);
  const lost = await Promise.race([shutdown.requested.then(() => undefined), runtime.lost]);
  if (lost) {
    // the embedded PostgreSQL is gone for good: stop (what runs is finished or fails without its
    // database) and exit 1, for whoever started the service (a supervisor, the user) to start it again
    process.stderr.write(`royalty engine stopping: ${lost.message}\n`);
    stoppedByFault = true;
  }
  // HTTP closed, running jobs finished (graphile-worker's graceful shutdown), pools closed, the
  // embedded servers last; a repeated signal meanwhile is ignored, two more force an exit. Past
  // SHUTDOWN_GRACE_MS the jobs still running are released for a retry and the process exits
  // (what still runs then ends with it)
  const stopped = await stopWithin(runtime, config.shutdownGraceMs, log);
  log.info(stopped ? 'stopped' : 'stopped, running jobs released');
  return lost ? 1 : 0;
}

/**
 * The exit code of a start that failed: 1 with a message for a fault; 0 when a shutdown was asked
 * for meanwhile (what had started is stopped).
 */
function startFailed(
  error: unknown,
  role: Role,
  log: Deps['log'],
  why: { interrupted: boolean; shutdownAsked: boolean },
): number {
  // a Ctrl-C in the terminal also reaches what the start was running in the foreground (initdb):
  // once a shutdown is asked for, the start's failure is that shutdown, not a fault to report
  if (!why.interrupted && !why.shutdownAsked) {
    // an unreachable database, a port in use, a store that refuses: a message, not a stack trace
    // (the log keeps the whole error)
    log.debug({ err: error }, 'start failed');
    process.stderr.write(`cannot start ${role}: ${startProblem(error)}\n`);
    return 1;
  }
  if (!why.interrupted) log.debug({ err: error }, 'start failed after a shutdown was asked for');
  log.info('stopped');
  return 0;
}

/** Says where the service runs, and the demo organization's key when this start created it. */
function announce(runtime: Runtime, role: Role, log: Deps['log']): void {
  if (runtime.url) {
    log.info({ url: runtime.url, role }, 'royalty engine listening');
    process.stdout.write(`\nRoyalty engine is running at ${runtime.url}  (role: ${role})\n`);
  } else {
    log.info({ role }, 'royalty engine worker running');
  }
  if (!runtime.demo) return;
  process.stdout.write(
    [
      '',
      'First start: a demo organization was created. This key is shown once:',
      `  base URL:         ${runtime.url}`,
      `  organization id:  ${runtime.demo.organizationId}`,
      `  API key:          ${runtime.demo.apiKey}`,
      '',
      'Try:',
      `  curl -H 'x-api-key: ${runtime.demo.apiKey}' -H 'x-organization-id: ${runtime.demo.organizationId}' '${runtime.url}/trpc/user.currentUser'`,
      '',
      'Another key, for the demo owner (demo@example.com), whenever you need one:',
      `  npm run admin -- api-key create --email demo@example.com --org ${runtime.demo.organizationId}`,
      '',
    ].join('\n'),
  );
}

/** What stopped the start, in a line: the error's message with its causes (an AggregateError's too). */
function startProblem(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e instanceof Error && parts.length < 4; e = e.cause) {
    const inner =
      e instanceof AggregateError
        ? e.errors.map((x: unknown) => (x instanceof Error ? x.message : String(x))).join('; ')
        : '';
    const text = e.message || inner || e.name;
    // a cause a message already ends with (`…: connect ECONNREFUSED`) is not told twice
    if (!parts.some((p) => p === text || p.endsWith(`: ${text}`))) parts.push(text);
  }
  return parts.join(': ') || String(error);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // the terminal was closed: ended as by SIGHUP, now that everything is stopped
    endHangup();
    // asked to stop and stopped: whatever still holds the event loop (an interrupted admin
    // command's download) is not waited for
    if (shutdownRequested() || stoppedByFault) setTimeout(() => process.exit(code), 1000).unref();
  },
  (error: unknown) => {
    // a configuration error is a message for the operator (src/config.ts), anything else a fault
    if (error instanceof Error && error.name === 'ConfigError')
      process.stderr.write(`${error.message}\n`);
    else
      process.stderr.write(
        `fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    process.exitCode = 1;
  },
);

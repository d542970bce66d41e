// Command-line entry: serve (API + job runner, the default) | api | worker | migrate | admin.
import { admin } from './cli/admin.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger, startRuntime, type Role } from './runtime.ts';

const roles: Role[] = ['serve', 'api', 'worker', 'migrate'];

async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  const [command = 'serve', ...rest] = argv;
  if (command === 'admin') return admin(config, rest);
  if (!roles.includes(command as Role)) {
    process.stderr.write(`unknown command ${command}; use one of: ${[...roles, 'admin'].join(', ')}\n`);
    return 2;
  }
  const role = command as Role;
  const log = createLogger(config);
  const runtime = await startRuntime(config, role, { log });
  if (role === 'migrate') {
    await runtime.stop();
    log.info('migrations are up to date');
    return 0;
  }
  if (runtime.url) {
    log.info({ url: runtime.url, role }, 'royalty engine listening');
    process.stdout.write(`\nRoyalty engine is running at ${runtime.url}  (role: ${role})\n`);
  } else {
    log.info({ role }, 'royalty engine worker running');
  }
  if (runtime.demo) {
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
      ].join('\n'),
    );
  }
  await new Promise<void>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      runtime.stop().then(resolve, resolve);
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  log.info('stopped');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);

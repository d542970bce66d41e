// royalty login (device flow; --web: browser + loopback PKCE), logout, auth status, whoami.
import type { Command } from 'commander';
import { createRoyaltyClient } from '../client/index.ts';
import { deviceLogin, revoke, webLogin } from './oauth.ts';
import { formatOf, print, UsageError, type OutputOptions } from './output.ts';
import { openSession, profileStore, serverUrl, type GlobalOptions } from './session.ts';

type Options = GlobalOptions & OutputOptions;

/** A browser is started only for a person at a terminal; a script is given the address alone. */
async function openInBrowser(url: string): Promise<void> {
  if (!process.stderr.isTTY) {
    process.stderr.write(`Sign in at ${url}\n`);
    return;
  }
  process.stderr.write(`Opening ${url}\nIf no browser opens, visit that address.\n`);
  try {
    const { default: open } = await import('open');
    await open(url);
  } catch {
    // no browser here: the address printed above is the way
  }
}

async function login(options: Options & { web?: boolean }): Promise<void> {
  const store = profileStore(options);
  const url = await serverUrl(options, store);
  const tokens = options.web
    ? await webLogin(url, openInBrowser)
    : await deviceLogin(url, (p) => {
        process.stderr.write(
          `To sign in, open ${p.verificationUri} and enter the code ${p.userCode}\n` +
            (p.verificationUriComplete ? `(or open ${p.verificationUriComplete})\n` : '') +
            'Waiting for the approval...\n',
        );
      });
  const me = await createRoyaltyClient({
    url,
    tokenProvider: { accessToken: async () => tokens.accessToken, refresh: async () => {} },
  }).api.user.currentUser.query();
  const organization = options.org
    ? me.organizations.find((o) => o.id === options.org)
    : me.organizations[0];
  if (options.org && !organization)
    throw new UsageError(`${me.email} is no member of the organization ${options.org}`);
  await store.update((profile) => ({
    ...profile,
    url,
    email: me.email,
    tokens,
    ...(organization ? { organizationId: organization.id } : {}),
  }));
  const others =
    me.organizations.length > 1
      ? ` (${me.organizations.length} organizations: pick another with --org)`
      : '';
  process.stderr.write(
    `Logged in to ${url} as ${me.email}${organization ? `, organization ${organization.name}` : ''}${others}\n`,
  );
}

async function logout(options: Options): Promise<void> {
  const store = profileStore(options);
  const profile = await store.read();
  if (!profile.tokens) {
    process.stderr.write('Not logged in\n');
    return;
  }
  if (profile.tokens.refreshToken && profile.url) {
    await revoke(profile.url, profile.tokens.refreshToken).catch((error: Error) =>
      process.stderr.write(`The server did not revoke the login: ${error.message}\n`),
    );
  }
  await store.update(({ tokens: _tokens, ...rest }) => rest);
  process.stderr.write(`Logged out of ${profile.url ?? 'the server'}\n`);
}

async function status(options: Options): Promise<void> {
  const session = await openSession(options);
  const me = await session.client.api.user.currentUser.query();
  const profile = await session.store.read();
  const organization = me.organizations.find((o) => o.id === session.client.organizationId);
  print(
    {
      server: session.url,
      credentials:
        session.source === 'api-key' ? 'ROYALTY_API_KEY' : `login (profile ${session.store.name})`,
      userId: me.id,
      email: me.email,
      organizationId: session.client.organizationId ?? null,
      organization: organization?.name ?? null,
      role: organization?.role ?? null,
      ...(session.source === 'login' && profile.tokens
        ? { accessTokenExpiresAt: new Date(profile.tokens.expiresAt).toISOString() }
        : {}),
    },
    formatOf(options),
  );
}

async function whoami(options: Options): Promise<void> {
  const session = await openSession(options);
  const me = await session.client.api.user.currentUser.query();
  const format = formatOf(options);
  if (format === 'json') return print(me, format);
  process.stderr.write(`${me.email} (${me.id})\n`);
  print(
    me.organizations.map((o) => ({
      current: o.id === session.client.organizationId ? '*' : '',
      ...o,
    })),
    format,
    ['current', 'id', 'name', 'role'],
  );
}

export function authCommands(program: Command): void {
  program
    .command('login')
    .description(
      "sign in with the device flow (a code to approve in a browser anywhere); --web: this machine's browser",
    )
    .option('--web', 'sign in through a browser on this machine (PKCE with a loopback redirect)')
    .action((opts, cmd: Command) => login({ ...cmd.optsWithGlobals(), ...opts }));
  program
    .command('logout')
    .description('revoke the stored login and forget it')
    .action((_opts, cmd: Command) => logout(cmd.optsWithGlobals()));
  const auth = program.command('auth').description('the stored login');
  auth
    .command('status')
    .description('who the calls are made as, checked with the server')
    .action((_opts, cmd: Command) => status(cmd.optsWithGlobals()));
  program
    .command('whoami')
    .description('the calling user and their organizations')
    .action((_opts, cmd: Command) => whoami(cmd.optsWithGlobals()));
}

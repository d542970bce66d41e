// The authorization server: oidc-provider (OpenID-certified) configured to the specification's
// "Authentication" section. Access tokens are opaque and stored (src/oauth/adapter.ts) rather than
// JWTs: revocation (RFC 7009) and a revoked token family (RFC 9700) then end them at once, and the
// API reads one row per call, as it does for an API key.
import Provider, {
  errors,
  type Configuration,
  type KoaContextWithOIDC,
  type ClientMetadata,
} from 'oidc-provider';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import { postgresAdapter } from './adapter.ts';
import type { KeySet } from './keys.ts';
import {
  escapeHtml,
  logoutPage,
  messagePage,
  page,
  PAGE_HEADERS,
  userCodeConfirmPage,
  userCodePage,
} from './pages.ts';
import { clientPolicyProblem, isLoopbackHttp, type OAuthPolicy } from './policy.ts';
import {
  API_SCOPE,
  CLI_CLIENT_ID,
  CLI_CLIENT_NAME,
  MCP_WRITE_SCOPE,
  normalizeResource,
  OAUTH_PREFIX,
  type OAuthUrls,
} from './urls.ts';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const HOUR = 3600;
const DAY = 24 * HOUR;

/** The first-party command-line client: public, loopback redirects on any port (RFC 8252), device flow. */
export const CLI_CLIENT: ClientMetadata = {
  client_id: CLI_CLIENT_ID,
  client_name: CLI_CLIENT_NAME,
  application_type: 'native',
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
  response_types: ['code'],
  redirect_uris: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
};

function render(ctx: KoaContextWithOIDC, html: string, status?: number): void {
  ctx.set(PAGE_HEADERS);
  if (status !== undefined) ctx.status = status;
  ctx.body = html;
}

/** The action and anti-forgery token of a form oidc-provider made (its own markup is replaced). */
function formParts(form: string): { action: string; xsrf: string } {
  const action = /action="([^"]*)"/.exec(form)?.[1] ?? '';
  const xsrf = /name="xsrf" value="([^"]*)"/.exec(form)?.[1] ?? '';
  // oidc-provider escaped them for HTML already; unescaped here, escaped again by the page
  const unescape = (s: string) =>
    s
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#x27;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  return { action: unescape(action), xsrf: unescape(xsrf) };
}

function clientName(ctx: KoaContextWithOIDC): string {
  return ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId ?? 'A client';
}

export interface ProviderOptions {
  pool: Pool;
  log: FastifyBaseLogger;
  urls: OAuthUrls;
  keys: KeySet;
  policy: OAuthPolicy;
  /** false: a Client ID Metadata Document may not be fetched now (rate limit) */
  allowMetadataFetch(ctx: KoaContextWithOIDC): Promise<boolean>;
}

/** Whether the URL's host is one of OAUTH_METADATA_DOCUMENT_HOSTS. */
function privateHost(input: string | URL | Request, policy: OAuthPolicy): boolean {
  const url = URL.parse(input instanceof Request ? input.url : String(input));
  return url !== null && policy.metadataDocumentHosts.includes(url.hostname.toLowerCase());
}

/** The request options less oidc-provider's address-checking dispatcher (its time limit stays). */
function withoutAddressGuard(init: RequestInit | undefined): RequestInit | undefined {
  if (!init) return init;
  const { dispatcher: _guard, ...rest } = init as RequestInit & { dispatcher?: unknown };
  return rest;
}

/** The signed-in user a token's subject names: its id and email claims. */
function accountFinder(pool: Pool): NonNullable<Configuration['findAccount']> {
  return async (_ctx, sub) => {
    const { rows } = await pool.query<{ id: string; email: string }>(
      'SELECT id, email FROM users WHERE id::text = $1',
      [sub],
    );
    const user = rows[0];
    if (!user) return undefined;
    return { accountId: user.id, claims: () => ({ sub: user.id, email: user.email }) };
  };
}

/** The device flow's pages: enter the code, confirm it, connected. */
function deviceFlowFeature(): NonNullable<Configuration['features']>['deviceFlow'] {
  return {
    enabled: true,
    async userCodeInputSource(ctx, form, _out, err) {
      const { action, xsrf } = formParts(form);
      const error = err
        ? 'That code is not valid (or has expired). Check it and try again.'
        : undefined;
      render(ctx, userCodePage({ action, xsrf, ...(error ? { error } : {}) }));
    },
    async userCodeConfirmSource(ctx, form, _client, _deviceInfo, userCode) {
      const { action, xsrf } = formParts(form);
      render(ctx, userCodeConfirmPage({ action, xsrf, userCode, clientName: clientName(ctx) }));
    },
    async successSource(ctx) {
      render(
        ctx,
        messagePage(
          'Device connected',
          `${clientName(ctx)} is signed in. You can close this page.`,
        ),
      );
    },
  };
}

/** The sign-out pages: confirm, signed out. */
function logoutFeature(): NonNullable<Configuration['features']>['rpInitiatedLogout'] {
  return {
    enabled: true,
    async logoutSource(ctx, form) {
      render(ctx, logoutPage(formParts(form)));
    },
    async postLogoutSuccessSource(ctx) {
      render(
        ctx,
        messagePage('Signed out', 'You are signed out of the royalty service in this browser.'),
      );
    },
  };
}

/** The two resources tokens are issued for (API by default) and the scope each carries. */
function resourceIndicatorsFeature(
  urls: OAuthUrls,
): NonNullable<Configuration['features']>['resourceIndicators'] {
  const resources = new Map([
    [urls.apiResource, 'the royalty API'],
    [urls.mcpResource, 'the royalty tool server (for AI assistants)'],
  ]);
  return {
    enabled: true,
    defaultResource: () => urls.apiResource,
    useGrantedResource: () => true,
    async getResourceServerInfo(_ctx, resourceIndicator) {
      const resource = normalizeResource(resourceIndicator);
      if (!resources.has(resource))
        throw new errors.InvalidTarget(
          `unknown resource; this server issues tokens for ${[...resources.keys()].join(' and ')}`,
        );
      // write access is a scope of the tool server's tokens only, granted when the client asks for it
      const scope =
        resource === normalizeResource(urls.mcpResource)
          ? `${API_SCOPE} ${MCP_WRITE_SCOPE}`
          : API_SCOPE;
      return { audience: resource, scope, accessTokenFormat: 'opaque', accessTokenTTL: HOUR };
    },
  };
}

/** Client ID Metadata Documents: fetched when the rate limit allows, admitted by the client policy. */
function metadataDocumentFeature(
  options: ProviderOptions,
): NonNullable<Configuration['features']>['clientIdMetadataDocument'] {
  return {
    enabled: true,
    ack: 'draft-02',
    allowFetch: (ctx) => options.allowMetadataFetch(ctx),
    allowClient: async (_ctx, client) =>
      clientPolicyProblem(client.metadata(), options.policy) === undefined,
    cacheDuration: { min: 60, max: DAY },
  };
}

/** The client policy for every client (registered, fetched or built in), in one place. */
function clientPolicyCheck(policy: OAuthPolicy): Configuration['extraClientMetadata'] {
  return {
    properties: ['client_name'],
    validator(_ctx, key, _value, metadata) {
      if (key !== 'client_name') return;
      const problem = clientPolicyProblem(metadata, policy);
      if (problem) throw new errors.InvalidClientMetadata(problem);
      // a client whose redirects are all loopback is a native app: any port (RFC 8252 7.3)
      if (metadata.redirect_uris?.length && metadata.redirect_uris.every(isLoopbackHttp))
        metadata.application_type = 'native';
    },
  };
}

/** The endpoints' paths under the authorization server's prefix. */
const ROUTES: Configuration['routes'] = {
  authorization: '/authorize',
  token: '/token',
  device_authorization: '/device/auth',
  code_verification: '/device',
  registration: '/register',
  revocation: '/revoke',
  jwks: '/jwks',
  end_session: '/logout',
  userinfo: '/userinfo',
  introspection: '/introspect',
};

const TTL: Configuration['ttl'] = {
  AccessToken: HOUR,
  AuthorizationCode: 60,
  // rotated refresh tokens keep the first one's expiry: 30 days after the sign-in, then sign in again
  RefreshToken: 30 * DAY,
  Grant: 30 * DAY,
  DeviceCode: 600,
  IdToken: HOUR,
  Interaction: HOUR,
  Session: 30 * DAY,
};

function providerConfiguration(options: ProviderOptions): Configuration {
  const { pool, urls, keys, policy } = options;
  return {
    adapter: postgresAdapter(pool, { unusedClientTtlSeconds: policy.unusedClientTtlSeconds }),
    clients: [CLI_CLIENT],
    // EC keys only: every client's ID tokens are ES256 (the default RS256 has no key)
    clientDefaults: {
      id_token_signed_response_alg: 'ES256',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    jwks: { keys: keys.signing },
    cookies: {
      keys: keys.cookieSecrets,
      long: { signed: true, sameSite: 'lax' },
      short: { signed: true, sameSite: 'lax' },
    },
    pkce: { required: () => true },
    // browser-based public clients may call the token endpoint from the origin of their redirect URIs
    clientBasedCORS: (_ctx, origin, client) =>
      origin !== 'null' &&
      client.clientAuthMethod === 'none' &&
      client.redirectUris!.some((uri) => URL.parse(uri)?.origin === origin),
    responseTypes: ['code'],
    scopes: ['openid', 'offline_access', API_SCOPE, MCP_WRITE_SCOPE],
    claims: { openid: ['sub'], email: ['email'] },
    findAccount: accountFinder(pool),
    interactions: {
      url: (_ctx, interaction) => `${urls.basePath}${OAUTH_PREFIX}/interaction/${interaction.uid}`,
    },
    routes: ROUTES,
    ttl: TTL,
    rotateRefreshToken: true,
    // a refresh token whenever the client may refresh, without asking for offline_access
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: false },
      // a token is revoked by the client it was issued to, nobody else (a public client proves
      // nothing more than its id, so one client cannot end another's sign-ins)
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      introspection: { enabled: false },
      registration: {
        enabled: true,
        initialAccessToken: false,
        issueRegistrationAccessToken: true,
      },
      deviceFlow: deviceFlowFeature(),
      rpInitiatedLogout: logoutFeature(),
      resourceIndicators: resourceIndicatorsFeature(urls),
      clientIdMetadataDocument: metadataDocumentFeature(options),
    },
    extraClientMetadata: clientPolicyCheck(policy),
    fetchResponseBodyLimits: { 'client_id metadata document': policy.metadataDocumentMaxBytes },
    // oidc-provider fetches through a dispatcher that refuses special-use addresses (loopback,
    // private networks: SSRF); a host the operator names is fetched without it
    fetch: (input, init) =>
      globalThis.fetch(input, privateHost(input, policy) ? withoutAddressGuard(init) : init),
    async renderError(ctx, out) {
      const details = Object.entries(out)
        .map(([k, v]) => `<p><strong>${escapeHtml(k)}</strong>: ${escapeHtml(v)}</p>`)
        .join('');
      render(ctx, page('Sign-in failed', details));
    },
  };
}

export function createProvider(options: ProviderOptions): Provider {
  const provider = new Provider(options.urls.issuer, providerConfiguration(options));
  // oidc-provider answers its own faults as server_error and keeps the cause: logged here
  provider.on('server_error', (_ctx: KoaContextWithOIDC, error: Error) =>
    options.log.error({ err: error }, 'authorization server error'),
  );
  // the service's public address comes from PUBLIC_URL (a proxy's forwarded headers, set by oauthRoutes)
  provider.proxy = true;
  return provider;
}

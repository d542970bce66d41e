// The authorization server on fastify: oidc-provider (Koa inside) mounted under /api/oauth through
// @fastify/middie, its metadata also at the root /.well-known paths, the login and consent pages,
// the protected-resource metadata, and the bearer-token check the API (and the tool server) use.
// oidc-provider is loaded at the first OAuth request, not at start: it prints a notice on Node 20
// (docs/decisions/oauth-oidc-provider.md) and nothing else of the service needs it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type Provider from 'oidc-provider';
import type { Principal } from '../auth/principal.ts';
import { ACCEPT_PATH } from '../invitations/invitations.ts';
import type { Deps } from '../deps.ts';
import type { RateLimits } from '../net/rateLimit.ts';
import { deleteExpired } from './store.ts';
import { KEY_RELOAD_MS, loadKeys, type KeySet } from './keys.ts';
import { principalForToken, verifyAccessToken, type AccessTokenInfo } from './tokens.ts';
import {
  OAUTH_PREFIX,
  oauthUrls,
  protectedResourceMetadata,
  resourceMetadataUrl,
  type OAuthUrls,
} from './urls.ts';

export interface OAuthServer {
  /** the public addresses (known once the server listens) */
  urls(): OAuthUrls;
  /** a bearer token's holder for the API, or an AppError (UNAUTHORIZED) */
  apiPrincipal(token: string): Promise<Principal>;
  /** a bearer token checked for an audience (the tool server passes urls().mcpResource) */
  verify(token: string, audience: string): Promise<AccessTokenInfo>;
  /** the WWW-Authenticate challenge of a 401 (RFC 6750), pointing at the resource's metadata */
  challenge(which: 'api' | 'mcp', error?: 'invalid_token'): string;
}

/** A request as middie hands it on: ip is fastify's req.ip (TRUST_PROXY-aware), copied by middie. */
type RawRequest = IncomingMessage & { originalUrl?: string; ip?: string };

/** The client address rate limits count, as the API's (fastify's req.ip, which middie copies onto every raw request). */
function clientAddress(raw: RawRequest): string {
  return raw.ip ?? raw.socket.remoteAddress ?? '';
}

// (longer than a function should be, by its reason: it registers the OAuth routes, a container of
// their handlers, each short)
/** `limits`: the service's rate limits, with the sign-in groups (src/oauth/limits.ts). */
export async function oauthRoutes(
  app: FastifyInstance,
  deps: Deps,
  limits: RateLimits,
): Promise<OAuthServer> {
  // loaded here, not with the module: the admin commands import the app's modules and need none of these
  const [{ default: middie }, { interactionRoutes }, { takeFromAddress }] = await Promise.all([
    import('@fastify/middie'),
    import('./interactions.ts'),
    import('./limits.ts'),
  ]);
  let urls: OAuthUrls | undefined;
  const getUrls = () => {
    urls ??= oauthUrls(
      deps.config,
      (app.server.address() as AddressInfo | null)?.port ?? deps.config.port,
    );
    return urls;
  };

  // the provider, rebuilt when the keys in PostgreSQL change (admin oauth rotate-keys)
  type Loaded = {
    provider: Provider;
    handler: ReturnType<Provider['callback']>;
    keys: KeySet;
    checkedAt: number;
  };
  let current: Loaded | undefined;
  let loading: Promise<Loaded> | undefined;
  const load = async () => {
    if (current && Date.now() - current.checkedAt < KEY_RELOAD_MS) return current;
    loading ??= (async () => {
      const keys = await loadKeys(deps.pool);
      // what has expired (tokens, codes, sessions, registrations never used) is removed as we go
      void deleteExpired(deps.pool).catch((error: unknown) =>
        deps.log.warn({ err: error }, 'removing expired OAuth rows failed'),
      );
      if (!current || current.keys.fingerprint !== keys.fingerprint) {
        const { createProvider } = await import('./provider.ts');
        const provider = createProvider({
          pool: deps.pool,
          log: deps.log,
          urls: getUrls(),
          keys,
          policy: {
            unusedClientTtlSeconds: deps.config.oauth.unusedClientTtlHours * 3600,
            metadataDocumentMaxBytes: 5 * 1024,
            metadataDocumentHosts: deps.config.oauth.metadataDocumentHosts,
          },
          allowMetadataFetch: async (ctx) =>
            (await takeFromAddress(limits, 'register', clientAddress(ctx.req))) === 0,
        });
        current = { provider, handler: provider.callback(), keys, checkedAt: Date.now() };
      } else {
        current.checkedAt = Date.now();
      }
      return current;
    })().finally(() => {
      loading = undefined;
    });
    return loading;
  };
  const provider = async () => (await load()).provider;

  /** Hands a request to oidc-provider with the public address as the one it answers for. */
  const handOver = async (raw: RawRequest, res: ServerResponse, path: string) => {
    const u = getUrls();
    const pub = new URL(u.issuer);
    raw.headers['x-forwarded-proto'] = pub.protocol.slice(0, -1);
    raw.headers['x-forwarded-host'] = pub.host;
    // the peer's address is the socket's: a client's own X-Forwarded-For is not believed
    delete raw.headers['x-forwarded-for'];
    // oidc-provider takes its mount path from originalUrl less url
    raw.originalUrl = `${u.basePath}${OAUTH_PREFIX}${path}`;
    raw.url = path;
    (await load()).handler(raw, res);
  };

  await app.register(middie);
  app.use(OAUTH_PREFIX, (req: RawRequest, res: ServerResponse, next: (error?: unknown) => void) => {
    const path = req.url ?? '/';
    // the interaction and invitation pages are fastify routes (interactions.ts)
    if (path.startsWith('/interaction/') || /^\/invitation(\?|$)/.test(path)) return next();
    void (async () => {
      const group = limitedGroup(req.method, path);
      const wait = group ? await takeFromAddress(limits, group, clientAddress(req)) : 0;
      if (wait > 0) return tooMany(res, wait);
      await handOver(req, res, path);
    })().catch(next);
  });

  // RFC 8414 / OpenID discovery at the root, as clients look for it (the issuer has no path)
  for (const wellKnown of [
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
  ]) {
    app.get(wellKnown, async (req, reply) => {
      reply.hijack();
      await handOver(req.raw, reply.raw, wellKnown).catch((error: unknown) => {
        req.log.error({ err: error }, 'authorization server metadata failed');
        reply.raw
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'server_error' }));
      });
    });
  }
  // RFC 9728: the tool server's at the root (the specification's address) and by path, the API's by path
  const prm = (which: 'api' | 'mcp') => async () => protectedResourceMetadata(getUrls(), which);
  app.get('/.well-known/oauth-protected-resource', prm('mcp'));
  app.get('/.well-known/oauth-protected-resource/mcp', prm('mcp'));
  app.get('/.well-known/oauth-protected-resource/trpc', prm('api'));

  // an invitation link opened in a browser (a GET; the API's own accept is a POST with a key)
  app.get(ACCEPT_PATH, async (req, reply) => {
    const token = String((req.query as { token?: unknown }).token ?? '');
    return reply.redirect(
      `${getUrls().basePath}${OAUTH_PREFIX}/invitation?token=${encodeURIComponent(token)}`,
      303,
    );
  });

  await interactionRoutes(app, {
    pool: deps.pool,
    limits,
    provider,
    cookieSecrets: async () => (await load()).keys.cookieSecrets,
    urls: getUrls,
  });

  // RFC 6750: every 401 says how to authenticate, and where the API's metadata is
  app.addHook('onSend', async (req, reply, payload) => {
    // tRPC hands fastify a web Response, whose status fastify applies after this hook
    const status = payload instanceof Response ? payload.status : reply.statusCode;
    if (status === 401 && !reply.hasHeader('www-authenticate')) {
      void reply.header(
        'www-authenticate',
        challenge('api', req.headers.authorization ? 'invalid_token' : undefined),
      );
    }
    return payload;
  });

  const challenge = (which: 'api' | 'mcp', error?: 'invalid_token') =>
    `Bearer realm="royalty"${error ? `, error="${error}"` : ''}, resource_metadata="${resourceMetadataUrl(getUrls(), which)}"`;
  return {
    urls: getUrls,
    verify: (token, audience) => verifyAccessToken(deps.pool, token, audience),
    apiPrincipal: async (token) =>
      principalForToken(await verifyAccessToken(deps.pool, token, getUrls().apiResource)),
    challenge,
  };
}

/** The rate limit group of an OAuth endpoint's request: registrations, user-code tries, token requests. */
function limitedGroup(
  method: string | undefined,
  path: string,
): 'register' | 'userCode' | 'token' | undefined {
  if (method !== 'POST') return undefined;
  if (path.startsWith('/register')) return 'register';
  if (/^\/device(\?|$)/.test(path)) return 'userCode';
  if (/^\/token(\?|$)/.test(path)) return 'token';
  return undefined;
}

/** 429 in OAuth's error shape; `retryAfter`: seconds until the limit's window ends */
function tooMany(res: ServerResponse, retryAfter: number): void {
  res.writeHead(429, {
    'content-type': 'application/json',
    'retry-after': String(retryAfter),
    'cache-control': 'no-store',
  });
  res.end(
    JSON.stringify({
      error: 'too_many_requests',
      error_description: 'Too many requests from this address; try again later',
    }),
  );
}

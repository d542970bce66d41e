// Context is built in two steps: createContextInner needs no HTTP objects (tests use it with
// createCaller); createContext reads the request's headers.
import type { CreateFastifyContextOptions } from '@trpc/server/adapters/fastify';
import { credentialsFromHeaders, type Credentials, type Principal } from '../auth/principal.ts';
import { API_KEY_PREFIX, principalForApiKey, recordApiKeyUse } from '../auth/apiKeys.ts';
import { AppError } from '../errors.ts';
import type { Queryable } from '../db/pool.ts';
import type { RateLimits } from '../net/rateLimit.ts';
import type { Deps } from '../deps.ts';

/** Resolves an OAuth access token to its holder, or throws UNAUTHORIZED (src/oauth/routes.ts). */
export type BearerVerifier = (token: string) => Promise<Principal>;

/**
 * The rules of a narrower caller that a domain module issues bearer tokens for (the embed sessions
 * of src/analytics/sessions.ts). The procedure chain applies them without knowing the domain: the
 * app supplies them (src/app.ts), so this layer imports no domain module.
 */
export interface SessionTokens {
  /** what the tokens start with */
  prefix: string;
  /** the holder of a live token, or null when it is unknown or expired */
  principal(db: Queryable, token: string): Promise<Principal | null>;
  /** whether the holder may call the procedure at all (the session's organization is checked apart) */
  allows(session: NonNullable<Principal['cubeSession']>, procedure: string): boolean;
}

/** How a request's callers are resolved: absent parts refuse their kind of credential. */
export interface CallerRules {
  limits?: RateLimits | undefined;
  bearer?: BearerVerifier | undefined;
  sessions?: SessionTokens | undefined;
}

export interface Context {
  deps: Deps;
  credentials: Credentials;
  /** the client's address (behind TRUST_PROXY, the forwarded one): what per-address limits count */
  address: string;
  /** the app's rate limits (src/trpc/rateLimit.ts); none for calls made in-process (createCaller) */
  limits: RateLimits | undefined;
  /** the rules of embed-session callers; without them no call is a session's */
  sessions: SessionTokens | undefined;
  /** Resolves the caller once per HTTP request (a batch shares it); throws UNAUTHORIZED. */
  authenticate(): Promise<Principal>;
}

/**
 * `refused`: why the request's credential headers cannot be read (two values, two credentials);
 * every procedure that authenticates answers it, and `health` (no authentication) still answers.
 */
export function createContextInner(
  deps: Deps,
  credentials: Credentials,
  refused?: AppError,
  request: CallerRules & { address: string } = { address: 'in-process' },
): Context {
  let principal: Promise<Principal> | undefined;
  return {
    deps,
    credentials,
    address: request.address,
    limits: request.limits,
    sessions: request.sessions,
    authenticate() {
      principal ??= refused
        ? Promise.reject(refused)
        : resolvePrincipal(deps, credentials, request);
      return principal;
    },
  };
}

async function resolvePrincipal(
  deps: Deps,
  credentials: Credentials,
  { bearer, sessions }: CallerRules,
): Promise<Principal> {
  if (credentials.apiKey !== undefined) {
    const principal = await principalForApiKey(
      deps.pool,
      credentials.apiKey,
      credentials.organizationId,
    );
    if (!principal && /^bearer\s/i.test(credentials.apiKey)) {
      throw new AppError('INVALID_API_KEY', 'x-api-key holds the API key alone, without "Bearer "');
    }
    if (!principal) throw new AppError('INVALID_API_KEY');
    recordApiKeyUse(deps.pool, principal.apiKey!.id);
    return principal;
  }
  if (sessions && credentials.bearerToken?.startsWith(sessions.prefix)) {
    const principal = await sessions.principal(deps.pool, credentials.bearerToken);
    if (!principal) throw new AppError('INVALID_CUBE_SESSION');
    return principal;
  }
  if (credentials.bearerToken !== undefined) {
    // an API key in the wrong header: said so, rather than "unknown or expired"
    if (credentials.bearerToken.startsWith(API_KEY_PREFIX)) {
      throw new AppError(
        'INVALID_ACCESS_TOKEN',
        'API keys are sent as the x-api-key header (with x-organization-id), not as a bearer token',
      );
    }
    if (!bearer) throw new AppError('INVALID_ACCESS_TOKEN');
    return bearer(credentials.bearerToken);
  }
  throw new AppError('AUTH_REQUIRED');
}

export function contextFactory(deps: Deps, rules: CallerRules) {
  return ({ req }: CreateFastifyContextOptions): Context => {
    const request = { ...rules, address: req.ip };
    let credentials: Credentials;
    try {
      credentials = credentialsFromHeaders(req.headers, req.raw.rawHeaders);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return createContextInner(
        deps,
        { apiKey: undefined, bearerToken: undefined, organizationId: undefined },
        error,
        request,
      );
    }
    // organization ids are uuids, compared as the database writes them: lower case
    if (credentials.organizationId !== undefined)
      credentials.organizationId = credentials.organizationId.toLowerCase();
    return createContextInner(deps, credentials, undefined, request);
  };
}

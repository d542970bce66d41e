// Rate limits (docs/decisions/rate-limits.md). Each group of costly actions has a budget of
// calls per window for each principal and, RATE_LIMIT_ADDRESS_FACTOR times larger, for each client
// address; a call over either budget is refused with TOO_MANY_REQUESTS (HTTP 429 and Retry-After)
// before it does anything. The tRPC middleware (src/trpc/rateLimit.ts) counts every procedure
// call, so a batch of 50 counts 50; a route outside tRPC counts its requests with routeRateLimit.
// The sign-in surface (src/oauth) has groups of its own with the OAUTH_* budgets: failed sign-ins
// per account and per address (`auth`, counted with check/count/forgive), client registrations and
// metadata document fetches (`register`), user-code tries (`userCode`) and token requests
// (`token`) per address. The address is always the request's client address (req.ip: the peer, or
// what TRUST_PROXY's proxies forward). Counting is rate-limiter-flexible's fixed window: in this
// process's memory, or in PostgreSQL (the table rate_limits) for processes that share one database.
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { OAuthSettings, RateLimitGroup, RateLimitSettings } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import { AppError } from '../errors.ts';

/** Who a call is counted against: its principal once known (a user id) and its client address. */
export interface Caller {
  principal?: string | undefined;
  address: string;
}

/** The sign-in surface's groups (src/oauth), budgets from the OAUTH_* settings. */
export const signInGroups = ['auth', 'register', 'userCode', 'token'] as const;
export type SignInGroup = (typeof signInGroups)[number];
export type LimitGroup = RateLimitGroup | SignInGroup;

export interface RateLimits {
  /**
   * Counts one call of the group against the principal, then against the address; throws
   * TOO_MANY_REQUESTS when either budget is spent. A refused call spends no budget still open:
   * one caller over its own does not spend its address's, nor an address over its own the
   * budget of each caller behind it.
   */
  take(group: LimitGroup, caller: Caller): Promise<void>;
  /** Throws TOO_MANY_REQUESTS when either budget is spent, counting nothing (failures are counted by count). */
  check(group: LimitGroup, caller: Caller): Promise<void>;
  /** Counts one failure against the principal and the address; never refuses (check does). */
  count(group: LimitGroup, caller: Caller): Promise<void>;
  /** A success: the principal's count is cleared (the address's stays). */
  forgive(group: LimitGroup, principal: string): Promise<void>;
}

const TABLE = 'rate_limits';
const HOUR = 3600;
/** user codes tried from one address in OAUTH_LOGIN_WINDOW_SECONDS */
const USER_CODE_TRIES = 30;

/** What the message calls each group's calls, and (when it has one) its principal. */
const GROUP_NAMES: Record<LimitGroup, { calls: string; principal?: string }> = {
  urls: { calls: 'upload and download URL calls' },
  sql: { calls: 'cube.sqlQuery calls' },
  cube: { calls: 'cube.query calls' },
  exports: { calls: 'export calls' },
  invitations: { calls: 'invitation calls' },
  providers: { calls: 'market data and music data provider calls' },
  auth: { calls: 'failed sign-ins', principal: 'an account' },
  register: { calls: 'client registrations and metadata document fetches' },
  userCode: { calls: 'user code tries' },
  token: { calls: 'token requests' },
};

interface Budget {
  principal?: RateLimiterAbstract;
  address: RateLimiterAbstract;
  windowSeconds: number;
}

/** Points and window of one group; principal undefined: counted per address only. */
interface BudgetSpec {
  principal?: number;
  address: number;
  windowSeconds: number;
}

function apiBudgets(settings: RateLimitSettings): [LimitGroup, BudgetSpec][] {
  return (Object.entries(settings.perPrincipal) as [RateLimitGroup, number][])
    .filter(([, points]) => points > 0)
    .map(([group, points]) => [
      group,
      {
        principal: points,
        address: points * settings.addressFactor,
        windowSeconds: settings.windowSeconds,
      },
    ]);
}

function signInBudgets(oauth: OAuthSettings): [LimitGroup, BudgetSpec][] {
  const window = oauth.loginWindowSeconds;
  return [
    [
      'auth',
      {
        principal: oauth.loginFailuresPerAccount,
        address: oauth.loginFailuresPerAddress,
        windowSeconds: window,
      },
    ],
    ['register', { address: oauth.registrationsPerAddress, windowSeconds: HOUR }],
    ['userCode', { address: USER_CODE_TRIES, windowSeconds: window }],
    ['token', { address: oauth.tokenRequestsPerAddress, windowSeconds: 60 }],
  ];
}

function limiter(
  settings: RateLimitSettings,
  pool: Pool | undefined,
  keyPrefix: string,
  points: number,
  duration: number,
): RateLimiterAbstract {
  const options = { keyPrefix, points, duration };
  if (settings.store === 'memory') return new RateLimiterMemory(options);
  if (!pool) throw new Error('RATE_LIMIT_STORE=postgres counts in the database: a pool is needed');
  return new RateLimiterPostgres({
    ...options,
    storeClient: pool,
    storeType: 'pool',
    tableName: TABLE,
    // created by the migration 000030_rate_limits.sql, not by the library at start
    tableCreated: true,
    // a key that spent its budget is refused from memory until its window ends: calls over the
    // limit, however many, cost the database nothing
    inMemoryBlockOnConsumed: points,
    // the database unreachable (a restart): counted in this process meanwhile, neither refusing
    // every call nor letting every call through
    insuranceLimiter: new RateLimiterMemory(options),
  });
}

/**
 * The address a budget is kept for: an IPv4 address (also written IPv4-mapped, ::ffff:a.b.c.d),
 * or an IPv6 address's /64 network, since one subscriber holds a whole /64.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.split('::');
  const groups = head === '' ? [] : head.split(':');
  if (tail !== undefined) {
    const rest = tail === '' ? [] : tail.split(':');
    groups.push(...Array<string>(8 - groups.length - rest.length).fill('0'), ...rest);
  }
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

async function consume(
  budget: RateLimiterAbstract,
  key: string,
  message: (seconds: number) => string,
): Promise<void> {
  try {
    await budget.consume(key);
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    const retryAfterSeconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    throw new AppError('TOO_MANY_REQUESTS', message(retryAfterSeconds), {
      details: { retryAfterSeconds },
    });
  }
}

/** Throws TOO_MANY_REQUESTS when the key's budget is spent; counts nothing. */
async function spent(
  budget: RateLimiterAbstract,
  key: string,
  message: (seconds: number) => string,
): Promise<void> {
  const state = await budget.get(key);
  if (!state || state.consumedPoints < budget.points) return;
  const retryAfterSeconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  throw new AppError('TOO_MANY_REQUESTS', message(retryAfterSeconds), {
    details: { retryAfterSeconds },
  });
}

/**
 * The limits of settings (the API's groups) and of oauth (the sign-in surface's; without it those
 * groups are not limited); pool is where the postgres store counts.
 */
export function createRateLimits(
  settings: RateLimitSettings,
  pool?: Pool,
  oauth?: OAuthSettings,
): RateLimits {
  const budgets = new Map<LimitGroup, Budget>();
  for (const [group, spec] of [...apiBudgets(settings), ...(oauth ? signInBudgets(oauth) : [])]) {
    budgets.set(group, {
      ...(spec.principal !== undefined
        ? {
            principal: limiter(
              settings,
              pool,
              `${group}:principal`,
              spec.principal,
              spec.windowSeconds,
            ),
          }
        : {}),
      address: limiter(settings, pool, `${group}:address`, spec.address, spec.windowSeconds),
      windowSeconds: spec.windowSeconds,
    });
  }
  const messages = (group: LimitGroup, budget: Budget) => {
    const { calls, principal = 'a caller' } = GROUP_NAMES[group];
    const window = `${budget.windowSeconds} s`;
    return {
      principal: (s: number) =>
        `Too many ${calls}: at most ${budget.principal?.points} ${principal} in ${window}; retry after ${s} s`,
      address: (s: number) =>
        `Too many ${calls} from this address: at most ${budget.address.points} in ${window}; retry after ${s} s`,
    };
  };
  return {
    async take(group, caller) {
      const budget = budgets.get(group);
      if (!budget) return;
      const say = messages(group, budget);
      const principal =
        budget.principal && caller.principal !== undefined ? caller.principal : undefined;
      if (principal !== undefined) await consume(budget.principal!, principal, say.principal);
      try {
        await consume(budget.address, addressKey(caller.address), say.address);
      } catch (error) {
        // a call refused is not counted against the caller either: it did nothing
        if (principal !== undefined) await budget.principal!.reward(principal, 1).catch(() => {});
        throw error;
      }
    },
    async check(group, caller) {
      const budget = budgets.get(group);
      if (!budget) return;
      const say = messages(group, budget);
      if (budget.principal && caller.principal !== undefined)
        await spent(budget.principal, caller.principal, say.principal);
      await spent(budget.address, addressKey(caller.address), say.address);
    },
    async count(group, caller) {
      const budget = budgets.get(group);
      if (!budget) return;
      const spend = (b: RateLimiterAbstract, key: string) =>
        b.consume(key).then(
          () => {},
          (error: unknown) => {
            if (!(error instanceof RateLimiterRes)) throw error;
          },
        );
      await Promise.all([
        ...(budget.principal && caller.principal !== undefined
          ? [spend(budget.principal, caller.principal)]
          : []),
        spend(budget.address, addressKey(caller.address)),
      ]);
    },
    async forgive(group, principal) {
      await budgets.get(group)?.principal?.delete(principal);
    },
  };
}

/** The Retry-After of a refusal (seconds), or undefined for any other error. */
export function retryAfterSeconds(error: unknown): number | undefined {
  if (!(error instanceof AppError) || error.errorCode !== 'TOO_MANY_REQUESTS') return undefined;
  const seconds = error.details?.retryAfterSeconds;
  return typeof seconds === 'number' ? seconds : undefined;
}

/**
 * An onRequest hook for an HTTP route outside tRPC (the invitation link, OAuth's endpoints):
 * each request is one call of the group from its address, refused before its body is read.
 */
export function routeRateLimit(limits: RateLimits, group: LimitGroup) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      await limits.take(group, { address: req.ip });
    } catch (error) {
      const seconds = retryAfterSeconds(error);
      if (seconds !== undefined) void reply.header('retry-after', String(seconds));
      throw error;
    }
  };
}

// Rate limits (README, Decisions: "Rate limits"). Each group of costly actions has a budget of
// calls per window for each principal and, RATE_LIMIT_ADDRESS_FACTOR times larger, for each client
// address; a call over either budget is refused with TOO_MANY_REQUESTS (HTTP 429 and Retry-After)
// before it does anything. The tRPC middleware (src/trpc/rateLimit.ts) counts every procedure
// call, so a batch of 50 counts 50; a route outside tRPC counts its requests with routeRateLimit.
// Counting is rate-limiter-flexible's fixed window: in this process's memory, or in PostgreSQL
// (the table rate_limits) for processes that share one database.
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitGroup, RateLimitSettings } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import { AppError } from '../errors.ts';

/** Who a call is counted against: its principal once known (a user id) and its client address. */
export interface Caller {
  principal?: string | undefined;
  address: string;
}

export interface RateLimits {
  /**
   * Counts one call of the group against the principal, then against the address; throws
   * TOO_MANY_REQUESTS when either budget is spent. A refused call spends no budget still open:
   * one caller over its own does not spend its address's, nor an address over its own the
   * budget of each caller behind it.
   */
  take(group: RateLimitGroup, caller: Caller): Promise<void>;
}

const TABLE = 'rate_limits';

/** What the message calls each group's calls. */
const GROUP_NAMES: Record<RateLimitGroup, string> = {
  urls: 'upload and download URL',
  sql: 'cube.sqlQuery',
  cube: 'cube.query',
  exports: 'export',
  invitations: 'invitation',
  providers: 'market data and music data provider',
};

interface Budget {
  principal: RateLimiterAbstract;
  address: RateLimiterAbstract;
}

function limiter(settings: RateLimitSettings, pool: Pool | undefined, keyPrefix: string, points: number): RateLimiterAbstract {
  const options = { keyPrefix, points, duration: settings.windowSeconds };
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
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`;
}

async function consume(budget: RateLimiterAbstract, key: string, message: (seconds: number) => string): Promise<void> {
  try {
    await budget.consume(key);
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    const retryAfterSeconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    throw new AppError('TOO_MANY_REQUESTS', message(retryAfterSeconds), { details: { retryAfterSeconds } });
  }
}

/** The limits of settings; pool is where the postgres store counts. */
export function createRateLimits(settings: RateLimitSettings, pool?: Pool): RateLimits {
  const budgets = new Map<RateLimitGroup, Budget>();
  for (const [group, points] of Object.entries(settings.perPrincipal) as [RateLimitGroup, number][]) {
    if (points === 0) continue;
    budgets.set(group, {
      principal: limiter(settings, pool, `${group}:principal`, points),
      address: limiter(settings, pool, `${group}:address`, points * settings.addressFactor),
    });
  }
  const window = `${settings.windowSeconds} s`;
  return {
    async take(group, caller) {
      const budget = budgets.get(group);
      if (!budget) return;
      const name = GROUP_NAMES[group];
      const { principal } = caller;
      if (principal !== undefined) {
        await consume(budget.principal, principal, (s) => `Too many ${name} calls: at most ${budget.principal.points} a caller in ${window}; retry after ${s} s`);
      }
      try {
        await consume(budget.address, addressKey(caller.address), (s) => `Too many ${name} calls from this address: at most ${budget.address.points} in ${window}; retry after ${s} s`);
      } catch (error) {
        // a call refused is not counted against the caller either: it did nothing
        if (principal !== undefined) await budget.principal.reward(principal, 1).catch(() => {});
        throw error;
      }
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
export function routeRateLimit(limits: RateLimits, group: RateLimitGroup) {
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

// The sign-in surface's rate limits, counted by the service's one limiter (src/net/rateLimit.ts,
// groups auth, register, userCode and token; RATE_LIMIT_STORE=postgres shares them between
// processes). Failed sign-ins count against the account and the client address, checked before a
// password is read; a success clears the account's count. Every address here is the request's
// client address as the API sees it (req.ip: the peer, or what TRUST_PROXY's proxies forward).
import { retryAfterSeconds, type LimitGroup, type RateLimits } from '../net/rateLimit.ts';

const account = (email: string) => email.trim().toLowerCase();

/** 0 when fn passed; the seconds to wait when it was refused by a rate limit (other errors go on). */
async function waitOf(fn: () => Promise<void>): Promise<number> {
  try {
    await fn();
    return 0;
  } catch (error) {
    const seconds = retryAfterSeconds(error);
    if (seconds === undefined) throw error;
    return seconds;
  }
}

/** Seconds until another sign-in may be tried for this account from this address; 0: now. */
export function signInWait(limits: RateLimits, email: string, address: string): Promise<number> {
  return waitOf(() => limits.check('auth', { principal: account(email), address }));
}

export function signInFailed(limits: RateLimits, email: string, address: string): Promise<void> {
  return limits.count('auth', { principal: account(email), address });
}

export function signInSucceeded(limits: RateLimits, email: string): Promise<void> {
  return limits.forgive('auth', account(email));
}

/** Counts one request of the group from the address: 0, or the seconds to wait when refused. */
export function takeFromAddress(
  limits: RateLimits,
  group: LimitGroup,
  address: string,
): Promise<number> {
  return waitOf(() => limits.take(group, { address }));
}

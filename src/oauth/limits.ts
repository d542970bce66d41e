// Rate limits of the sign-in surface, kept in this process's memory (rate-limiter-flexible): failed
// logins per account and per address, registrations and metadata fetches per address, user-code
// guesses and token requests per address. A failed login counts against both; a success clears the account's count.
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { OAuthSettings } from '../config.ts';

export interface OAuthLimits {
  /** seconds until another login may be tried for this account or from this address; 0: now */
  loginWait(email: string, address: string): Promise<number>;
  loginFailed(email: string, address: string): Promise<void>;
  loginSucceeded(email: string): Promise<void>;
  /** false: this address registered (or had documents fetched) too often this hour */
  takeRegistration(address: string): Promise<boolean>;
  /** false: this address tried too many user codes */
  takeUserCodeTry(address: string): Promise<boolean>;
  /** false: this address asked the token endpoint too often this minute */
  takeTokenRequest(address: string): Promise<boolean>;
}

const USER_CODE_TRIES_PER_WINDOW = 30;

async function take(limiter: RateLimiterMemory, key: string): Promise<boolean> {
  try {
    await limiter.consume(key);
    return true;
  } catch {
    return false;
  }
}

export function oauthLimits(settings: OAuthSettings): OAuthLimits {
  const duration = settings.loginWindowSeconds;
  const perAccount = new RateLimiterMemory({ keyPrefix: 'account', points: settings.loginFailuresPerAccount, duration });
  const perAddress = new RateLimiterMemory({ keyPrefix: 'address', points: settings.loginFailuresPerAddress, duration });
  const registrations = new RateLimiterMemory({ keyPrefix: 'register', points: settings.registrationsPerAddress, duration: 3600 });
  const userCodes = new RateLimiterMemory({ keyPrefix: 'usercode', points: USER_CODE_TRIES_PER_WINDOW, duration });
  const tokenRequests = new RateLimiterMemory({ keyPrefix: 'token', points: settings.tokenRequestsPerAddress, duration: 60 });
  const account = (email: string) => email.trim().toLowerCase();
  const wait = async (limiter: RateLimiterMemory, key: string, points: number) => {
    const state = await limiter.get(key);
    return state && state.consumedPoints >= points ? Math.ceil(state.msBeforeNext / 1000) : 0;
  };
  return {
    async loginWait(email, address) {
      return Math.max(
        await wait(perAccount, account(email), settings.loginFailuresPerAccount),
        await wait(perAddress, address, settings.loginFailuresPerAddress),
      );
    },
    async loginFailed(email, address) {
      await Promise.all([take(perAccount, account(email)), take(perAddress, address)]);
    },
    async loginSucceeded(email) {
      await perAccount.delete(account(email));
    },
    takeRegistration: (address) => take(registrations, address),
    takeUserCodeTry: (address) => take(userCodes, address),
    takeTokenRequest: (address) => take(tokenRequests, address),
  };
}

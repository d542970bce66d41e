// Who `royalty` calls as, and where. Credentials, in order: ROYALTY_API_KEY with
// ROYALTY_ORGANIZATION_ID; the stored login of the profile (`royalty login`). The server:
// --url, ROYALTY_URL, the profile's. The organization: --org, ROYALTY_ORGANIZATION_ID, the
// profile's (chosen at login).
import { createRoyaltyClient, type RoyaltyClient, type TokenProvider } from '../client/index.ts';
import { refreshTokens } from './oauth.ts';
import { configFile, ProfileStore, type StoredTokens } from './profiles.ts';
import { UsageError } from './output.ts';

export interface GlobalOptions {
  url?: string;
  profile?: string;
  org?: string;
}

/** a token this close to its expiry is refreshed before use */
const REFRESH_MARGIN_MS = 60_000;

export function profileStore(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
): ProfileStore {
  return new ProfileStore(configFile(env), options.profile ?? env.ROYALTY_PROFILE ?? 'default');
}

export async function serverUrl(
  options: GlobalOptions,
  store: ProfileStore,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const url = options.url ?? env.ROYALTY_URL ?? (await store.read()).url;
  if (!url)
    throw new UsageError(
      'No server: pass --url, set ROYALTY_URL, or run royalty login --url <URL>',
    );
  try {
    return new URL(url).href.replace(/\/+$/, '');
  } catch {
    throw new UsageError(`The server URL ${url} is not a URL`);
  }
}

/**
 * The stored login's tokens: refreshed when they expire within a minute (or when the server said
 * UNAUTHORIZED), one process at a time: under the config file's lock, the tokens are read again,
 * and a refresh another process made meanwhile is used instead of refreshing twice.
 */
export class StoredLogin implements TokenProvider {
  private tokens: StoredTokens;

  constructor(
    private readonly store: ProfileStore,
    private readonly url: string,
    tokens: StoredTokens,
  ) {
    this.tokens = tokens;
  }

  async accessToken(): Promise<string> {
    if (this.tokens.expiresAt - Date.now() < REFRESH_MARGIN_MS) await this.renew(false);
    return this.tokens.accessToken;
  }

  async refresh(): Promise<void> {
    await this.renew(true);
  }

  private async renew(force: boolean): Promise<void> {
    const used = this.tokens.accessToken;
    await this.store.locked(async () => {
      const current = (await this.store.read()).tokens;
      if (!current) throw new UsageError('Logged out meanwhile: run royalty login');
      const renewedElsewhere = current.accessToken !== used;
      if (renewedElsewhere && current.expiresAt - Date.now() >= REFRESH_MARGIN_MS) {
        this.tokens = current;
        return;
      }
      if (!force && current.expiresAt - Date.now() >= REFRESH_MARGIN_MS) return;
      if (!current.refreshToken) throw new UsageError('The login expired: run royalty login');
      let fresh: StoredTokens;
      try {
        fresh = await refreshTokens(this.url, current.refreshToken);
      } catch (error) {
        throw new UsageError(
          `The login could not be renewed (${(error as Error).message}): run royalty login`,
        );
      }
      await this.store.update((profile) => ({ ...profile, tokens: fresh }));
      this.tokens = fresh;
    });
  }
}

export interface Session {
  client: RoyaltyClient;
  url: string;
  /** how the calls are authenticated */
  source: 'api-key' | 'login';
  store: ProfileStore;
}

export async function openSession(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Session> {
  const store = profileStore(options, env);
  const url = await serverUrl(options, store, env);
  const apiKey = env.ROYALTY_API_KEY;
  if (apiKey) {
    const organizationId = options.org ?? env.ROYALTY_ORGANIZATION_ID;
    if (!organizationId)
      throw new UsageError(
        'ROYALTY_API_KEY needs ROYALTY_ORGANIZATION_ID (or --org): a key is sent with its organization',
      );
    return {
      client: createRoyaltyClient({ url, apiKey, organizationId }),
      url,
      source: 'api-key',
      store,
    };
  }
  const profile = await store.read();
  if (!profile.tokens)
    throw new UsageError(
      `Not logged in${store.name === 'default' ? '' : ` (profile ${store.name})`}: run royalty login, or set ROYALTY_API_KEY and ROYALTY_ORGANIZATION_ID`,
    );
  const organizationId = options.org ?? env.ROYALTY_ORGANIZATION_ID ?? profile.organizationId;
  const client = createRoyaltyClient({
    url,
    tokenProvider: new StoredLogin(store, url, profile.tokens),
    ...(organizationId ? { organizationId } : {}),
  });
  return { client, url, source: 'login', store };
}

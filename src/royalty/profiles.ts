// Where `royalty` keeps its logins: one JSON file in the user's config directory (env-paths:
// $XDG_CONFIG_HOME/royalty on Linux, ~/Library/Preferences/royalty on macOS, %APPDATA%\royalty on
// Windows; ROYALTY_CONFIG_DIR overrides), mode 0600 in a 0700 directory, with named profiles, one
// per server. Writers replace the file atomically (a temporary file renamed over it); a token
// refresh holds a lock on it (proper-lockfile), so that two processes never refresh at once (a
// refresh token is single use: the second refresh would revoke the whole login).
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import envPaths from 'env-paths';
import lockfile from 'proper-lockfile';

export interface StoredTokens {
  accessToken: string;
  refreshToken?: string;
  /** epoch milliseconds */
  expiresAt: number;
}

export interface Profile {
  url?: string;
  organizationId?: string;
  email?: string;
  tokens?: StoredTokens;
}

interface ConfigFile {
  profiles: Record<string, Profile>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ROYALTY_CONFIG_DIR ?? envPaths('royalty', { suffix: '' }).config;
}

export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'config.json');
}

async function readConfig(file: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<ConfigFile>;
  // a profile name is a key of a plain object: no prototype keys
  return {
    profiles: Object.assign(Object.create(null) as Record<string, Profile>, parsed.profiles ?? {}),
  };
}

async function writeConfig(file: string, config: ConfigFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // a file made by an older version or by hand: 0600 all the same
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

export class ProfileStore {
  constructor(
    readonly file: string,
    readonly name: string,
  ) {}

  async read(): Promise<Profile> {
    return (await readConfig(this.file)).profiles[this.name] ?? {};
  }

  async names(): Promise<string[]> {
    return Object.keys((await readConfig(this.file)).profiles).sort();
  }

  /** Changes this profile (read, changed, written back; other profiles untouched). */
  async update(change: (profile: Profile) => Profile | undefined): Promise<void> {
    const config = await readConfig(this.file);
    const next = change(config.profiles[this.name] ?? {});
    if (next === undefined) delete config.profiles[this.name];
    else config.profiles[this.name] = next;
    await writeConfig(this.file, config);
  }

  /** Runs `fn` holding the file's lock (waiting for another process's refresh to end). */
  async locked<T>(fn: () => Promise<T>): Promise<T> {
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const release = await lockfile.lock(path.dirname(this.file), {
      lockfilePath: `${this.file}.lock`,
      stale: 30_000,
      retries: { retries: 60, minTimeout: 100, maxTimeout: 1000 },
    });
    try {
      return await fn();
    } finally {
      await release();
    }
  }
}

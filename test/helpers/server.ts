// A real service for one test file: its own database (cloned from the template), its own S3
// bucket (test/helpers/objectStore.ts), real HTTP on a free port.
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TaskList } from 'graphile-worker';
import type { Config } from '../../src/config.ts';
import { startRuntime, type Role, type Runtime } from '../../src/runtime.ts';
import { freePort } from '../../src/db/embedded.ts';
import type { Deps } from '../../src/deps.ts';
import { createTestDatabase } from './db.ts';
import { testObjectStore } from './objectStore.ts';
import { testConfig } from './testConfig.ts';
import { TrpcClient } from './trpc.ts';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface TestServer {
  url: string;
  config: Config;
  deps: Deps;
  runtime: Runtime;
  /** a client with no credentials */
  anonymous: TrpcClient;
  client(headers: Record<string, string>): TrpcClient;
}

/**
 * A service of its own for a test file: its own database and data directory. `store: 'configured'`
 * (the default) gives it an S3 bucket of its own, configured as an operator's S3 is;
 * `store: 'default'` leaves S3 unset, as a new install runs: the embedded store behind the
 * /objects proxy, with PUBLIC_URL the address it listens on (a port chosen first).
 */
export async function startTestServer(
  t: Teardown,
  opts: {
    role?: Role;
    env?: Record<string, string>;
    taskList?: (deps: Deps) => TaskList;
    store?: 'configured' | 'default';
  } = {},
): Promise<TestServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-test-'));
  const db = await createTestDatabase();
  const s3 = opts.store === 'default' ? undefined : await testObjectStore(dir);
  const port = opts.store === 'default' ? await freePort() : 0;
  const config = testConfig({ databaseUrl: db.url, dataDir: dir, s3, port, env: opts.env });
  const runtime = await startRuntime(
    config,
    opts.role ?? 'api',
    opts.taskList ? { taskList: opts.taskList } : {},
  );
  t.teardown(async () => {
    await runtime.stop();
    await s3?.stop();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });
  // the address listened on (PUBLIC_URL, the runtime's url, may name a reverse proxy in front);
  // none in the roles without HTTP (worker, migrate)
  const address = runtime.app?.server.address() as AddressInfo | null | undefined;
  const url = address ? `http://127.0.0.1:${address.port}` : runtime.url!;
  return {
    url,
    config,
    deps: runtime.deps,
    runtime,
    anonymous: new TrpcClient(url, {}),
    client: (headers) => new TrpcClient(url, headers),
  };
}

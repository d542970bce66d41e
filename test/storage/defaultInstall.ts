// A service as the default install runs it: no S3_ENDPOINT, so the embedded s3rver on its unix
// socket behind the /objects proxy, on a known port with PUBLIC_URL set, over real HTTP.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startRuntime } from '../../src/runtime.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestServer } from '../helpers/server.ts';
import { TrpcClient } from '../helpers/trpc.ts';

interface Teardown {
  teardown(fn: () => unknown): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function startDefaultInstall(t: Teardown, env: Record<string, string> = {}): Promise<TestServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-test-'));
  const db = await createTestDatabase();
  const port = await freePort();
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '5',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dir,
    LOG_LEVEL: (process.env.TEST_LOG_LEVEL as 'silent' | undefined) ?? 'silent',
    DEMO_BOOTSTRAP: 'false',
    WORKER_POLL_INTERVAL_MS: '100',
    THREADS_WARM: '0',
    NODE_ENV: 'test',
    ...env,
  });
  const runtime = await startRuntime(config, 'serve');
  t.teardown(async () => {
    await runtime.stop();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });
  // the address listened on (PUBLIC_URL may name a reverse proxy in front)
  const url = `http://127.0.0.1:${port}`;
  return { url, config, deps: runtime.deps, runtime, anonymous: new TrpcClient(url, {}), client: (headers) => new TrpcClient(url, headers) };
}

// A service as the default install runs it: no S3_ENDPOINT, so the embedded s3rver on its unix
// socket behind the /objects proxy, on a known port with PUBLIC_URL set, over real HTTP.
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export function startDefaultInstall(
  t: Teardown,
  env: Record<string, string> = {},
): Promise<TestServer> {
  return startTestServer(t, { role: 'serve', store: 'default', env });
}

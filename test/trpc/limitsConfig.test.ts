// The settings of rate limits and slow-client timeouts (src/config.ts): defaults, and values that
// would misbehave refused at start, naming the variable.
import t from 'tap';
import { loadConfig } from '../../src/config.ts';

t.test('defaults', async (t) => {
  const c = loadConfig({});
  t.same(c.http, {
    headersTimeoutMs: 15_000,
    requestTimeoutMs: 60_000,
    uploadTimeoutMs: 3_600_000,
    idleTimeoutMs: 120_000,
    keepAliveTimeoutMs: 10_000,
  });
  t.equal(c.trustProxy, undefined);
  t.same(c.rateLimits, {
    store: 'memory',
    windowSeconds: 60,
    addressFactor: 4,
    perPrincipal: { urls: 120, sql: 120, cube: 600, exports: 30, invitations: 30, providers: 120 },
  });
});

t.test('timeouts that contradict each other or the analytics window are refused', async (t) => {
  t.throws(
    () => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000' }),
    /HTTP_HEADERS_TIMEOUT_MS must not be above HTTP_REQUEST_TIMEOUT_MS/,
  );
  t.throws(
    () => loadConfig({ HTTP_IDLE_TIMEOUT_MS: '25000' }),
    /HTTP_IDLE_TIMEOUT_MS must be above CUBE_SYNC_TIMEOUT_MS/,
  );
  t.equal(
    loadConfig({ HTTP_IDLE_TIMEOUT_MS: '2000', CUBE_SYNC_TIMEOUT_MS: '1000' }).http.idleTimeoutMs,
    2000,
  );
  t.throws(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' }), /HTTP_REQUEST_TIMEOUT_MS/);
});

t.test('TRUST_PROXY takes addresses and CIDR ranges only', async (t) => {
  t.equal(
    loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 127.0.0.1,::1 ' }).trustProxy,
    '10.0.0.0/8,127.0.0.1,::1',
  );
  t.equal(loadConfig({ TRUST_PROXY: 'fd00::/8' }).trustProxy, 'fd00::/8');
  for (const bad of ['proxy.local', '10.0.0.0/33', '10.0.0.1/8/1', 'true', '2'])
    t.throws(
      () => loadConfig({ TRUST_PROXY: bad }),
      /TRUST_PROXY: .* is not an IP address or CIDR range/,
      bad,
    );
});

t.test('rate limits: a store of the two, 0 is no limit', async (t) => {
  t.throws(() => loadConfig({ RATE_LIMIT_STORE: 'redis' }), /RATE_LIMIT_STORE/);
  t.throws(() => loadConfig({ RATE_LIMIT_WINDOW_SECONDS: '0' }), /RATE_LIMIT_WINDOW_SECONDS/);
  t.equal(loadConfig({ RATE_LIMIT_URLS: '0' }).rateLimits.perPrincipal.urls, 0);
});

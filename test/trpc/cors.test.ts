// Cross-origin calls (CORS): none unless CORS_ORIGINS names origins; an allowed origin gets its
// own origin back (Vary: Origin), a preflight 204 with the methods and headers of the transport
// rules; credentials (cookies) are never allowed, with `*` or otherwise.
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const APP = 'https://app.example.com';
const listed = await startTestServer(t, { env: { CORS_ORIGINS: `${APP}, http://localhost:5173` } });
const off = await startTestServer(t);
const any = await startTestServer(t, { env: { CORS_ORIGINS: '*' } });
const owner = await newOrganization(listed);

async function call(
  srv: TestServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  const res = await fetch(srv.url + path, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}

const preflight = (origin: string, method = 'POST') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': 'content-type, x-api-key, x-organization-id',
});

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
];
const corsHeadersOf = (headers: Headers) =>
  Object.fromEntries(CORS_HEADERS.map((h) => [h, headers.get(h)]));

t.test(
  'an allowed origin: the preflight is answered, the call carries the origin back',
  async (t) => {
    for (const origin of [APP, 'http://localhost:5173']) {
      const pre = await call(
        listed,
        'OPTIONS',
        '/trpc/rightsholder.create?batch=1',
        preflight(origin),
      );
      t.equal(pre.status, 204, origin);
      t.equal(pre.body, undefined);
      t.same(corsHeadersOf(pre.headers), {
        'access-control-allow-origin': origin,
        'access-control-allow-credentials': null,
        'access-control-allow-methods': 'GET, POST, HEAD',
        'access-control-allow-headers':
          'content-type, x-api-key, x-organization-id, authorization, x-request-id',
      });
      t.equal(pre.headers.get('access-control-max-age'), '600');
      t.match(pre.headers.get('vary'), /\bOrigin\b/);
    }
    const created = await call(
      listed,
      'POST',
      '/trpc/rightsholder.create?batch=1',
      {
        origin: APP,
        'content-type': 'application/json',
        'x-api-key': owner.apiKey,
        'x-organization-id': owner.organizationId,
      },
      JSON.stringify({ 0: { organizationId: owner.organizationId, name: 'Cross Origin' } }),
    );
    t.equal(created.status, 200);
    t.equal(created.body[0].result.data.name, 'Cross Origin');
    t.equal(created.headers.get('access-control-allow-origin'), APP);
    t.equal(created.headers.get('access-control-allow-credentials'), null);
    t.equal(created.headers.get('access-control-expose-headers'), 'x-request-id, retry-after');
    // tRPC sets its own Vary: Origin is kept in it
    t.equal(created.headers.get('vary'), 'trpc-accept, accept, Origin');
    // errors too: a page can read why its call failed
    const denied = await call(listed, 'GET', '/trpc/user.currentUser?batch=1', { origin: APP });
    t.same([denied.status, denied.body[0].error.data.errorCode], [401, 'AUTH_REQUIRED']);
    t.equal(denied.headers.get('access-control-allow-origin'), APP);
    // the public schema files as well (cacheable, so Vary matters there)
    const docs = await call(listed, 'GET', '/docs/schemas.json', { origin: APP });
    t.same(
      [docs.status, docs.headers.get('access-control-allow-origin'), docs.headers.get('vary')],
      [200, APP, 'Origin'],
    );
  },
);

t.test(
  'another origin gets no CORS headers: its preflight is refused in the envelope',
  async (t) => {
    for (const origin of [
      'https://evil.example',
      'https://app.example.com.evil.example',
      'http://app.example.com',
      'null',
    ]) {
      const pre = await call(
        listed,
        'OPTIONS',
        '/trpc/rightsholder.create?batch=1',
        preflight(origin),
      );
      t.equal(pre.status, 400, origin);
      t.same(pre.body[0].error.data, {
        code: 'BAD_REQUEST',
        errorCode: 'METHOD_NOT_SUPPORTED',
        httpStatus: 400,
        path: 'rightsholder.create',
      });
      t.equal(
        pre.body[0].error.message,
        `Cross-origin calls from ${origin} are not allowed (CORS_ORIGINS)`,
      );
      t.same(
        corsHeadersOf(pre.headers),
        Object.fromEntries(CORS_HEADERS.map((h) => [h, null])),
        origin,
      );
      // a call the browser would not let the page read: served (the credential decides), without CORS headers
      const res = await call(listed, 'GET', '/trpc/health?batch=1', { origin });
      t.same(
        [res.status, res.headers.get('access-control-allow-origin'), res.headers.get('vary')],
        [200, null, 'trpc-accept, accept, Origin'],
        origin,
      );
    }
    // a plain OPTIONS (no preflight) is still the wrong method
    const plain = await call(listed, 'OPTIONS', '/trpc/health', {});
    t.same(
      [plain.status, plain.body[0].error.data.errorCode, plain.headers.get('allow')],
      [400, 'METHOD_NOT_SUPPORTED', 'GET, POST'],
    );
  },
);

t.test('CORS_ORIGINS unset: no cross-origin calls, no CORS headers at all', async (t) => {
  const pre = await call(off, 'OPTIONS', '/trpc/health?batch=1', preflight(APP, 'GET'));
  t.same([pre.status, pre.body[0].error.data.errorCode], [400, 'METHOD_NOT_SUPPORTED']);
  const res = await call(off, 'GET', '/trpc/health?batch=1', { origin: APP });
  t.same(corsHeadersOf(res.headers), Object.fromEntries(CORS_HEADERS.map((h) => [h, null])));
  t.equal(res.headers.get('vary'), 'trpc-accept, accept');
});

t.test('CORS_ORIGINS=*: any origin, answered with *, never with credentials', async (t) => {
  const pre = await call(
    any,
    'OPTIONS',
    '/trpc/user.currentUser?batch=1',
    preflight('https://anyone.example', 'GET'),
  );
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
  t.equal(pre.headers.get('access-control-allow-credentials'), null);
  const res = await call(any, 'GET', '/trpc/health?batch=1', { origin: 'https://anyone.example' });
  t.same(
    [res.headers.get('access-control-allow-origin'), res.headers.get('vary')],
    ['*', 'trpc-accept, accept'],
  );
  // `null` (sandboxed frames, file: pages) is never an allowed origin
  const sandboxed = await call(any, 'OPTIONS', '/trpc/health?batch=1', preflight('null', 'GET'));
  t.equal(sandboxed.status, 400);
});

t.test('CORS_ORIGINS is checked at start: origins only', async (t) => {
  t.same(
    loadConfig({
      CORS_ORIGINS: 'https://App.Example.com/, https://a.example:443,http://localhost:5173',
    }).corsOrigins,
    ['https://app.example.com', 'https://a.example', 'http://localhost:5173'],
  );
  t.same(loadConfig({}).corsOrigins, []);
  t.same(loadConfig({ CORS_ORIGINS: ' * ' }).corsOrigins, ['*']);
  for (const [value, message] of [
    ['*, https://a.example', /CORS_ORIGINS: `\*` allows every origin and stands alone/],
    ['null', /CORS_ORIGINS: null is not an origin/],
    ['https://a.example/app', /CORS_ORIGINS: https:\/\/a.example\/app is not an origin/],
    ['https://user:pw@a.example', /is not an origin/],
    ['ftp://a.example', /is not an origin/],
    ['a.example', /is not an origin/],
  ] as const) {
    t.throws(() => loadConfig({ CORS_ORIGINS: value }), message, value);
  }
});

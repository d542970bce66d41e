// Requests that could be read two ways are refused, never read one way silently: a credential or
// organization header sent twice, an API key together with a bearer token; a query's input is
// checked for prototype-poisoning keys exactly like a mutation's body; a batch's input has only
// call indexes for keys; a batch mixing queries and mutations names them. Every answer carries its
// request id.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { newOrganization } from '../helpers/principals.ts';
import { rawRequest, type RawResponse } from '../helpers/rawHttp.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Alpha Records');
const other = await newOrganization(srv, 'Beta Music');

/**
 * A request with header lines exactly as given: `headers` is a list of [name, value] lines,
 * repeated names included (a name given twice becomes an array: Node sends a line per element).
 */
function rawLines(
  method: string,
  pathAndQuery: string,
  headers: [string, string][],
  body?: string,
): Promise<RawResponse> {
  const byName: Record<string, string[]> = {};
  for (const [name, value] of headers) (byName[name] ??= []).push(value);
  return rawRequest(srv.url, method, pathAndQuery, byName, body);
}

/** data and message of the only error of a batch answer */
function only(res: RawResponse): { status: number; data: unknown; message: string } {
  if (!Array.isArray(res.body) || res.body.length !== 1)
    throw new Error(`not a one-element batch answer: ${JSON.stringify(res.body)}`);
  return { status: res.status, data: res.body[0].error?.data, message: res.body[0].error?.message };
}

/** the errorCode of a request that could be read two ways (src/auth/principal.ts AMBIGUOUS_REQUEST) */
const AMBIGUOUS = 'AMBIGUOUS_REQUEST';

const badRequest = (errorCode: string, path = 'user.currentUser') => ({
  code: 'BAD_REQUEST',
  errorCode,
  httpStatus: 400,
  path,
});

t.test('x-organization-id sent twice is refused as such, not as "not a uuid"', async (t) => {
  for (const second of [owner.organizationId, other.organizationId]) {
    const res = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
      ['x-api-key', owner.apiKey],
      ['x-organization-id', owner.organizationId],
      ['x-organization-id', second],
    ]);
    const e = only(res);
    t.same([e.status, e.data], [400, badRequest('ORGANIZATION_HEADER_REQUIRED')], second);
    t.equal(
      e.message,
      'The x-organization-id header was sent more than once (or holds a list): send exactly one organization id (a uuid)',
    );
  }
  // one line holding a list is the same ambiguity
  const list = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-organization-id', `${owner.organizationId}, ${other.organizationId}`],
  ]);
  t.same(only(list).data, badRequest('ORGANIZATION_HEADER_REQUIRED'));
  t.match(only(list).message, /sent more than once/);
  // one well-formed header still works, and a single malformed one still says what is wrong
  const one = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-organization-id', owner.organizationId],
  ]);
  t.same([one.status, one.body[0].result.data.email], [200, owner.email]);
  const notUuid = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-organization-id', 'acme'],
  ]);
  t.same(
    [only(notUuid).data, only(notUuid).message],
    [badRequest('ORGANIZATION_HEADER_REQUIRED'), 'x-organization-id must be a uuid'],
  );
});

t.test('two credentials are refused, whichever would have won', async (t) => {
  const bothKinds = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-organization-id', owner.organizationId],
    ['authorization', 'Bearer some-token'],
  ]);
  t.same([only(bothKinds).status, only(bothKinds).data], [400, badRequest(AMBIGUOUS)]);
  t.equal(
    only(bothKinds).message,
    'Send one credential, not both: x-api-key (with x-organization-id) or Authorization: Bearer <token>',
  );
  // case of the scheme does not matter
  const lower = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-organization-id', owner.organizationId],
    ['authorization', 'bearer some-token'],
  ]);
  t.same(only(lower).data, badRequest(AMBIGUOUS));

  // two keys, valid ones of two users: neither is taken
  const twoKeys = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-api-key', other.apiKey],
    ['x-organization-id', owner.organizationId],
  ]);
  t.same([only(twoKeys).status, only(twoKeys).data], [400, badRequest(AMBIGUOUS)]);
  t.equal(
    only(twoKeys).message,
    'The x-api-key header was sent more than once (or holds a list): send exactly one credential',
  );
  t.notMatch(JSON.stringify(twoKeys.body), owner.apiKey.slice(3), 'the keys are not echoed');

  // Node keeps only the first of two Authorization lines: refused all the same
  const twoBearers = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['authorization', 'Bearer a'],
    ['authorization', 'Bearer b'],
  ]);
  t.same(only(twoBearers).data, badRequest(AMBIGUOUS));
  t.equal(
    only(twoBearers).message,
    'The Authorization header was sent more than once (or holds a list): send exactly one credential',
  );

  // the same through the mutation path, and in a batch every call says so
  const mutation = await rawLines(
    'POST',
    '/trpc/rightsholder.create,rightsholder.create?batch=1',
    [
      ['content-type', 'application/json'],
      ['x-api-key', owner.apiKey],
      ['x-organization-id', owner.organizationId],
      ['authorization', 'Bearer x'],
    ],
    JSON.stringify({
      0: { organizationId: owner.organizationId, name: 'A' },
      1: { organizationId: owner.organizationId, name: 'B' },
    }),
  );
  t.equal(mutation.status, 400);
  t.same(
    mutation.body.map((r: any) => r.error.data),
    [badRequest(AMBIGUOUS, 'rightsholder.create'), badRequest(AMBIGUOUS, 'rightsholder.create')],
  );
  const list = await owner.client.query('rightsholder.list', {
    organizationId: owner.organizationId,
  });
  t.equal(list.data.pagination.total, 0, 'nothing was created');

  // health needs no credential, so ambiguous ones do not stop it
  const health = await rawLines('GET', '/trpc/health?batch=1', [
    ['x-api-key', owner.apiKey],
    ['authorization', 'Bearer x'],
  ]);
  t.same([health.status, health.body[0].result.data.status], [200, 'ok']);
});

t.test('an Authorization header of another scheme: what is accepted instead', async (t) => {
  const basic = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['authorization', 'Basic dXNlcjpwYXNz'],
  ]);
  t.same(
    [basic.status, only(basic).data],
    [
      401,
      {
        code: 'UNAUTHORIZED',
        errorCode: 'AUTH_REQUIRED',
        httpStatus: 401,
        path: 'user.currentUser',
      },
    ],
  );
  t.equal(
    only(basic).message,
    'The Authorization scheme Basic is not accepted: send x-api-key or Authorization: Bearer <token>',
  );
  const empty = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['authorization', 'Bearer   '],
  ]);
  t.same(only(empty).data, {
    code: 'UNAUTHORIZED',
    errorCode: 'INVALID_ACCESS_TOKEN',
    httpStatus: 401,
    path: 'user.currentUser',
  });
  // a proxy's Basic credential beside an API key is not a second credential of this API
  const behindProxy = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-organization-id', owner.organizationId],
    ['authorization', 'Basic dXNlcjpwYXNz'],
  ]);
  t.same([behindProxy.status, behindProxy.body[0].result.data.email], [200, owner.email]);
  // commas inside one Authorization are the scheme's parameters, not a second credential
  const digest = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', owner.apiKey],
    ['x-organization-id', owner.organizationId],
    ['authorization', 'Digest username="proxy", realm="edge", nonce="n", uri="/", response="r"'],
  ]);
  t.same([digest.status, digest.body[0].result?.data.email], [200, owner.email]);
});

t.test(
  "a query's input is refused for prototype-poisoning keys exactly like a mutation's body",
  async (t) => {
    const org = owner.organizationId;
    const cases: [string, string][] = [
      [`{"0":{"organizationId":"${org}","__proto__":{"isAdmin":true}}}`, '0.__proto__'],
      [
        `{"0":{"organizationId":"${org}","pagination":{"page":1,"__proto__":null}}}`,
        '0.pagination.__proto__',
      ],
      [
        `{"0":{"organizationId":"${org}","constructor":{"prototype":{"isAdmin":true}}}}`,
        '0.constructor.prototype',
      ],
      [`{"0":{"organizationId":"${org}","search":[{"__proto__":1}]}}`, '0.search.0.__proto__'],
    ];
    for (const [input, path] of cases) {
      const query = await owner.client.raw(
        'GET',
        `/trpc/rightsholder.list?batch=1&input=${encodeURIComponent(input)}`,
      );
      const body = await owner.client.raw('POST', '/trpc/rightsholder.create?batch=1', input);
      const message = (what: string) =>
        `The ${what} holds the key ${path}: keys that could poison prototypes (__proto__ anywhere, prototype under constructor) are refused`;
      t.same(
        [query.status, query.body[0].error.data, query.body[0].error.message],
        [400, badRequest('INVALID_JSON', 'rightsholder.list'), message('input')],
        `GET ${path}`,
      );
      t.same(
        [body.status, body.body[0].error.data, body.body[0].error.message],
        [400, badRequest('INVALID_JSON', 'rightsholder.create'), message('body')],
        `POST ${path}`,
      );
    }
    t.equal(({} as Record<string, unknown>).isAdmin, undefined);
    // single mode too, and `constructor` or `prototype` alone are ordinary keys (stripped by the schema)
    const single = await owner.client.raw(
      'GET',
      `/trpc/rightsholder.list?input=${encodeURIComponent(`{"organizationId":"${org}","__proto__":{}}`)}`,
    );
    t.same(single.body[0].error.data, badRequest('INVALID_JSON', 'rightsholder.list'));
    for (const harmless of [
      `{"0":{"organizationId":"${org}","constructor":1}}`,
      `{"0":{"organizationId":"${org}","prototype":{"a":1}}}`,
    ]) {
      const res = await owner.client.raw(
        'GET',
        `/trpc/rightsholder.list?batch=1&input=${encodeURIComponent(harmless)}`,
      );
      t.same([res.status, res.body[0].result.data.pagination.total], [200, 0], harmless);
    }
    // malformed JSON says where, in either place
    const badQuery = await owner.client.raw(
      'GET',
      `/trpc/rightsholder.list?batch=1&input=${encodeURIComponent('{"0":{bad')}`,
    );
    t.same(
      [badQuery.body[0].error.data, badQuery.body[0].error.message],
      [
        badRequest('INVALID_JSON', 'rightsholder.list'),
        "The input is not valid JSON: Expected property name or '}' in JSON at position 6",
      ],
    );
    const badBody = await owner.client.raw(
      'POST',
      '/trpc/rightsholder.create?batch=1',
      '{"0":{bad',
    );
    t.same(
      [badBody.body[0].error.data, badBody.body[0].error.message],
      [
        badRequest('INVALID_JSON', 'rightsholder.create'),
        "The body is not valid JSON: Expected property name or '}' in JSON at position 6",
      ],
    );
    const list = await owner.client.query('rightsholder.list', { organizationId: org });
    t.equal(list.data.pagination.total, 0, 'nothing was created');
  },
);

t.test(
  "every answer carries x-request-id: the caller's plain token, else a fresh uuid",
  async (t) => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const ok = await rawLines('GET', '/trpc/health', []);
    t.match(ok.headers['x-request-id'], uuid);
    const again = await rawLines('GET', '/trpc/health', []);
    t.not(again.headers['x-request-id'], ok.headers['x-request-id']);
    const given = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
      ['x-request-id', 'lb-7f3a.42:1'],
    ]);
    t.same([given.status, given.headers['x-request-id']], [401, 'lb-7f3a.42:1']);
    for (const hostile of ['a b', 'x'.repeat(129), 'id\u00e9', '"}{"level":60']) {
      const res = await rawLines('GET', '/trpc/health', [
        ['x-request-id', Buffer.from(hostile, 'utf8').toString('latin1')],
      ]);
      t.match(res.headers['x-request-id'], uuid, hostile.slice(0, 20));
    }
    const notFound = await rawLines('GET', '/nowhere', []);
    t.match(notFound.headers['x-request-id'], uuid);
  },
);

t.test(
  'a batch input keyed by anything but its call indexes is refused, not run without its input',
  async (t) => {
    const org = owner.organizationId;
    const cases: [string, number, string][] = [
      [
        `{"1":{"organizationId":"${org}","name":"Shifted"}}`,
        1,
        'The batch body has the key "1", but the batch names 1 procedure: its keys are call indexes, the key "0"',
      ],
      [
        `{"00":{"organizationId":"${org}","name":"Padded"}}`,
        1,
        'The batch body has the key "00", but the batch names 1 procedure: its keys are call indexes, the key "0"',
      ],
      [
        `{"0":{"organizationId":"${org}","name":"A"},"x":{}}`,
        2,
        'The batch body has the key "x", but the batch names 2 procedures: its keys are call indexes, the keys "0" to "1"',
      ],
      [
        'null',
        1,
        'In batch mode (batch=1) the body is an object keyed by call index: the key "0", e.g. {"0": <input>}',
      ],
      [
        `[{"organizationId":"${org}","name":"Array"}]`,
        1,
        'In batch mode (batch=1) the body is an object keyed by call index: the key "0", e.g. {"0": <input>}',
      ],
    ];
    for (const [body, calls, message] of cases) {
      const path = Array.from({ length: calls }, () => 'rightsholder.create').join(',');
      const res = await owner.client.raw('POST', `/trpc/${path}?batch=1`, body);
      t.equal(res.status, 400, body);
      t.same(
        res.body.map((r: any) => [r.error.data, r.error.message]),
        Array.from({ length: calls }, () => [
          badRequest('VALIDATION_FAILED', 'rightsholder.create'),
          message,
        ]),
        body,
      );
    }
    const query = await owner.client.raw(
      'GET',
      `/trpc/rightsholder.list?batch=1&input=${encodeURIComponent(`{"1":{"organizationId":"${org}"}}`)}`,
    );
    t.same(
      [query.body[0].error.data, query.body[0].error.message],
      [
        badRequest('VALIDATION_FAILED', 'rightsholder.list'),
        'The batch input has the key "1", but the batch names 1 procedure: its keys are call indexes, the key "0"',
      ],
    );
    // keys 0..n-1, some missing, are fine; an empty input is none; single mode takes the input raw
    const partial = await owner.client.raw(
      'GET',
      `/trpc/health,rightsholder.list?batch=1&input=${encodeURIComponent(`{"1":{"organizationId":"${org}"}}`)}`,
    );
    t.same(
      [
        partial.status,
        partial.body[0].result.data.status,
        partial.body[1].result.data.pagination.total,
      ],
      [200, 'ok', 0],
    );
    const empty = await owner.client.raw('GET', '/trpc/health?batch=1&input=');
    t.same([empty.status, empty.body[0].result.data.status], [200, 'ok']);
    const single = await owner.client.raw(
      'GET',
      `/trpc/rightsholder.list?input=${encodeURIComponent(`{"organizationId":"${org}"}`)}`,
    );
    t.same([single.status, single.body.result.data.pagination.total], [200, 0]);
    const list = await owner.client.query('rightsholder.list', { organizationId: org });
    t.equal(list.data.pagination.total, 0, 'nothing was created');
  },
);

t.test(
  'a batch mixing queries and mutations is METHOD_NOT_SUPPORTED, naming one of each',
  async (t) => {
    const org = owner.organizationId;
    const post = await owner.client.raw(
      'POST',
      '/trpc/rightsholder.create,rightsholder.list?batch=1',
      JSON.stringify({ 0: { organizationId: org, name: 'Mixed' }, 1: { organizationId: org } }),
    );
    const message =
      'A batch cannot mix queries and mutations (queries take GET, mutations POST): rightsholder.list is a query, rightsholder.create a mutation';
    t.equal(post.status, 400);
    t.same(
      post.body.map((r: any) => [r.error.data, r.error.message]),
      [
        [badRequest('METHOD_NOT_SUPPORTED', 'rightsholder.create'), message],
        [badRequest('METHOD_NOT_SUPPORTED', 'rightsholder.list'), message],
      ],
    );
    const get = await owner.client.raw(
      'GET',
      '/trpc/rightsholder.list,rightsholder.create?batch=1',
    );
    t.same(
      get.body.map((r: any) => r.error.data.errorCode),
      ['METHOD_NOT_SUPPORTED', 'METHOD_NOT_SUPPORTED'],
    );
    // an unknown name beside a query is not a mix: the query runs, the name is PROCEDURE_NOT_FOUND
    const unknown = await owner.client.raw('GET', '/trpc/health,no.such?batch=1');
    t.same(
      [unknown.status, unknown.body[0].result.data.status, unknown.body[1].error.data.errorCode],
      [207, 'ok', 'PROCEDURE_NOT_FOUND'],
    );
    const list = await owner.client.query('rightsholder.list', { organizationId: org });
    t.equal(list.data.pagination.total, 0, 'nothing was created');
  },
);

t.test('query parameters given twice, or a mutation input in the URL, are refused', async (t) => {
  const org = owner.organizationId;
  const input = (id: string) => encodeURIComponent(JSON.stringify({ organizationId: id }));
  const twice = await owner.client.raw(
    'GET',
    `/trpc/rightsholder.list?input=${input(org)}&input=${input(other.organizationId)}`,
  );
  t.same(
    [twice.status, twice.body[0].error.data, twice.body[0].error.message],
    [
      400,
      badRequest(AMBIGUOUS, 'rightsholder.list'),
      'The query parameter input was given more than once: give it once',
    ],
  );
  const batch = await owner.client.raw('GET', '/trpc/health?batch=1&batch=0');
  t.same(
    [batch.status, batch.body[0].error.data, batch.body[0].error.message],
    [
      400,
      badRequest(AMBIGUOUS, 'health'),
      'The query parameter batch was given more than once: give it once',
    ],
  );
  // tRPC ignores the URL's input on a POST: the body alone is the input, so both is refused
  const both = await owner.client.raw(
    'POST',
    `/trpc/rightsholder.create?batch=1&input=${encodeURIComponent('{"0":{}}')}`,
    JSON.stringify({ 0: { organizationId: org, name: 'In The URL' } }),
  );
  t.same(
    [both.status, both.body[0].error.data, both.body[0].error.message],
    [
      400,
      badRequest(AMBIGUOUS, 'rightsholder.create'),
      "A mutation's input is its JSON body (POST): the input query parameter is for queries (GET)",
    ],
  );
  const list = await owner.client.query('rightsholder.list', { organizationId: org });
  t.equal(list.data.pagination.total, 0, 'nothing was created');
});

t.test('a compressed mutation body is UNSUPPORTED_MEDIA_TYPE, not "not valid UTF-8"', async (t) => {
  const body = gzipSync(
    JSON.stringify({ 0: { organizationId: owner.organizationId, name: 'Zipped' } }),
  );
  for (const encoding of ['gzip', 'br', 'deflate']) {
    const res = await fetch(`${srv.url}/trpc/rightsholder.create?batch=1`, {
      method: 'POST',
      headers: {
        ...owner.client.headers,
        'content-type': 'application/json',
        'content-encoding': encoding,
      },
      body,
    });
    const json: any = await res.json();
    t.same(
      [res.status, json[0].error.data, json[0].error.message],
      [
        400,
        badRequest('UNSUPPORTED_MEDIA_TYPE', 'rightsholder.create'),
        `Mutation bodies are not read compressed (Content-Encoding: ${encoding}): send the JSON as is`,
      ],
    );
  }
  const identity = await owner.client.raw(
    'POST',
    '/trpc/rightsholder.create?batch=1',
    JSON.stringify({ 0: { organizationId: owner.organizationId, name: 'Plain' } }),
    {
      'content-encoding': 'identity',
    },
  );
  t.same([identity.status, identity.body[0].result.data.name], [200, 'Plain']);
});

t.test('an API key in the wrong place says where it goes', async (t) => {
  const asBearer = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['authorization', `Bearer ${owner.apiKey}`],
    ['x-organization-id', owner.organizationId],
  ]);
  t.same(
    [asBearer.status, only(asBearer).data, only(asBearer).message],
    [
      401,
      {
        code: 'UNAUTHORIZED',
        errorCode: 'INVALID_ACCESS_TOKEN',
        httpStatus: 401,
        path: 'user.currentUser',
      },
      'API keys are sent as the x-api-key header (with x-organization-id), not as a bearer token',
    ],
  );
  const withScheme = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', `Bearer ${owner.apiKey}`],
    ['x-organization-id', owner.organizationId],
  ]);
  t.same(
    [withScheme.status, only(withScheme).data, only(withScheme).message],
    [
      401,
      {
        code: 'UNAUTHORIZED',
        errorCode: 'INVALID_API_KEY',
        httpStatus: 401,
        path: 'user.currentUser',
      },
      'x-api-key holds the API key alone, without "Bearer "',
    ],
  );
  // an unknown key is still just unknown
  const unknown = await rawLines('GET', '/trpc/user.currentUser?batch=1', [
    ['x-api-key', 'rk_unknown'],
    ['x-organization-id', owner.organizationId],
  ]);
  t.equal(only(unknown).message, 'The API key is unknown, deleted or rotated away.');
});

t.test('JSON bodies outside /trpc (POST /invitations/accept) pass the same check', async (t) => {
  const post = async (body: string) => {
    const res = await fetch(`${srv.url}/invitations/accept`, {
      method: 'POST',
      headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const poisoned = await post('{"token":"inv_x","__proto__":{"isAdmin":true}}');
  t.same(
    [poisoned.status, poisoned.body.error.errorCode, poisoned.body.error.message],
    [
      400,
      'INVALID_JSON',
      'The body holds the key __proto__: keys that could poison prototypes (__proto__ anywhere, prototype under constructor) are refused',
    ],
  );
  const malformed = await post('{"token":');
  t.same(
    [malformed.status, malformed.body.error.errorCode, malformed.body.error.message],
    [400, 'INVALID_JSON', 'The body is not valid JSON: Unexpected end of JSON input'],
  );
  const latin1 = await fetch(`${srv.url}/invitations/accept`, {
    method: 'POST',
    headers: { 'x-api-key': owner.apiKey, 'content-type': 'application/json' },
    body: Buffer.from('{"token":"caf\u00e9"}', 'latin1'),
  });
  t.same([latin1.status, ((await latin1.json()) as any).error.errorCode], [400, 'INVALID_JSON']);
  const unknown = await post('{"token":"inv_unknown"}');
  t.same([unknown.status, unknown.body.error.errorCode], [404, 'INVITATION_NOT_FOUND']);
  t.equal(({} as Record<string, unknown>).isAdmin, undefined);
});

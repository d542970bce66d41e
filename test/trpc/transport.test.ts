// The specification's transport rules 1-8 over real HTTP.
import t from 'tap';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const raw = srv.anonymous;

// the specification's codes: data.code is one of these, the HTTP status and data.httpStatus its status
const SPEC_STATUS: Record<string, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_REQUEST: 400,
  CONFLICT: 409,
  TIMEOUT: 408,
  INTERNAL_SERVER_ERROR: 500,
};

/** One BAD_REQUEST (-32600) error of the envelope, without its message (see shape). */
function envelope(path: string, errorCode: string) {
  return {
    error: { code: -32600, data: { code: 'BAD_REQUEST', errorCode, httpStatus: 400, path } },
  };
}

/** The body with each error's message (a non-empty string, never compared) left out. */
function shape(body: any): any {
  if (Array.isArray(body)) return body.map(shape);
  if (typeof body?.error?.message !== 'string' || body.error.message === '') return body;
  const { message: _message, ...rest } = body.error;
  return { ...body, error: rest };
}

t.test('batch=1 is batch mode: {"0": input} in, an array out', async (t) => {
  const res = await raw.raw('GET', '/trpc/health?batch=1');
  t.equal(res.status, 200);
  t.ok(Array.isArray(res.body));
  t.equal(res.body.length, 1);
  t.equal(res.body[0].result.data.status, 'ok');
  t.same(res.body[0].result.data.checks, { database: 'ok', objectStore: 'ok' });

  const two = await raw.raw('GET', '/trpc/health,health?batch=1');
  t.equal(two.body.length, 2);
});

t.test(
  'batch=true, batch=0 and no batch are single mode: raw input in, an object out, an error as the array envelope',
  async (t) => {
    for (const qs of ['?batch=true', '?batch=0', '']) {
      const res = await raw.raw('GET', `/trpc/health${qs}`);
      t.equal(res.status, 200, qs);
      t.notOk(Array.isArray(res.body), qs);
      t.equal(res.body.result.data.status, 'ok', qs);
    }
    const input = encodeURIComponent(
      JSON.stringify({ organizationId: owner.organizationId, id: 'not-a-uuid' }),
    );
    const single = await owner.client.raw(
      'POST',
      `/trpc/apiKey.delete?batch=0`,
      JSON.stringify({ organizationId: owner.organizationId, id: 'not-a-uuid' }),
    );
    t.equal(single.status, 400);
    t.ok(Array.isArray(single.body), 'every error is the array envelope, single mode too');
    t.equal(single.body.length, 1);
    t.same(single.body[0].error.data, {
      code: 'BAD_REQUEST',
      errorCode: 'VALIDATION_FAILED',
      httpStatus: 400,
      path: 'apiKey.delete',
      fields: [{ path: 'id', message: 'Invalid UUID' }],
    });
    t.equal(single.body[0].error.code, -32600);
    const batched = await owner.client.raw(
      'GET',
      `/trpc/user.currentUser?batch=1&input=${encodeURIComponent('{"0":null}')}`,
    );
    t.equal(batched.body[0].result.data.email, owner.email);
    t.ok(input.length > 0);
  },
);

t.test(
  'unknown procedure: NOT_FOUND (-32004) in the error envelope, batch and single',
  async (t) => {
    const batch = await raw.raw('GET', '/trpc/nothing.here?batch=1');
    t.equal(batch.status, 404);
    t.same(batch.body, [
      {
        error: {
          message: 'No procedure found on path "nothing.here"',
          code: -32004,
          data: {
            code: 'NOT_FOUND',
            errorCode: 'PROCEDURE_NOT_FOUND',
            httpStatus: 404,
            path: 'nothing.here',
          },
        },
      },
    ]);
    const single = await raw.raw('GET', '/trpc/nothing.here');
    t.equal(single.status, 404);
    t.same(single.body, batch.body, 'single mode: the same array envelope');
  },
);

t.test('the wrong method answers BAD_REQUEST METHOD_NOT_SUPPORTED', async (t) => {
  const postToQuery = await owner.client.raw('POST', '/trpc/user.currentUser?batch=1');
  t.equal(postToQuery.status, 400);
  t.same(shape(postToQuery.body), [envelope('user.currentUser', 'METHOD_NOT_SUPPORTED')]);
  const getMutation = await owner.client.raw('GET', '/trpc/apiKey.delete?batch=1');
  t.equal(getMutation.status, 400);
  t.same(shape(getMutation.body), [envelope('apiKey.delete', 'METHOD_NOT_SUPPORTED')]);
  const single = await owner.client.raw('GET', '/trpc/apiKey.delete');
  t.equal(single.status, 400);
  t.same(shape(single.body), [envelope('apiKey.delete', 'METHOD_NOT_SUPPORTED')]);

  // methods tRPC does not read: the same error, in the envelope, with the path (HEAD is left as GET)
  for (const method of ['DELETE', 'OPTIONS', 'PUT', 'PATCH']) {
    const batch = await raw.raw(method, '/trpc/health?batch=1');
    t.equal(batch.status, 400, method);
    t.same(shape(batch.body), [envelope('health', 'METHOD_NOT_SUPPORTED')], method);
    const two = await raw.raw(method, '/trpc/health,user.currentUser?batch=1');
    t.same(
      shape(two.body),
      [
        envelope('health', 'METHOD_NOT_SUPPORTED'),
        envelope('user.currentUser', 'METHOD_NOT_SUPPORTED'),
      ],
      `${method} batch of two`,
    );
    const singleMode = await raw.raw(method, '/trpc/health');
    t.equal(singleMode.status, 400, method);
    t.same(
      shape(singleMode.body),
      [envelope('health', 'METHOD_NOT_SUPPORTED')],
      `${method} single mode`,
    );
  }
});

t.test(
  'malformed input: invalid JSON, a non-object batch, validation with field paths',
  async (t) => {
    // invalid JSON is BAD_REQUEST INVALID_JSON (-32600), in a GET's input and in a POST's body alike
    const bad = await raw.raw('GET', '/trpc/health?batch=1&input=%7Bnot-json');
    t.equal(bad.status, 400);
    t.same(shape(bad.body), [envelope('health', 'INVALID_JSON')]);
    const badQuery = await owner.client.raw('GET', `/trpc/organization.getById?input=%7Bnot-json`);
    t.equal(badQuery.status, 400);
    t.same(shape(badQuery.body), [envelope('organization.getById', 'INVALID_JSON')]);
    const badBody = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', '{"0": {oops');
    t.equal(badBody.status, 400);
    t.same(shape(badBody.body), [envelope('apiKey.delete', 'INVALID_JSON')]);
    const badSingle = await owner.client.raw('POST', '/trpc/apiKey.delete', '{oops');
    t.equal(badSingle.status, 400);
    t.same(shape(badSingle.body), [envelope('apiKey.delete', 'INVALID_JSON')]);

    const res = await owner.client.mutate('apiKey.update', {
      organizationId: owner.organizationId,
      id: 'x',
      name: 'n'.repeat(101),
      patterns: [],
    });
    t.equal(res.ok, false);
    if (res.ok) return;
    t.equal(res.error.data.code, 'BAD_REQUEST');
    t.equal(res.error.data.errorCode, 'VALIDATION_FAILED');
    t.same(
      res.error.data.fields?.map((f) => f.path),
      ['id', 'name', 'patterns'],
    );
    t.match(res.error.message, /^Invalid input: id: Invalid UUID; name: Too big/);
  },
);

t.test(
  'hostile bodies: too large, prototype poisoning, oversized batches; never a 500',
  async (t) => {
    const huge = JSON.stringify({
      0: { organizationId: owner.organizationId, id: 'x'.repeat(srv.config.bodyLimitBytes) },
    });
    const tooLarge = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', huge);
    t.equal(tooLarge.status, 400);
    t.same(shape(tooLarge.body), [envelope('apiKey.delete', 'PAYLOAD_TOO_LARGE')]);

    for (const poisoned of [
      '{"0":{"__proto__":{"isAdmin":true}}}',
      '{"0":{"constructor":{"prototype":{"isAdmin":true}}}}',
    ]) {
      const res = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', poisoned);
      t.equal(res.status, 400, poisoned);
      t.equal(res.body[0].error.data.errorCode, 'INVALID_JSON', poisoned);
    }
    t.equal(({} as Record<string, unknown>).isAdmin, undefined);

    const paths = Array.from({ length: srv.config.maxBatchSize + 1 }, () => 'health').join(',');
    const batch = await raw.raw('GET', `/trpc/${paths}?batch=1`);
    t.equal(batch.status, 400);
    t.equal(batch.body.length, srv.config.maxBatchSize + 1);
    t.equal(batch.body[0].error.data.errorCode, 'BATCH_TOO_LARGE');
    t.same(batch.body[0].error.data, {
      code: 'BAD_REQUEST',
      errorCode: 'BATCH_TOO_LARGE',
      httpStatus: 400,
      path: 'health',
    });

    const wrongType = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', 'x', {
      'content-type': 'text/plain',
    });
    t.equal(wrongType.status, 400);
    t.same(shape(wrongType.body), [envelope('apiKey.delete', 'UNSUPPORTED_MEDIA_TYPE')]);

    const notObject = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', '[1,2]');
    t.equal(notObject.status, 400);
    t.equal(notObject.body[0].error.data.code, 'BAD_REQUEST');
  },
);

t.test('errors carry no stack and no SQL', async (t) => {
  const res = await owner.client.mutate('apiKey.delete', {
    organizationId: owner.organizationId,
    id: "00000000-0000-4000-8000-000000000000' OR 1=1 --",
  });
  t.equal(res.ok, false);
  const text = JSON.stringify(res);
  t.notMatch(text, /stack|SELECT|at .*\.ts/);
});

t.test('NUL characters in any string are refused before anything runs', async (t) => {
  const res = await owner.client.mutate('apiKey.update', {
    organizationId: owner.organizationId,
    id: owner.userId,
    name: 'a\u0000b',
  });
  t.equal(res.ok, false);
  if (!res.ok)
    t.same([res.error.data.code, res.error.data.errorCode], ['BAD_REQUEST', 'VALIDATION_FAILED']);
});

t.test(
  'lone surrogates in any string or key are refused with the field path; pairs and escaped text pass',
  async (t) => {
    const org = owner.organizationId;
    const refused = async (input: unknown, path: string, message: RegExp) => {
      const res = await owner.client.mutate('organization.update', input);
      t.equal(res.ok, false, path);
      if (!res.ok) {
        t.same(
          [res.error.data.code, res.error.data.errorCode],
          ['BAD_REQUEST', 'VALIDATION_FAILED'],
          path,
        );
        t.same(
          res.error.data.fields?.map((f) => f.path),
          [path],
        );
        t.match(res.error.data.fields?.[0]?.message, message);
      }
    };
    await refused({ organizationId: org, name: 'half \ud800 pair' }, 'name', /well-formed Unicode/);
    await refused({ organizationId: org, name: 'low \udc00 first' }, 'name', /well-formed Unicode/);
    await refused(
      { organizationId: org, name: 'ok', preferences: { ['key\udfff']: 1 } },
      'preferences.key\udfff',
      /well-formed Unicode/,
    );
    await refused(
      { organizationId: org, name: 'ok', deep: [[{ a: ['x', 'y\u0000'] }]] },
      'deep.0.0.a.1',
      /NUL/,
    );
    // a whole pair is one character; the text of an escape is only text
    const named = await owner.client.mutate('organization.update', {
      organizationId: org,
      name: 'Clef 𝄞 \\u0000 \\ud800',
    });
    t.equal(named.ok, true, JSON.stringify(named));
    // nesting deeper than any recursion allows is a validation failure, not a crash
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const res = await owner.client.raw(
      'POST',
      '/trpc/organization.update?batch=1',
      `{"0":{"organizationId":"${org}","name":${deep}}}`,
    );
    t.equal(res.status, 400);
    t.match(res.body, [
      { error: { data: { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' } } },
    ]);
  },
);

t.test(
  'errors tRPC raises before splitting a batch: the array, one error per procedure, each with its path',
  async (t) => {
    const org = owner.organizationId;
    // a batch mixing a mutation and a query
    const mixed = await owner.client.raw(
      'POST',
      '/trpc/organization.update,health?batch=1',
      JSON.stringify({ 0: { organizationId: org, name: 'G' } }),
    );
    t.equal(mixed.status, 400);
    t.same(shape(mixed.body), [
      envelope('organization.update', 'METHOD_NOT_SUPPORTED'),
      envelope('health', 'METHOD_NOT_SUPPORTED'),
    ]);
    t.equal(
      mixed.body[0].error.message,
      'A batch cannot mix queries and mutations (queries take GET, mutations POST): health is a query, organization.update a mutation',
    );
    // a content type tRPC reads only for POST
    const form = await raw.raw('GET', '/trpc/health,health?batch=1', undefined, {
      'content-type': 'multipart/form-data; boundary=x',
    });
    t.equal(form.status, 400);
    t.same(shape(form.body), [
      envelope('health', 'METHOD_NOT_SUPPORTED'),
      envelope('health', 'METHOD_NOT_SUPPORTED'),
    ]);
    // single mode: the array with the one error, with the path
    const single = await raw.raw('GET', '/trpc/health', undefined, {
      'content-type': 'application/octet-stream',
    });
    t.equal(single.status, 400);
    t.same(shape(single.body), [envelope('health', 'METHOD_NOT_SUPPORTED')]);
  },
);

t.test(
  "a malformed URL escape or an endless path: the error envelope, not fastify's own body",
  async (t) => {
    const batch = await raw.raw('GET', '/trpc/health%ZZ?batch=1');
    t.equal(batch.status, 400);
    t.same(shape(batch.body), [envelope('health%ZZ', 'BAD_REQUEST')]);
    const two = await raw.raw('GET', '/trpc/health,health%E0%A4%A?batch=1');
    t.equal(two.status, 400);
    t.same(shape(two.body), [
      envelope('health', 'BAD_REQUEST'),
      envelope('health%E0%A4%A', 'BAD_REQUEST'),
    ]);
    const single = await raw.raw('GET', '/trpc/health%ZZ');
    t.equal(single.status, 400);
    t.same(shape(single.body), [envelope('health%ZZ', 'BAD_REQUEST')]);
    const endless = 'a'.repeat(10_001);
    const long = await raw.raw('GET', `/trpc/${endless}?batch=1`);
    t.equal(long.status, 400);
    t.same(shape(long.body), [envelope(endless, 'BAD_REQUEST')]);
  },
);

t.test(
  'a batch whose calls end with different statuses answers 207; equal statuses answer that status',
  async (t) => {
    const mixed = await raw.raw('GET', '/trpc/health,nothing.here?batch=1');
    t.equal(mixed.status, 207);
    t.equal(mixed.body[0].result.data.status, 'ok');
    t.same(mixed.body[1].error.data, {
      code: 'NOT_FOUND',
      errorCode: 'PROCEDURE_NOT_FOUND',
      httpStatus: 404,
      path: 'nothing.here',
    });
    const twoErrors = await owner.client.raw(
      'GET',
      `/trpc/nothing.here,organization.getById?batch=1&input=${encodeURIComponent(JSON.stringify({ 1: { organizationId: 'x' } }))}`,
    );
    t.equal(twoErrors.status, 207);
    t.same(
      twoErrors.body.map((r: any) => [
        r.error.data.httpStatus,
        r.error.data.code,
        r.error.data.errorCode,
        r.error.data.path,
      ]),
      [
        [404, 'NOT_FOUND', 'PROCEDURE_NOT_FOUND', 'nothing.here'],
        [400, 'BAD_REQUEST', 'VALIDATION_FAILED', 'organization.getById'],
      ],
    );
    const sameStatus = await raw.raw('GET', '/trpc/nothing.here,nothing.else?batch=1');
    t.equal(sameStatus.status, 404);
    t.same(
      sameStatus.body.map((r: any) => r.error.data.path),
      ['nothing.here', 'nothing.else'],
    );
  },
);

t.test(
  "every error names one of the specification's codes, with its status and numeric code",
  async (t) => {
    const numeric: Record<string, number> = {
      BAD_REQUEST: -32600,
      NOT_FOUND: -32004,
      UNAUTHORIZED: -32001,
    };
    const responses = [
      await owner.client.raw('POST', '/trpc/organization.update?batch=1', '{"0": {oops'),
      await owner.client.raw('POST', '/trpc/organization.getById?batch=1', '{}'),
      await owner.client.raw('GET', '/trpc/organization.update?batch=1'),
      await owner.client.raw('POST', '/trpc/organization.update?batch=1', 'x', {
        'content-type': 'text/plain',
      }),
      await raw.raw('GET', '/trpc/nothing.here?batch=1'),
      await raw.raw('GET', '/trpc/user.currentUser?batch=1'),
      await raw.raw('DELETE', '/trpc/health?batch=1'),
    ];
    for (const res of responses) {
      t.ok(Array.isArray(res.body), 'an array in batch mode');
      const { error } = res.body[0];
      t.ok(
        Object.hasOwn(SPEC_STATUS, error.data.code),
        `${error.data.errorCode}: data.code ${error.data.code}`,
      );
      t.equal(
        error.data.httpStatus,
        SPEC_STATUS[error.data.code],
        `${error.data.errorCode}: data.httpStatus`,
      );
      t.equal(res.status, error.data.httpStatus, `${error.data.errorCode}: HTTP status`);
      t.equal(error.code, numeric[error.data.code], `${error.data.errorCode}: numeric code`);
      t.type(error.data.path, 'string', `${error.data.errorCode}: data.path`);
    }
  },
);

t.test(
  'long query URLs: up to HTTP_MAX_HEADER_BYTES they are served, beyond it the error envelope',
  async (t) => {
    t.equal(srv.config.httpMaxHeaderBytes, 256 * 1024, 'the default');
    const org = owner.organizationId;
    // mapping.list takes up to 1000 ids: about 45 KB of URL, far over Node's default of 16 KB
    const ids = Array.from(
      { length: 1000 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const input = encodeURIComponent(JSON.stringify({ 0: { organizationId: org, ids } }));
    t.ok(input.length > 40_000, `${input.length} characters of input`);
    const list = await owner.client.raw('GET', `/trpc/mapping.list?batch=1&input=${input}`);
    t.equal(list.status, 200);
    t.same(list.body[0].result.data.data, []);
    const padded = await owner.client.raw('GET', `/trpc/health?batch=1&pad=${'p'.repeat(20_000)}`);
    t.equal(padded.status, 200);

    const expected = [
      {
        error: {
          code: -32600,
          data: { code: 'BAD_REQUEST', errorCode: 'REQUEST_TOO_LARGE', httpStatus: 400, path: '' },
        },
      },
    ];
    const tooLong = await owner.client.raw(
      'GET',
      `/trpc/health?batch=1&pad=${'p'.repeat(srv.config.httpMaxHeaderBytes)}`,
    );
    t.equal(tooLong.status, 400);
    t.same(shape(tooLong.body), expected);
    t.match(tooLong.body[0].error.message, /HTTP_MAX_HEADER_BYTES/);
    const bigHeader = await owner.client.raw('GET', '/trpc/health?batch=1', undefined, {
      'x-pad': 'p'.repeat(srv.config.httpMaxHeaderBytes),
    });
    t.equal(bigHeader.status, 400);
    t.same(shape(bigHeader.body), expected);
    // the server goes on serving
    t.equal((await raw.raw('GET', '/trpc/health?batch=1')).status, 200);
  },
);

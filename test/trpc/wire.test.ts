// Wire details of the transport over raw HTTP: the body's and the URL's encoding, response
// headers, and URLs under /trpc that name no procedure.
import t from 'tap';
import { newOrganization } from '../helpers/principals.ts';
import { rawRequest, type RawResponse } from '../helpers/rawHttp.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const auth = { 'x-api-key': owner.apiKey, 'x-organization-id': org };

/** One request with exactly these headers and body bytes (fetch would re-encode a string body). */
const request = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<RawResponse> => rawRequest(srv.url, method, path, headers, body);

const create = (name: string, contentType: string, encoding: BufferEncoding) =>
  request(
    'POST',
    '/trpc/rightsholder.create?batch=1',
    { ...auth, 'content-type': contentType },
    Buffer.from(JSON.stringify({ 0: { organizationId: org, name } }), encoding),
  );

/** The names of the organization's rightsholders. */
async function names(): Promise<string[]> {
  const r = await owner.client.query('rightsholder.list', { organizationId: org });
  return (r.data.data as { name: string }[]).map((x) => x.name).sort();
}

function errorOf(res: RawResponse): {
  code: string;
  errorCode: string;
  httpStatus: number;
  path: string;
} {
  return (Array.isArray(res.body) ? res.body[0] : res.body).error.data;
}

t.test(
  'a body in another charset than UTF-8 is refused, never stored with U+FFFD for its letters',
  async (t) => {
    const latin1 = await create('Beyoncé', 'application/json; charset=iso-8859-1', 'latin1');
    t.equal(latin1.status, 400);
    t.same(errorOf(latin1), {
      code: 'BAD_REQUEST',
      errorCode: 'UNSUPPORTED_MEDIA_TYPE',
      httpStatus: 400,
      path: 'rightsholder.create',
    });

    const utf16 = await create('Utf Sixteen', 'application/json; charset=utf-16', 'utf16le');
    t.same(errorOf(utf16), {
      code: 'BAD_REQUEST',
      errorCode: 'UNSUPPORTED_MEDIA_TYPE',
      httpStatus: 400,
      path: 'rightsholder.create',
    });

    // Latin-1 bytes sent as plain application/json: not UTF-8, so not JSON
    const undeclared = await create('Zoé', 'application/json', 'latin1');
    t.equal(undeclared.status, 400);
    t.same(errorOf(undeclared), {
      code: 'BAD_REQUEST',
      errorCode: 'INVALID_JSON',
      httpStatus: 400,
      path: 'rightsholder.create',
    });
    t.match(undeclared.body[0].error.message, /UTF-8/);

    t.same(await names(), [], 'nothing was created');

    // UTF-8, declared in any spelling or not at all, is read as sent
    for (const [name, contentType] of [
      ['Beyoncé', 'application/json'],
      ['Zoé', 'application/json; charset=utf-8'],
      ['Chloé', 'Application/JSON; Charset="UTF-8"'],
    ] as const) {
      const ok = await create(name, contentType, 'utf8');
      t.equal(ok.status, 200, contentType);
      t.equal(ok.body[0].result.data.name, name);
    }
    t.same(await names(), ['Beyoncé', 'Chloé', 'Zoé']);
  },
);

t.test(
  "a query's input that percent-decodes to bytes that are not UTF-8 is INVALID_JSON, not a search for U+FFFD",
  async (t) => {
    const json = (search: string) => `{"organizationId":"${org}","search":"${search}"}`;
    // %E9 is a Latin-1 'é'; the UTF-8 'é' is %C3%A9
    const latin1 = await request(
      'GET',
      `/trpc/rightsholder.list?input=${encodeURIComponent(json('Beyonc')).replace(/%22%7D$/, '%E9%22%7D')}`,
      auth,
    );
    t.equal(latin1.status, 400);
    t.same(errorOf(latin1), {
      code: 'BAD_REQUEST',
      errorCode: 'INVALID_JSON',
      httpStatus: 400,
      path: 'rightsholder.list',
    });

    const batch = await request(
      'GET',
      `/trpc/rightsholder.list?batch=1&input=%7B%220%22%3A%7B%22search%22%3A%22%FF%22%7D%7D`,
      auth,
    );
    t.same(errorOf(batch), {
      code: 'BAD_REQUEST',
      errorCode: 'INVALID_JSON',
      httpStatus: 400,
      path: 'rightsholder.list',
    });

    const utf8 = await request(
      'GET',
      `/trpc/rightsholder.list?input=${encodeURIComponent(json('Beyoncé'))}`,
      auth,
    );
    t.equal(utf8.status, 200);
    t.same(
      utf8.body.result.data.data.map((r: { name: string }) => r.name),
      ['Beyoncé'],
    );
    // a bare % that escapes nothing stays a character, as before
    const percent = await request(
      'GET',
      `/trpc/rightsholder.list?input=${encodeURIComponent(json('x')).replace('x', '100%')}`,
      auth,
    );
    t.equal(percent.status, 200);
    t.same(percent.body.result.data.data, []);
  },
);

t.test(
  'every answer under /trpc says Cache-Control: no-store: results and errors alike',
  async (t) => {
    const input = encodeURIComponent(JSON.stringify({ 0: { organizationId: org } }));
    const cases: [string, string, Record<string, string>, number][] = [
      ['GET', `/trpc/organization.getById?batch=1&input=${input}`, auth, 200],
      [
        'GET',
        `/trpc/organization.getById?input=${encodeURIComponent(JSON.stringify({ organizationId: org }))}`,
        auth,
        200,
      ],
      ['GET', `/trpc/health?batch=1`, {}, 200],
      ['GET', `/trpc/organization.getById?batch=1&input=${input}`, {}, 401],
      ['GET', `/trpc/nope.nope?batch=1`, auth, 404],
      ['DELETE', `/trpc/organization.getById?batch=1`, auth, 400],
      ['GET', `/trpc/${Array(51).fill('health').join(',')}?batch=1`, {}, 400],
    ];
    for (const [method, path, headers, status] of cases) {
      const res = await request(method, path, headers);
      t.equal(res.status, status, `${method} ${path.slice(0, 60)}`);
      t.equal(res.headers['cache-control'], 'no-store', `${method} ${path.slice(0, 60)}`);
    }
    const mutation = await request(
      'POST',
      '/trpc/rightsholder.create?batch=1',
      { ...auth, 'content-type': 'text/plain' },
      Buffer.from('{}'),
    );
    t.equal(mutation.status, 400);
    t.equal(mutation.headers['cache-control'], 'no-store');
  },
);

t.test('the error of a batch mixing queries and mutations is sent as JSON', async (t) => {
  const res = await request('GET', '/trpc/user.currentUser,activity.trackVisit?batch=1', auth);
  t.equal(res.status, 400);
  t.match(res.headers['content-type'], /^application\/json/);
  t.same(
    res.body.map((e: { error: { data: unknown } }) => e.error.data),
    [
      {
        code: 'BAD_REQUEST',
        errorCode: 'METHOD_NOT_SUPPORTED',
        httpStatus: 400,
        path: 'user.currentUser',
      },
      {
        code: 'BAD_REQUEST',
        errorCode: 'METHOD_NOT_SUPPORTED',
        httpStatus: 400,
        path: 'activity.trackVisit',
      },
    ],
  );
});

t.test(
  'a /trpc URL no route matches (slashes for dots) is PROCEDURE_NOT_FOUND in the envelope',
  async (t) => {
    const single = await request('GET', '/trpc/user/currentUser', auth);
    t.equal(single.status, 404);
    t.match(single.headers['content-type'], /^application\/json/);
    t.same(single.body, [
      {
        error: {
          message: 'No procedure found on path "user/currentUser"',
          code: -32004,
          data: {
            code: 'NOT_FOUND',
            errorCode: 'PROCEDURE_NOT_FOUND',
            httpStatus: 404,
            path: 'user/currentUser',
          },
        },
      },
    ]);
    const batch = await request('GET', '/trpc/user/currentUser,health?batch=1', auth);
    t.equal(batch.status, 404);
    t.same(
      batch.body.map((e: { error: { data: unknown } }) => e.error.data),
      [
        {
          code: 'NOT_FOUND',
          errorCode: 'PROCEDURE_NOT_FOUND',
          httpStatus: 404,
          path: 'user/currentUser',
        },
        { code: 'NOT_FOUND', errorCode: 'PROCEDURE_NOT_FOUND', httpStatus: 404, path: 'health' },
      ],
    );
    // outside /trpc fastify's own answer stays
    const other = await request('GET', '/nope', {});
    t.equal(other.status, 404);
    t.same(other.body, {
      message: 'Route GET:/nope not found',
      error: 'Not Found',
      statusCode: 404,
    });
  },
);

t.test(
  'HEAD is answered like GET without a body: its status and headers, not 204 for anything',
  async (t) => {
    const input = encodeURIComponent(JSON.stringify({ 0: { organizationId: org } }));
    const cases: [string, Record<string, string>, number][] = [
      ['/trpc/health?batch=1', {}, 200],
      [`/trpc/organization.getById?batch=1&input=${input}`, auth, 200],
      [`/trpc/organization.getById?batch=1&input=${input}`, {}, 401],
      ['/trpc/nope.nope?batch=1', auth, 404],
      ['/trpc/apiKey.delete?batch=1', auth, 400],
    ];
    for (const [path, headers, status] of cases) {
      const get = await request('GET', path, headers);
      const head = await request('HEAD', path, headers);
      t.equal(get.status, status, `GET ${path.slice(0, 50)}`);
      t.equal(head.status, status, `HEAD ${path.slice(0, 50)}`);
      t.equal(head.body, '', 'no body');
      t.equal(head.headers['content-type'], get.headers['content-type']);
      t.equal(head.headers['cache-control'], 'no-store');
    }
  },
);

t.test(
  'a batch is answered as the JSON array of the transport rules, even when JSONL streaming is asked for',
  async (t) => {
    const asks: Record<string, string>[] = [
      { 'trpc-accept': 'application/jsonl' },
      { accept: 'application/jsonl' },
      { accept: 'text/html, application/jsonl;q=0.9' },
    ];
    for (const headers of asks) {
      const res = await request('GET', '/trpc/health,user.currentUser?batch=1', headers);
      const label = JSON.stringify(headers);
      // one result, one error: 207 and the array, not 200 and a stream of JSON lines
      t.equal(res.status, 207, label);
      t.equal(res.body.length, 2, label);
      t.equal(res.body[0].result.data.status, 'ok', label);
      t.same(
        res.body[1].error.data,
        {
          code: 'UNAUTHORIZED',
          errorCode: 'AUTH_REQUIRED',
          httpStatus: 401,
          path: 'user.currentUser',
        },
        label,
      );
      const denied = await request('GET', '/trpc/user.currentUser?batch=1', headers);
      t.same([denied.status, denied.body[0].error.data.errorCode], [401, 'AUTH_REQUIRED'], label);
    }
  },
);

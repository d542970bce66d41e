// The specification's transport rules 1-8 over real HTTP.
import t from 'tap';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const raw = srv.anonymous;

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

t.test('batch=true, batch=0 and no batch are single mode: raw input in, an object out', async (t) => {
  for (const qs of ['?batch=true', '?batch=0', '']) {
    const res = await raw.raw('GET', `/trpc/health${qs}`);
    t.equal(res.status, 200, qs);
    t.notOk(Array.isArray(res.body), qs);
    t.equal(res.body.result.data.status, 'ok', qs);
  }
  const input = encodeURIComponent(JSON.stringify({ organizationId: owner.organizationId, id: 'not-a-uuid' }));
  const single = await owner.client.raw('POST', `/trpc/apiKey.delete?batch=0`, JSON.stringify({ organizationId: owner.organizationId, id: 'not-a-uuid' }));
  t.equal(single.body.error.data.errorCode, 'VALIDATION_FAILED');
  t.same(single.body.error.data.fields, [{ path: 'id', message: 'Invalid UUID' }]);
  const batched = await owner.client.raw('GET', `/trpc/user.currentUser?batch=1&input=${encodeURIComponent('{"0":null}')}`);
  t.equal(batched.body[0].result.data.email, owner.email);
  t.ok(input.length > 0);
});

t.test('unknown procedure: NOT_FOUND (-32004) in the error envelope, batch and single', async (t) => {
  const batch = await raw.raw('GET', '/trpc/nothing.here?batch=1');
  t.equal(batch.status, 404);
  t.same(batch.body, [
    {
      error: {
        message: 'No procedure found on path "nothing.here"',
        code: -32004,
        data: { code: 'NOT_FOUND', errorCode: 'PROCEDURE_NOT_FOUND', httpStatus: 404, path: 'nothing.here' },
      },
    },
  ]);
  const single = await raw.raw('GET', '/trpc/nothing.here');
  t.equal(single.body.error.code, -32004);
  t.equal(single.body.error.data.errorCode, 'PROCEDURE_NOT_FOUND');
});

t.test('the wrong method answers METHOD_NOT_SUPPORTED', async (t) => {
  const postToQuery = await owner.client.raw('POST', '/trpc/user.currentUser?batch=1');
  t.equal(postToQuery.status, 405);
  t.equal(postToQuery.body[0].error.data.code, 'METHOD_NOT_SUPPORTED');
  t.equal(postToQuery.body[0].error.data.errorCode, 'METHOD_NOT_SUPPORTED');
  t.equal(postToQuery.body[0].error.code, -32005);
  const getMutation = await owner.client.raw('GET', '/trpc/apiKey.delete?batch=1');
  t.equal(getMutation.status, 405);
  t.equal(getMutation.body[0].error.data.errorCode, 'METHOD_NOT_SUPPORTED');
  t.equal(getMutation.body[0].error.data.path, 'apiKey.delete');
});

t.test('malformed input: invalid JSON, a non-object batch, validation with field paths', async (t) => {
  const bad = await raw.raw('GET', '/trpc/health?batch=1&input=%7Bnot-json');
  t.equal(bad.status, 400);
  t.equal(bad.body[0].error.data.errorCode, 'INVALID_JSON');
  const badBody = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', '{"0": {oops');
  t.equal(badBody.status, 400);
  t.equal(badBody.body[0].error.data.errorCode, 'INVALID_JSON');
  t.equal(badBody.body[0].error.data.path, 'apiKey.delete');

  const res = await owner.client.mutate('apiKey.update', { organizationId: owner.organizationId, id: 'x', name: 'n'.repeat(101), patterns: [] });
  t.equal(res.ok, false);
  if (res.ok) return;
  t.equal(res.error.data.code, 'BAD_REQUEST');
  t.equal(res.error.data.errorCode, 'VALIDATION_FAILED');
  t.same(
    res.error.data.fields?.map((f) => f.path),
    ['id', 'name', 'patterns'],
  );
  t.match(res.error.message, /^Invalid input: id: Invalid UUID; name: Too big/);
});

t.test('hostile bodies: too large, prototype poisoning, oversized batches; never a 500', async (t) => {
  const huge = JSON.stringify({ 0: { organizationId: owner.organizationId, id: 'x'.repeat(srv.config.bodyLimitBytes) } });
  const tooLarge = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', huge);
  t.equal(tooLarge.status, 413);
  t.equal(tooLarge.body[0].error.data.code, 'PAYLOAD_TOO_LARGE');
  t.equal(tooLarge.body[0].error.data.errorCode, 'PAYLOAD_TOO_LARGE');
  t.equal(tooLarge.body[0].error.data.path, 'apiKey.delete');

  for (const poisoned of ['{"0":{"__proto__":{"isAdmin":true}}}', '{"0":{"constructor":{"prototype":{"isAdmin":true}}}}']) {
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

  const wrongType = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', 'x', { 'content-type': 'text/plain' });
  t.equal(wrongType.status, 415);
  t.equal(wrongType.body[0].error.data.errorCode, 'UNSUPPORTED_MEDIA_TYPE');

  const notObject = await owner.client.raw('POST', '/trpc/apiKey.delete?batch=1', '[1,2]');
  t.equal(notObject.status, 400);
  t.equal(notObject.body[0].error.data.code, 'BAD_REQUEST');
});

t.test('errors carry no stack and no SQL', async (t) => {
  const res = await owner.client.mutate('apiKey.delete', { organizationId: owner.organizationId, id: "00000000-0000-4000-8000-000000000000' OR 1=1 --" });
  t.equal(res.ok, false);
  const text = JSON.stringify(res);
  t.notMatch(text, /stack|SELECT|at .*\.ts/);
});

t.test('NUL characters in any string are refused before anything runs', async (t) => {
  const res = await owner.client.mutate('apiKey.update', { organizationId: owner.organizationId, id: owner.userId, name: 'a\u0000b' });
  t.equal(res.ok, false);
  if (!res.ok) t.same([res.error.data.code, res.error.data.errorCode], ['BAD_REQUEST', 'VALIDATION_FAILED']);
});

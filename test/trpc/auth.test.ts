// Who is calling: API keys (hash-only storage, scope, rotation, deletion), organization
// membership and status, platform operators.
import t from 'tap';
import { hashApiKey } from '../../src/auth/apiKeys.ts';
import { addMember, newOrganization, outsider } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { isError } from '../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Alpha Records');
const other = await newOrganization(srv, 'Beta Music');

t.test('no credential, an unknown key, a bearer token: UNAUTHORIZED', async (t) => {
  isError(t, await srv.anonymous.query('user.currentUser'), 'UNAUTHORIZED', 'AUTH_REQUIRED');
  const unknown = srv.client({ 'x-api-key': 'rk_nope', 'x-organization-id': owner.organizationId });
  const res = await unknown.query('user.currentUser');
  isError(t, res, 'UNAUTHORIZED', 'INVALID_API_KEY');
  t.equal(res.status, 401);
  isError(
    t,
    await srv.client({ authorization: 'Bearer abc' }).query('user.currentUser'),
    'UNAUTHORIZED',
    'INVALID_ACCESS_TOKEN',
  );
  // health needs nothing
  const health = await srv.anonymous.query('health');
  t.equal(health.ok, true);
});

t.test('user.currentUser is the flat record of the caller', async (t) => {
  const res = await owner.client.query('user.currentUser');
  t.same(res, {
    ok: true,
    status: 200,
    data: {
      id: owner.userId,
      email: owner.email,
      organizations: [{ id: owner.organizationId, name: 'Alpha Records', role: 'owner' }],
    },
  });
});

t.test('x-organization-id is required with an API key and must match the input', async (t) => {
  const noHeader = srv.client({ 'x-api-key': owner.apiKey });
  isError(
    t,
    await noHeader.query('user.currentUser'),
    'BAD_REQUEST',
    'ORGANIZATION_HEADER_REQUIRED',
  );
  const badHeader = srv.client({ 'x-api-key': owner.apiKey, 'x-organization-id': "x' OR 1=1" });
  isError(
    t,
    await badHeader.query('user.currentUser'),
    'BAD_REQUEST',
    'ORGANIZATION_HEADER_REQUIRED',
  );
  const mismatch = await owner.client.mutate('apiKey.delete', {
    organizationId: other.organizationId,
    id: '00000000-0000-4000-8000-000000000000',
  });
  isError(t, mismatch, 'BAD_REQUEST', 'ORGANIZATION_MISMATCH');
});

t.test(
  'x-organization-id is a uuid: compared without regard to case, like the input',
  async (t) => {
    const upper = srv.client({
      'x-api-key': owner.apiKey,
      'x-organization-id': owner.organizationId.toUpperCase(),
    });
    const byHeader = await upper.query('organization.getById', {
      organizationId: owner.organizationId,
    });
    t.same(
      [byHeader.ok, byHeader.status, byHeader.data?.id],
      [true, 200, owner.organizationId],
      'header in upper case, input in lower case',
    );
    const both = await upper.query('organization.getById', {
      organizationId: owner.organizationId.toUpperCase(),
    });
    t.same([both.ok, both.status], [true, 200], 'header and input in upper case');
    const mixed = srv.client({
      'x-api-key': owner.apiKey,
      'x-organization-id': owner.organizationId.replace(/[a-f]/g, (c) => c.toUpperCase()),
    });
    const mixedRes = await mixed.query('organization.getById', {
      organizationId: owner.organizationId,
    });
    t.same([mixedRes.ok, mixedRes.status], [true, 200], 'header in mixed case');
    // another organization in upper case is still outside the key's scope
    const outside = srv.client({
      'x-api-key': owner.apiKey,
      'x-organization-id': other.organizationId.toUpperCase(),
    });
    const denied = await outside.query('organization.getById', {
      organizationId: other.organizationId,
    });
    isError(t, denied, 'FORBIDDEN', 'API_KEY_SCOPE_DENIED');
    t.equal(denied.status, 403);
  },
);

t.test(
  'an organization outside the key scope or the membership is FORBIDDEN and reveals nothing',
  async (t) => {
    // key scoped to Beta, caller not a member of Beta
    const stranger = await outsider(srv, other.organizationId);
    const res = await stranger.client.mutate('apiKey.delete', {
      organizationId: other.organizationId,
      id: '00000000-0000-4000-8000-000000000000',
    });
    isError(t, res, 'FORBIDDEN', 'NOT_ORGANIZATION_MEMBER');
    // an organization that does not exist answers exactly the same to an outsider
    const ghost = '11111111-1111-4111-8111-111111111111';
    const ghostKey = await outsider(srv, ghost);
    isError(
      t,
      await ghostKey.client.mutate('apiKey.delete', { organizationId: ghost, id: ghost }),
      'FORBIDDEN',
      'NOT_ORGANIZATION_MEMBER',
    );
    // a platform operator learns it does not exist
    const operator = await outsider(srv, ghost, 'c2_superadmin');
    isError(
      t,
      await operator.client.mutate('apiKey.delete', { organizationId: ghost, id: ghost }),
      'NOT_FOUND',
      'ORGANIZATION_NOT_FOUND',
    );
  },
);

t.test('a disabled member is refused at once, through their own API key too', async (t) => {
  const admin = await addMember(srv, owner.organizationId, 'admin');
  const before = await admin.client.mutate('apiKey.delete', {
    organizationId: owner.organizationId,
    id: '00000000-0000-4000-8000-000000000000',
  });
  isError(t, before, 'NOT_FOUND', 'API_KEY_NOT_FOUND');
  await srv.deps.pool.query(`UPDATE memberships SET status = 'disabled' WHERE user_id = $1`, [
    admin.userId,
  ]);
  const after = await admin.client.mutate('apiKey.delete', {
    organizationId: owner.organizationId,
    id: '00000000-0000-4000-8000-000000000000',
  });
  isError(t, after, 'FORBIDDEN', 'MEMBER_DISABLED');
  const me = await admin.client.query('user.currentUser');
  t.same(me.ok && me.data.organizations, [], 'a disabled membership is not listed');
});

t.test('a deleted organization answers NOT_FOUND to its members', async (t) => {
  const gone = await newOrganization(srv, 'Gone Ltd');
  await srv.deps.pool.query('UPDATE organizations SET deleted_at = now() WHERE id = $1', [
    gone.organizationId,
  ]);
  isError(
    t,
    await gone.client.mutate('apiKey.delete', {
      organizationId: gone.organizationId,
      id: gone.userId,
    }),
    'NOT_FOUND',
    'ORGANIZATION_NOT_FOUND',
  );
});

t.test('procedure patterns are checked per procedure, also inside a batch', async (t) => {
  const narrow = await addMember(srv, owner.organizationId, 'admin', { patterns: ['user.*'] });
  const me = await narrow.client.query('user.currentUser');
  t.equal(me.ok, true);
  isError(
    t,
    await narrow.client.mutate('apiKey.delete', {
      organizationId: owner.organizationId,
      id: narrow.userId,
    }),
    'FORBIDDEN',
    'API_KEY_SCOPE_DENIED',
  );
  const updateOnly = await addMember(srv, owner.organizationId, 'admin', {
    patterns: ['apiKey.update'],
  });
  const input = { organizationId: owner.organizationId, id: narrow.userId };
  const batch = await updateOnly.client.raw(
    'POST',
    '/trpc/apiKey.update,apiKey.delete?batch=1',
    JSON.stringify({ 0: input, 1: input }),
  );
  t.equal(batch.body[0].error.data.errorCode, 'API_KEY_NOT_FOUND', 'the procedure in scope runs');
  t.equal(batch.body[1].error.data.errorCode, 'API_KEY_SCOPE_DENIED', 'the one outside is refused');
  const exact = await addMember(srv, owner.organizationId, 'admin', {
    patterns: ['health', 'apiKey.update'],
  });
  isError(t, await exact.client.query('user.currentUser'), 'FORBIDDEN', 'API_KEY_SCOPE_DENIED');
});

t.test('keys are stored only as a hash: a database dump yields no usable key', async (t) => {
  const { rows } = await srv.deps.pool.query('SELECT * FROM api_keys');
  const dump = JSON.stringify(rows);
  t.notMatch(dump, owner.apiKey);
  t.notMatch(dump, owner.apiKey.slice(10));
  const stored = rows.find((r: any) => Buffer.compare(r.key_hash, hashApiKey(owner.apiKey)) === 0);
  t.ok(stored, 'the hash of the key is what is stored');
});

t.test('apiKey.update rotates: the new key works, the old one stops at once', async (t) => {
  const admin = await addMember(srv, owner.organizationId, 'admin');
  const keyId = (
    await srv.deps.pool.query('SELECT id FROM api_keys WHERE user_id = $1', [admin.userId])
  ).rows[0].id;
  const res = await admin.client.mutate('apiKey.update', {
    organizationId: owner.organizationId,
    id: keyId,
    name: 'rotated',
    patterns: ['user.*', 'apiKey.*'],
  });
  t.equal(res.ok, true);
  if (!res.ok) return;
  t.match(res.data, {
    id: keyId,
    name: 'rotated',
    organizationIds: [owner.organizationId],
    patterns: ['user.*', 'apiKey.*'],
    userId: admin.userId,
  });
  t.match(res.data.key, /^rk_[A-Za-z0-9_-]{43}$/);
  t.not(res.data.key, admin.apiKey);
  t.ok(res.data.rotatedAt);
  isError(t, await admin.client.query('user.currentUser'), 'UNAUTHORIZED', 'INVALID_API_KEY');
  const fresh = srv.client({
    'x-api-key': res.data.key,
    'x-organization-id': owner.organizationId,
  });
  const me = await fresh.query('user.currentUser');
  t.equal(me.ok && me.data.id, admin.userId);
  // without rotating: only the name changes and no key is returned
  const rename = await fresh.mutate('apiKey.update', {
    organizationId: owner.organizationId,
    id: keyId,
    rotate: false,
    name: 'renamed',
  });
  t.equal(rename.ok && rename.data.key, null);
  t.equal(rename.ok && rename.data.name, 'renamed');
  t.equal((await fresh.query('user.currentUser')).ok, true);
});

t.test('apiKey.delete removes a key; other organizations keys are NOT_FOUND', async (t) => {
  const admin = await addMember(srv, owner.organizationId, 'admin');
  const writer = await addMember(srv, owner.organizationId, 'writer');
  const writerKeyId = (
    await srv.deps.pool.query('SELECT id FROM api_keys WHERE user_id = $1', [writer.userId])
  ).rows[0].id;
  const otherKeyId = (
    await srv.deps.pool.query('SELECT id FROM api_keys WHERE user_id = $1', [other.userId])
  ).rows[0].id;
  isError(
    t,
    await admin.client.mutate('apiKey.delete', {
      organizationId: owner.organizationId,
      id: otherKeyId,
    }),
    'NOT_FOUND',
    'API_KEY_NOT_FOUND',
  );
  isError(
    t,
    await admin.client.mutate('apiKey.update', {
      organizationId: owner.organizationId,
      id: otherKeyId,
    }),
    'NOT_FOUND',
    'API_KEY_NOT_FOUND',
  );
  isError(
    t,
    await writer.client.mutate('apiKey.delete', {
      organizationId: owner.organizationId,
      id: writerKeyId,
    }),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
  const res = await admin.client.mutate('apiKey.delete', {
    organizationId: owner.organizationId,
    id: writerKeyId,
  });
  t.same(res.ok && res.data, { id: writerKeyId, deleted: true });
  isError(t, await writer.client.query('user.currentUser'), 'UNAUTHORIZED', 'INVALID_API_KEY');
  // the other organization's key still works
  t.equal((await other.client.query('user.currentUser')).ok, true);
});

t.test('a key spanning several organizations is managed by its owner only', async (t) => {
  const multi = await addMember(srv, owner.organizationId, 'admin');
  await srv.deps.pool.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'admin')`,
    [other.organizationId, multi.userId],
  );
  const keyId = (
    await srv.deps.pool.query('SELECT id FROM api_keys WHERE user_id = $1', [multi.userId])
  ).rows[0].id;
  await srv.deps.pool.query('UPDATE api_keys SET organization_ids = $2 WHERE id = $1', [
    keyId,
    [owner.organizationId, other.organizationId],
  ]);
  const otherAdmin = await addMember(srv, owner.organizationId, 'admin');
  isError(
    t,
    await otherAdmin.client.mutate('apiKey.delete', {
      organizationId: owner.organizationId,
      id: keyId,
    }),
    'FORBIDDEN',
    'API_KEY_NOT_MANAGEABLE',
  );
  const self = await multi.client.mutate('apiKey.update', {
    organizationId: owner.organizationId,
    id: keyId,
    rotate: false,
    name: 'mine',
  });
  t.equal(self.ok && self.data.name, 'mine');
  const me = await multi.client.query('user.currentUser');
  t.same(me.ok && me.data.organizations.map((o: any) => o.name), ['Alpha Records', 'Beta Music']);
});

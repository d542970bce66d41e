// An embed session token (cube.getSession) is bound to the API key that made it: deleting the key,
// rotating it, or changing its procedure patterns ends the cs_ tokens minted with it. Otherwise a
// leaked key could not be revoked: whoever held it would mint a session first and keep reading the
// member's analytics, raw SQL included, for the session's hour.
import t from 'tap';
import { seedDataset } from '../analytics/dataset.ts';
import { createApiKey } from '../../src/auth/apiKeys.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Revocation Org');
const org = owner.organizationId;
await seedDataset(srv, org);
const member = await addMember(srv, org, 'member');
const embed = (token: string) => srv.client({ authorization: `Bearer ${token}` });
const SQL = 'SELECT count(*) FROM analytics_full_view';

/** A fresh key of the member, and a session minted with it (as an attacker holding the key would). */
async function keyAndSession(patterns: string[], userId = member.userId) {
  const { key, record } = await createApiKey(srv.deps.pool, {
    userId,
    name: 'leaked',
    organizationIds: [org],
    patterns,
  });
  const client = srv.client({ 'x-api-key': key, 'x-organization-id': org });
  const s = await client.query('cube.getSession', { organizationId: org });
  if (!s.ok) throw new Error(JSON.stringify(s.error));
  const before = await embed(s.data.token).mutate('cube.sqlQuery', {
    organizationId: org,
    sql: SQL,
  });
  if (!before.ok) throw new Error(JSON.stringify(before.error));
  return { key, keyId: record.id, client, token: s.data.token as string };
}

t.test('a session dies with the API key that made it (apiKey.delete)', async (t) => {
  const { keyId, client, token } = await keyAndSession(['*']);
  const del = await owner.client.mutate('apiKey.delete', { organizationId: org, id: keyId });
  t.equal(del.ok, true, 'the owner deletes the leaked key');
  t.match(
    await client.query('user.currentUser'),
    { ok: false, error: { data: { errorCode: 'INVALID_API_KEY' } } },
    'the key itself is dead',
  );
  const after = await embed(token).mutate('cube.sqlQuery', { organizationId: org, sql: SQL });
  t.equal(after.ok, false, 'the session minted with the deleted key must no longer read the data');
  if (after.ok)
    t.comment(`still answered after the key was deleted: ${JSON.stringify(after.data)}`);
});

t.test('a session dies when its key is rotated', async (t) => {
  // an admin's leaked key: the admin rotates it through the API (the leaked secret stops working at once)
  const admin = await addMember(srv, org, 'admin');
  const { keyId, client, token } = await keyAndSession(['*'], admin.userId);
  const rot = await admin.client.mutate('apiKey.update', {
    organizationId: org,
    id: keyId,
    rotate: true,
  });
  t.equal(rot.ok, true, 'the key is rotated by its owner');
  t.match(
    await client.query('user.currentUser'),
    { ok: false, error: { data: { errorCode: 'INVALID_API_KEY' } } },
    'the old secret is dead',
  );
  const after = await embed(token).mutate('cube.sqlQuery', { organizationId: org, sql: SQL });
  t.equal(after.ok, false, 'the session minted with the old secret must no longer read the data');
});

t.test("changing a key's patterns ends its sessions; renaming it does not", async (t) => {
  const { keyId, token } = await keyAndSession(['*']);
  t.equal(
    (
      await owner.client.mutate('apiKey.update', {
        organizationId: org,
        id: keyId,
        rotate: false,
        name: 'renamed',
      })
    ).ok,
    true,
  );
  t.equal(
    (await embed(token).mutate('cube.sqlQuery', { organizationId: org, sql: SQL })).ok,
    true,
    'a new name changes nothing',
  );
  const upd = await owner.client.mutate('apiKey.update', {
    organizationId: org,
    id: keyId,
    rotate: false,
    patterns: ['rightsholder.list'],
  });
  t.equal(upd.ok, true, 'the owner narrows the key to rightsholder.list');
  const after = await embed(token).mutate('cube.sqlQuery', { organizationId: org, sql: SQL });
  t.same(
    after.ok ? null : [after.error.data.code, after.error.data.errorCode],
    ['UNAUTHORIZED', 'INVALID_CUBE_SESSION'],
    'the session is gone',
  );
});

t.test(
  "a key's sessions are its own: another key of the same member gets another token",
  async (t) => {
    const a = await keyAndSession(['*']);
    const b = await keyAndSession(['*']);
    t.not(a.token, b.token);
    t.equal(
      (await owner.client.mutate('apiKey.delete', { organizationId: org, id: a.keyId })).ok,
      true,
    );
    t.equal(
      (await embed(b.token).mutate('cube.sqlQuery', { organizationId: org, sql: SQL })).ok,
      true,
      "the other key's session lives on",
    );
    t.equal(
      (await embed(a.token).mutate('cube.sqlQuery', { organizationId: org, sql: SQL })).ok,
      false,
    );
  },
);

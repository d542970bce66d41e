// Tokens after sign-in: refresh rotation and reuse detection, audiences, revocation, expiry, and
// the API's rules for a bearer token (organizations, roles, disabled members, 401 challenges).
import * as oauth from 'oauth4webapi';
import t from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { adminInProcess } from '../helpers/cli.ts';
import { discover, insecure, refresh, tokensFor } from './browser.ts';

const srv = await startTestServer(t);
const PASSWORD = 'a long enough password';
const owner = await newOrganization(srv, 'Token Org');
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const bearer = (token: string) => srv.client({ authorization: `Bearer ${token}` });

t.test(
  'refresh rotates the token; a used one is invalid_grant and ends the whole family',
  async (t) => {
    const as = await discover(srv);
    const first = await tokensFor(srv, owner.email, PASSWORD);
    const r1 = await refresh(as, first.refresh_token!);
    t.equal(r1.status, 200);
    t.type(r1.body.refresh_token, 'string');
    t.not(r1.body.refresh_token, first.refresh_token, 'a new refresh token');
    t.equal(r1.body.expires_in, 3600);
    t.equal((await bearer(r1.body.access_token as string).query('user.currentUser')).ok, true);

    const reuse = await refresh(as, first.refresh_token!);
    t.equal(reuse.status, 400);
    t.equal(reuse.body.error, 'invalid_grant');
    const next = await refresh(as, r1.body.refresh_token as string);
    t.equal(
      next.body.error,
      'invalid_grant',
      'the newest refresh token of the family is revoked too',
    );
    const api = await bearer(r1.body.access_token as string).query('user.currentUser');
    t.equal(!api.ok && api.error.data.errorCode, 'INVALID_ACCESS_TOKEN', 'and its access tokens');
  },
);

t.test(
  'parallel refreshes with one token: exactly one wins and the family is revoked',
  async (t) => {
    const as = await discover(srv);
    const tokens = await tokensFor(srv, owner.email, PASSWORD);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => refresh(as, tokens.refresh_token!)),
    );
    t.equal(
      answers.filter((a) => a.status === 200).length,
      1,
      answers.map((a) => JSON.stringify(a.body)).join('\n'),
    );
    t.ok(answers.filter((a) => a.status !== 200).every((a) => a.body.error === 'invalid_grant'));
    const winner = answers.find((a) => a.status === 200)!;
    t.equal((await refresh(as, winner.body.refresh_token as string)).body.error, 'invalid_grant');
  },
);

t.test(
  'audience binding (RFC 8707): tool-server tokens are refused by the API and the reverse',
  async (t) => {
    const mcp = `${srv.url}/mcp`;
    const forMcp = await tokensFor(srv, owner.email, PASSWORD, { resource: mcp });
    const refused = await bearer(forMcp.access_token).query('user.currentUser');
    t.equal(!refused.ok && refused.error.data.errorCode, 'ACCESS_TOKEN_AUDIENCE');
    t.equal(refused.status, 401);
    const oauthServer = await import('../../src/oauth/tokens.ts');
    const info = await oauthServer.verifyAccessToken(srv.deps.pool, forMcp.access_token, mcp);
    t.equal(info.userId, owner.userId);
    t.equal(info.clientId, 'royalty-cli');

    const forApi = await tokensFor(srv, owner.email, PASSWORD);
    const wrong = await oauthServer.verifyAccessToken(srv.deps.pool, forApi.access_token, mcp).then(
      () => 'accepted',
      (e: unknown) => (e as { errorCode?: string }).errorCode,
    );
    t.equal(wrong, 'ACCESS_TOKEN_AUDIENCE');
    // a resource the server does not know
    const as = await discover(srv);
    const unknown = await refresh(as, forApi.refresh_token!, {
      resource: 'https://elsewhere.example/api',
    });
    t.equal(unknown.body.error, 'invalid_target');
  },
);

t.test("revocation (RFC 7009) of either token ends the grant's tokens", async (t) => {
  const as = await discover(srv);
  const client = { client_id: 'royalty-cli' };
  const a = await tokensFor(srv, owner.email, PASSWORD);
  const res = await oauth.revocationRequest(as, client, oauth.None(), a.refresh_token!, insecure);
  await oauth.processRevocationResponse(res);
  t.equal((await refresh(as, a.refresh_token!)).body.error, 'invalid_grant');
  const api = await bearer(a.access_token).query('user.currentUser');
  t.equal(!api.ok && api.error.data.errorCode, 'INVALID_ACCESS_TOKEN');

  const b = await tokensFor(srv, owner.email, PASSWORD);
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(as, client, oauth.None(), b.access_token, insecure),
  );
  const gone = await bearer(b.access_token).query('user.currentUser');
  t.equal(!gone.ok && gone.error.data.errorCode, 'INVALID_ACCESS_TOKEN');
  // oidc-provider revokes every token of the grant with one of them (RFC 7009 2.1 allows it)
  t.equal((await refresh(as, b.refresh_token!)).body.error, 'invalid_grant');
  // revoking an unknown token is not an error (RFC 7009 2.2)
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(as, client, oauth.None(), 'no-such-token-at-all', insecure),
  );
});

t.test('an access token expires after an hour', async (t) => {
  const tokens = await tokensFor(srv, owner.email, PASSWORD);
  const realNow = Date.now;
  const start = realNow();
  t.teardown(() => {
    Date.now = realNow;
  });
  Date.now = () => start + 3599_000;
  t.equal(
    (await bearer(tokens.access_token).query('user.currentUser')).ok,
    true,
    'valid within the hour',
  );
  Date.now = () => start + 3601_000;
  const late = await bearer(tokens.access_token).query('user.currentUser');
  t.equal(!late.ok && late.error.data.errorCode, 'INVALID_ACCESS_TOKEN');
  t.match(!late.ok && late.error.message, /expired/);
});

t.test(
  'with a token the input organization decides; membership and roles apply as for keys',
  async (t) => {
    const other = await newOrganization(srv, 'Someone Else');
    const writer = await addMember(srv, owner.organizationId, 'writer');
    await setPassword(srv.deps.pool, writer.email, PASSWORD);
    const tokens = await tokensFor(srv, writer.email, PASSWORD);
    const api = bearer(tokens.access_token);

    const created = await api.mutate('rightsholder.create', {
      organizationId: owner.organizationId,
      name: 'Made With A Token',
    });
    t.equal(created.ok, true, 'writer may create');
    const admin = await api.mutate('user.updateOrganizationUserStatus', {
      organizationId: owner.organizationId,
      userId: owner.userId,
      status: 'disabled',
    });
    t.equal(!admin.ok && admin.error.data.errorCode, 'INSUFFICIENT_ROLE');
    t.equal(admin.status, 403);
    const foreign = await api.query('rightsholder.list', { organizationId: other.organizationId });
    t.equal(
      !foreign.ok && foreign.error.data.errorCode,
      'NOT_ORGANIZATION_MEMBER',
      'another organization, as for keys',
    );
    const headerOnly = await api
      .with({ 'x-organization-id': owner.organizationId })
      .query('rightsholder.list', {});
    t.equal(headerOnly.ok, false, 'the header alone does not select the organization');

    // the activity log says which credential acted
    const { rows } = await srv.deps.pool.query(
      `SELECT actor_user_id, api_key_id, oauth_client_id FROM activity_events WHERE organization_id = $1 AND action = 'rightsholder.create'`,
      [owner.organizationId],
    );
    t.same(rows, [
      { actor_user_id: writer.userId, api_key_id: null, oauth_client_id: 'royalty-cli' },
    ]);

    // a disabled member's token stops at once
    await owner.client.mutate('user.updateOrganizationUserStatus', {
      organizationId: owner.organizationId,
      userId: writer.userId,
      status: 'disabled',
    });
    const disabled = await api.query('rightsholder.list', { organizationId: owner.organizationId });
    t.equal(!disabled.ok && disabled.error.data.errorCode, 'MEMBER_DISABLED');
  },
);

t.test('apiKey events say which credential acted: the OAuth client, or the key', async (t) => {
  const tokens = await tokensFor(srv, owner.email, PASSWORD);
  const { rows: keys } = await srv.deps.pool.query(
    `SELECT id FROM api_keys WHERE user_id = $1 AND name = 'bootstrap'`,
    [owner.userId],
  );
  const renamed = await bearer(tokens.access_token).mutate('apiKey.update', {
    organizationId: owner.organizationId,
    id: keys[0].id,
    name: 'renamed by token',
    rotate: false,
  });
  t.equal(renamed.ok, true, JSON.stringify(renamed.error));
  const byKey = await owner.client.mutate('apiKey.update', {
    organizationId: owner.organizationId,
    id: keys[0].id,
    name: 'renamed by key',
    rotate: false,
  });
  t.equal(byKey.ok, true, JSON.stringify(byKey.error));
  const { rows } = await srv.deps.pool.query(
    `SELECT actor_user_id, api_key_id, oauth_client_id FROM activity_events WHERE organization_id = $1 AND action = 'apiKey.update' ORDER BY created_at`,
    [owner.organizationId],
  );
  t.same(rows, [
    { actor_user_id: owner.userId, api_key_id: null, oauth_client_id: 'royalty-cli' },
    { actor_user_id: owner.userId, api_key_id: keys[0].id, oauth_client_id: null },
  ]);
});

t.test('a new password signs out every client of the person', async (t) => {
  const person = await newOrganization(srv, 'Reset Org');
  await setPassword(srv.deps.pool, person.email, PASSWORD);
  const tokens = await tokensFor(srv, person.email, PASSWORD);
  const ownerTokens = await tokensFor(srv, owner.email, PASSWORD);
  t.equal((await bearer(tokens.access_token).query('user.currentUser')).ok, true);
  await setPassword(srv.deps.pool, person.email, 'the new password, after a leak');
  const after = await bearer(tokens.access_token).query('user.currentUser');
  t.equal(!after.ok && after.error.data.errorCode, 'INVALID_ACCESS_TOKEN');
  t.equal((await refresh(await discover(srv), tokens.refresh_token!)).body.error, 'invalid_grant');
  t.equal(
    (await bearer(ownerTokens.access_token).query('user.currentUser')).ok,
    true,
    'nobody else is signed out',
  );
});

t.test('every 401 carries WWW-Authenticate (RFC 6750)', async (t) => {
  const none = await fetch(`${srv.url}/trpc/user.currentUser?batch=1`);
  t.equal(none.status, 401);
  t.equal(
    none.headers.get('www-authenticate'),
    `Bearer realm="royalty", resource_metadata="${srv.url}/.well-known/oauth-protected-resource/trpc"`,
  );
  const bad = await fetch(`${srv.url}/trpc/user.currentUser?batch=1`, {
    headers: { authorization: 'Bearer not-a-real-token-at-all-0123' },
  });
  t.equal(bad.status, 401);
  t.match(
    bad.headers.get('www-authenticate'),
    /^Bearer realm="royalty", error="invalid_token", resource_metadata=/,
  );
  const key = await fetch(`${srv.url}/trpc/user.currentUser?batch=1`, {
    headers: { 'x-api-key': 'rk_wrong' },
  });
  t.equal(key.status, 401);
  t.ok(key.headers.get('www-authenticate'));
});

t.test(
  'admin oauth rotate-keys: a new signing key is published, the previous one kept',
  async (t) => {
    const as = await discover(srv);
    const kids = async () =>
      ((await (await fetch(as.jwks_uri!)).json()) as { keys: { kid: string }[] }).keys.map(
        (k) => k.kid,
      );
    const before = await kids();
    const admin = adminInProcess(srv.config.databaseUrl);
    const rotated = await admin('oauth', 'rotate-keys', '--json');
    t.equal(rotated.code, 0, rotated.stderr);
    const { signingKeyId } = JSON.parse(rotated.stdout);
    const realNow = Date.now;
    t.teardown(() => {
      Date.now = realNow;
    });
    const start = realNow();
    Date.now = () => start + 61_000; // past the reload interval
    const after = await kids();
    Date.now = realNow;
    t.same(after, [signingKeyId, ...before]);
    // sign-in keeps working across the rotation (cookies signed with the new secret)
    t.equal(
      (
        await bearer((await tokensFor(srv, owner.email, PASSWORD)).access_token).query(
          'user.currentUser',
        )
      ).ok,
      true,
    );
  },
);

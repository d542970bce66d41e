// Embed sessions (cube.getSession) made with an OAuth bearer token are bound to the token's grant:
// revoking the grant ends them at once, whichever way it is revoked (the revocation endpoint,
// refresh-token reuse, signing out), while sessions of other grants and of API keys go on.
import * as oauth from 'oauth4webapi';
import t from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import {
  authorizationUrl,
  Browser,
  discover,
  exchange,
  formOf,
  insecure,
  refresh,
  signInAndAllow,
  type Tokens,
} from './browser.ts';

const srv = await startTestServer(t);
const PASSWORD = 'a long enough password';
const owner = await newOrganization(srv, 'Embed Org');
const org = owner.organizationId;
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const bearer = (token: string) => srv.client({ authorization: `Bearer ${token}` });
const cli = { client_id: 'royalty-cli' };

/** Signs in with a browser of its own (kept, to sign out with) and mints an embed session with the token. */
async function signedIn(): Promise<{ browser: Browser; tokens: Tokens; session: string }> {
  const as = await discover(srv);
  const browser = new Browser(srv.url);
  const auth = await authorizationUrl(as);
  const tokens = await exchange(
    as,
    auth,
    await signInAndAllow(browser, auth.url, owner.email, PASSWORD),
  );
  const made = await bearer(tokens.access_token).query('cube.getSession', { organizationId: org });
  if (!made.ok) throw new Error(JSON.stringify(made.error));
  return { browser, tokens, session: made.data.token as string };
}

/** What an embedded page gets with the session: 'ok', or the error's errorCode. */
async function reads(session: string): Promise<string> {
  const r = await bearer(session).query('cube.meta', { organizationId: org });
  return r.ok ? 'ok' : `${r.status} ${r.error.data.errorCode}`;
}

const keySession = await owner.client.query('cube.getSession', { organizationId: org });
if (!keySession.ok) throw new Error(JSON.stringify(keySession.error));
const byKey = keySession.data.token as string;

t.test(
  'one grant, one session: asked again under the same grant, the same session; another grant, another',
  async (t) => {
    const a = await signedIn();
    const again = await bearer(a.tokens.access_token).query('cube.getSession', {
      organizationId: org,
    });
    t.equal(again.ok && again.data.token, a.session);
    const b = await signedIn();
    t.not(b.session, a.session);
    t.not(a.session, byKey, "not the API key's session either");
    const { rows } = await srv.deps.pool.query(
      'SELECT count(*)::int AS n FROM cube_sessions WHERE token = ANY($1) AND oauth_grant_id IS NOT NULL',
      [[a.session, b.session]],
    );
    t.equal(rows[0].n, 2);
  },
);

t.test(
  'revoking the access token (RFC 7009) ends its sessions; other grants and keys keep theirs',
  async (t) => {
    const as = await discover(srv);
    const a = await signedIn();
    const b = await signedIn();
    t.equal(await reads(a.session), 'ok');
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, cli, oauth.None(), a.tokens.access_token, insecure),
    );
    t.equal(
      await reads(a.session),
      '401 INVALID_CUBE_SESSION',
      "the revoked grant's session has ended",
    );
    t.equal(await reads(b.session), 'ok', "another sign-in's session goes on");
    t.equal(await reads(byKey), 'ok', "the API key's session goes on");
  },
);

t.test('revoking the refresh token ends them too', async (t) => {
  const as = await discover(srv);
  const a = await signedIn();
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(as, cli, oauth.None(), a.tokens.refresh_token!, insecure),
  );
  t.equal(await reads(a.session), '401 INVALID_CUBE_SESSION');
});

t.test(
  'a reused refresh token revokes the family, sessions included; a normal refresh keeps them',
  async (t) => {
    const as = await discover(srv);
    const a = await signedIn();
    const rotated = await refresh(as, a.tokens.refresh_token!);
    t.equal(rotated.status, 200);
    t.equal(await reads(a.session), 'ok', 'a refresh is not a revocation');
    t.equal(
      (await refresh(as, a.tokens.refresh_token!)).body.error,
      'invalid_grant',
      'the used refresh token again',
    );
    t.equal(await reads(a.session), '401 INVALID_CUBE_SESSION');
  },
);

t.test('signing out revokes the sign-in and its sessions', async (t) => {
  const a = await signedIn();
  const b = await signedIn();
  const logout = await a.browser.go(`${srv.url}/api/oauth/logout`);
  const form = formOf(logout.html, '/logout');
  const done = await a.browser.go(form.action, { form: { ...form.fields, logout: 'yes' } });
  t.match(done.html, /You are signed out/);
  t.equal(await reads(a.session), '401 INVALID_CUBE_SESSION');
  const api = await bearer(a.tokens.access_token).query('user.currentUser');
  t.equal(!api.ok && api.error.data.errorCode, 'INVALID_ACCESS_TOKEN', 'its access token too');
  t.equal(await reads(b.session), 'ok', 'a sign-in in another browser goes on');
});

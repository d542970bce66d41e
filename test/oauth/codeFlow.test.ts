// The authorization code flow with PKCE as a client runs it (oauth4webapi) against the running
// service: discovery, the login and consent forms, tokens, the API with the token.
import * as oauth from 'oauth4webapi';
import t from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import {
  authorizationUrl,
  Browser,
  CALLBACK,
  discover,
  exchange,
  formOf,
  insecure,
  signInAndAllow,
  tokenRequest,
} from './browser.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Signed In Org');
const PASSWORD = 'a long enough password';
await setPassword(srv.deps.pool, owner.email, PASSWORD);

t.test('discovery at the root lists the endpoints under /api/oauth', async (t) => {
  const as = await discover(srv);
  t.equal(as.issuer, srv.url);
  t.equal(as.authorization_endpoint, `${srv.url}/api/oauth/authorize`);
  t.equal(as.token_endpoint, `${srv.url}/api/oauth/token`);
  t.equal(as.device_authorization_endpoint, `${srv.url}/api/oauth/device/auth`);
  t.equal(as.registration_endpoint, `${srv.url}/api/oauth/register`);
  t.equal(as.revocation_endpoint, `${srv.url}/api/oauth/revoke`);
  t.equal(as.jwks_uri, `${srv.url}/api/oauth/jwks`);
  t.same(as.code_challenge_methods_supported, ['S256']);
  t.same(as.grant_types_supported, [
    'authorization_code',
    'refresh_token',
    'urn:ietf:params:oauth:grant-type:device_code',
  ]);
  t.ok(as.scopes_supported?.includes('api'));
  const jwks = (await (await fetch(as.jwks_uri!)).json()) as {
    keys: { kty: string; alg: string; d?: string }[];
  };
  t.match(jwks.keys[0], { kty: 'EC', alg: 'ES256' });
  t.notOk(
    jwks.keys.some((k) => 'd' in k),
    'no private part is published',
  );
  const prm = (await (
    await fetch(`${srv.url}/.well-known/oauth-protected-resource`)
  ).json()) as Record<string, unknown>;
  t.same(prm.resource, `${srv.url}/mcp`);
  t.same(prm.authorization_servers, [srv.url]);
  const apiPrm = (await (
    await fetch(`${srv.url}/.well-known/oauth-protected-resource/trpc`)
  ).json()) as Record<string, unknown>;
  t.same(apiPrm.resource, `${srv.url}/trpc`);
});

t.test(
  'code + PKCE through the login and consent pages, then the API with the token',
  async (t) => {
    const as = await discover(srv);
    const auth = await authorizationUrl(as);
    const browser = new Browser(srv.url);
    const login = await browser.go(auth.url.href);
    t.equal(login.status, 200);
    t.match(login.headers.get('content-security-policy'), /default-src 'none'/);
    t.equal(login.headers.get('x-frame-options'), 'DENY');
    t.match(login.html, /<input id="email" type="email"/);
    t.match(login.html, /<input id="password" type="password"/);
    t.notMatch(login.html, /https?:\/\/(?!127\.0\.0\.1)/, 'no asset from elsewhere');

    const callback = await signInAndAllow(browser, auth.url, owner.email, PASSWORD);
    t.equal(callback.origin + callback.pathname, CALLBACK);
    t.equal(callback.searchParams.get('state'), auth.state);
    t.equal(callback.searchParams.get('iss'), srv.url);
    const tokens = await exchange(as, auth, callback);
    t.equal(tokens.expires_in, 3600);
    t.type(tokens.refresh_token, 'string');

    const api = srv.client({ authorization: `Bearer ${tokens.access_token}` });
    const me = await api.query('user.currentUser');
    t.same(me.ok && me.data.organizations, [
      { id: owner.organizationId, name: 'Signed In Org', role: 'owner' },
    ]);
    const list = await api.query('rightsholder.list', { organizationId: owner.organizationId });
    t.equal(list.ok, true, 'the body organizationId is enough, no x-organization-id');

    // the code is single use: a replay fails and ends what it issued
    const replay = await tokenRequest(as, {
      grant_type: 'authorization_code',
      client_id: 'royalty-cli',
      code: callback.searchParams.get('code')!,
      redirect_uri: CALLBACK,
      code_verifier: auth.verifier,
    });
    t.equal(replay.status, 400);
    t.equal(replay.body.error, 'invalid_grant');
    const after = await api.query('user.currentUser');
    t.equal(
      !after.ok && after.error.data.errorCode,
      'INVALID_ACCESS_TOKEN',
      'the replayed code revoked its tokens',
    );
  },
);

t.test(
  'PKCE is required, S256 only; redirect URIs match exactly except a loopback port',
  async (t) => {
    const as = await discover(srv);
    const browser = new Browser(srv.url);
    const plain = await authorizationUrl(as, { extra: { code_challenge_method: 'plain' } });
    const refused = await browser.go(plain.url.href);
    t.equal(refused.status, 0, 'an error goes back to the (registered) client');
    t.equal(new URL(refused.url).searchParams.get('error'), 'invalid_request');

    const none = await authorizationUrl(as);
    none.url.searchParams.delete('code_challenge');
    none.url.searchParams.delete('code_challenge_method');
    const noPkce = await browser.go(none.url.href);
    t.equal(new URL(noPkce.url).searchParams.get('error'), 'invalid_request');

    // any loopback port (RFC 8252), but not another host or path: those get no redirect at all
    const otherPort = await authorizationUrl(as, {
      redirectUri: 'http://127.0.0.1:40001/callback',
    });
    t.equal((await new Browser(srv.url).go(otherPort.url.href)).status, 200, 'the login page');
    for (const evil of [
      'https://evil.example/callback',
      'http://127.0.0.1:40001/other',
      'http://127.0.0.1.evil.example/callback',
    ]) {
      const bad = await authorizationUrl(as, { redirectUri: evil });
      const page = await new Browser(srv.url).go(bad.url.href);
      t.equal(page.status, 400, `${evil}: an error page, never a redirect`);
      t.notMatch(page.html, /evil\.example/, 'the page does not link to it');
    }

    // a wrong verifier
    const auth = await authorizationUrl(as);
    const callback = await signInAndAllow(new Browser(srv.url), auth.url, owner.email, PASSWORD);
    const wrong = await tokenRequest(as, {
      grant_type: 'authorization_code',
      client_id: 'royalty-cli',
      code: callback.searchParams.get('code')!,
      redirect_uri: CALLBACK,
      code_verifier: oauth.generateRandomCodeVerifier(),
    });
    t.equal(wrong.body.error, 'invalid_grant');
    void insecure;
  },
);

t.test(
  'failed logins say the same whether or not the e-mail exists; CSRF is refused',
  async (t) => {
    const as = await discover(srv);
    const auth = await authorizationUrl(as);
    const browser = new Browser(srv.url);
    const login = await browser.go(auth.url.href);
    const form = formOf(login.html, '/login');
    const wrongPassword = await browser.go(form.action, {
      form: { ...form.fields, email: owner.email, password: 'not the password!' },
    });
    const noAccount = await browser.go(form.action, {
      form: { ...form.fields, email: 'nobody@example.test', password: 'not the password!' },
    });
    // the login form again, with the message (a browser logs a 4xx page as a console error)
    t.equal(wrongPassword.status, 200);
    t.equal(noAccount.status, 200);
    const message = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
    t.equal(message(wrongPassword.html), 'The e-mail or the password is not right.');
    t.equal(message(noAccount.html), message(wrongPassword.html));

    const forged = await browser.go(form.action, {
      form: { csrf: 'forged', email: owner.email, password: PASSWORD },
    });
    t.equal(forged.status, 403);
    const missing = await browser.go(form.action, {
      form: { email: owner.email, password: PASSWORD },
    });
    t.equal(missing.status, 403);
    // another browser (no interaction cookie) with the right token
    const stranger = await new Browser(srv.url).go(form.action, {
      form: { ...form.fields, email: owner.email, password: PASSWORD },
    });
    t.equal(stranger.status, 400);
    // the real form still works
    const ok = await browser.go(form.action, {
      form: { ...form.fields, email: owner.email, password: PASSWORD },
    });
    t.equal(ok.status, 200);
    t.match(ok.html, /Allow access\?/);
    // the consent form is guarded the same way
    const consent = formOf(ok.html, '/consent');
    const forgedConsent = await browser.go(consent.action, {
      form: {
        csrf: form.fields.csrf!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
        decision: 'allow',
      },
    });
    t.equal(forgedConsent.status, 403);
    const allowed = await browser.go(consent.action, {
      form: { ...consent.fields, decision: 'allow' },
    });
    t.equal(allowed.status, 0, 'the real one redirects to the client');
    t.equal(new URL(allowed.url).searchParams.get('state'), auth.state);
  },
);

t.test(
  'signing out ends the browser session: the next sign-in asks for the password again',
  async (t) => {
    const as = await discover(srv);
    const browser = new Browser(srv.url);
    await signInAndAllow(browser, (await authorizationUrl(as)).url, owner.email, PASSWORD);
    // still signed in: no password asked; a native client's request is always shown for consent
    // (oidc-provider's native_client_prompt: another app could claim its loopback redirect)
    const again = await browser.go((await authorizationUrl(as)).url.href);
    t.equal(again.status, 200);
    t.match(again.html, /<title>Allow access\?<\/title>/);
    t.notMatch(again.html, /type="password"/);

    const logout = await browser.go(`${srv.url}/api/oauth/logout`);
    t.equal(logout.status, 200);
    t.equal(logout.headers.get('x-frame-options'), 'DENY');
    t.match(logout.html, /Sign out of the royalty service in this browser\?/);
    const form = formOf(logout.html, '/logout');
    const forged = await browser.go(form.action, { form: { xsrf: 'forged', logout: 'yes' } });
    t.not(forged.status, 200, 'a forged sign-out is refused');
    const done = await browser.go(form.action, { form: { ...form.fields, logout: 'yes' } });
    t.equal(done.status, 200);
    t.match(done.html, /You are signed out/);
    const login = await browser.go((await authorizationUrl(as)).url.href);
    t.equal(login.status, 200);
    t.match(login.html, /type="password"/);
  },
);

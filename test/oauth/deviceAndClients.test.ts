// The device flow (RFC 8628) through its pages, client registration (RFC 7591) and its policy,
// Client ID Metadata Documents' policy, and the rate limits of the sign-in surface.
import * as oauth from 'oauth4webapi';
import t from 'tap';
import { clientPolicyProblem } from '../../src/oauth/policy.ts';
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
  signInAndAllow,
} from './browser.ts';

const srv = await startTestServer(t, {
  env: {
    OAUTH_REGISTRATIONS_PER_ADDRESS: '5',
    OAUTH_LOGIN_FAILURES_PER_ACCOUNT: '3',
    OAUTH_LOGIN_FAILURES_PER_ADDRESS: '6',
  },
});
const PASSWORD = 'a long enough password';
const owner = await newOrganization(srv, 'Device Org');
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const cli = { client_id: 'royalty-cli' };

t.test(
  'device flow: the code page, sign-in, consent, then the polling client gets tokens',
  async (t) => {
    const as = await discover(srv);
    const device = await oauth.processDeviceAuthorizationResponse(
      as,
      cli,
      await oauth.deviceAuthorizationRequest(as, cli, oauth.None(), { scope: 'api' }, insecure),
    );
    t.equal(device.verification_uri, `${srv.url}/api/oauth/device`);
    t.match(device.user_code, /^[A-Z]{4}-[A-Z]{4}$/);
    const poll = () =>
      oauth
        .deviceCodeGrantRequest(as, cli, oauth.None(), device.device_code, insecure)
        .then((r) => oauth.processDeviceCodeResponse(as, cli, r));
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => 'no error',
        (e: unknown) => (e as { error?: string }).error,
      );
    t.equal(await failure(poll()), 'authorization_pending');

    const browser = new Browser(srv.url);
    const input = await browser.go(device.verification_uri);
    t.equal(input.status, 200);
    t.match(input.headers.get('content-security-policy'), /default-src 'none'/);
    t.equal(input.headers.get('x-frame-options'), 'DENY');
    t.notMatch(input.html, /fonts\.googleapis|<script|onfocus/, 'no remote font, no script');
    const codeForm = formOf(input.html, '/device');
    const wrong = await browser.go(codeForm.action, {
      form: { ...codeForm.fields, user_code: 'ABCD-EFGH' },
    });
    t.match(wrong.html, /That code is not valid/);
    // each page has a fresh anti-forgery token; the code is taken in any case, without its dash
    const retry = formOf(wrong.html, '/device');
    t.not(retry.fields.xsrf, codeForm.fields.xsrf);
    const confirm = await browser.go(retry.action, {
      form: { ...retry.fields, user_code: device.user_code.toLowerCase().replace('-', '') },
    });
    t.match(confirm.html, /Royalty command-line client/);
    t.match(confirm.html, new RegExp(device.user_code));
    const confirmForm = formOf(confirm.html, '/device');
    const login = await browser.go(confirmForm.action, {
      form: { ...confirmForm.fields, confirm: 'yes' },
    });
    const loginForm = formOf(login.html, '/login');
    const consent = await browser.go(loginForm.action, {
      form: { ...loginForm.fields, email: owner.email, password: PASSWORD },
    });
    const allow = formOf(consent.html, '/consent');
    const done = await browser.go(allow.action, { form: { ...allow.fields, decision: 'allow' } });
    t.equal(done.status, 200);
    t.match(done.html, /Device connected/);

    const tokens = await poll();
    t.equal(tokens.expires_in, 3600);
    t.type(tokens.refresh_token, 'string');
    const me = await srv
      .client({ authorization: `Bearer ${tokens.access_token}` })
      .query('user.currentUser');
    t.equal(me.ok && me.data.id, owner.userId);
    t.equal(await failure(poll()), 'invalid_grant', 'a device code is used once');
  },
);

t.test('guessing user codes is limited per address', async (t) => {
  const browser = new Browser(srv.url);
  let form = formOf((await browser.go(`${srv.url}/api/oauth/device`)).html, '/device');
  const statuses: number[] = [];
  for (let i = 0; i < 31; i++) {
    const page = await browser.go(form.action, {
      form: { ...form.fields, user_code: 'BCDF-GHJK' },
    });
    statuses.push(page.status);
    if (page.status === 200) form = formOf(page.html, '/device');
  }
  // the device flow test above posted three times from this address (two codes, one confirmation): 30 a window in all
  t.same(statuses.slice(0, 27), Array(27).fill(200));
  t.same(statuses.slice(27), [429, 429, 429, 429]);
});

t.test(
  'dynamic client registration: loopback clients are native (any port), the policy refuses the rest',
  async (t) => {
    const as = await discover(srv);
    const register = (metadata: Record<string, unknown>) =>
      fetch(as.registration_endpoint!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(metadata),
      });
    const res = await register({
      client_name: 'Assistant',
      redirect_uris: ['http://127.0.0.1:6274/cb'],
      token_endpoint_auth_method: 'none',
    });
    t.equal(res.status, 201);
    const client = (await res.json()) as { client_id: string; application_type: string };
    t.equal(client.application_type, 'native');
    const { rows } = await srv.deps.pool.query(
      `SELECT expires_at FROM oauth_models WHERE model = 'Client' AND id = $1`,
      [client.client_id],
    );
    t.ok(rows[0].expires_at, 'a registration expires unless used');

    // the client signs a person in on another loopback port
    const redirectUri = 'http://127.0.0.1:7777/cb';
    const auth = await authorizationUrl(as, {
      clientId: client.client_id,
      redirectUri,
      resource: `${srv.url}/mcp`,
    });
    const callback = await signInAndAllow(new Browser(srv.url), auth.url, owner.email, PASSWORD);
    const tokens = await exchange(as, auth, callback, {
      clientId: client.client_id,
      redirectUri,
      resource: `${srv.url}/mcp`,
    });
    t.type(tokens.access_token, 'string');
    const used = await srv.deps.pool.query(
      `SELECT expires_at FROM oauth_models WHERE model = 'Client' AND id = $1`,
      [client.client_id],
    );
    t.equal(used.rows[0].expires_at, null, 'a client that got a token stays');

    for (const [metadata, why] of [
      [
        { redirect_uris: ['http://assistant.example/cb'] },
        /https URLs or http URLs on the loopback/,
      ],
      [
        { redirect_uris: ['https://assistant.example/cb'], client_name: 'x'.repeat(101) },
        /client_name has at most 100/,
      ],
    ] as const) {
      const refused = await register(metadata);
      t.equal(refused.status, 400);
      t.match(((await refused.json()) as { error_description: string }).error_description, why);
    }
    // five registrations an hour from one address (OAUTH_REGISTRATIONS_PER_ADDRESS=5): the fourth and fifth pass, the sixth is 429
    t.equal((await register({ redirect_uris: ['https://assistant.example/cb'] })).status, 201);
    t.equal((await register({ redirect_uris: ['https://assistant.example/cb'] })).status, 201);
    const limited = await register({ redirect_uris: ['https://assistant.example/cb'] });
    t.equal(limited.status, 429);
  },
);

t.test('Client ID Metadata Documents are offered and pass the same policy', async (t) => {
  const as = (await (
    await fetch(`${srv.url}/.well-known/oauth-authorization-server`)
  ).json()) as Record<string, unknown>;
  t.equal(as.client_id_metadata_document_supported, true);
  const policy = {
    unusedClientTtlSeconds: 3600,
    metadataDocumentMaxBytes: 5120,
    metadataDocumentHosts: [],
  };
  t.equal(
    clientPolicyProblem(
      {
        client_id: 'https://app.example/client.json',
        redirect_uris: ['https://app.example/cb', 'http://localhost:3000/cb'],
      },
      policy,
    ),
    undefined,
  );
  t.match(
    clientPolicyProblem({ redirect_uris: ['myapp://cb'] }, policy),
    /https URLs or http URLs on the loopback/,
  );
  t.match(
    clientPolicyProblem(
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
      policy,
    ),
    /at most 10/,
  );
});

t.test(
  'failed logins are limited per account and per address, whatever the password then',
  async (t) => {
    const as = await discover(srv);
    const browser = new Browser(srv.url);
    const page = await browser.go((await authorizationUrl(as)).url.href);
    const form = formOf(page.html, '/login');
    const attempt = (email: string, password: string) =>
      browser.go(form.action, { form: { ...form.fields, email, password } });
    for (let i = 0; i < 3; i++)
      t.equal((await attempt(owner.email, 'wrong password!')).status, 200);
    const blocked = await attempt(owner.email, PASSWORD);
    t.equal(blocked.status, 429, 'the right password too, once the account is limited');
    t.match(blocked.html, /Too many failed sign-ins\. Try again in 15 minutes\./);
    t.match(blocked.headers.get('retry-after'), /^\d+$/);
    // an e-mail without an account is limited the same way (nothing tells them apart)
    for (let i = 0; i < 3; i++)
      t.equal((await attempt(`nobody${i}@example.test`, 'wrong password!')).status, 200);
    const other = await newOrganization(srv, 'Other');
    await setPassword(srv.deps.pool, other.email, PASSWORD);
    const byAddress = await attempt(other.email, PASSWORD);
    t.equal(byAddress.status, 429, 'six failures from this address stop every account');
  },
);

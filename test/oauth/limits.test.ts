// The sign-in surface's rate limits on the service's one limiter (src/net/rateLimit.ts): token
// requests, registrations and failed sign-ins counted per client address as the API counts it
// (behind TRUST_PROXY, the forwarded address; a client's own X-Forwarded-For is not believed
// from an untrusted peer), and with RATE_LIMIT_STORE=postgres shared by two apps on one database.
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildApp } from '../../src/app.ts';
import { setPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { authorizationUrl, Browser, discover, formOf } from './browser.ts';

const srv = await startTestServer(t, {
  env: {
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT_STORE: 'postgres',
    OAUTH_TOKEN_REQUESTS_PER_ADDRESS: '3',
    OAUTH_REGISTRATIONS_PER_ADDRESS: '2',
    OAUTH_LOGIN_FAILURES_PER_ACCOUNT: '2',
    OAUTH_LOGIN_FAILURES_PER_ADDRESS: '3',
  },
});

/** A second app on the same database and configuration (another API process). */
async function secondApp(): Promise<string> {
  const app = await buildApp(srv.deps);
  t.teardown(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

const askToken = (url: string, address: string) =>
  fetch(`${url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: 'not-a-token',
      client_id: 'royalty-cli',
    }),
  });

const register = (url: string, address: string) =>
  fetch(`${url}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({
      redirect_uris: ['https://assistant.example/cb'],
      token_endpoint_auth_method: 'none',
    }),
  });

t.test(
  'token requests: per forwarded address, counted across two apps on one database',
  async (t) => {
    const other = await secondApp();
    const answers = [];
    for (const url of [srv.url, other, srv.url, other]) {
      const res = await askToken(url, '10.7.0.1');
      answers.push([res.status, ((await res.json()) as { error: string }).error]);
      if (res.status === 429) {
        const seconds = Number(res.headers.get('retry-after'));
        t.ok(
          Number.isInteger(seconds) && seconds >= 1 && seconds <= 60,
          `Retry-After within the minute (${seconds})`,
        );
      }
    }
    t.same(
      answers,
      [
        [400, 'invalid_grant'],
        [400, 'invalid_grant'],
        [400, 'invalid_grant'],
        [429, 'too_many_requests'],
      ],
      'the fourth of the minute, on the second app, is refused',
    );
    t.equal(
      (await askToken(srv.url, '10.7.0.2')).status,
      400,
      'another forwarded address has a budget of its own',
    );
    const { rows } = await srv.deps.pool.query<{ key: string; points: number }>(
      "SELECT key, points FROM rate_limits WHERE key LIKE 'token:%' ORDER BY key",
    );
    t.same(rows, [
      { key: 'token:address:10.7.0.1', points: 4 },
      { key: 'token:address:10.7.0.2', points: 1 },
    ]);
  },
);

t.test(
  'registrations: per forwarded address; an untrusted peer cannot choose its address',
  async (t) => {
    t.equal((await register(srv.url, '10.7.1.1')).status, 201);
    t.equal((await register(srv.url, '10.7.1.1')).status, 201);
    const refused = await register(srv.url, '10.7.1.1');
    t.equal(refused.status, 429);
    t.match(await refused.json(), { error: 'too_many_requests' });
    t.equal((await register(srv.url, '10.7.1.2')).status, 201, 'another address');

    // a server that trusts no proxy counts the peer (127.0.0.1), whatever X-Forwarded-For says
    const config = { ...srv.config, trustProxy: undefined };
    const app = await buildApp({ ...srv.deps, config });
    t.teardown(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const untrusting = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    t.equal((await register(untrusting, '10.7.2.1')).status, 201);
    t.equal((await register(untrusting, '10.7.2.2')).status, 201);
    t.equal(
      (await register(untrusting, '10.7.2.3')).status,
      429,
      'three "addresses", one peer: the third is refused',
    );
  },
);

t.test(
  'failed sign-ins: per account and per forwarded address, a success clears the account',
  async (t) => {
    const PASSWORD = 'a long enough password';
    const owner = await newOrganization(srv, 'Limited sign-in');
    await setPassword(srv.deps.pool, owner.email, PASSWORD);
    const as = await discover(srv);
    const browser = new Browser(srv.url);
    const page = await browser.go((await authorizationUrl(as)).url.href);
    const form = formOf(page.html, '/login');
    const attempt = async (email: string, password: string, address: string) => {
      const res = await browser.request(form.action, {
        form: { ...form.fields, email, password },
        headers: { 'x-forwarded-for': address },
      });
      return { status: res.status, html: await res.text() };
    };
    t.equal((await attempt(owner.email, 'wrong password!', '10.7.3.1')).status, 200);
    t.equal(
      (await attempt(` ${owner.email.toUpperCase()} `, 'wrong password!', '10.7.3.2')).status,
      200,
      'the account is the e-mail, case and spaces aside',
    );
    const blocked = await attempt(owner.email, PASSWORD, '10.7.3.3');
    t.equal(blocked.status, 429, 'the account is limited from any address, the right password too');
    t.match(blocked.html, /Too many failed sign-ins\. Try again in 15 minutes\./);

    // the address 10.7.3.1 has one failure; two more (other accounts) spend its three
    t.equal((await attempt('nobody1@example.test', 'wrong password!', '10.7.3.1')).status, 200);
    t.equal((await attempt('nobody2@example.test', 'wrong password!', '10.7.3.1')).status, 200);
    const other = await newOrganization(srv, 'Other sign-in');
    await setPassword(srv.deps.pool, other.email, PASSWORD);
    t.equal(
      (await attempt(other.email, PASSWORD, '10.7.3.1')).status,
      429,
      'the address is limited for every account',
    );
    // from another address: one failure, then the right password signs in and clears the account's count
    t.equal((await attempt(other.email, 'wrong password!', '10.7.3.4')).status, 200);
    t.equal((await attempt(other.email, PASSWORD, '10.7.3.4')).status, 303, 'signed in');
    const { rows } = await srv.deps.pool.query<{ key: string; points: number }>(
      'SELECT key, points FROM rate_limits WHERE key = ANY($1) ORDER BY key',
      [[owner.email, other.email].map((e) => `auth:principal:${e.toLowerCase()}`)],
    );
    t.same(
      rows,
      [{ key: `auth:principal:${owner.email.toLowerCase()}`, points: 2 }],
      'the account that signed in has no count left',
    );
  },
);

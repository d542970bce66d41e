// The sign-in pages in a real browser (Debian's chromium driven by playwright-core): keyboard only,
// no console errors (a CSP violation is one), the code flow and the device flow to the end.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import t, { type Test } from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { authorizationUrl, discover, exchange, insecure } from './browser.ts';

const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  t.comment(
    `SKIPPED: no browser at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it)`,
  );
  t.pass('skipped: no chromium');
  t.end();
} else {
  await run();
}

async function run(): Promise<void> {
  const { chromium } = await import('playwright-core');
  const srv = await startTestServer(t);
  const PASSWORD = 'a long enough password';
  const owner = await newOrganization(srv, 'Browser Org');
  await setPassword(srv.deps.pool, owner.email, PASSWORD);

  /** A browser with a fresh profile (no session): console errors and page errors are collected. */
  async function newBrowser(t: Test, errors: string[]) {
    const profile = await mkdtemp(path.join(tmpdir(), 'royalty-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    t.teardown(async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('pageerror', (e) => errors.push(e.message));
    return page;
  }

  // the client's loopback redirect: a listener as a native app has one (any port, RFC 8252)
  const listener = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in'),
  );
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  t.teardown(() => listener.close());
  const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;

  t.test('code flow with the keyboard only', async (t) => {
    const as = await discover(srv);
    const auth = await authorizationUrl(as, { redirectUri });
    const errors: string[] = [];
    const page = await newBrowser(t, errors);
    await page.goto(auth.url.href);
    t.equal(await page.title(), 'Sign in');
    t.equal(
      await page.evaluate('document.activeElement && document.activeElement.id'),
      'email',
      'the e-mail field has the focus',
    );
    await page.keyboard.type(owner.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/interaction\//);
    await page.waitForSelector('h1');
    t.equal(await page.title(), 'Allow access?');
    await page.keyboard.press('Tab');
    t.equal(
      await page.evaluate('document.activeElement && document.activeElement.textContent'),
      'Allow',
    );
    await Promise.all([page.waitForURL(`${redirectUri}?**`), page.keyboard.press('Enter')]);
    t.equal(await page.textContent('body'), 'signed in');
    const tokens = await exchange(as, auth, new URL(page.url()), { redirectUri });
    t.type(tokens.access_token, 'string');
    t.same(errors, [], 'no console errors');
  });

  t.test('a wrong password says so and keeps the e-mail', async (t) => {
    const errors: string[] = [];
    const page = await newBrowser(t, errors);
    await page.goto((await authorizationUrl(await discover(srv), { redirectUri })).url.href);
    await page.fill('#email', owner.email);
    await page.fill('#password', 'not the password');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[role=alert]');
    t.equal(await page.textContent('[role=alert]'), 'The e-mail or the password is not right.');
    t.equal(await page.inputValue('#email'), owner.email);
    t.same(errors, []);
  });

  t.test(
    'device flow: code page, confirmation, sign-in, consent, with the keyboard only',
    async (t) => {
      const as = await discover(srv);
      const cli = { client_id: 'royalty-cli' };
      const device = await oauth.processDeviceAuthorizationResponse(
        as,
        cli,
        await oauth.deviceAuthorizationRequest(as, cli, oauth.None(), { scope: 'api' }, insecure),
      );
      const errors: string[] = [];
      const page = await newBrowser(t, errors);
      await page.goto(device.verification_uri);
      t.equal(await page.title(), 'Connect a device');
      await page.keyboard.type(device.user_code);
      await page.keyboard.press('Enter');
      await page.waitForSelector('text=Go on only if your device shows this code');
      await page.keyboard.press('Tab');
      t.equal(
        await page.evaluate('document.activeElement && document.activeElement.textContent'),
        'Continue',
      );
      await page.keyboard.press('Enter');
      await page.waitForSelector('#email');
      await page.keyboard.type(owner.email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.waitForSelector('text=Allow access?');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForSelector('text=Device connected');
      const tokens = await oauth.processDeviceCodeResponse(
        as,
        cli,
        await oauth.deviceCodeGrantRequest(as, cli, oauth.None(), device.device_code, insecure),
      );
      t.type(tokens.access_token, 'string');
      t.same(errors, [], 'no console errors');
    },
  );

  t.test('the pages cannot be framed', async (t) => {
    const errors: string[] = [];
    const page = await newBrowser(t, errors);
    const login = (await authorizationUrl(await discover(srv), { redirectUri })).url.href;
    await page.route('http://framer.test/', (route) =>
      route.fulfill({ contentType: 'text/html', body: `<iframe src="${login}"></iframe>` }),
    );
    const blocked: string[] = [];
    page.on('console', (m) => blocked.push(m.text()));
    await page.goto('http://framer.test/');
    await page.waitForTimeout(1000);
    const framed = page.frames().find((f) => f !== page.mainFrame());
    t.notOk(
      framed && (await framed.title().catch(() => '')) === 'Sign in',
      'the login page did not render in the frame',
    );
  });
}

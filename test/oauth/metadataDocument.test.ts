// Client ID Metadata Documents: an https URL as client_id whose JSON oidc-provider fetches (at most
// 5 KB, 2.5 s, cached) and holds to the registration policy (test/oauth/deviceAndClients.test.ts
// checks the policy). oidc-provider refuses to fetch from loopback and private addresses: shown
// against a real TLS server on the loopback interface (certificate made with openssl), which must
// never be contacted. A host the operator names in OAUTH_METADATA_DOCUMENT_HOSTS is fetched all
// the same: a service process started so (trusting the test certificate through Node's
// NODE_EXTRA_CA_CERTS, as a private deployment trusts its own CA) signs an assistant in whose
// metadata document is served from that server.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { setPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { TrpcClient } from '../helpers/trpc.ts';
import { launcher, serviceEnv, waitFor } from '../runtime/processes.ts';
import { authorizationUrl, Browser, discover, exchange, signInAndAllow } from './browser.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'royalty-cimd-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await promisify(execFile)('openssl', [
  'req',
  '-x509',
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:P-256',
  '-nodes',
  '-days',
  '1',
  '-keyout',
  path.join(dir, 'key.pem'),
  '-out',
  path.join(dir, 'cert.pem'),
  '-subj',
  '/CN=localhost',
  '-addext',
  'subjectAltName=IP:127.0.0.1,DNS:localhost',
]);

const fetched: string[] = [];
const documents = new Map<string, string>();
const https = createServer(
  {
    key: await readFile(path.join(dir, 'key.pem')),
    cert: await readFile(path.join(dir, 'cert.pem')),
  },
  (req, res) => {
    fetched.push(req.url!);
    const body = documents.get(req.url!);
    if (body === undefined) return void res.writeHead(404).end();
    res
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' })
      .end(body);
  },
);
await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
t.teardown(() => https.close());
const base = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
const doc = (p: string, metadata: Record<string, unknown>) => {
  documents.set(
    p,
    JSON.stringify({ client_id: `${base}${p}`, token_endpoint_auth_method: 'none', ...metadata }),
  );
  return `${base}${p}`;
};

const srv = await startTestServer(t);

t.test(
  'a metadata document on a loopback or private address is never fetched (SSRF)',
  async (t) => {
    const clientId = doc('/client.json', {
      client_name: 'Doc Assistant',
      redirect_uris: ['http://127.0.0.1/cb'],
    });
    const as = await discover(srv);
    t.equal((as as Record<string, unknown>).client_id_metadata_document_supported, true);
    const auth = await authorizationUrl(as, { clientId, redirectUri: 'http://127.0.0.1:6111/cb' });
    const page = await new Browser(srv.url).go(auth.url.href);
    t.equal(page.status, 400, 'an error page, no redirect');
    t.match(page.html, /invalid_client/);
    t.match(page.html, /client_id metadata document fetch failed/);
    t.same(fetched, [], 'the service never connected to it');
    // a client_id that is not an https URL is an unknown client, not a fetch
    const plain = await authorizationUrl(as, {
      clientId: `http://127.0.0.1:${(https.address() as AddressInfo).port}/client.json`,
      redirectUri: 'http://127.0.0.1:6111/cb',
    });
    t.equal((await new Browser(srv.url).go(plain.url.href)).status, 400);
    t.same(fetched, []);
  },
);

t.test(
  'a host named in OAUTH_METADATA_DOCUMENT_HOSTS is fetched from a private address, and its client signs in',
  async (t) => {
    const PASSWORD = 'a long enough password';
    const owner = await newOrganization(srv, 'Private Deployment');
    await setPassword(srv.deps.pool, owner.email, PASSWORD);
    const service = launcher(t)(
      ['api'],
      serviceEnv(srv.config, {
        HOST: '127.0.0.1',
        OAUTH_METADATA_DOCUMENT_HOSTS: 'localhost',
        NODE_EXTRA_CA_CERTS: path.join(dir, 'cert.pem'),
      }),
    );
    const [, url] = await waitFor(service, /is running at (http:\/\/\S+)/);
    const other = { url: url! } as TestServer;
    const as = await discover(other);
    const port = (https.address() as AddressInfo).port;
    documents.set(
      '/assistant.json',
      JSON.stringify({
        client_id: `https://localhost:${port}/assistant.json`,
        client_name: 'Private Assistant',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://127.0.0.1/cb'],
      }),
    );
    const clientId = `https://localhost:${port}/assistant.json`;
    const redirectUri = 'http://127.0.0.1:6112/cb';
    fetched.length = 0;

    const auth = await authorizationUrl(as, { clientId, redirectUri });
    const browser = new Browser(url!);
    const login = await browser.go(auth.url.href);
    t.equal(login.status, 200, login.html.slice(0, 500));
    t.match(login.html, /Private Assistant/, 'the sign-in page names the client from its document');
    const callback = await signInAndAllow(browser, auth.url, owner.email, PASSWORD);
    const tokens = await exchange(as, auth, callback, { clientId, redirectUri });
    t.same(fetched, ['/assistant.json'], 'fetched once (then cached)');
    const me = await new TrpcClient(url!, { authorization: `Bearer ${tokens.access_token}` }).query(
      'user.currentUser',
    );
    t.equal(me.ok && me.data.id, owner.userId, 'its token reaches the API');

    // the same server by its address, not a name on the list: refused as before, never contacted
    const byAddress = await authorizationUrl(as, {
      clientId: doc('/by-address.json', { redirect_uris: ['http://127.0.0.1/cb'] }),
      redirectUri,
    });
    const refused = await new Browser(url!).go(byAddress.url.href);
    t.equal(refused.status, 400);
    t.match(refused.html, /client_id metadata document fetch failed/);
    t.same(fetched, ['/assistant.json']);
    service.child.kill('SIGTERM');
  },
);

t.test('OAUTH_METADATA_DOCUMENT_HOSTS takes host names only', async (t) => {
  t.same(
    loadConfig({ OAUTH_METADATA_DOCUMENT_HOSTS: ' Clients.Internal.example, localhost ' }).oauth
      .metadataDocumentHosts,
    ['clients.internal.example', 'localhost'],
  );
  t.same(loadConfig({}).oauth.metadataDocumentHosts, []);
  for (const bad of ['127.0.0.1', '::1', 'host:8443', 'https://host', '*.internal', 'a..b']) {
    t.throws(
      () => loadConfig({ OAUTH_METADATA_DOCUMENT_HOSTS: bad }),
      /OAUTH_METADATA_DOCUMENT_HOSTS/,
      bad,
    );
  }
});

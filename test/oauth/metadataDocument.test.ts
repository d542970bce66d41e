// Client ID Metadata Documents: an https URL as client_id whose JSON oidc-provider fetches (at most
// 5 KB, 2.5 s, cached) and holds to the registration policy (test/oauth/deviceAndClients.test.ts
// checks the policy). oidc-provider refuses to fetch from loopback and private addresses, so the
// fetch itself cannot be run here: this test shows that refusal against a real TLS server on the
// loopback interface (certificate made with openssl), which must never be contacted.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { startTestServer } from '../helpers/server.ts';
import { authorizationUrl, Browser, discover } from './browser.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'royalty-cimd-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await promisify(execFile)('openssl', [
  'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
]);

const fetched: string[] = [];
const documents = new Map<string, string>();
const https = createServer({ key: await readFile(path.join(dir, 'key.pem')), cert: await readFile(path.join(dir, 'cert.pem')) }, (req, res) => {
  fetched.push(req.url!);
  const body = documents.get(req.url!);
  if (body === undefined) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' }).end(body);
});
await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
t.teardown(() => https.close());
const base = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
const doc = (p: string, metadata: Record<string, unknown>) => {
  documents.set(p, JSON.stringify({ client_id: `${base}${p}`, token_endpoint_auth_method: 'none', ...metadata }));
  return `${base}${p}`;
};

const srv = await startTestServer(t);

t.test('a metadata document on a loopback or private address is never fetched (SSRF)', async (t) => {
  const clientId = doc('/client.json', { client_name: 'Doc Assistant', redirect_uris: ['http://127.0.0.1/cb'] });
  const as = await discover(srv);
  t.equal((as as Record<string, unknown>).client_id_metadata_document_supported, true);
  const auth = await authorizationUrl(as, { clientId, redirectUri: 'http://127.0.0.1:6111/cb' });
  const page = await new Browser(srv.url).go(auth.url.href);
  t.equal(page.status, 400, 'an error page, no redirect');
  t.match(page.html, /invalid_client/);
  t.match(page.html, /client_id metadata document fetch failed/);
  t.same(fetched, [], 'the service never connected to it');
  // a client_id that is not an https URL is an unknown client, not a fetch
  const plain = await authorizationUrl(as, { clientId: `http://127.0.0.1:${(https.address() as AddressInfo).port}/client.json`, redirectUri: 'http://127.0.0.1:6111/cb' });
  t.equal((await new Browser(srv.url).go(plain.url.href)).status, 400);
  t.same(fetched, []);
});

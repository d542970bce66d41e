// Where the default install's presigned URLs point: PUBLIC_URL, with its own path when a reverse
// proxy serves the service under one (the proxy strips it; the signature still covers it), and
// the address the API listens on when PUBLIC_URL is not set.
import { request } from 'node:http';
import t from 'tap';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startDefaultInstall } from './defaultInstall.ts';

/** A PUT sent as a reverse proxy would pass it on: to `port`, the URL's path without `strip`. */
function putVia(
  url: string,
  port: number,
  strip: string,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: target.pathname.slice(strip.length) + target.search,
        headers: { ...headers, host: '127.0.0.1', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

t.test(
  'PUBLIC_URL with a path: URLs carry it, and a reverse proxy that strips it (and rewrites Host) is fine',
  async (t) => {
    const srv = await startDefaultInstall(t, { PUBLIC_URL: 'https://royalty.example.test/engine' });
    const owner = await newOrganization(srv, 'Behind A Proxy');
    const rh = await createRightsholder(owner.client, owner.organizationId, 'Artist');
    const up = await owner.client.mutate('upload.uploadFile', {
      organizationId: owner.organizationId,
      rightsholderId: rh,
      fileName: 'a.csv',
      size: 12,
    });
    t.equal(up.ok, true, JSON.stringify(up.error));
    t.ok(
      up.data.url.startsWith(
        `https://royalty.example.test/engine/objects/${srv.deps.store.bucket}/orgs/${owner.organizationId}/`,
      ),
      up.data.url,
    );
    t.equal(
      await putVia(up.data.url, srv.config.port, '/engine', up.data.headers, 'isrc,amount\n'),
      200,
    );
    // what the URL was signed for is PUBLIC_URL's host and path: another Host header changes nothing, another key does
    t.equal(
      await putVia(
        up.data.url.replace('/a.csv?', '/b.csv?'),
        srv.config.port,
        '/engine',
        up.data.headers,
        'isrc,amount\n',
      ),
      403,
    );
  },
);

t.test('without PUBLIC_URL the URLs are for the address the API listens on', async (t) => {
  const srv = await startDefaultInstall(t, { PUBLIC_URL: '' });
  t.equal(srv.config.publicUrl, undefined);
  const owner = await newOrganization(srv, 'Local');
  const rh = await createRightsholder(owner.client, owner.organizationId, 'Artist');
  const up = await owner.client.mutate('upload.uploadFile', {
    organizationId: owner.organizationId,
    rightsholderId: rh,
    fileName: 'a.csv',
  });
  t.ok(up.data.url.startsWith(`http://127.0.0.1:${srv.config.port}/objects/`), up.data.url);
  t.equal(
    (await fetch(up.data.url, { method: 'PUT', headers: up.data.headers, body: 'isrc,amount\n' }))
      .status,
    200,
  );
});

// The default install's object store, attacked over real HTTP at PUBLIC_URL/objects: unsigned,
// altered, expired and mis-typed requests are refused (403) and change nothing; what the API
// hands out (upload URLs, statement and export downloads) still works, and a download is an
// attachment a browser does not sniff.
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import t from 'tap';
import { runExport } from '../api/export/helpers.ts';
import { createRightsholder, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization, type Caller } from '../helpers/principals.ts';
import { repoRoot } from '../setup/paths.ts';
import { startDefaultInstall } from './defaultInstall.ts';

const srv = await startDefaultInstall(t);
const store = srv.deps.store;
const publicUrl = srv.config.publicUrl!;
const bucket = store.bucket;
const fixture = await readFile(path.join(repoRoot, 'fixtures/statements/distrokid-legacy.tsv'));

const alice = await newOrganization(srv, 'Alice Records');
const mallory = await newOrganization(srv, 'Mallory Records');
const aliceRh = await createRightsholder(alice.client, alice.organizationId, 'Alice Artist');
const malloryRh = await createRightsholder(
  mallory.client,
  mallory.organizationId,
  'Mallory Artist',
);

interface Started {
  statementId: string;
  url: string;
  headers: Record<string, string>;
}

async function startUpload(
  caller: Caller,
  rightsholderId: string,
  fileName: string,
  extra: Record<string, unknown> = {},
): Promise<Started> {
  const res = await caller.client.mutate('upload.uploadFile', {
    organizationId: caller.organizationId,
    rightsholderId,
    fileName,
    ...extra,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data as Started;
}

async function objectKey(statementId: string): Promise<string> {
  return (
    await srv.deps.pool.query<{ k: string }>(
      'SELECT object_key AS k FROM statements WHERE id = $1',
      [statementId],
    )
  ).rows[0]!.k;
}

/** The status and errorCode of a refused request. */
async function refused(res: Response): Promise<{ status: number; errorCode: string }> {
  const body = (await res.json()) as { error?: { errorCode?: string } };
  return {
    status: res.status,
    errorCode: body.error?.errorCode ?? `(none: ${JSON.stringify(body)})`,
  };
}

const objectUrl = (key: string) =>
  `${publicUrl}/objects/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

// Alice's original statement, uploaded and processed the normal way: the target of every attack
const aliceUpload = await startUpload(alice, aliceRh, 'distrokid-legacy.tsv', {
  size: fixture.length,
});
const aliceKey = await objectKey(aliceUpload.statementId);

t.test('the normal upload flow: presign, PUT to PUBLIC_URL, complete, processed', async (t) => {
  t.ok(
    aliceUpload.url.startsWith(`${publicUrl}/objects/${bucket}/orgs/${alice.organizationId}/`),
    aliceUpload.url,
  );
  t.same(aliceUpload.headers, { 'content-type': 'text/tab-separated-values' });
  const put = await fetch(aliceUpload.url, {
    method: 'PUT',
    headers: aliceUpload.headers,
    body: fixture,
  });
  t.equal(put.status, 200, await put.text());
  t.equal(put.headers.get('x-content-type-options'), 'nosniff');
  const done = await alice.client.mutate('upload.uploadAction', {
    organizationId: alice.organizationId,
    action: { type: 'complete', statementId: aliceUpload.statementId },
  });
  t.equal(done.ok, true, JSON.stringify(done.error));
  const statement = await waitForStatement(
    alice.client,
    alice.organizationId,
    aliceUpload.statementId,
  );
  t.equal(statement.status, 'processed', JSON.stringify(statement));
  t.same(await store.getBuffer(aliceKey), fixture);
  const info = await store.head(aliceKey);
  t.equal(info?.contentType, 'text/tab-separated-values');
});

t.test(
  'the embedded s3rver has no TCP port: a unix socket in a directory only this user opens',
  async (t) => {
    const socket = store.embedded!.socketPath;
    t.ok((await stat(socket)).isSocket());
    t.equal((await stat(path.dirname(socket))).mode & 0o777, 0o700);
    t.equal(store.embedded!.signing.secretAccessKey.length, 64);
    t.equal((await stat(path.join(srv.config.dataDir, 'object-signing.key'))).mode & 0o777, 0o600);
  },
);

t.test('unsigned LIST, GET, PUT and DELETE are 403 and change nothing', async (t) => {
  const missing = { status: 403, errorCode: 'OBJECT_SIGNATURE_MISSING' };
  t.same(
    await refused(await fetch(`${publicUrl}/objects/${bucket}?list-type=2&prefix=orgs/`)),
    missing,
    'LIST',
  );
  t.same(await refused(await fetch(`${publicUrl}/objects/`)), missing, 'the bucket list');
  t.same(await refused(await fetch(objectUrl(aliceKey))), missing, 'GET');
  t.equal((await fetch(objectUrl(aliceKey), { method: 'HEAD' })).status, 403, 'HEAD');
  t.same(
    await refused(
      await fetch(objectUrl(aliceKey), {
        method: 'PUT',
        headers: { 'content-type': 'text/csv' },
        body: 'isrc,amount\nX,1\n',
      }),
    ),
    missing,
    'PUT over the original',
  );
  const fresh = `orgs/${alice.organizationId}/statements/planted.csv`;
  t.same(
    await refused(await fetch(objectUrl(fresh), { method: 'PUT', body: 'planted' })),
    missing,
    'PUT of a new key',
  );
  t.same(await refused(await fetch(objectUrl(aliceKey), { method: 'DELETE' })), missing, 'DELETE');
  // an Authorization header that is no SigV4 one, and forged query parameters
  t.same(
    await refused(
      await fetch(objectUrl(aliceKey), {
        method: 'DELETE',
        headers: { authorization: 'AWS S3RVER:x' },
      }),
    ),
    { status: 403, errorCode: 'OBJECT_SIGNATURE_INVALID' },
  );
  t.same(
    await refused(
      await fetch(`${objectUrl(aliceKey)}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=00`, {
        method: 'DELETE',
      }),
    ),
    { status: 403, errorCode: 'OBJECT_SIGNATURE_INVALID' },
  );
  t.same(await store.getBuffer(aliceKey), fixture, "Alice's original is untouched");
  t.equal(await store.head(fresh), undefined, 'nothing was planted');
});

t.test(
  "an altered presigned URL (another key, another organization's prefix, another method) is 403 and writes nothing",
  async (t) => {
    const own = await startUpload(mallory, malloryRh, 'mine.csv');
    const ownKey = await objectKey(own.statementId);
    const invalid = { status: 403, errorCode: 'OBJECT_SIGNATURE_INVALID' };
    const evil = 'isrc,amount\nEVIL,1000000\n';
    const signedPath = new URL(own.url).pathname;
    // the URL for Mallory's key, pointed at Alice's original statement file
    const atAlice = own.url.replace(signedPath, new URL(objectUrl(aliceKey)).pathname);
    t.not(atAlice, own.url);
    t.same(
      await refused(await fetch(atAlice, { method: 'PUT', headers: own.headers, body: evil })),
      invalid,
      "Alice's key",
    );
    // another key in Mallory's own prefix
    const sibling = own.url.replace('mine.csv', 'other.csv');
    t.same(
      await refused(await fetch(sibling, { method: 'PUT', headers: own.headers, body: evil })),
      invalid,
      'a sibling key',
    );
    // the PUT URL used to read or delete
    t.same(await refused(await fetch(own.url)), invalid, 'GET with a PUT URL');
    t.same(
      await refused(await fetch(own.url, { method: 'DELETE' })),
      invalid,
      'DELETE with a PUT URL',
    );
    // a longer life, a changed query parameter, a dropped one
    t.same(
      await refused(
        await fetch(own.url.replace('X-Amz-Expires=900', 'X-Amz-Expires=9000'), {
          method: 'PUT',
          headers: own.headers,
          body: evil,
        }),
      ),
      invalid,
      'expiry',
    );
    t.same(
      await refused(
        await fetch(`${own.url}&x-id=DeleteObject`, {
          method: 'PUT',
          headers: own.headers,
          body: evil,
        }),
      ),
      invalid,
      'a parameter twice',
    );
    t.same(
      await refused(
        await fetch(own.url.replace(/&x-id=PutObject/, '&acl'), {
          method: 'PUT',
          headers: own.headers,
          body: evil,
        }),
      ),
      invalid,
      'another parameter',
    );
    // a signature of another secret
    const forger = new S3Client({
      endpoint: `${publicUrl}/objects`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: {
        accessKeyId: store.embedded!.signing.accessKeyId,
        secretAccessKey: 'f'.repeat(64),
      },
    });
    t.teardown(() => forger.destroy());
    const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
    const forged = await getSignedUrl(
      forger,
      new PutObjectCommand({ Bucket: bucket, Key: aliceKey, ContentType: 'text/csv' }),
      { expiresIn: 900, signableHeaders: new Set(['content-type']) },
    );
    t.same(
      await refused(await fetch(forged, { method: 'PUT', headers: own.headers, body: evil })),
      invalid,
      'another secret',
    );

    t.same(await store.getBuffer(aliceKey), fixture, "Alice's original is untouched");
    t.equal(await store.head(ownKey), undefined, 'nor did the refused PUTs write the signed key');
    t.equal(await store.head(ownKey.replace('mine.csv', 'other.csv')), undefined);
    // the URL itself, unaltered, still works
    t.equal(
      (await fetch(own.url, { method: 'PUT', headers: own.headers, body: 'isrc,amount\nOK,1\n' }))
        .status,
      200,
    );
  },
);

t.test('an expired presigned URL is 403', async (t) => {
  const key = `orgs/${mallory.organizationId}/statements/expiring.csv`;
  const put = await store.presignPut(key, 'text/csv', 1);
  const get = await store.presignGet(aliceKey, 'statement.tsv', 1);
  await new Promise((r) => setTimeout(r, 2100));
  const expired = { status: 403, errorCode: 'OBJECT_SIGNATURE_EXPIRED' };
  t.same(
    await refused(
      await fetch(put, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: 'late' }),
    ),
    expired,
    'PUT',
  );
  t.same(await refused(await fetch(get)), expired, 'GET');
  t.equal(await store.head(key), undefined);
});

t.test('a PUT with a content type or length other than signed is 403', async (t) => {
  const body = Buffer.from('isrc,amount\nA,1\n');
  const up = await startUpload(mallory, malloryRh, 'sized.csv', { size: body.length });
  const key = await objectKey(up.statementId);
  t.match(
    new URL(up.url).searchParams.get('X-Amz-SignedHeaders'),
    'content-length;content-type;host',
  );
  const invalid = { status: 403, errorCode: 'OBJECT_SIGNATURE_INVALID' };
  t.same(
    await refused(
      await fetch(up.url, { method: 'PUT', headers: { 'content-type': 'text/html' }, body }),
    ),
    invalid,
    'text/html',
  );
  t.same(
    await refused(await fetch(up.url, { method: 'PUT', body: new Blob([body]) })),
    invalid,
    'no content type',
  );
  t.same(
    await refused(
      await fetch(up.url, {
        method: 'PUT',
        headers: up.headers,
        body: Buffer.concat([body, body]),
      }),
    ),
    invalid,
    'longer',
  );
  t.same(
    await refused(
      await fetch(up.url, { method: 'PUT', headers: up.headers, body: body.subarray(1) }),
    ),
    invalid,
    'shorter',
  );
  t.equal(await store.head(key), undefined, 'nothing written');
  // a chunked body (no length) under an URL that signs none: S3 wants a length
  const open = await startUpload(mallory, malloryRh, 'unsized.csv');
  const chunked = await fetch(open.url, {
    method: 'PUT',
    headers: open.headers,
    body: new Blob([body]).stream(),
    duplex: 'half',
  } as RequestInit);
  t.same(await refused(chunked), { status: 400, errorCode: 'OBJECT_REQUEST_UNSUPPORTED' });
  const ok = await fetch(up.url, { method: 'PUT', headers: up.headers, body });
  t.equal(ok.status, 200);
  t.same(await store.getBuffer(key), body);
});

t.test('an upload cut short changes nothing and leaves no file open', async (t) => {
  const key = `orgs/${mallory.organizationId}/statements/cut/original/a.csv`;
  await store.put(key, 'original bytes', 'text/csv');
  const url = new URL(await store.presignPut(key, 'text/csv', 60, 1000));
  // the files of DATA_DIR (the objects, the spool) this process holds open
  const openFiles = async () =>
    (
      await Promise.all(
        (await readdir('/proc/self/fd')).map((fd) =>
          readlink(`/proc/self/fd/${fd}`).catch(() => ''),
        ),
      )
    ).filter((f) => f.startsWith(srv.config.dataDir));
  const before = await openFiles();
  for (let i = 0; i < 20; i++) {
    await new Promise<void>((resolve) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        method: 'PUT',
        path: url.pathname + url.search,
        headers: { 'content-type': 'text/csv', 'content-length': 1000 },
      });
      req.on('error', () => resolve());
      req.write('partial!!!');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
  }
  await new Promise((r) => setTimeout(r, 500));
  t.equal((await store.getBuffer(key)).toString(), 'original bytes', 'no truncated object');
  t.same(await openFiles(), before, 'no file left open per interrupted upload');
  t.same(await readdir(store.embedded!.spoolDir), [], 'nothing left in the spool');
});

t.test(
  'a download is an attachment with nosniff, whatever content type the file was uploaded with',
  async (t) => {
    const page = Buffer.from('<html><script>alert(document.cookie)</script></html>');
    const up = await startUpload(mallory, malloryRh, 'page.html', {
      contentType: 'text/html',
      size: page.length,
    });
    t.equal((await fetch(up.url, { method: 'PUT', headers: up.headers, body: page })).status, 200);
    const link = await mallory.client.mutate('fileStorage.downloadStatementFile', {
      organizationId: mallory.organizationId,
      type: 'original',
      file: up.statementId,
    });
    t.equal(link.ok, true, JSON.stringify(link.error));
    t.ok(link.data.url.startsWith(`${publicUrl}/objects/`));
    const res = await fetch(link.data.url);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-disposition'), /^attachment; filename="page.html"/);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    t.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox");
    t.same(Buffer.from(await res.arrayBuffer()), page);
    // the same key read without the URL's disposition (signed by the service for itself) is still an attachment
    const bare = await store.presignGet(await objectKey(up.statementId), 'page.html', 60);
    const plain = new URL(bare);
    plain.searchParams.delete('response-content-disposition');
    t.equal((await fetch(plain)).status, 403, 'the disposition is signed: it cannot be dropped');
    const head = await fetch(link.data.url, { method: 'HEAD' });
    t.equal(head.status, 403, 'a GET URL does not sign HEAD');
  },
);

t.test(
  'header-signed requests are verified the same way; uploads take presigned URLs',
  async (t) => {
    const client = (secretAccessKey: string) =>
      new S3Client({
        endpoint: `${publicUrl}/objects`,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: store.embedded!.signing.accessKeyId, secretAccessKey },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    const good = client(store.embedded!.signing.secretAccessKey);
    const bad = client('0'.repeat(64));
    t.teardown(() => {
      good.destroy();
      bad.destroy();
    });
    const got = await good.send(new GetObjectCommand({ Bucket: bucket, Key: aliceKey }));
    t.same(Buffer.from(await got.Body!.transformToByteArray()), fixture);
    t.equal(got.ContentDisposition, 'attachment');
    const head = await good.send(new HeadObjectCommand({ Bucket: bucket, Key: aliceKey }));
    t.same(
      [head.ContentLength, head.ContentType, head.ContentDisposition],
      [fixture.length, 'text/tab-separated-values', 'attachment'],
    );
    const status = (sent: Promise<unknown>) =>
      sent.then(
        () => 200,
        (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
      );
    t.equal(
      await status(bad.send(new GetObjectCommand({ Bucket: bucket, Key: aliceKey }))),
      403,
      'another secret',
    );
    t.equal(
      await status(
        good.send(new PutObjectCommand({ Bucket: bucket, Key: aliceKey, Body: 'overwritten' })),
      ),
      400,
      'a header-signed upload',
    );
    t.same(await store.getBuffer(aliceKey), fixture);
  },
);

t.test("an export's files download through their presigned URLs", async (t) => {
  const done = await runExport(alice.client, alice.organizationId, {
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: [aliceRh],
  });
  t.equal(done.status, 'completed', JSON.stringify(done));
  const files = await alice.client.query('export.listFiles', {
    organizationId: alice.organizationId,
    exportId: done.exportId ?? done.id,
  });
  t.equal(files.ok, true, JSON.stringify(files.error));
  t.ok(files.data.files.length > 0);
  for (const file of files.data.files) {
    const link = await alice.client.mutate('export.downloadFile', {
      organizationId: alice.organizationId,
      exportId: done.exportId ?? done.id,
      fileId: file.id,
    });
    t.ok(
      link.data.url.startsWith(
        `${publicUrl}/objects/${bucket}/orgs/${alice.organizationId}/exports/`,
      ),
    );
    const res = await fetch(link.data.url);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-disposition'), /^attachment; /);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
    t.match(text, /Midnight Drive/, 'the rows of the processed statement');
  }
});

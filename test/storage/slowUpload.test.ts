// A statement file uploaded slowly through the default install's /objects proxy (a large file from
// a laptop on a slow link) has HTTP_UPLOAD_TIMEOUT_MS, not the API's HTTP_REQUEST_TIMEOUT_MS: it
// arrives whole past the latter and is processed; past the former it is answered 408 and closed.
// An API call trickling in as slowly is still cut off at HTTP_REQUEST_TIMEOUT_MS.
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { createRightsholder, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { repoRoot } from '../setup/paths.ts';
import { startDefaultInstall } from './defaultInstall.ts';

const REQUEST_MS = 1500;
const UPLOAD_MS = 8000;
const srv = await startDefaultInstall(t, {
  HTTP_HEADERS_TIMEOUT_MS: '1000',
  HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
  HTTP_UPLOAD_TIMEOUT_MS: String(UPLOAD_MS),
  HTTP_IDLE_TIMEOUT_MS: '30000',
  CUBE_SYNC_TIMEOUT_MS: '1000',
});
const owner = await newOrganization(srv, 'Slow Link Records');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Slow Link Artist');
const fixture = await readFile(
  path.join(repoRoot, 'fixtures', 'statements', 'distrokid-legacy.tsv'),
);

/** Sends `head`, then `body` in `pieces` parts `everyMs` apart; the status line and when the server closed. */
function trickle(
  head: string,
  body: Buffer,
  pieces: number,
  everyMs: number,
): Promise<{ status: string; ms: number }> {
  const { port } = new URL(srv.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const started = Date.now();
    let answer = '';
    let sent = 0;
    const size = Math.ceil(body.length / pieces);
    const next = () => {
      if (socket.destroyed || sent >= body.length) return;
      socket.write(body.subarray(sent, sent + size));
      sent += size;
      setTimeout(next, everyMs);
    };
    socket.on('data', (c: Buffer) => {
      answer += c.toString();
      // a complete answer to a finished upload: the status line is all this needs
      if (sent >= body.length && answer.includes('\r\n\r\n')) socket.end();
    });
    socket.on('error', () => {});
    socket.on('close', () =>
      resolve({ status: answer.split('\r\n')[0] ?? '', ms: Date.now() - started }),
    );
    socket.on('connect', () => (socket.write(head), setTimeout(next, everyMs)));
  });
}

async function uploadHead(fileName: string): Promise<{ statementId: string; head: string }> {
  const res = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName,
    size: fixture.length,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  const url = new URL(res.data.url);
  const headers = Object.entries(res.data.headers as Record<string, string>)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return {
    statementId: res.data.statementId,
    head: `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${headers}Content-Length: ${fixture.length}\r\n\r\n`,
  };
}

t.test(
  'an upload slower than HTTP_REQUEST_TIMEOUT_MS arrives whole and is processed',
  async (t) => {
    const { statementId, head } = await uploadHead('slow.tsv');
    // ten pieces 300 ms apart: about 3 s, twice the API's request timeout
    const put = await trickle(head, fixture, 10, 300);
    t.equal(put.status, 'HTTP/1.1 200 OK');
    t.ok(put.ms > REQUEST_MS, `took ${put.ms} ms`);
    const done = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'complete', statementId },
    });
    t.ok(done.ok, JSON.stringify(done.error));
    t.equal((await waitForStatement(owner.client, org, statementId)).status, 'processed');
  },
);

t.test('an upload past HTTP_UPLOAD_TIMEOUT_MS is answered 408 and closed', async (t) => {
  const { head } = await uploadHead('slower.tsv');
  // a piece a second: the whole would take about 40 s
  const put = await trickle(head, fixture, 40, 1000);
  t.equal(put.status, 'HTTP/1.1 408 Request Timeout');
  t.ok(put.ms >= UPLOAD_MS && put.ms < UPLOAD_MS + 5000, `closed after ${put.ms} ms`);
});

t.test('an API call trickling in is still cut off at HTTP_REQUEST_TIMEOUT_MS', async (t) => {
  const body = Buffer.from(JSON.stringify({ 0: { organizationId: org, name: 'x'.repeat(200) } }));
  const head = `POST /trpc/rightsholder.create?batch=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nx-api-key: ${owner.apiKey}\r\nx-organization-id: ${org}\r\nContent-Length: ${body.length}\r\n\r\n`;
  const call = await trickle(head, body, 40, 500);
  t.equal(call.status, 'HTTP/1.1 408 Request Timeout');
  t.ok(call.ms >= REQUEST_MS && call.ms < REQUEST_MS + 3000, `closed after ${call.ms} ms`);
});

// Slow clients over raw sockets: a request whose headers or body trickle in is answered 408
// REQUEST_TIMEOUT and its connection closed once HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS
// have passed, an idle kept-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS, and a
// large body sent at an ordinary pace, or a statement file uploaded, is not affected.
import net from 'node:net';
import t from 'tap';
import { createRightsholder, putFile } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const HEADERS_MS = 1000;
const REQUEST_MS = 2000;
const KEEP_ALIVE_MS = 1000;
// the server looks for late requests every quarter of the headers timeout; the rest is a loaded machine's
const SLACK_MS = 1500;

const srv = await startTestServer(t, {
  env: {
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
    CUBE_SYNC_TIMEOUT_MS: '1000',
    HTTP_IDLE_TIMEOUT_MS: '5000',
  },
});
const owner = await newOrganization(srv, 'Slow Clients');
const { port } = new URL(srv.url);

interface Trickle {
  /** everything the server sent */
  text: string;
  /** ms from the first byte sent until the server closed the connection */
  closedAfterMs: number;
  /** bytes of `rest` sent before the server closed */
  sent: number;
}

/**
 * Sends `head` at once, then `rest` in pieces of `piece` bytes every `everyMs`, until the server
 * closes the connection (or everything is sent and the server closes after answering).
 */
function trickle(head: string, rest: Buffer, piece: number, everyMs: number): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const start = Date.now();
    const chunks: Buffer[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const next = () => {
      if (sent >= rest.length || socket.destroyed) return;
      socket.write(rest.subarray(sent, sent + piece));
      sent += piece;
      timer = setTimeout(next, everyMs);
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({
        text: Buffer.concat(chunks).toString('utf8'),
        closedAfterMs: Date.now() - start,
        sent: Math.min(sent, rest.length),
      });
    });
    socket.on('connect', () => {
      socket.write(head);
      timer = setTimeout(next, everyMs);
    });
    setTimeout(() => reject(new Error('the server never closed the connection')), 30_000).unref();
  });
}

/** The status and JSON body of one HTTP/1.1 answer as read off the socket (chunked or not). */
function statusAndBody(text: string): { status: number; body: any } {
  const split = text.indexOf('\r\n\r\n');
  const head = text.slice(0, split);
  let body = text.slice(split + 4);
  if (/^transfer-encoding: chunked$/im.test(head)) {
    let decoded = '';
    for (let at = 0; ;) {
      const eol = body.indexOf('\r\n', at);
      const size = Number.parseInt(body.slice(at, eol), 16);
      if (!size) break;
      decoded += body.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
    body = decoded;
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: JSON.parse(body) };
}

const timeoutEnvelope = (message: RegExp) => [
  {
    error: {
      message,
      code: -32008,
      data: { code: 'TIMEOUT', errorCode: 'REQUEST_TIMEOUT', httpStatus: 408, path: '' },
    },
  },
];

const authHeaders = `x-api-key: ${owner.apiKey}\r\nx-organization-id: ${owner.organizationId}\r\n`;

t.test(
  'a body sent a byte at a time is answered 408 once HTTP_REQUEST_TIMEOUT_MS has passed',
  async (t) => {
    const body = Buffer.from(
      JSON.stringify({ 0: { organizationId: owner.organizationId, name: 'Trickled' } }),
    );
    const head = `POST /trpc/rightsholder.create?batch=1 HTTP/1.1\r\nHost: x\r\n${authHeaders}content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const r = await trickle(head, body, 1, 250);
    t.ok(
      r.closedAfterMs >= REQUEST_MS - 50 && r.closedAfterMs < REQUEST_MS + SLACK_MS,
      `closed after ${r.closedAfterMs} ms`,
    );
    t.ok(r.sent < body.length, `the body was not complete (${r.sent} of ${body.length} bytes)`);
    const { status, body: answer } = statusAndBody(r.text);
    t.equal(status, 408);
    t.match(
      answer,
      timeoutEnvelope(
        /^The request did not arrive in time: its headers within 1000 ms \(HTTP_HEADERS_TIMEOUT_MS\), all of it within 2000 ms \(HTTP_REQUEST_TIMEOUT_MS\)$/,
      ),
    );
    const list = await owner.client.query('rightsholder.list', {
      organizationId: owner.organizationId,
    });
    t.same(
      list.data.data.map((r: { name: string }) => r.name),
      [],
      'nothing was created',
    );
  },
);

t.test(
  'headers sent a byte at a time are answered 408 once HTTP_HEADERS_TIMEOUT_MS has passed',
  async (t) => {
    const r = await trickle(
      'GET /trpc/health HTTP/1.1\r\nHost: x\r\n',
      Buffer.from('x-slow: ' + 'a'.repeat(200)),
      1,
      100,
    );
    t.ok(
      r.closedAfterMs >= HEADERS_MS - 50 && r.closedAfterMs < HEADERS_MS + SLACK_MS,
      `closed after ${r.closedAfterMs} ms`,
    );
    const { status, body } = statusAndBody(r.text);
    t.equal(status, 408);
    t.match(body, timeoutEnvelope(/^The request did not arrive in time/));
  },
);

t.test(
  'a connection that sends nothing at all is answered 408 once HTTP_HEADERS_TIMEOUT_MS has passed',
  async (t) => {
    const r = await trickle('', Buffer.alloc(0), 1, 100);
    t.ok(
      r.closedAfterMs >= HEADERS_MS - 50 && r.closedAfterMs < HEADERS_MS + SLACK_MS,
      `closed after ${r.closedAfterMs} ms`,
    );
    const { status, body } = statusAndBody(r.text);
    t.equal(status, 408);
    t.match(body, timeoutEnvelope(/^The request did not arrive in time/));
  },
);

t.test(
  'a kept-alive connection with no next request is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS',
  async (t) => {
    const r = await trickle(
      'GET /trpc/health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n',
      Buffer.alloc(0),
      1,
      100,
    );
    t.match(r.text, /^HTTP\/1\.1 200 OK\r\n/);
    t.ok(
      r.closedAfterMs >= KEEP_ALIVE_MS - 50 && r.closedAfterMs < KEEP_ALIVE_MS + SLACK_MS,
      `closed after ${r.closedAfterMs} ms`,
    );
  },
);

t.test(
  'a large body sent at an ordinary pace within the timeout is answered as usual',
  async (t) => {
    // 900 KB (BODY_LIMIT_BYTES is 1 MiB) in 10 pieces over about 1.2 s: each slower than a timeout
    // check, together well within HTTP_REQUEST_TIMEOUT_MS
    const json = JSON.stringify({ 0: { organizationId: owner.organizationId, name: 'Paced' } });
    const body = Buffer.from(json + ' '.repeat(900_000 - json.length));
    const head = `POST /trpc/rightsholder.create?batch=1 HTTP/1.1\r\nHost: x\r\n${authHeaders}content-type: application/json\r\ncontent-length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const r = await trickle(head, body, 90_000, 120);
    const { status, body: answer } = statusAndBody(r.text);
    t.equal(status, 200, JSON.stringify(answer).slice(0, 300));
    t.equal(answer[0].result.data.name, 'Paced');
  },
);

t.test('a statement file is uploaded through its presigned URL as usual', async (t) => {
  const rightsholderId = await createRightsholder(owner.client, owner.organizationId, 'Uploader');
  const bytes = Buffer.from('title,earnings\n' + 'A Song,1.00\n'.repeat(700_000));
  const uploaded = await putFile(
    owner.client,
    owner.organizationId,
    rightsholderId,
    'large.csv',
    bytes,
  );
  t.match(uploaded, { uploadId: String, statementId: String });
});

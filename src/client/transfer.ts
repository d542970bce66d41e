// Moving bytes to and from presigned URLs: a file's size and SHA-256 read as a stream, a PUT of
// it with progress (node:http, so that the body streams with its Content-Length, which the
// presigned signature covers), and a GET saved to a file.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

export interface FileFacts {
  size: number;
  sha256: string;
}

export async function fileFacts(file: string): Promise<FileFacts> {
  const { size } = await stat(file);
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return { size, sha256: hash.digest('hex') };
}

/** Counts the bytes flowing through, reporting the running total. */
function counter(onBytes: (total: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      onBytes(total);
      done(null, chunk);
    },
  });
}

export class TransferError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'TransferError';
  }
}

function requester(url: URL): typeof http.request {
  return url.protocol === 'https:' ? https.request : http.request;
}

/** PUTs a file to a presigned URL with exactly the given headers; `onBytes` hears the bytes sent. */
export async function putFile(
  url: string,
  headers: Record<string, string>,
  file: string,
  size: number,
  onBytes: (sent: number) => void = () => {},
): Promise<void> {
  const target = new URL(url);
  await new Promise<void>((resolve, reject) => {
    const req = requester(target)(
      target,
      { method: 'PUT', headers: { ...headers, 'content-length': String(size) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk.slice(0, 2000 - body.length)));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else
            reject(
              new TransferError(
                `The upload of ${file} was refused: HTTP ${status} ${body.slice(0, 500)}`,
                status,
              ),
            );
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    pipeline(createReadStream(file), counter(onBytes), req).catch(reject);
  });
}

/** GETs a URL into a file (written beside it, then renamed), returning its size and SHA-256. */
export async function downloadTo(
  url: string,
  file: string,
  onBytes: (received: number) => void = () => {},
): Promise<FileFacts> {
  const res = await fetch(url);
  if (!res.ok || !res.body)
    throw new TransferError(`The download of ${file} failed: HTTP ${res.status}`, res.status);
  const partial = `${file}.partial`;
  const hash = createHash('sha256');
  let size = 0;
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      onBytes(size);
      done(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.fromWeb(res.body as WebReadableStream<Uint8Array>),
      tee,
      createWriteStream(partial, { mode: 0o644 }),
    );
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { size, sha256: hash.digest('hex') };
}

// The object store: every file of the service lives here, under a prefix per organization.
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { Agent } from 'node:http';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config.ts';
import { OBJECTS_PREFIX, type SigningSecret } from './signature.ts';

/**
 * The default install's store (src/storage/embedded.ts): s3rver on a unix socket only this user
 * can open, reached from outside through the service's proxy at `{PUBLIC_URL}/objects/`, which
 * checks the signature of presigned URLs made with `signing` (src/storage/proxy.ts).
 */
export interface EmbeddedAccess {
  socketPath: string;
  signing: SigningSecret;
  /** where an upload is kept until its last byte arrived (DATA_DIR's file system, not a tmpfs) */
  spoolDir: string;
}

export interface ObjectInfo {
  size: number;
  contentType: string | undefined;
  etag: string | undefined;
}

/**
 * `attachment` with the name twice (RFC 6266): `filename` in ASCII with anything else as `_`, and
 * `filename*` in UTF-8, percent-encoded to RFC 8187's attr-chars (encodeURIComponent leaves
 * `'()*`, which are not among them).
 */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\w.\- ]+/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The object's ETag is not the one expected: it was written again since. */
export class ObjectChangedError extends Error {
  override readonly name = 'ObjectChangedError';
  constructor(
    readonly key: string,
    readonly expected: string,
    readonly actual: string | undefined,
  ) {
    super(`The object ${key} changed (ETag ${actual ?? 'none'}, ${expected} expected)`);
  }
}

function s3Client(
  endpoint: string,
  settings: Omit<S3Settings, 'endpoint' | 'bucket'>,
  httpAgent?: Agent,
): S3Client {
  return new S3Client({
    endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    // The SDK's default flexible checksums corrupt streamed uploads on S3-compatible servers
    // and put an empty-body checksum into presigned PUT URLs (docs/decisions/object-store.md).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(httpAgent ? { requestHandler: { httpAgent } } : {}),
  });
}

/**
 * An object up to this size is sent from memory and read into memory (a statement's objects, most
 * of them): one synchronous read or write of a small file on this thread instead of a stream's
 * hops to libuv's pool, which the worker threads' DuckDB queries keep busy; and the SDK signs a
 * body it holds as it is, without looking up a stream's length. A larger one streams.
 */
export const SMALL_OBJECT_BYTES = 4 * 1024 * 1024;

export class ObjectStore {
  readonly client: S3Client;
  readonly bucket: string;
  /** set for the default install: presigned URLs point at the service's proxy */
  readonly embedded: EmbeddedAccess | undefined;
  /** signs the URLs handed to clients: the client itself for a configured S3 */
  private presigner: S3Client | undefined;
  /** the default install's public address, once known (publishAt) */
  publicUrl: URL | undefined;

  constructor(settings: S3Settings, embedded?: EmbeddedAccess) {
    this.bucket = settings.bucket;
    this.embedded = embedded;
    // Node's agent passes socketPath on to each connection: the SDK then speaks HTTP over the socket
    const agent = embedded
      ? new Agent({ keepAlive: true, socketPath: embedded.socketPath } as ConstructorParameters<
          typeof Agent
        >[0])
      : undefined;
    this.client = s3Client(settings.endpoint, settings, agent);
    this.presigner = embedded ? undefined : this.client;
  }

  /**
   * The default install's public address (PUBLIC_URL, else the address the API listens on):
   * presigned URLs are made for `{url}/objects/`, signed with the proxy's secret.
   */
  publishAt(url: string): void {
    if (!this.embedded) return;
    const { signing } = this.embedded;
    this.presigner?.destroy();
    this.publicUrl = new URL(url);
    this.presigner = s3Client(`${url.replace(/\/+$/, '')}${OBJECTS_PREFIX}`, {
      ...signing,
      forcePathStyle: true,
    });
  }

  private signingClient(): S3Client {
    if (!this.presigner)
      throw new Error(
        'the embedded object store has no public address yet: presigned URLs are made by the API once it listens',
      );
    return this.presigner;
  }

  static orgPrefix(organizationId: string): string {
    return `orgs/${organizationId}/`;
  }

  /** Whether the bucket answers (HeadBucket), within what `signal` allows; creates nothing. */
  async checkBucket(signal?: AbortSignal): Promise<void> {
    await this.client.send(
      new HeadBucketCommand({ Bucket: this.bucket }),
      signal ? { abortSignal: signal } : {},
    );
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    }
  }

  async put(
    key: string,
    body: Buffer | string | Readable,
    contentType = 'application/octet-stream',
  ): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }),
    );
  }

  /** Puts a file's bytes: a small file's from memory, a larger one's as a stream. */
  async putFile(key: string, file: string, contentType: string): Promise<void> {
    const small = statSync(file).size <= SMALL_OBJECT_BYTES;
    await this.put(key, small ? readFileSync(file) : createReadStream(file), contentType);
  }

  async getBuffer(key: string): Promise<Buffer> {
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return Buffer.from(await res.Body!.transformToByteArray());
  }

  /**
   * The object's bytes. With `expectEtag`, an object whose ETag is another (replaced since that ETag
   * was read) is ObjectChangedError, before any byte is read.
   */
  async getStream(key: string, opts: { expectEtag?: string | null } = {}): Promise<Readable> {
    return (await this.getBody(key, opts)).body;
  }

  /** As getStream, with the object's size as the store announced it. */
  async getBody(
    key: string,
    opts: { expectEtag?: string | null } = {},
  ): Promise<{ body: Readable; size: number | undefined }> {
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    const body = res.Body as Readable;
    if (opts.expectEtag && res.ETag !== opts.expectEtag) {
      body.destroy();
      throw new ObjectChangedError(key, opts.expectEtag, res.ETag);
    }
    return { body, size: res.ContentLength };
  }

  /** undefined when the object does not exist. */
  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: res.ContentLength ?? 0, contentType: res.ContentType, etag: res.ETag };
    } catch (error) {
      if (error instanceof NotFound || (error as { name?: string }).name === 'NotFound')
        return undefined;
      throw error;
    }
  }

  /** Deletes one object; throws when the store does not answer (deleting a missing key is no error). */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Deletes every object under the prefix except the named keys, page by page of the listing. */
  async deletePrefix(prefix: string, keep: ReadonlySet<string> = new Set()): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key && !keep.has(o.Key)) await this.delete(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /**
   * A presigned PUT. The content type is signed, and the length when it is known: the client must
   * send exactly those (the SDK's presigner leaves Content-Type unsigned unless told to sign it).
   */
  async presignPut(
    key: string,
    contentType: string,
    expiresInSeconds: number,
    size?: number | null,
  ): Promise<string> {
    const sized = size !== undefined && size !== null;
    return getSignedUrl(
      this.signingClient(),
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ContentType: contentType,
        ...(sized ? { ContentLength: size } : {}),
      }),
      {
        expiresIn: expiresInSeconds,
        signableHeaders: new Set(sized ? ['content-type', 'content-length'] : ['content-type']),
      },
    );
  }

  /** A presigned GET that downloads as an attachment named fileName. */
  async presignGet(key: string, fileName: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(
      this.signingClient(),
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ResponseContentDisposition: attachmentDisposition(fileName),
      }),
      { expiresIn: expiresInSeconds },
    );
  }

  destroy(): void {
    this.client.destroy();
    if (this.presigner !== this.client) this.presigner?.destroy();
  }
}

/** how many deletions of one call are in flight at once (a rightsholder's may be thousands) */
const DELETES_AT_ONCE = 8;

/**
 * Deletes objects whose records are already gone (or never were): each key on its own, a few at
 * once (each a round trip to the store), and a failure stops none of the others; it is logged, and
 * its key returned (in the keys' order) for whoever can retry. The one way objects are removed
 * after the fact; a sweep that must not forget a key (it marks its rows done after) calls
 * ObjectStore.delete and lets the failure stop it instead.
 */
export async function deleteObjects(
  store: Pick<ObjectStore, 'delete'>,
  keys: readonly string[],
  log: { error(obj: object, msg: string): void },
): Promise<string[]> {
  const failed = new Set<string>();
  let next = 0;
  const deleteInTurn = async () => {
    for (let key = keys[next++]; key !== undefined; key = keys[next++]) {
      await store.delete(key).catch((error: unknown) => {
        log.error({ err: error, key }, 'object delete failed');
        failed.add(key);
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(DELETES_AT_ONCE, keys.length) }, deleteInTurn));
  return keys.filter((key) => failed.has(key));
}

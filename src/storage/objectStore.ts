// The object store: every file of the service lives here, under a prefix per organization.
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config.ts';

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
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
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

export class ObjectStore {
  readonly client: S3Client;
  readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      // The SDK's default flexible checksums corrupt streamed uploads on S3-compatible servers
      // and put an empty-body checksum into presigned PUT URLs (see README, decisions).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  static orgPrefix(organizationId: string): string {
    return `orgs/${organizationId}/`;
  }

  /** Whether the bucket answers (HeadBucket), within what `signal` allows; creates nothing. */
  async checkBucket(signal?: AbortSignal): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), signal ? { abortSignal: signal } : {});
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    }
  }

  async put(key: string, body: Buffer | string | Readable, contentType = 'application/octet-stream'): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
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
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    const body = res.Body as Readable;
    if (opts.expectEtag && res.ETag !== opts.expectEtag) {
      body.destroy();
      throw new ObjectChangedError(key, opts.expectEtag, res.ETag);
    }
    return body;
  }

  /** undefined when the object does not exist. */
  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: res.ContentLength ?? 0, contentType: res.ContentType, etag: res.ETag };
    } catch (error) {
      if (error instanceof NotFound || (error as { name?: string }).name === 'NotFound') return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** A presigned PUT. Only the content type is signed: the client must send exactly that header. */
  async presignPut(key: string, contentType: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(
      this.client,
      new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }),
      { expiresIn: expiresInSeconds },
    );
  }

  /** A presigned GET that downloads as an attachment named fileName. */
  async presignGet(key: string, fileName: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({ Bucket: this.bucket, Key: key, ResponseContentDisposition: attachmentDisposition(fileName) }),
      { expiresIn: expiresInSeconds },
    );
  }

  destroy(): void {
    this.client.destroy();
  }
}

// The embedded default object store: a real S3-compatible server (s3rver) with its data under
// DATA_DIR/s3. s3rver checks no signature (it accepts unsigned requests and does not compute
// SigV4 ones), so the default install gives it no TCP port: it listens on a unix socket in a
// directory only this user can open, the program talks S3 to it over that socket, and clients
// reach it only through the service's proxy at {PUBLIC_URL}/objects/, which checks signatures
// (src/storage/proxy.ts).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type S3rver from 's3rver';
import type { S3Settings } from '../config.ts';
import { ObjectStore } from './objectStore.ts';
import type { SigningSecret } from './signature.ts';

export interface EmbeddedObjectStore {
  settings: S3Settings;
  stop(): Promise<void>;
}

/** s3rver's built-in account (s3rver looks the key id up, and checks no SigV4 signature). */
const ACCESS_KEY = 'S3RVER';
const REGION = 'us-east-1';
/** The key id of presigned URLs of the default install; its secret is in DATA_DIR. */
const SIGNING_KEY_ID = 'ROYALTYEMBEDDED';

/**
 * s3rver's HTTP server keeps idle connections open: with Node's default keepAliveTimeout (5 s) it
 * closed one just as the S3 client, whose agent keeps idle sockets with no limit of its own, sent
 * its next request on it (ECONNRESET, "socket hang up"), which fails a streamed upload that cannot
 * be sent again. The client's agent decides when an idle connection ends; server.close() still
 * ends the idle ones.
 */
function keepIdleConnections(server: S3rver): void {
  (server as unknown as { httpServer: Server }).httpServer.keepAliveTimeout = 0;
}

/**
 * s3rver is an optional dependency (docs/decisions/embedded-servers-optional.md): `npm install`
 * brings it, an install for a configured S3 may leave it out (--omit=optional).
 */
async function s3rver(
  dir: string,
  bucket: string,
  listen: { address?: string; port?: number } = {},
): Promise<S3rver> {
  let S3rverServer: typeof S3rver;
  try {
    S3rverServer = (await import('s3rver')).default;
  } catch (error) {
    throw new Error(
      'The embedded object store needs the optional package s3rver, which is not installed: run npm install (without --omit=optional), or set S3_ENDPOINT and the other S3_* settings',
      { cause: error },
    );
  }
  return new S3rverServer({
    ...listen,
    directory: path.resolve(dir),
    silent: true,
    vhostBuckets: false,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
}

/**
 * A plain s3rver on a loopback TCP port, without any access control: tests use it as the
 * stand-in for a configured S3 (S3_ENDPOINT). The default install does not (startDefaultObjectStore).
 */
export async function startEmbeddedS3(
  dir: string,
  bucket: string,
  port = 0,
): Promise<EmbeddedObjectStore> {
  await mkdir(dir, { recursive: true });
  const server = await s3rver(dir, bucket, { address: '127.0.0.1', port });
  const address = (await server.run()) as { port: number };
  keepIdleConnections(server);
  return {
    settings: {
      endpoint: `http://127.0.0.1:${address.port}`,
      bucket,
      region: REGION,
      accessKeyId: ACCESS_KEY,
      secretAccessKey: ACCESS_KEY,
      forcePathStyle: true,
    },
    async stop() {
      await server.close();
    },
  };
}

/**
 * The secret presigned URLs are signed with, made once and kept in DATA_DIR (mode 0600): every
 * process of the install (serve, api, worker, admin) and every restart signs and checks alike, so
 * a URL handed out before a restart still works until it expires.
 */
async function signingSecret(dataDir: string): Promise<SigningSecret> {
  const file = path.join(dataDir, 'object-signing.key');
  const fresh = randomBytes(32).toString('hex');
  try {
    // wx: two processes starting at once keep the one written first
    await writeFile(file, `${fresh}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secretAccessKey = (await readFile(file, 'utf8')).trim();
  if (!/^[0-9a-f]{64}$/.test(secretAccessKey))
    throw new Error(
      `${file} is not a signing key (64 hex digits): remove it to have a new one made`,
    );
  return { accessKeyId: SIGNING_KEY_ID, secretAccessKey, region: REGION };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the directories `<prefix><pid>-…` under `parent` of processes that are gone: a killed
 * process leaves its socket directory and its spool (with a half upload) behind.
 */
async function removeLeftovers(parent: string, prefix: string): Promise<void> {
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const pid = Number(new RegExp(`^${prefix}(\\d+)-`).exec(name)?.[1]);
    if (pid > 0 && pid !== process.pid && !alive(pid))
      await rm(path.join(parent, name), { recursive: true, force: true }).catch(() => {});
  }
}

export interface DefaultObjectStore {
  store: ObjectStore;
  socketPath: string;
  stop(): Promise<void>;
}

/**
 * The default install's store: s3rver over DATA_DIR/s3 on a unix socket in a fresh directory of
 * its own (mkdtemp: mode 0700, and short enough for a socket path whatever DATA_DIR is).
 */
export async function startDefaultObjectStore(
  dataDir: string,
  bucket: string,
): Promise<DefaultObjectStore> {
  const dir = path.join(dataDir, 's3');
  await mkdir(dir, { recursive: true });
  const server = await s3rver(dir, bucket);
  const signing = await signingSecret(dataDir);
  // this process's own: another process of the install has its own, and removes it at its stop
  const incoming = path.join(dataDir, 's3-incoming');
  await mkdir(incoming, { recursive: true });
  await removeLeftovers(incoming, '');
  await removeLeftovers(tmpdir(), 'royalty-s3-');
  const spoolDir = await mkdtemp(path.join(incoming, `${process.pid}-`));
  const socketDir = await mkdtemp(path.join(tmpdir(), `royalty-s3-${process.pid}-`));
  const socketPath = path.join(socketDir, 's3.sock');
  // what s3rver's run() does, on a socket instead of a port (its listen passes the arguments on)
  const internals = server as unknown as { listen(p: string): Promise<Server>; httpServer: Server };
  const removeDirs = async () => {
    await rm(socketDir, { recursive: true, force: true });
    await rm(spoolDir, { recursive: true, force: true });
  };
  try {
    await server.configureBuckets();
    internals.httpServer = await internals.listen(socketPath);
    keepIdleConnections(server);
  } catch (error) {
    await removeDirs();
    throw error;
  }
  const settings: S3Settings = {
    endpoint: 'http://embedded-s3.invalid',
    bucket,
    region: REGION,
    accessKeyId: ACCESS_KEY,
    secretAccessKey: ACCESS_KEY,
    forcePathStyle: true,
  };
  return {
    store: new ObjectStore(settings, { socketPath, signing, spoolDir }),
    socketPath,
    async stop() {
      await server.close();
      await removeDirs();
    },
  };
}

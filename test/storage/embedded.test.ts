// The default install's embedded store on its own: one signing secret for every process and
// restart of a DATA_DIR, what a killed process left behind removed at the next start, a file put
// from memory or streamed, and an install without the optional s3rver package.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startDefaultObjectStore } from '../../src/storage/embedded.ts';
import { SMALL_OBJECT_BYTES } from '../../src/storage/objectStore.ts';
import { repoRoot } from '../setup/paths.ts';

const dataDir = await mkdtemp(path.join(tmpdir(), 'royalty-test-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));

t.test('one signing secret per DATA_DIR, made once, kept private', async (t) => {
  const [a, b] = await Promise.all([
    startDefaultObjectStore(dataDir, 'royalty'),
    startDefaultObjectStore(dataDir, 'royalty'),
  ]);
  const secret = a.store.embedded!.signing.secretAccessKey;
  t.match(secret, /^[0-9a-f]{64}$/);
  t.equal(
    b.store.embedded!.signing.secretAccessKey,
    secret,
    'two processes starting at once agree',
  );
  t.not(a.socketPath, b.socketPath, 'each has its own socket');
  await Promise.all([a.stop(), b.stop()]);
  const again = await startDefaultObjectStore(dataDir, 'royalty');
  t.equal(again.store.embedded!.signing.secretAccessKey, secret, 'and a restart');
  t.equal((await stat(path.join(dataDir, 'object-signing.key'))).mode & 0o777, 0o600);
  await again.stop();
  await t.rejects(stat(again.socketPath), { code: 'ENOENT' }, 'the socket goes with the stop');
  t.same(await readdir(path.join(dataDir, 's3-incoming')), [], 'and the spool');
});

t.test(
  "a killed process's socket directory and half uploads go at the next start; a live one's stay",
  async (t) => {
    // no process has this id (above any pid_max); process 1 always runs
    const dead = path.join(dataDir, 's3-incoming', '999999999-abc');
    const live = path.join(dataDir, 's3-incoming', '1-abc');
    const deadSocket = path.join(tmpdir(), 'royalty-s3-999999999-abc');
    for (const dir of [dead, live, deadSocket]) await mkdir(dir, { recursive: true });
    await writeFile(path.join(dead, 'upload'), 'half an upload');
    t.teardown(() =>
      Promise.all([live, deadSocket].map((d) => rm(d, { recursive: true, force: true }))),
    );
    const started = await startDefaultObjectStore(dataDir, 'royalty');
    await started.stop();
    await t.rejects(stat(dead), { code: 'ENOENT' });
    await t.rejects(stat(deadSocket), { code: 'ENOENT' });
    t.ok((await stat(live)).isDirectory());
  },
);

t.test(
  'a file is put from memory up to SMALL_OBJECT_BYTES, streamed beyond: the same bytes',
  async (t) => {
    const started = await startDefaultObjectStore(dataDir, 'royalty');
    t.teardown(() => started.stop());
    const { store } = started;
    await store.ensureBucket();
    const dir = await mkdtemp(path.join(tmpdir(), 'royalty-test-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    for (const size of [0, 1000, SMALL_OBJECT_BYTES, SMALL_OBJECT_BYTES + 1]) {
      const bytes = Buffer.alloc(size, 'ab,c\n');
      const file = path.join(dir, `f${size}`);
      await writeFile(file, bytes);
      await store.putFile(`k/${size}`, file, 'text/csv');
      t.match(await store.head(`k/${size}`), { size, contentType: 'text/csv' });
      t.ok((await store.getBuffer(`k/${size}`)).equals(bytes), `${size} bytes read back`);
      const { body, size: announced } = await store.getBody(`k/${size}`);
      body.destroy();
      t.equal(announced, size, 'the size as the store announces it');
    }
  },
);

t.test(
  'without the optional s3rver (npm install --omit=optional) the start says what to do',
  async (t) => {
    // a module resolve hook takes s3rver out of the install, in a process of its own
    const hook = `export async function resolve(s, c, next) {
    if (s === 's3rver') throw Object.assign(new Error("Cannot find package 's3rver'"), { code: 'ERR_MODULE_NOT_FOUND' });
    return next(s, c);
  }`;
    const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
    const dir = path.join(dataDir, 'without-s3rver');
    const script = `const { startDefaultObjectStore } = await import('./src/storage/embedded.ts');
    await startDefaultObjectStore(${JSON.stringify(dir)}, 'royalty').then(() => console.log('started'), (e) => console.log(e.message));`;
    const child = spawn(
      process.execPath,
      [
        '--import',
        `data:text/javascript,${encodeURIComponent(register)}`,
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        script,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    t.equal(code, 0);
    t.equal(
      out.trim(),
      'The embedded object store needs the optional package s3rver, which is not installed: run npm install (without --omit=optional), or set S3_ENDPOINT and the other S3_* settings',
    );
    t.same(await readdir(dir), ['s3'], 'nothing started: no socket, no spool, no signing secret');
  },
);

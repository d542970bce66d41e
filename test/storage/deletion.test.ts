// Object deletion, its one way (src/storage/objectStore.ts), against the real embedded store:
// a prefix swept but for the keys it keeps, and keys deleted one by one with each failure logged.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startDefaultObjectStore } from '../../src/storage/embedded.ts';
import { deleteObjects } from '../../src/storage/objectStore.ts';

const dataDir = await mkdtemp(path.join(tmpdir(), 'royalty-test-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));
const started = await startDefaultObjectStore(dataDir, 'royalty');
const { store } = started;
await store.ensureBucket();

const present = async (keys: string[]) =>
  (await Promise.all(keys.map(async (k) => ((await store.head(k)) ? k : null)))).filter(
    (k) => k !== null,
  );

t.test(
  'deletePrefix removes what is under the prefix but the kept keys, and nothing beside it',
  async (t) => {
    // hostile names: spaces, percent signs, quotes, non-Latin text, a prefix that is another's start
    const under = [
      'exp/1/a.csv',
      'exp/1/attempt-2/p 1.parquet',
      "exp/1/it's 100%.xlsx",
      'exp/1/Ünïcødé/データ.csv',
      'exp/1/keep.csv',
    ];
    const beside = ['exp/10/a.csv', 'exp/1', 'other/exp/1/a.csv'];
    for (const key of [...under, ...beside]) await store.put(key, key);
    await store.deletePrefix('exp/1/', new Set(['exp/1/keep.csv']));
    t.same(await present([...under, ...beside]), ['exp/1/keep.csv', ...beside]);
    await store.deletePrefix('exp/1/');
    t.same(await present([...under, ...beside]), beside);
    await store.deletePrefix('nothing/here/');
    t.same(await present(beside), beside, 'an empty prefix deletes nothing');
  },
);

t.test(
  'deleteObjects deletes every key, a missing one included, and reports none failed',
  async (t) => {
    const keys = ['orgs/a/statements/s1/upload.csv', 'orgs/a/statements/s1/normalized/v1.parquet'];
    for (const key of keys) await store.put(key, 'x');
    const logged: object[] = [];
    const failed = await deleteObjects(store, [...keys, 'orgs/a/never-written.csv'], {
      error: (obj) => logged.push(obj),
    });
    t.same(failed, []);
    t.same(logged, []);
    t.same(await present(keys), []);
  },
);

t.test('deleteObjects deletes more keys than it sends at once, every one', async (t) => {
  const keys = Array.from({ length: 21 }, (_, i) => `orgs/a/statements/s2/part-${i}.csv`);
  for (const key of keys) await store.put(key, 'x');
  t.same(await deleteObjects(store, keys, { error: () => t.fail('no delete fails') }), []);
  t.same(await present(keys), []);
});

t.test(
  'deleteObjects goes on past a failure: each failed key is logged and returned',
  async (t) => {
    const other = await startDefaultObjectStore(dataDir, 'royalty');
    await other.store.put('orgs/b/one.csv', '1');
    await other.stop();
    // the stopped store's socket is gone: every delete fails, and none stops the next
    const logged: { key?: string }[] = [];
    const failed = await deleteObjects(other.store, ['orgs/b/one.csv', 'orgs/b/two.csv'], {
      error: (obj) => logged.push(obj as { key?: string }),
    });
    t.same(failed, ['orgs/b/one.csv', 'orgs/b/two.csv']);
    t.same(
      logged.map((l) => l.key),
      ['orgs/b/one.csv', 'orgs/b/two.csv'],
    );
    t.same(
      await present(['orgs/b/one.csv']),
      ['orgs/b/one.csv'],
      'the object is still there for a later try',
    );
  },
);

t.teardown(() => started.stop());

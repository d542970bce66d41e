// Hostile titles through the real pipeline (statement → block refresh → clusters → products): a
// title or artist of thousands of characters (in any script) is one musical detail with a bounded
// key instead of failing the whole block's refresh (an index entry has at most 2704 bytes), two
// such titles that differ only far on stay two; control characters and direction marks fold away.
import t from 'tap';
import { boundKey } from '../../src/catalog/identity.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { ok } from '../helpers/outcome.ts';
import { enrichmentDrivenServer, ingestBlock } from './helpers.ts';

t.setTimeout(300_000);

t.test('boundKey', async (t) => {
  t.equal(boundKey('short'), 'short');
  t.equal(boundKey('a'.repeat(250)), 'a'.repeat(250));
  t.equal(boundKey('a'.repeat(251)), `${'a'.repeat(200)}~772f911dd9d6692897188d0b03f718fb`);
  t.equal(
    Array.from(boundKey('😀'.repeat(300))).length,
    233,
    'counted in code points, never splitting a pair',
  );
});

t.test('a block with hostile titles refreshes', async (t) => {
  const srv = await enrichmentDrivenServer(t);
  const db = srv.deps.pool;
  const owner = await newOrganization(srv, 'Hostile Org');
  const org = owner.organizationId;
  const rh = await createRightsholder(owner.client, org, 'Hostile Artist');
  // words of random letters: nothing a compressed index entry could hide
  let seed = 7;
  const letter = () =>
    String.fromCharCode(97 + ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 26));
  const words = Array.from({ length: 1_600 }, () =>
    Array.from({ length: 5 }, letter).join(''),
  ).join(' ');
  const cjk = Array.from({ length: 900 }, (_, i) =>
    String.fromCharCode(0x4e00 + ((i * 7919) % 20_000)),
  ).join('');
  const { status, block } = await ingestBlock(srv, owner, rh, 'hostile.tsv', [
    ['Hostile Artist', `${words} one`, '', '1'],
    ['Hostile Artist', `${words} two`, '', '2'],
    [cjk, cjk, '', '4'],
    ['Hostile Artist', 'Ctl\u0001Title\u200f \u202eRTL', '', '8'],
  ]);
  t.equal(status, 'processed');
  const { rows } = await db.query<{ identity_key: string; title: string; earnings_usd: string }>(
    'SELECT identity_key, title, earnings_usd::text FROM musical_details WHERE block_id = $1 ORDER BY earnings_usd DESC',
    [block],
  );
  t.same(
    rows.map((r) => r.earnings_usd),
    ['8', '4', '2', '1'],
    'four musical details: the two long titles stay two',
  );
  t.equal(rows[0]!.identity_key, 'ta:ctl title rtl\u001fhostile artist');
  t.ok(
    rows.every((r) => Buffer.byteLength(r.identity_key) < 1_500),
    'bounded keys',
  );
  const [long, artist] = rows[2]!.identity_key.split('\u001f');
  t.match(long, /^ta:[a-z ]{200}~[0-9a-f]{32}$/);
  t.equal(artist, 'hostile artist');
  t.equal(rows[2]!.title.length, 1_000, 'the raw title is kept to its first 1,000 characters');
  const clusters = ok(
    t,
    await owner.client.query('clustering.getClustersList', { organizationId: org, blockId: block }),
  ).data;
  // the clustering compares the first 1,000 characters of a title (docs/catalog.md "Title
  // clustering"): one cluster
  t.same(
    clusters.map((c: any) => c.earnings),
    ['8', '4', '3'],
  );
  t.ok(clusters.every((c: any) => Buffer.byteLength(c.stableKey) < 1_500));
  t.equal(clusters[1].displayTitle.length, 500, 'a display title is cut to 500 characters');
  const products = ok(
    t,
    await owner.client.query('product.getByBlock', {
      organizationId: org,
      blockId: block,
      sortBy: 'earnings',
    }),
  ).data;
  t.ok(
    products.every(
      (p: any) =>
        Array.from(p.title).length <= 500 &&
        (p.artist === null || Array.from(p.artist).length <= 500),
    ),
    'titles and artists of products are cut to 500',
  );
  t.same(products.map((p: any) => [p.kind, p.earnings]).sort(), [
    ['track', '3'],
    ['track', '4'],
    ['track', '8'],
  ]);
});

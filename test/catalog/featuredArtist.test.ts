// A featured-artist credit is not another artist for products (docs/catalog.md "Products"):
// enrichment (the offline dataset) answers "Bright Harbour feat. Lúa Castro" for a line the
// statement credits to "Bright Harbour", and the two stay one track. Products stored under a key
// with the credit (before it was dropped) keep their ids and corrections.
import t from 'tap';
import { artistKey, currentProductKey, refreshProducts } from '../../src/catalog/products.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { ok } from '../helpers/outcome.ts';
import { waitForEnrichment } from '../api/clustering/helpers.ts';
import { ingestBlock } from './helpers.ts';

t.setTimeout(300_000);

t.test('artistKey and currentProductKey', async (t) => {
  t.equal(artistKey('Orla Finn feat. Mara Velde'), 'orla finn');
  t.equal(artistKey('Orla Finn (feat. Mara Velde)'), 'orla finn');
  t.equal(artistKey('Orla Finn [ft. Mara Velde & Kai Moss]'), 'orla finn');
  t.equal(artistKey('ORLA FINN Featuring Mara Velde'), 'orla finn');
  t.equal(artistKey('Orla Finn ft Mara Velde'), 'orla finn');
  t.equal(artistKey('Orla Finn feat.'), 'orla finn');
  t.equal(
    artistKey('Featuring Ghosts'),
    'featuring ghosts',
    'a credit word that starts the name is the name',
  );
  t.equal(artistKey('Daft Punk'), 'daft punk');
  t.equal(artistKey('Left Feather'), 'left feather');
  t.equal(artistKey(null), '');
  t.equal(
    currentProductKey('track:cluster:glasshouse\u001fbright harbour feat lua castro'),
    'track:cluster:glasshouse\u001fbright harbour',
  );
  t.equal(
    currentProductKey('album:glasshouse feat lua castro\u001fbright harbour ft x'),
    'album:glasshouse feat lua castro\u001fbright harbour',
  );
  t.equal(
    currentProductKey('track:cluster:glasshouse\u001fbright harbour'),
    'track:cluster:glasshouse\u001fbright harbour',
  );
  t.equal(
    currentProductKey('track:md:ta:glasshouse feat x\u001fbright harbour feat x'),
    'track:md:ta:glasshouse feat x\u001fbright harbour feat x',
    'an identity key stays',
  );
});

t.test('a fetched feat. credit keeps one track, end to end', async (t) => {
  const srv = await startTestServer(t, { role: 'serve' });
  const owner = await newOrganization(srv, 'Feat Org');
  const org = owner.organizationId;
  const db = srv.deps.pool;
  const rh = await createRightsholder(owner.client, org, 'Bright Harbour');
  const { status, block } = await ingestBlock(srv, owner, rh, 'dk.tsv', [
    ['Bright Harbour', 'Glasshouse', 'JPP2T2400197', '4.00'],
    ['Bright Harbour', 'Glasshuose', '', '1.25'],
  ]);
  t.equal(status, 'processed');
  await waitForEnrichment(db, block);
  const { rows } = await db.query<{ identity_key: string; state: string; artist: string | null }>(
    `SELECT identity_key, state, result->>'artist' AS artist FROM musical_details WHERE block_id = $1 ORDER BY identity_key COLLATE "C"`,
    [block],
  );
  t.same(rows, [
    {
      identity_key: 'isrc:JPP2T2400197',
      state: 'found',
      artist: 'Bright Harbour feat. Lúa Castro',
    },
    { identity_key: 'ta:glasshuose\u001fbright harbour', state: 'not_found', artist: null },
  ]);
  const products = async () =>
    ok(t, await owner.client.query('product.getByBlock', { organizationId: org, blockId: block }))
      .data.map((p: any) => [
        p.kind,
        p.stableKey,
        p.title,
        p.artist,
        p.earnings,
        p.musicalDetailCount,
      ])
      .sort((a: string[], b: string[]) => (a[0]! < b[0]! ? -1 : 1)); // one title: album, then track
  t.same(await products(), [
    [
      'album',
      'album:glasshouse feat lua castro\u001fbright harbour',
      'Glasshouse (feat. Lúa Castro)',
      'Bright Harbour',
      '5.25',
      2,
    ],
    [
      'track',
      'track:cluster:glasshouse\u001fbright harbour',
      'Glasshouse (feat. Lúa Castro)',
      'Bright Harbour feat. Lúa Castro',
      '5.25',
      2,
    ],
  ]);

  // as an earlier version stored the track: under the credited artist, with a correction
  const track = (
    await db.query<{ id: string }>(
      `SELECT id FROM products WHERE block_id = $1 AND kind = 'track'`,
      [block],
    )
  ).rows[0]!.id;
  ok(
    t,
    await owner.client.mutate('product.updateById', {
      organizationId: org,
      productId: track,
      title: 'Glasshouse',
    }),
  );
  const legacy = 'track:cluster:glasshouse\u001fbright harbour feat lua castro';
  await db.query(`UPDATE products SET stable_key = $2 WHERE id = $1`, [track, legacy]);
  await db.query(`UPDATE product_overrides SET product_key = $2 WHERE block_id = $1`, [
    block,
    legacy,
  ]);
  await refreshProducts(srv.deps, block);
  const after = ok(
    t,
    await owner.client.query('product.getById', { organizationId: org, productId: track }),
  );
  t.same(
    [after.id, after.stableKey, after.title, after.earnings, after.overriddenFields],
    [track, 'track:cluster:glasshouse\u001fbright harbour', 'Glasshouse', '5.25', ['title']],
  );
});

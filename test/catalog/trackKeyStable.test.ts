// A track that a new line joins by a shared recording (enrichment found the ISRC the new line
// prints) keeps its key, its id and the users' corrections, whatever the new line's title: the key
// is not re-chosen from the members' names when the group grows (docs/catalog.md "Tracks"). Real
// ingestion, real block refresh, the offline enrichment dataset.
import t from 'tap';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { waitForEnrichment } from '../api/clustering/helpers.ts';
import { ingestBlock } from './helpers.ts';

t.setTimeout(300_000);

t.test(
  'a line of the same recording under a title sorting first joins the track it names',
  async (t) => {
    const srv = await startTestHandler(t, { jobs: true });
    const owner = await newOrganization(srv, 'Stable Keys Org');
    const org = owner.organizationId;
    const db = srv.deps.pool;
    const rh = await createRightsholder(owner.client, org, 'Marco Deluca');
    // the offline dataset finds "Blue Canyon" by Marco Deluca, ISRC CAP2T9700440
    const first = await ingestBlock(srv, owner, rh, 'q1.tsv', [
      ['Marco Deluca', 'Blue Canyon', '', '4.25'],
    ]);
    t.equal(first.status, 'processed');
    await waitForEnrichment(db, first.block);
    const tracks = async () =>
      (
        await db.query<{ id: string; stable_key: string; title: string; n: number }>(
          `SELECT p.id, p.stable_key, p.title, (SELECT count(*) FROM product_musical_details l WHERE l.product_id = p.id)::int AS n
         FROM products p WHERE p.block_id = $1 AND p.kind = 'track' ORDER BY p.stable_key`,
          [first.block],
        )
      ).rows;
    const [track] = await tracks();
    t.equal(track!.stable_key, 'track:cluster:bluecanyon\u001fmarco deluca');
    const corrected: any = await owner.client.mutate('product.updateById', {
      organizationId: org,
      productId: track!.id,
      title: 'Blue Canyon (Radio Edit)',
    });
    t.equal(corrected.ok, true);

    // the next quarter prints the same ISRC under another title, whose key sorts first
    const second = await ingestBlock(
      srv,
      owner,
      rh,
      'q2.tsv',
      [['Marco Deluca', 'Azure Canyon', 'CAP2T9700440', '1.50']],
      2,
    );
    t.equal(second.status, 'processed');
    await waitForEnrichment(db, second.block);
    t.equal(second.block, first.block);
    t.same(await tracks(), [
      {
        id: track!.id,
        stable_key: 'track:cluster:bluecanyon\u001fmarco deluca',
        title: 'Blue Canyon (Radio Edit)',
        n: 2,
      },
    ]);
  },
);

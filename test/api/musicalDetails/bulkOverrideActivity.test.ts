// musicalDetails.bulkOverride by ids and ignoreTitles record one activity event per rightsholder
// (block) of the request, with the counts, not one per musical detail: an override of up to
// 100 × 5,000 details, or titles matching every detail of the organization, wrote an event row
// for each.
import t from 'tap';
import { createRightsholder } from '../../helpers/ingest.ts';
import { waitForLockWaiters } from '../../helpers/locks.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { enrichmentDrivenHandler, ingestBlock } from '../../catalog/helpers.ts';

t.setTimeout(600_000);

const srv = await enrichmentDrivenHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Bulk Org');
const org = owner.organizationId;
const first = await createRightsholder(owner.client, org, 'First Artist');
const second = await createRightsholder(owner.client, org, 'Second Artist');
const song = (artist: string, n: number) =>
  [artist, `Song ${n}`, '', `${n}.5`] as [string, string, string, string];
const [{ block: block1 }, { block: block2 }] = await Promise.all([
  ingestBlock(
    srv,
    owner,
    first,
    'first.tsv',
    [1, 2, 3, 4, 5].map((n) => song('First Artist', n)),
  ),
  ingestBlock(
    srv,
    owner,
    second,
    'second.tsv',
    [6, 7, 8].map((n) => song('Second Artist', n)),
  ),
]);
const detailsOf = async (block: string) =>
  (
    await db.query<{ id: string }>(
      'SELECT id FROM musical_details WHERE block_id = $1 ORDER BY title',
      [block],
    )
  ).rows.map((r) => r.id);
const [ones, twos] = [await detailsOf(block1), await detailsOf(block2)];

t.test(
  'one event per rightsholder of the request, with the number of details and each item',
  async (t) => {
    t.equal(ones.length, 5);
    t.equal(twos.length, 3);
    const res = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      overrides: [
        { musicalDetailIds: [...ones, twos[0]!, twos[1]!], values: { genres: ['pop'] } },
        { musicalDetailIds: ones.slice(0, 3), values: { artist: 'Somebody Else' } },
      ],
    });
    t.ok(res.ok, JSON.stringify(res.error));
    t.equal(res.data.overrides, 10);
    t.equal(
      (
        await db.query(
          'SELECT count(*)::int AS n FROM musical_detail_overrides WHERE organization_id = $1',
          [org],
        )
      ).rows[0].n,
      10,
      'an override each',
    );
    const { rows } = await db.query(
      `SELECT subject_type, subject_id, subject_label, rightsholder_ids, changes FROM activity_events
     WHERE organization_id = $1 AND action = 'musicalDetails.bulkOverride' ORDER BY subject_label`,
      [org],
    );
    t.equal(rows.length, 2, 'two events for ten overrides');
    t.same(rows, [
      {
        subject_type: 'rightsholder',
        subject_id: first,
        subject_label: 'First Artist',
        rightsholder_ids: [first],
        changes: {
          overrides: {
            before: null,
            after: {
              blockId: block1,
              musicalDetails: 8,
              items: [
                { musicalDetails: 5, values: { genres: ['pop'] } },
                { musicalDetails: 3, values: { artist: 'Somebody Else' } },
              ],
            },
          },
        },
      },
      {
        subject_type: 'rightsholder',
        subject_id: second,
        subject_label: 'Second Artist',
        rightsholder_ids: [second],
        changes: {
          overrides: {
            before: null,
            after: {
              blockId: block2,
              musicalDetails: 2,
              items: [{ musicalDetails: 2, values: { genres: ['pop'] } }],
            },
          },
        },
      },
    ]);

    // a member restricted to one rightsholder sees that one's event only, in the feed and its history
    const limited = await addMember(srv, org, 'member');
    await db.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, limited.userId, [second]],
    );
    const feed = await limited.client.query('activity.feed', {
      organizationId: org,
      action: 'musicalDetails.bulkOverride',
    });
    t.same(
      feed.data.data.map((e: any) => [e.subjectId, e.changes.overrides.after.musicalDetails]),
      [[second, 2]],
    );
    const history = await limited.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'rightsholder',
      subjectId: second,
    });
    t.same(
      history.data.data.filter((e: any) => e.action === 'musicalDetails.bulkOverride').length,
      1,
    );
  },
);

t.test('ignoreTitles: one event per rightsholder whose details it marks', async (t) => {
  const res = await owner.client.mutate('musicalDetails.ignoreTitles', {
    organizationId: org,
    titles: ['Song 1', 'song 2', 'SONG 7'],
  });
  t.ok(res.ok, JSON.stringify(res.error));
  t.equal(res.data.musicalDetails, 3);
  const { rows } = await db.query(
    `SELECT subject_type, subject_id, changes FROM activity_events WHERE organization_id = $1 AND action = 'musicalDetails.ignoreTitles' ORDER BY subject_label`,
    [org],
  );
  t.same(rows, [
    {
      subject_type: 'rightsholder',
      subject_id: first,
      changes: {
        overrides: {
          before: null,
          after: {
            blockId: block1,
            musicalDetails: 2,
            items: [{ musicalDetails: 2, values: { ignored: true } }],
          },
        },
      },
    },
    {
      subject_type: 'rightsholder',
      subject_id: second,
      changes: {
        overrides: {
          before: null,
          after: {
            blockId: block2,
            musicalDetails: 1,
            items: [{ musicalDetails: 1, values: { ignored: true } }],
          },
        },
      },
    },
  ]);
  t.equal(
    (
      await db.query(
        `SELECT count(*)::int AS n FROM musical_detail_overrides WHERE organization_id = $1 AND kind = 'ignore'`,
        [org],
      )
    ).rows[0].n,
    3,
    'an override each',
  );
});

t.test(
  'a block removed while an override of its details waited for it: MUSICAL_DETAIL_NOT_FOUND, never a 500',
  async (t) => {
    const third = await createRightsholder(owner.client, org, 'Third Artist');
    const { block } = await ingestBlock(srv, owner, third, 'third.tsv', [song('Third Artist', 9)]);
    const [detail] = await detailsOf(block);
    // a removal as rightsholder.deleteById makes it has begun: the rightsholder locked, its block gone
    const holder = await db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM rightsholders WHERE id = $1 FOR UPDATE', [third]);
      await holder.query('DELETE FROM catalog_blocks WHERE id = $1', [block]);
      const override = owner.client.mutate('musicalDetails.bulkOverride', {
        organizationId: org,
        overrides: [{ musicalDetailIds: [detail!], values: { genres: ['jazz'] } }],
      });
      await waitForLockWaiters(db, 1);
      await holder.query('DELETE FROM rightsholders WHERE id = $1', [third]);
      await holder.query('COMMIT');
      const res = await override;
      t.same(
        [res.error?.data.code, res.error?.data.errorCode],
        ['NOT_FOUND', 'MUSICAL_DETAIL_NOT_FOUND'],
      );
    } finally {
      holder.release();
    }
  },
);

t.test(
  'ignoreTitles beside a rightsholder removal that reaches its details: one waits for the other, no deadlock',
  async (t) => {
    const fourth = await createRightsholder(owner.client, org, 'Fourth Artist');
    const { block } = await ingestBlock(srv, owner, fourth, 'fourth.tsv', [
      song('Fourth Artist', 10),
    ]);
    const holder = await db.connect();
    try {
      await holder.query('BEGIN');
      // rightsholder.deleteById's order: the rightsholder locked, then its details removed, then its block
      await holder.query('SELECT 1 FROM rightsholders WHERE id = $1 FOR UPDATE', [fourth]);
      const ignored = owner.client.mutate('musicalDetails.ignoreTitles', {
        organizationId: org,
        titles: ['Song 10'],
      });
      let done = false;
      void ignored.finally(() => (done = true));
      for (let i = 0; i < 300 && !done; i++) await new Promise((r) => setTimeout(r, 10));
      const removal = holder
        .query('DELETE FROM musical_details WHERE block_id = $1', [block])
        .then(() => holder.query('DELETE FROM catalog_blocks WHERE id = $1', [block]));
      const res = await ignored;
      t.ok(res.ok, JSON.stringify(res.error));
      t.equal(res.data.musicalDetails, 1);
      await removal;
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    t.equal(
      (await db.query('SELECT count(*)::int AS n FROM catalog_blocks WHERE id = $1', [block]))
        .rows[0].n,
      0,
      'and the removal went through',
    );
  },
);

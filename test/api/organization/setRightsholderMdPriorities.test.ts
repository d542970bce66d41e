// organization.setRightsholderMdPriorities: replaces the whole musical-detail fetch ordering;
// every id must be a live rightsholder of the organization.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, insertRightsholder, MISSING_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const other = await newOrganization(srv, 'Other');
const a = await insertRightsholder(srv, org, 'Alpha');
const b = await insertRightsholder(srv, org, 'Bravo');
const c = await insertRightsholder(srv, org, 'Charlie');
const foreign = await insertRightsholder(srv, other.organizationId, 'Foreign');
const set = (rightsholderIds: unknown, client = admin.client) =>
  client.mutateUnchecked('organization.setRightsholderMdPriorities', {
    organizationId: org,
    ...(rightsholderIds === undefined ? {} : { rightsholderIds }),
  });
const stored = async () =>
  (
    await srv.deps.pool.query(
      'SELECT rightsholder_id AS id, position FROM rightsholder_md_priorities WHERE organization_id = $1 ORDER BY position',
      [org],
    )
  ).rows;

t.test('replaces the whole ordering and returns it', async (t) => {
  t.same(ok(t, await set([b, a, c])), [
    { position: 1, rightsholderId: b, name: 'Bravo' },
    { position: 2, rightsholderId: a, name: 'Alpha' },
    { position: 3, rightsholderId: c, name: 'Charlie' },
  ]);
  t.same(ok(t, await set([c])), [{ position: 1, rightsholderId: c, name: 'Charlie' }]);
  t.same(await stored(), [{ id: c, position: 1 }]);
  t.same(ok(t, await set([])), []);
  t.same(ok(t, await set([a, b])), [
    { position: 1, rightsholderId: a, name: 'Alpha' },
    { position: 2, rightsholderId: b, name: 'Bravo' },
  ]);
  t.same(ok(t, await set(undefined)), [], 'rightsholderIds defaults to empty');

  const events = await activities(srv, org, 'organization.setRightsholderMdPriorities');
  t.same(
    events.map((e) => e.changes),
    [
      { rightsholderMdPriorities: { before: [], after: [b, a, c] } },
      { rightsholderMdPriorities: { before: [b, a, c], after: [c] } },
      { rightsholderMdPriorities: { before: [c], after: [] } },
      { rightsholderMdPriorities: { before: [], after: [a, b] } },
      { rightsholderMdPriorities: { before: [a, b], after: [] } },
    ],
  );
  t.equal(events[0]!.subjectType, 'organization');
});

t.test(
  'ids that are not live rightsholders of the organization: NOT_FOUND, nothing changed',
  async (t) => {
    ok(t, await set([a]));
    const deleted = await insertRightsholder(srv, org, 'Archived', { deleted: true });
    for (const [label, ids] of [
      ['another organization’s', [b, foreign]],
      ['unknown', [MISSING_ID]],
      ['soft-deleted', [deleted]],
    ] as const) {
      const error = isError(t, await set(ids), 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND', label);
      t.notMatch(JSON.stringify(error), /Foreign/, 'no name leaked');
      t.same(await stored(), [{ id: a, position: 1 }], `${label}: unchanged`);
    }
  },
);

t.test('validation and hostile input', async (t) => {
  isError(t, await set([a, a]), 'BAD_REQUEST', 'VALIDATION_FAILED', 'repeated id');
  isError(
    t,
    await set([a, a.toUpperCase()]),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'repeated id in another case',
  );
  isError(t, await set(["'; DELETE FROM rightsholders; --"]), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await set(a), 'BAD_REQUEST', 'VALIDATION_FAILED', 'not an array');
  const huge = Array.from(
    { length: 10_001 },
    (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  );
  isError(t, await set(huge), 'BAD_REQUEST', 'VALIDATION_FAILED', '10 001 ids');
  t.same(await stored(), [{ id: a, position: 1 }]);
});

t.test('below admin: FORBIDDEN', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  isError(t, await set([b], writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
});

t.test(
  "a restricted admin sees and orders only their data-access role's rightsholders; the others keep their places",
  async (t) => {
    const d = await insertRightsholder(srv, org, 'Delta');
    ok(t, await set([a, b, c, d]));
    const limited = await addMember(srv, org, 'admin');
    ok(
      t,
      await owner.client.mutate('user.setDataAccessRole', {
        organizationId: org,
        userId: limited.userId,
        role: { mode: 'restricted', rightsholderIds: [b, d] },
      }),
    );
    const listed = ok(
      t,
      await limited.client.query('organization.listRightsholderMdPriorities', {
        organizationId: org,
      }),
    );
    t.same(
      listed,
      [
        { position: 2, rightsholderId: b, name: 'Bravo' },
        { position: 4, rightsholderId: d, name: 'Delta' },
      ],
      'Alpha and Charlie are not shown',
    );
    t.same(
      ok(
        t,
        await limited.client.query('organization.listRightsholderMdPriorities', {
          organizationId: org,
          search: 'a',
        }),
      ),
      [
        { position: 2, rightsholderId: b, name: 'Bravo' },
        { position: 4, rightsholderId: d, name: 'Delta' },
      ],
    );

    const error = isError(
      t,
      await set([d, a], limited.client),
      'NOT_FOUND',
      'RIGHTSHOLDER_NOT_FOUND',
      'an id outside their set',
    );
    t.notMatch(JSON.stringify(error), /Alpha/);
    t.same(
      (await stored()).map((r: { id: string }) => r.id),
      [a, b, c, d],
      'unchanged',
    );

    t.same(ok(t, await set([d, b], limited.client)), [
      { position: 2, rightsholderId: d, name: 'Delta' },
      { position: 4, rightsholderId: b, name: 'Bravo' },
    ]);
    t.same(
      (await stored()).map((r: { id: string }) => r.id),
      [a, d, c, b],
      'Alpha and Charlie where they were',
    );
    ok(t, await set([d], limited.client));
    t.same(
      (await stored()).map((r: { id: string }) => r.id),
      [a, d, c],
    );
    ok(t, await set([b, d], limited.client));
    t.same(
      (await stored()).map((r: { id: string }) => r.id),
      [a, b, c, d],
      'one more goes to the end',
    );
    ok(t, await set([], limited.client));
    t.same(
      (await stored()).map((r: { id: string }) => r.id),
      [a, c],
    );
    t.same(
      ok(
        t,
        await owner.client.query('organization.listRightsholderMdPriorities', {
          organizationId: org,
        }),
      ).map((r: { name: string }) => r.name),
      ['Alpha', 'Charlie'],
    );
  },
);

t.test(
  "a restricted admin's ordering keeps the places of soft-deleted rightsholders outside their set: restored, they are where they were",
  async (t) => {
    const o = await newOrganization(srv, 'Soft Places');
    const oid = o.organizationId;
    const [x, y, z] = [
      await insertRightsholder(srv, oid, 'X-ray'),
      await insertRightsholder(srv, oid, 'Yankee'),
      await insertRightsholder(srv, oid, 'Zulu'),
    ];
    const setIn = (ids: string[], client = o.client) =>
      client.mutate('organization.setRightsholderMdPriorities', {
        organizationId: oid,
        rightsholderIds: ids,
      });
    ok(t, await setIn([x, y, z]));
    const limited = await addMember(srv, oid, 'admin');
    ok(
      t,
      await o.client.mutate('user.setDataAccessRole', {
        organizationId: oid,
        userId: limited.userId,
        role: { mode: 'restricted', rightsholderIds: [x, z] },
      }),
    );
    ok(
      t,
      await o.client.mutate('rightsholder.updateById', {
        organizationId: oid,
        id: y,
        name: 'Yankee',
        isDeleted: true,
      }),
    );
    ok(t, await setIn([z, x], limited.client));
    ok(
      t,
      await o.client.mutate('rightsholder.updateById', {
        organizationId: oid,
        id: y,
        name: 'Yankee',
        isDeleted: false,
      }),
    );
    t.same(
      ok(
        t,
        await o.client.query('organization.listRightsholderMdPriorities', { organizationId: oid }),
      ).map((r: { position: number; name: string }) => [r.position, r.name]),
      [
        [1, 'Zulu'],
        [2, 'Yankee'],
        [3, 'X-ray'],
      ],
    );
  },
);

// rightsholder.create: the record, the unique name, roles, activity and hostile input.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder, deepJson, hostileStrings } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('creates a rightsholder with the fields of the specification', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  const before = Date.now();
  const r = ok(
    t,
    await writer.client.mutate('rightsholder.create', {
      organizationId: org,
      name: '  The Band  ',
    }),
  );
  t.match(r.id, /^[0-9a-f-]{36}$/);
  t.same(
    { ...r, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      name: 'The Band',
      organizationId: org,
      legalName: null,
      aliases: [],
      ipiNameNumbers: [],
      isnis: [],
      streamingArtistIds: [],
      storeArtistIds: [],
      videoChannelIds: [],
      isPublisherGroup: false,
      lastUpdatedById: writer.userId,
      isDeleted: false,
      createdAt: undefined,
      updatedAt: undefined,
    },
  );
  t.ok(Date.parse(r.createdAt) >= before - 1000 && r.createdAt === r.updatedAt);
  t.same(
    ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: r.id })),
    r,
  );
});

t.test('optional fields are stored, normalized and de-duplicated', async (t) => {
  const r = await createRightsholder(t, owner, 'Label One', {
    legalName: ' Label One Ltd ',
    aliases: ['L1', 'L1', ' Label 1 '],
    ipiNameNumbers: ['52210040', '00052210040', '123 456 789'],
    isnis: ['0000 0001 2146 438X', '000000012146438x'],
    streamingArtistIds: ['abc', 'abc', 'def'],
    storeArtistIds: null,
    videoChannelIds: ['UC123'],
    isPublisherGroup: true,
  });
  t.equal(r.legalName, 'Label One Ltd');
  t.same(r.aliases, ['L1', 'Label 1']);
  t.same(r.ipiNameNumbers, ['00052210040', '00123456789']);
  t.same(r.isnis, ['000000012146438X']);
  t.same(r.streamingArtistIds, ['abc', 'def']);
  t.same(r.storeArtistIds, []);
  t.same(r.videoChannelIds, ['UC123']);
  t.equal(r.isPublisherGroup, true);
});

t.test('the name is unique per organization ignoring case and surrounding space', async (t) => {
  await createRightsholder(t, owner, 'Unique Artist');
  for (const name of ['Unique Artist', 'unique artist', '  UNIQUE ARTIST ']) {
    const res = await owner.client.mutate('rightsholder.create', { organizationId: org, name });
    isError(t, res, 'CONFLICT', 'RIGHTSHOLDER_NAME_TAKEN', name);
    t.equal(res.status, 409);
  }
  // another organization may use it
  const other = await newOrganization(srv, 'Other');
  await createRightsholder(t, other, 'Unique Artist');
  // inner space and accents make another name
  await createRightsholder(t, owner, 'Unique  Artist');
});

t.test('writer and up create', async (t) => {
  for (const role of ['writer', 'admin', 'owner'] as const) {
    const m = await addMember(srv, org, role);
    await createRightsholder(t, m, `By ${role}`);
  }
});

t.test('records who created what in the activity feed', async (t) => {
  const r = await createRightsholder(t, owner, 'Logged One');
  const feed = ok(t, await owner.client.query('activity.feed', { organizationId: org, limit: 1 }));
  t.match(feed.data[0], {
    action: 'rightsholder.create',
    subjectType: 'rightsholder',
    subjectId: r.id,
    subjectLabel: 'Logged One',
    changes: null,
    actor: { userId: owner.userId, email: owner.email },
  });
});

t.test('invalid input is BAD_REQUEST', async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ['no name', {}],
    ['empty name', { name: '' }],
    ['blank name', { name: '   ' }],
    ['name too long', { name: 'n'.repeat(201) }],
    ['name not a string', { name: 42 }],
    ['NUL in name', { name: 'a\u0000b' }],
    ['too many aliases', { name: 'X', aliases: Array.from({ length: 101 }, (_, i) => `a${i}`) }],
    [
      'huge array',
      { name: 'X', streamingArtistIds: Array.from({ length: 5000 }, (_, i) => `id${i}`) },
    ],
    ['bad IPI', { name: 'X', ipiNameNumbers: ['12345678901234'] }],
    ['bad ISNI', { name: 'X', isnis: ['0000'] }],
    ['deep JSON for a list', { name: 'X', aliases: deepJson(200) }],
    ['flag not boolean', { name: 'X', isPublisherGroup: 'yes' }],
  ];
  for (const [label, input] of cases) {
    isError(
      t,
      await owner.client.mutateUnchecked('rightsholder.create', { organizationId: org, ...input }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  }
});

t.test('hostile strings are stored as plain text', async (t) => {
  for (const [i, s] of hostileStrings.entries()) {
    const r = await createRightsholder(t, owner, `${s} ${i}`, { legalName: s, aliases: [s] });
    t.equal(r.name, `${s} ${i}`);
    t.equal(r.legalName, s);
  }
  const { rows } = await srv.deps.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM rightsholders',
  );
  t.ok(rows[0]!.n > hostileStrings.length, 'the table is still there');
});

// lens.duplicate: a copy owned by the caller.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');

t.test('copies every field into a new lens owned by the caller', async (t) => {
  const source = await createLens(t, owner, {
    name: 'Source',
    description: { d: 1 },
    tags: ['x', 'y'],
    kind: 'retention',
    viewName: 'v',
    payload: { p: [1, 2] },
  });
  ok(
    t,
    await owner.client.mutate('lens.setPinned', {
      organizationId: org,
      id: source.id,
      pinned: true,
    }),
  );
  const copy = ok(
    t,
    await writer.client.mutate('lens.duplicate', { organizationId: org, id: source.id }),
  );
  t.not(copy.id, source.id);
  t.same(
    { ...copy, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      ...source,
      id: undefined,
      name: 'Source (copy)',
      ownerUserId: writer.userId,
      pinned: false,
      createdAt: undefined,
      updatedAt: undefined,
    },
  );
  t.equal(
    ok(t, await owner.client.query('lens.get', { organizationId: org, id: source.id })).name,
    'Source',
    'the source is unchanged',
  );
  const feed = ok(t, await owner.client.query('activity.feed', { organizationId: org, limit: 1 }));
  t.match(feed.data[0], {
    action: 'lens.duplicate',
    subjectId: copy.id,
    subjectLabel: 'Source (copy)',
    actor: { userId: writer.userId },
  });
});

t.test('name and scope may be given; a long name keeps within bounds', async (t) => {
  const source = await createLens(t, owner, { name: 'n'.repeat(200) });
  const copy = ok(
    t,
    await writer.client.mutate('lens.duplicate', { organizationId: org, id: source.id }),
  );
  t.equal(copy.name, 'n'.repeat(193) + ' (copy)');
  // the cut falls inside a character of two UTF-16 units: the character goes whole, not half of it
  const emoji = await createLens(t, owner, { name: 'a'.repeat(192) + '🎵' + 'b'.repeat(6) });
  const emojiCopy = ok(
    t,
    await writer.client.mutate('lens.duplicate', { organizationId: org, id: emoji.id }),
  );
  t.equal(emojiCopy.name, 'a'.repeat(192) + ' (copy)');
  t.equal(
    ok(t, await writer.client.query('lens.get', { organizationId: org, id: emojiCopy.id })).name,
    'a'.repeat(192) + ' (copy)',
    'stored as answered',
  );
  const spaced = await createLens(t, owner, { name: 'x'.repeat(192) + ' yyyyyyy' });
  t.equal(
    ok(t, await writer.client.mutate('lens.duplicate', { organizationId: org, id: spaced.id }))
      .name,
    'x'.repeat(192) + ' (copy)',
    'no space before the suffix doubled',
  );
  const mine = ok(
    t,
    await writer.client.mutate('lens.duplicate', {
      organizationId: org,
      id: source.id,
      name: 'My version',
      scope: 'personal',
    }),
  );
  t.match(mine, { name: 'My version', scope: 'personal', ownerUserId: writer.userId });
  isError(
    t,
    await owner.client.query('lens.get', { organizationId: org, id: mine.id }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  // a personal lens copied by its owner stays personal unless told otherwise
  const again = ok(
    t,
    await writer.client.mutate('lens.duplicate', { organizationId: org, id: mine.id }),
  );
  t.equal(again.scope, 'personal');
  const shared = ok(
    t,
    await writer.client.mutate('lens.duplicate', {
      organizationId: org,
      id: mine.id,
      scope: 'organization',
    }),
  );
  t.equal(
    ok(t, await owner.client.query('lens.get', { organizationId: org, id: shared.id })).name,
    'My version (copy)',
  );
});

t.test(
  "another member's personal lens, unknown ids and other organizations are NOT_FOUND",
  async (t) => {
    const secret = await createLens(t, owner, { name: 'Secret', scope: 'personal' });
    isError(
      t,
      await writer.client.mutate('lens.duplicate', { organizationId: org, id: secret.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    isError(
      t,
      await writer.client.mutate('lens.duplicate', { organizationId: org, id: UNKNOWN_ID }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    const other = await newOrganization(srv, 'Other');
    const theirs = await createLens(t, other, { name: 'Theirs' });
    const res = await writer.client.mutate('lens.duplicate', {
      organizationId: org,
      id: theirs.id,
    });
    isError(t, res, 'NOT_FOUND', 'LENS_NOT_FOUND');
    t.notMatch(JSON.stringify(res), /Theirs/);
    isError(
      t,
      await writer.client.mutate('lens.duplicate', {
        organizationId: org,
        id: secret.id,
        name: '',
      }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
  },
);

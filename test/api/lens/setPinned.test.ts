// lens.setPinned: pins are per member.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');

t.test('pins and unpins for the caller only', async (t) => {
  const lens = await createLens(t, owner, { name: 'Pin me' });
  const pinned = ok(
    t,
    await writer.client.mutate('lens.setPinned', {
      organizationId: org,
      id: lens.id,
      pinned: true,
    }),
  );
  t.same(pinned, { ...lens, pinned: true });
  t.equal(
    ok(t, await writer.client.query('lens.get', { organizationId: org, id: lens.id })).pinned,
    true,
  );
  t.equal(
    ok(t, await owner.client.query('lens.get', { organizationId: org, id: lens.id })).pinned,
    false,
    "the owner's view is unchanged",
  );
  t.same(
    ok(
      t,
      await writer.client.mutate('lens.setPinned', {
        organizationId: org,
        id: lens.id,
        pinned: true,
      }),
    ).pinned,
    true,
    'idempotent',
  );
  t.equal(
    ok(
      t,
      await writer.client.mutate('lens.setPinned', {
        organizationId: org,
        id: lens.id,
        pinned: false,
      }),
    ).pinned,
    false,
  );
  t.equal(
    ok(t, await writer.client.query('lens.get', { organizationId: org, id: lens.id })).updatedAt,
    lens.updatedAt,
    'a pin does not change the lens',
  );

  const mine = ok(
    t,
    await writer.client.query('activity.feed', {
      organizationId: org,
      subjectType: 'lens',
      action: 'lens.setPinned',
    }),
  );
  t.same(
    mine.data.map((e: any) => e.changes),
    [{ pinned: { before: true, after: false } }, { pinned: { before: false, after: true } }],
    'one event per change, none for the repeated pin',
  );
  const others = ok(
    t,
    await owner.client.query('activity.feed', { organizationId: org, action: 'lens.setPinned' }),
  );
  t.same(others.data, [], "a member's pins are their own business");
});

t.test("roles, another member's personal lens, unknown ids, other organizations", async (t) => {
  const lens = await createLens(t, owner, { name: 'Shared' });
  const secret = await createLens(t, owner, { name: 'Secret', scope: 'personal' });
  isError(
    t,
    await writer.client.mutate('lens.setPinned', {
      organizationId: org,
      id: secret.id,
      pinned: true,
    }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  t.equal(
    ok(
      t,
      await owner.client.mutate('lens.setPinned', {
        organizationId: org,
        id: secret.id,
        pinned: true,
      }),
    ).pinned,
    true,
  );
  isError(
    t,
    await writer.client.mutate('lens.setPinned', {
      organizationId: org,
      id: UNKNOWN_ID,
      pinned: true,
    }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createLens(t, other, { name: 'Theirs' });
  isError(
    t,
    await writer.client.mutate('lens.setPinned', {
      organizationId: org,
      id: theirs.id,
      pinned: true,
    }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  isError(
    t,
    await writer.client.mutateUnchecked('lens.setPinned', { organizationId: org, id: lens.id }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'pinned missing',
  );
  isError(
    t,
    await writer.client.mutateUnchecked('lens.setPinned', {
      organizationId: org,
      id: lens.id,
      pinned: 'true',
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

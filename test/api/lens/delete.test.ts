// lens.delete: removes the lens with every pin and open of it; history stays.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');
const db = srv.deps.pool;

t.test(
  'deletes an organization lens with its pins and opens; the feed keeps the deletion',
  async (t) => {
    const lens = await createLens(t, owner, { name: 'Doomed' });
    ok(
      t,
      await writer.client.mutate('lens.setPinned', {
        organizationId: org,
        id: lens.id,
        pinned: true,
      }),
    );
    ok(t, await writer.client.mutate('lens.recordOpened', { organizationId: org, id: lens.id }));
    t.same(ok(t, await writer.client.mutate('lens.delete', { organizationId: org, id: lens.id })), {
      id: lens.id,
      deleted: true,
    });
    isError(
      t,
      await owner.client.query('lens.get', { organizationId: org, id: lens.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    t.equal((await db.query('SELECT 1 FROM lens_pins WHERE lens_id = $1', [lens.id])).rowCount, 0);
    t.equal(
      (await db.query('SELECT 1 FROM subject_visits WHERE subject_id = $1', [lens.id])).rowCount,
      0,
    );
    const history = ok(
      t,
      await owner.client.query('activity.byEntity', {
        organizationId: org,
        subjectType: 'lens',
        subjectId: lens.id,
      }),
    );
    t.same(
      history.data.map((e: any) => [e.action, e.actor.userId]),
      [
        ['lens.delete', writer.userId],
        ['lens.create', owner.userId],
      ],
    );
    isError(
      t,
      await writer.client.mutate('lens.delete', { organizationId: org, id: lens.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
      'twice',
    );
  },
);

t.test(
  "a personal lens is deleted by its owner alone; its deletion stays the owner's business",
  async (t) => {
    const lens = await createLens(t, writer, { name: 'Private', scope: 'personal' });
    isError(
      t,
      await owner.client.mutate('lens.delete', { organizationId: org, id: lens.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    ok(t, await writer.client.mutate('lens.delete', { organizationId: org, id: lens.id }));
    const seenByOwner = ok(
      t,
      await owner.client.query('activity.feed', {
        organizationId: org,
        subjectType: 'lens',
        limit: 2000,
      }),
    );
    t.notOk(seenByOwner.data.some((e: any) => e.subjectId === lens.id));
    isError(
      t,
      await owner.client.query('activity.byEntity', {
        organizationId: org,
        subjectType: 'lens',
        subjectId: lens.id,
      }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    const seenByWriter = ok(
      t,
      await writer.client.query('activity.byEntity', {
        organizationId: org,
        subjectType: 'lens',
        subjectId: lens.id,
      }),
    );
    t.same(
      seenByWriter.data.map((e: any) => e.action),
      ['lens.delete', 'lens.create'],
    );
  },
);

t.test('roles, unknown ids and other organizations', async (t) => {
  const lens = await createLens(t, owner, { name: 'Kept' });
  isError(
    t,
    await owner.client.mutate('lens.delete', { organizationId: org, id: UNKNOWN_ID }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createLens(t, other, { name: 'Theirs' });
  isError(
    t,
    await owner.client.mutate('lens.delete', { organizationId: org, id: theirs.id }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  t.equal(
    ok(
      t,
      await other.client.query('lens.get', { organizationId: other.organizationId, id: theirs.id }),
    ).name,
    'Theirs',
  );
  t.equal(
    ok(t, await owner.client.query('lens.get', { organizationId: org, id: lens.id })).name,
    'Kept',
  );
  isError(
    t,
    await owner.client.mutateUnchecked('lens.delete', { organizationId: org }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

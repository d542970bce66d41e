// lens.recordOpened: the caller's last open of a lens; a visit, not an activity event.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('records the open per member; any member may', async (t) => {
  const lens = await createLens(t, owner, { name: 'Opened' });
  const reader = await addMember(srv, org, 'reader');
  const first = ok(
    t,
    await reader.client.mutate('lens.recordOpened', { organizationId: org, id: lens.id }),
  );
  t.same({ ...first, lastOpenedAt: undefined }, { ...lens, lastOpenedAt: undefined });
  t.type(first.lastOpenedAt, 'string');
  const again = ok(
    t,
    await reader.client.mutate('lens.recordOpened', { organizationId: org, id: lens.id }),
  );
  t.ok(again.lastOpenedAt! > first.lastOpenedAt!);
  t.equal(
    ok(t, await reader.client.query('lens.get', { organizationId: org, id: lens.id })).lastOpenedAt,
    again.lastOpenedAt,
  );
  t.equal(
    ok(t, await owner.client.query('lens.get', { organizationId: org, id: lens.id })).lastOpenedAt,
    null,
    "another member's opens are theirs",
  );
  const { rows } = await srv.deps.pool.query(
    'SELECT visit_count FROM subject_visits WHERE user_id = $1 AND subject_id = $2',
    [reader.userId, lens.id],
  );
  t.same(rows, [{ visit_count: 2 }]);
  const feed = ok(t, await owner.client.query('activity.feed', { organizationId: org }));
  t.same(
    feed.data.map((e: any) => e.action),
    ['lens.create'],
    'no activity event',
  );
});

t.test(
  "another member's personal lens, unknown ids and other organizations are NOT_FOUND",
  async (t) => {
    const member = await addMember(srv, org, 'member');
    const secret = await createLens(t, owner, { name: 'Secret', scope: 'personal' });
    isError(
      t,
      await member.client.mutate('lens.recordOpened', { organizationId: org, id: secret.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    isError(
      t,
      await member.client.mutate('lens.recordOpened', { organizationId: org, id: UNKNOWN_ID }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    const other = await newOrganization(srv, 'Other');
    const theirs = await createLens(t, other, { name: 'Theirs' });
    isError(
      t,
      await member.client.mutate('lens.recordOpened', { organizationId: org, id: theirs.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    t.equal(
      (await srv.deps.pool.query('SELECT 1 FROM subject_visits WHERE subject_id = $1', [theirs.id]))
        .rowCount,
      0,
    );
    isError(
      t,
      await member.client.mutateUnchecked('lens.recordOpened', { organizationId: org, id: 42 }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
  },
);

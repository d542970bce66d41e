// A lens id written in capitals is the same lens (a uuid is case-insensitive, and lens.get finds
// it): its opens, its history and its removal must be those of the lens, not of a second spelling.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens } from '../rightsholder/helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const member = await addMember(srv, org, 'member');
const writer = await addMember(srv, org, 'writer');
const db = srv.deps.pool;

const visits = async (lensId: string) =>
  (
    await db.query<{ subject_id: string; visit_count: number }>(
      "SELECT subject_id, visit_count FROM subject_visits WHERE subject_type = 'lens' AND lower(subject_id) = $1",
      [lensId],
    )
  ).rows;

t.test('opens by recordOpened and activity.trackVisit count for the lens', async (t) => {
  const lens = await createLens(t, owner, { name: 'Capitals' });
  const upper = lens.id.toUpperCase();
  const opened = ok(
    t,
    await member.client.mutate('lens.recordOpened', { organizationId: org, id: upper }),
  );
  t.equal(opened.id, lens.id);
  const visit = ok(
    t,
    await member.client.mutate('activity.trackVisit', {
      organizationId: org,
      subjectType: 'lens',
      subjectId: upper,
    }),
  );
  t.match(visit, { subjectId: lens.id, subjectLabel: 'Capitals', visitCount: 2 });
  t.same(
    await visits(lens.id),
    [{ subject_id: lens.id, visit_count: 2 }],
    'one visit row, of the lens id as stored',
  );
  const got = ok(t, await member.client.query('lens.get', { organizationId: org, id: lens.id }));
  t.equal(got.lastOpenedAt, visit.lastVisitedAt);
  t.same(
    ok(
      t,
      await member.client.query('lens.list', { organizationId: org, recentOnly: true }),
    ).data.map((l: any) => l.id),
    [lens.id],
  );
});

t.test('activity.byEntity with the id in capitals is the lens history', async (t) => {
  const lens = await createLens(t, writer, { name: 'History' });
  ok(
    t,
    await writer.client.mutate('lens.update', {
      organizationId: org,
      id: lens.id,
      name: 'History 2',
    }),
  );
  const history = ok(
    t,
    await member.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'lens',
      subjectId: lens.id.toUpperCase(),
    }),
  );
  t.same(
    history.data.map((e: any) => [e.action, e.subjectId]),
    [
      ['lens.update', lens.id],
      ['lens.create', lens.id],
    ],
  );
});

t.test('lens.delete with the id in capitals removes every open of it', async (t) => {
  const lens = await createLens(t, writer, { name: 'Gone' });
  ok(t, await member.client.mutate('lens.recordOpened', { organizationId: org, id: lens.id }));
  ok(t, await writer.client.mutate('lens.recordOpened', { organizationId: org, id: lens.id }));
  t.same(
    ok(
      t,
      await writer.client.mutate('lens.delete', { organizationId: org, id: lens.id.toUpperCase() }),
    ),
    { id: lens.id, deleted: true },
  );
  t.same(await visits(lens.id), [], 'no open left behind');
});

// rightsholder.trackOpen: the deprecated alias of activity.trackVisit for rightsholders.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { createRightsholder, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('records a visit exactly like activity.trackVisit, and no activity event', async (t) => {
  const r = await createRightsholder(t, owner, 'Opened');
  const member = await addMember(srv, org, 'member');
  const first = ok(
    t,
    await member.client.mutate('rightsholder.trackOpen', { organizationId: org, id: r.id }),
  );
  t.match(first, {
    subjectType: 'rightsholder',
    subjectId: r.id,
    subjectLabel: 'Opened',
    visitCount: 1,
  });
  t.equal(first.firstVisitedAt, first.lastVisitedAt);
  const second = ok(
    t,
    await member.client.mutate('activity.trackVisit', {
      organizationId: org,
      subjectType: 'rightsholder',
      subjectId: r.id,
    }),
  );
  t.match(second, {
    subjectType: 'rightsholder',
    subjectId: r.id,
    subjectLabel: 'Opened',
    visitCount: 2,
    firstVisitedAt: first.firstVisitedAt,
  });
  t.ok(second.lastVisitedAt > first.lastVisitedAt);
  const third = ok(
    t,
    await member.client.mutate('rightsholder.trackOpen', { organizationId: org, id: r.id }),
  );
  t.equal(third.visitCount, 3);
  const feed = ok(t, await owner.client.query('activity.feed', { organizationId: org }));
  t.same(
    feed.data.map((e: any) => e.action),
    ['rightsholder.create'],
  );
});

t.test('is marked deprecated in schemas.json', async (t) => {
  const schemas = (await (await fetch(`${srv.url}/docs/schemas.json`)).json()) as Record<
    string,
    any
  >;
  t.match(schemas['rightsholder.trackOpen'], {
    method: 'POST',
    scope: 'cli',
    minRole: 'member',
    deprecated: /activity\.trackVisit/,
  });
});

t.test('unknown, foreign and out-of-scope ids are NOT_FOUND', async (t) => {
  isError(
    t,
    await owner.client.mutate('rightsholder.trackOpen', { organizationId: org, id: UNKNOWN_ID }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createRightsholder(t, other, 'Theirs');
  const res = await owner.client.mutate('rightsholder.trackOpen', {
    organizationId: org,
    id: theirs.id,
  });
  isError(t, res, 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND');
  t.notMatch(JSON.stringify(res), /Theirs/);
  const { rows } = await srv.deps.pool.query('SELECT 1 FROM subject_visits WHERE subject_id = $1', [
    theirs.id,
  ]);
  t.equal(rows.length, 0, 'no visit recorded');

  const mine = await createRightsholder(t, owner, 'Mine');
  const restricted = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', '{}')`,
    [org, restricted.userId],
  );
  isError(
    t,
    await restricted.client.mutate('rightsholder.trackOpen', { organizationId: org, id: mine.id }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutate('rightsholder.trackOpen', { organizationId: org, id: 'nope' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

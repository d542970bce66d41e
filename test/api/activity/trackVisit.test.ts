// activity.trackVisit: per-member visits, which are not activity events.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { createLens, createRightsholder, isError, ok, UNKNOWN_ID } from '../rightsholder/helpers.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const track = (caller: typeof owner, input: Record<string, unknown>) => caller.client.mutate('activity.trackVisit', { organizationId: org, ...input });

t.test('counts visits per member and subject, labels kept subjects by their name', async (t) => {
  const r = await createRightsholder(t, owner, 'Visited');
  const reader = await addMember(srv, org, 'reader');
  const first = ok(t, await track(reader, { subjectType: 'rightsholder', subjectId: r.id, subjectLabel: 'whatever the client says' }));
  t.match(first, { subjectType: 'rightsholder', subjectId: r.id, subjectLabel: 'Visited', visitCount: 1 });
  const second = ok(t, await track(reader, { subjectType: 'rightsholder', subjectId: r.id }));
  t.equal(second.visitCount, 2);
  t.equal(second.firstVisitedAt, first.firstVisitedAt);
  t.ok(second.lastVisitedAt > first.lastVisitedAt);
  t.equal(ok(t, await track(owner, { subjectType: 'rightsholder', subjectId: r.id })).visitCount, 1, "the owner's count is separate");

  const lens = await createLens(t, owner, { name: 'Visited Lens' });
  t.match(ok(t, await track(reader, { subjectType: 'lens', subjectId: lens.id })), { subjectLabel: 'Visited Lens', visitCount: 1 });
  const again = ok(t, await track(reader, { subjectType: 'lens', subjectId: lens.id }));
  t.equal(ok(t, await reader.client.query('lens.get', { organizationId: org, id: lens.id })).lastOpenedAt, again.lastVisitedAt, 'a visit is an open');

  // other subject types are recorded as given
  t.match(ok(t, await track(reader, { subjectType: 'upload', subjectId: 'upload-7', subjectLabel: 'March statements' })), {
    subjectType: 'upload',
    subjectId: 'upload-7',
    subjectLabel: 'March statements',
    visitCount: 1,
  });
  const feed = ok(t, await owner.client.query('activity.feed', { organizationId: org }));
  t.same(
    feed.data.map((e: any) => e.action),
    ['lens.create', 'rightsholder.create'],
    'visits are not activity events',
  );
});

t.test('unknown, foreign, hidden subjects are NOT_FOUND and record nothing', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createRightsholder(t, other, 'Theirs');
  const theirLens = await createLens(t, other, { name: 'Their Lens' });
  const writer = await addMember(srv, org, 'writer');
  const secret = await createLens(t, writer, { name: 'Secret', scope: 'personal' });
  const cases: [string, Record<string, unknown>, string][] = [
    ['unknown rightsholder', { subjectType: 'rightsholder', subjectId: UNKNOWN_ID }, 'RIGHTSHOLDER_NOT_FOUND'],
    ['rightsholder id not a uuid', { subjectType: 'rightsholder', subjectId: "1' OR '1'='1" }, 'RIGHTSHOLDER_NOT_FOUND'],
    ['rightsholder of another organization', { subjectType: 'rightsholder', subjectId: theirs.id }, 'RIGHTSHOLDER_NOT_FOUND'],
    ['lens of another organization', { subjectType: 'lens', subjectId: theirLens.id }, 'LENS_NOT_FOUND'],
    ["another member's personal lens", { subjectType: 'lens', subjectId: secret.id }, 'LENS_NOT_FOUND'],
  ];
  for (const [label, input, errorCode] of cases) {
    const res = await track(owner, input);
    isError(t, res, 'NOT_FOUND', errorCode, label);
    t.notMatch(JSON.stringify(res), /Theirs|Their Lens|Secret/);
  }
  const { rows } = await srv.deps.pool.query('SELECT 1 FROM subject_visits WHERE subject_id = ANY($1)', [[theirs.id, theirLens.id, secret.id]]);
  t.equal(rows.length, 0);
});

t.test('invalid input is BAD_REQUEST', async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ['no subjectType', { subjectId: 'x' }],
    ['unknown subjectType', { subjectType: 'planet', subjectId: 'x' }],
    ['no subjectId', { subjectType: 'upload' }],
    ['empty subjectId', { subjectType: 'upload', subjectId: '' }],
    ['long subjectId', { subjectType: 'upload', subjectId: 'x'.repeat(201) }],
    ['long label', { subjectType: 'upload', subjectId: 'x', subjectLabel: 'l'.repeat(501) }],
    ['NUL in label', { subjectType: 'upload', subjectId: 'x', subjectLabel: 'a\u0000' }],
    ['object subjectId', { subjectType: 'upload', subjectId: { $gt: '' } }],
  ];
  for (const [label, input] of cases) isError(t, await track(owner, input), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
});

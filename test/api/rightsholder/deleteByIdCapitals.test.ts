// rightsholder.deleteById with the id in capitals removes the same rightsholder and records its
// removal under the id as stored (lower case), so activity.byEntity and the feed's subjectId name
// it the way every other event about it does; the answer names it that way too.
import t from 'tap';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder } from './helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('the removal is recorded under the stored id', async (t) => {
  const r = await createRightsholder(t, owner, 'Capital Gone');
  const done = ok(
    t,
    await owner.client.mutate('rightsholder.deleteById', {
      organizationId: org,
      id: r.id.toUpperCase(),
    }),
  );
  t.same(
    { id: done.id, name: done.name, dryRun: done.dryRun },
    { id: r.id, name: 'Capital Gone', dryRun: false },
  );
  const history = ok(
    t,
    await owner.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'rightsholder',
      subjectId: r.id,
    }),
  );
  t.same(
    history.data.map((e: any) => [e.action, e.subjectId, e.subjectLabel]),
    [['rightsholder.deleteById', r.id, 'Capital Gone']],
  );
  const feed = ok(
    t,
    await owner.client.query('activity.feed', {
      organizationId: org,
      action: 'rightsholder.deleteById',
    }),
  );
  t.same(
    feed.data.map((e: any) => e.subjectId),
    [r.id],
  );
  const dry = ok(
    t,
    await owner.client.mutate('rightsholder.deleteById', {
      organizationId: org,
      id: (await createRightsholder(t, owner, 'Dry')).id.toUpperCase(),
      dryRun: true,
    }),
  );
  t.equal(dry.id, dry.id.toLowerCase(), 'a dry run answers the stored id too');
});

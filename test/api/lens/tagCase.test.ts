// Lens tags are compared without case and trimmed: `x` and ` X ` are one tag, kept in its first
// spelling, on create, update and duplicate; the list's tag filter and listTags agree.
import t from 'tap';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens } from '../rightsholder/helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('create and update keep one tag per spelling without case, the first one', async (t) => {
  const lens = await createLens(t, owner, {
    tags: ['Finance', 'finance', ' FINANCE ', 'Q1', 'q1', 'École', 'ÉCOLE', 'ops'],
  });
  t.same(lens.tags, ['Finance', 'Q1', 'École', 'ops']);
  const updated = ok(
    t,
    await owner.client.mutate('lens.update', {
      organizationId: org,
      id: lens.id,
      tags: ['ops', 'OPS', 'Ops ', 'new'],
    }),
  );
  t.same(updated.tags, ['ops', 'new']);
});

t.test('duplicate copies the tags de-duplicated, even those of a lens stored before', async (t) => {
  const lens = await createLens(t, owner, { name: 'Old', tags: ['a'] });
  await db.query(`UPDATE lenses SET tags = ARRAY['Legacy', 'legacy', 'b'] WHERE id = $1`, [
    lens.id,
  ]);
  const copy = ok(
    t,
    await owner.client.mutate('lens.duplicate', { organizationId: org, id: lens.id }),
  );
  t.same(copy.tags, ['Legacy', 'b']);
});

t.test("the list's tag filter and listTags compare without case", async (t) => {
  const other = await newOrganization(srv);
  const o = other.organizationId;
  const rock = await createLens(t, other, { name: 'rock lens', tags: ['Rock'] });
  const rock2 = await createLens(t, other, { name: 'second rock lens', tags: ['rock', 'Jazz'] });
  await createLens(t, other, { name: 'jazz lens', tags: ['jazz'] });
  for (const tag of ['rock', 'ROCK', ' Rock ']) {
    const page = ok(
      t,
      await other.client.query('lens.list', { organizationId: o, tag, sort: 'name_asc' }),
    );
    t.same(
      page.data.map((l: { id: string }) => l.id),
      [rock.id, rock2.id],
      `tag ${JSON.stringify(tag)}`,
    );
  }
  t.same(ok(t, await other.client.query('lens.listTags', { organizationId: o })), {
    data: [
      { tag: 'Jazz', count: 2 },
      { tag: 'Rock', count: 2 },
    ],
  });
});

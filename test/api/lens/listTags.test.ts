// lens.listTags: the tags of the lenses the caller may see.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens } from '../rightsholder/helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test(
  'every tag once, alphabetically, with its count; personal lenses count for their owner only',
  async (t) => {
    t.same(
      ok(t, await owner.client.query('lens.listTags', { organizationId: org })),
      { data: [] },
      'none yet',
    );
    const writer = await addMember(srv, org, 'writer');
    await createLens(t, owner, { tags: ['finance', 'q1'] });
    await createLens(t, owner, { tags: ['finance'] });
    await createLens(t, owner, { tags: [] });
    await createLens(t, writer, { tags: ['secret', 'finance'], scope: 'personal' });
    t.same(ok(t, await owner.client.query('lens.listTags', { organizationId: org })), {
      data: [
        { tag: 'finance', count: 2 },
        { tag: 'q1', count: 1 },
      ],
    });
    t.same(ok(t, await writer.client.query('lens.listTags', { organizationId: org })), {
      data: [
        { tag: 'finance', count: 3 },
        { tag: 'q1', count: 1 },
        { tag: 'secret', count: 1 },
      ],
    });
    const reader = await addMember(srv, org, 'reader');
    t.equal(
      ok(t, await reader.client.query('lens.listTags', { organizationId: org })).data.length,
      2,
    );
  },
);

t.test("another organization's tags never appear", async (t) => {
  const other = await newOrganization(srv, 'Other');
  await createLens(t, other, { tags: ['foreign'] });
  t.notOk(
    ok(t, await owner.client.query('lens.listTags', { organizationId: org })).data.some(
      (x: any) => x.tag === 'foreign',
    ),
  );
  t.same(
    ok(t, await other.client.query('lens.listTags', { organizationId: other.organizationId })),
    { data: [{ tag: 'foreign', count: 1 }] },
  );
});

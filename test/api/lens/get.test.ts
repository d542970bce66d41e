// lens.get: organization lenses for every member, personal ones for their owner alone.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');
const shared = await createLens(t, writer, { name: 'Shared' });
const personal = await createLens(t, writer, { name: 'Personal', scope: 'personal' });

t.test('every member reads an organization lens', async (t) => {
  for (const role of ['member', 'reader', 'writer', 'admin'] as const) {
    const m = await addMember(srv, org, role);
    t.same(
      ok(t, await m.client.query('lens.get', { organizationId: org, id: shared.id })),
      shared,
      role,
    );
  }
});

t.test(
  "a personal lens is its owner's alone: NOT_FOUND to everybody else, the owner of the organization too",
  async (t) => {
    t.same(
      ok(t, await writer.client.query('lens.get', { organizationId: org, id: personal.id })),
      personal,
    );
    for (const caller of [owner, await addMember(srv, org, 'admin')]) {
      const res = await caller.client.query('lens.get', { organizationId: org, id: personal.id });
      isError(t, res, 'NOT_FOUND', 'LENS_NOT_FOUND');
      t.notMatch(JSON.stringify(res), /Personal/);
    }
  },
);

t.test('unknown ids and ids of another organization are NOT_FOUND', async (t) => {
  isError(
    t,
    await owner.client.query('lens.get', { organizationId: org, id: UNKNOWN_ID }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createLens(t, other, { name: 'Theirs' });
  const res = await owner.client.query('lens.get', { organizationId: org, id: theirs.id });
  isError(t, res, 'NOT_FOUND', 'LENS_NOT_FOUND');
  t.notMatch(JSON.stringify(res), /Theirs/);
  isError(
    t,
    await owner.client.query('lens.get', { organizationId: org, id: "' OR 1=1" }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

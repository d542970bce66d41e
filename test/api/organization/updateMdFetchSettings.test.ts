// organization.updateMdFetchSettings: mdFetchMultiplier and mdFetchFocus, stored for the catalog.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const admin = await addMember(srv, owner.organizationId, 'admin');
const writer = await addMember(srv, owner.organizationId, 'writer');
const org = owner.organizationId;
const call = (input: object, client = admin.client) =>
  client.mutate('organization.updateMdFetchSettings', { organizationId: org, ...input });

t.test('sets either or both; a field left out keeps its value', async (t) => {
  t.same(ok(t, await call({ mdFetchMultiplier: 5 })), {
    mdFetchMultiplier: 5,
    mdFetchFocus: false,
  });
  t.same(ok(t, await call({ mdFetchFocus: true })), { mdFetchMultiplier: 5, mdFetchFocus: true });
  t.same(ok(t, await call({})), { mdFetchMultiplier: 5, mdFetchFocus: true });
  t.same(ok(t, await call({ mdFetchMultiplier: 100, mdFetchFocus: false })), {
    mdFetchMultiplier: 100,
    mdFetchFocus: false,
  });
  t.match(ok(t, await owner.client.query('organization.getById', { organizationId: org })), {
    mdFetchMultiplier: 100,
    mdFetchFocus: false,
  });

  const events = await activities(srv, org, 'organization.updateMdFetchSettings');
  t.same(
    events.map((e) => e.changes),
    [
      { mdFetchMultiplier: { before: 1, after: 5 } },
      { mdFetchFocus: { before: false, after: true } },
      {
        mdFetchMultiplier: { before: 5, after: 100 },
        mdFetchFocus: { before: true, after: false },
      },
    ],
    'one event per real change, field by field',
  );
});

t.test('bounds and types', async (t) => {
  for (const input of [
    { mdFetchMultiplier: 0 },
    { mdFetchMultiplier: 101 },
    { mdFetchMultiplier: 1.5 },
    { mdFetchMultiplier: '5' },
    { mdFetchFocus: 'yes' },
  ]) {
    isError(t, await call(input), 'BAD_REQUEST', 'VALIDATION_FAILED', JSON.stringify(input));
  }
});

t.test('below admin: FORBIDDEN', async (t) => {
  isError(t, await call({ mdFetchMultiplier: 2 }, writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
});

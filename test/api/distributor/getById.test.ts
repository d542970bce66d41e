// distributor.getById: the organization's own or the library's, with the mappings it sees.
import t from 'tap';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import {
  createDistributor,
  createMapping,
  libraryMapping,
  UNKNOWN_ID,
} from '../mapping/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const get = (id: unknown) =>
  owner.client.queryUnchecked('distributor.getById', { organizationId: org, id });

t.test('an own distributor with its mappings', async (t) => {
  const d = await createDistributor(t, owner, 'Own');
  const m = await createMapping(t, owner, { distributorId: d.id });
  const got = ok(t, await get(d.id));
  t.match(got, { id: d.id, organizationId: org, source: 'organization', name: 'Own' });
  t.same(got.mappings, [
    {
      id: m.id,
      name: 'Our layout',
      source: 'organization',
      libraryKey: null,
      headerHash: m.headerHash,
      revision: 1,
      active: true,
    },
  ]);
});

t.test(
  "a library distributor: its library mappings and the organization's own for it, not other organizations'",
  async (t) => {
    const legacy = await libraryMapping(t, owner, 'distrokid-legacy');
    const modern = await libraryMapping(t, owner, 'distrokid');
    const other = await newOrganization(srv, 'Other');
    await createMapping(t, other, { distributorId: legacy.distributorId });
    const own = await createMapping(t, owner, {
      name: 'DK override',
      headers: modern.headers,
      fields: modern.fields,
      distributorId: modern.distributorId,
    });
    const got = ok(t, await get(legacy.distributorId));
    t.match(got, { source: 'library', organizationId: null, name: 'DistroKid' });
    t.same(
      got.mappings.map((m: any) => [m.libraryKey ?? m.name, m.source, m.active]),
      [
        ['DK override', 'organization', true],
        // by name: "DistroKid bank export (13 columns)", then "(15 columns)"
        ['distrokid-legacy', 'library', true],
        ['distrokid', 'library', false],
      ],
    );
    t.equal(got.mappings[0]!.id, own.id);
  },
);

t.test('foreign, unknown and malformed ids', async (t) => {
  const other = await newOrganization(srv, 'Foreign');
  const theirs = await createDistributor(t, other, 'Theirs');
  isError(t, await get(theirs.id), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
  isError(t, await get(UNKNOWN_ID), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
  isError(t, await get("' OR 1=1"), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(
    t,
    await owner.client.queryUnchecked('distributor.getById', { organizationId: org }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

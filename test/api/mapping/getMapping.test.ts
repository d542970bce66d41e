// mapping.getMapping: by id, or by header hash (the organization's own mapping first, else the library's).
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createMapping, HASH, libraryMapping, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const other = await newOrganization(srv, 'Other');

t.test("by id: the organization's own and library mappings", async (t) => {
  const mine = await createMapping(t, owner);
  t.same(
    ok(t, await owner.client.query('mapping.getMapping', { organizationId: org, id: mine.id })),
    mine,
  );
  const apple = await libraryMapping(t, owner, 'apple');
  const got = ok(
    t,
    await owner.client.query('mapping.getMapping', { organizationId: org, id: apple.id }),
  );
  t.match(got, {
    source: 'library',
    organizationId: null,
    libraryKey: 'apple',
    distributorName: 'Apple',
    revision: 1,
    active: true,
  });
  t.equal(got.fields.royaltyEarnings!.column, 'Extended Partner Share');
  t.equal(got.headerHash, computeHeaderHash(got.headers));
  // both id and headerHash: they must agree
  t.same(
    ok(
      t,
      await owner.client.query('mapping.getMapping', {
        organizationId: org,
        id: mine.id,
        headerHash: HASH,
      }),
    ).id,
    mine.id,
  );
  isError(
    t,
    await owner.client.query('mapping.getMapping', {
      organizationId: org,
      id: mine.id,
      headerHash: apple.headerHash,
    }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
});

t.test('by header hash: own first, else library, else NOT_FOUND', async (t) => {
  const fresh = await newOrganization(srv, 'Fresh');
  const tunecore = await libraryMapping(t, fresh, 'tunecore');
  const lib = ok(
    t,
    await fresh.client.query('mapping.getMapping', {
      organizationId: fresh.organizationId,
      headerHash: tunecore.headerHash,
    }),
  );
  t.equal(lib.id, tunecore.id);
  const own = await createMapping(t, fresh, {
    headers: tunecore.headers,
    fields: { ...tunecore.fields, currency: { constant: 'GBP' } },
  });
  const now = ok(
    t,
    await fresh.client.query('mapping.getMapping', {
      organizationId: fresh.organizationId,
      headerHash: tunecore.headerHash.toUpperCase(),
    }),
  );
  t.equal(now.id, own.id);
  t.equal(now.fields.currency!.constant, 'GBP');
  // another organization still gets the library's
  t.equal(
    ok(
      t,
      await other.client.query('mapping.getMapping', {
        organizationId: other.organizationId,
        headerHash: tunecore.headerHash,
      }),
    ).id,
    tunecore.id,
  );
  isError(
    t,
    await fresh.client.query('mapping.getMapping', {
      organizationId: fresh.organizationId,
      headerHash: computeHeaderHash(['nobody', 'has', 'these']),
    }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
});

t.test('ids of another organization are NOT_FOUND', async (t) => {
  const theirs = await createMapping(t, other, {
    headers: ['Q', 'R'],
    fields: {
      stmtYear: { column: 'Q' },
      stmtPeriod: { column: 'Q' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'R' },
    },
  });
  isError(
    t,
    await owner.client.query('mapping.getMapping', { organizationId: org, id: theirs.id }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.query('mapping.getMapping', {
      organizationId: org,
      headerHash: theirs.headerHash,
    }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.query('mapping.getMapping', { organizationId: org, id: UNKNOWN_ID }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
});

t.test('input: one of id or headerHash, well-formed', async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ['neither', {}],
    ['id not a uuid', { id: "1' OR '1'='1" }],
    ['hash too short', { headerHash: 'abc' }],
    ['hash not hex', { headerHash: 'g'.repeat(64) }],
    ['hash an object', { headerHash: { $ne: null } }],
  ];
  for (const [label, input] of cases) {
    isError(
      t,
      await owner.client.query('mapping.getMapping', { organizationId: org, ...input }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  }
});

t.test('roles: admin and above; outsiders learn nothing', async (t) => {
  const mine = await createMapping(t, owner, {
    headers: ['Role A', 'Role B'],
    fields: {
      stmtYear: { column: 'Role A' },
      stmtPeriod: { column: 'Role A' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'Role B' },
    },
  });
  const admin = await addMember(srv, org, 'admin');
  t.equal(
    ok(t, await admin.client.query('mapping.getMapping', { organizationId: org, id: mine.id })).id,
    mine.id,
  );
  const stranger = await outsider(srv, org);
  isError(
    t,
    await stranger.client.query('mapping.getMapping', { organizationId: org, id: mine.id }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
});

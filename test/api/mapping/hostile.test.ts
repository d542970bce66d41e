// Hostile input to every mapping and distributor procedure: refused as a client error or stored
// harmlessly, never a 500.
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { createMapping, deepJson, FIELDS, hostileStrings, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('header cells and names that look like code are stored and read back as text', async (t) => {
  const headers = [...hostileStrings, 'Money'];
  const fields = {
    stmtYear: { fromFileName: 'period' },
    stmtPeriod: { fromFileName: 'period' },
    stmtCadence: { constant: "M'; DROP TABLE mappings; --" },
    currency: { column: '__proto__' },
    royaltyEarnings: { column: 'Money' },
    rawTitle: { column: "x' OR '1'='1" },
    rawArtist: { columns: ['constructor', '<script>alert(1)</script>'], join: "'" },
  };
  const made = ok(
    t,
    await owner.client.mutate('mapping.create', {
      organizationId: org,
      name: hostileStrings[0],
      headers,
      headerHash: computeHeaderHash(headers),
      fields,
    }),
  );
  const read = ok(
    t,
    await owner.client.query('mapping.getMapping', { organizationId: org, id: made.id }),
  );
  t.same(read.headers, headers);
  t.same(read.fields, fields);
  t.equal(read.name, hostileStrings[0]);
  t.equal(Object.getPrototypeOf(read.fields), Object.prototype);
  t.same(
    ok(
      t,
      await owner.client.query('mapping.list', {
        organizationId: org,
        search: "'; DROP TABLE mappings; --",
      }),
    ).data.map((m: any) => m.id),
    [made.id],
  );
  for (const name of hostileStrings) {
    const d = ok(t, await owner.client.mutate('distributor.create', { organizationId: org, name }));
    t.equal(d.name, name.trim());
  }
});

t.test('__proto__ and constructor keys in bodies are refused before anything runs', async (t) => {
  const headers = ['P', 'Q'];
  const body = `{"0":{"organizationId":"${org}","headers":["P","Q"],"headerHash":"${computeHeaderHash(headers)}","fields":{"__proto__":{"column":"P"},"stmtYear":{"column":"P"}}}}`;
  const res = await owner.client.raw('POST', '/trpc/mapping.create?batch=1', body);
  t.not(res.status, 500);
  t.match(res.body, [{ error: { data: { code: 'BAD_REQUEST', errorCode: 'INVALID_JSON' } } }]);
  const ctor = `{"0":{"organizationId":"${org}","updates":[{"id":"${UNKNOWN_ID}","fields":{"constructor":{"prototype":{"polluted":true}}}}]}}`;
  const res2 = await owner.client.raw('POST', '/trpc/mapping.batchUpdate?batch=1', ctor);
  t.not(res2.status, 500);
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted');
});

t.test('deep and huge values', async (t) => {
  const m = await createMapping(t, owner);
  isError(
    t,
    await owner.client.mutate('mapping.updateById', {
      organizationId: org,
      id: m.id,
      fileCategories: deepJson(50),
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'deep fileCategories',
  );
  isError(
    t,
    await owner.client.mutate('mapping.updateById', {
      organizationId: org,
      id: m.id,
      fileCategories: 'x'.repeat(20_000),
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'huge fileCategories',
  );
  isError(
    t,
    await owner.client.mutate('mapping.updateById', {
      organizationId: org,
      id: m.id,
      fields: deepJson(50),
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'deep fields',
  );
  isError(
    t,
    await owner.client.mutate('mapping.create', {
      organizationId: org,
      headers: deepJson(50),
      headerHash: m.headerHash,
      fields: FIELDS,
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'deep headers',
  );
  const many = Array.from({ length: 5_000 }, (_, i) => `h${i}`);
  isError(
    t,
    await owner.client.mutate('mapping.create', {
      organizationId: org,
      headers: many,
      headerHash: computeHeaderHash(many),
      fields: FIELDS,
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'huge headers',
  );
  const big = await owner.client.raw(
    'POST',
    '/trpc/mapping.create?batch=1',
    JSON.stringify({ 0: { organizationId: org, headers: ['x'.repeat(50_000_000)] } }),
  );
  t.ok(
    big.status >= 400 && big.status < 500,
    `a body over the limit is a client error (${big.status})`,
  );
  isError(
    t,
    await owner.client.query('mapping.getMapping', { organizationId: org, id: deepJson(30) }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'deep GET input',
  );
  isError(
    t,
    await owner.client.query('mapping.list', { organizationId: org, ids: deepJson(30) }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'deep ids',
  );
});

t.test('every procedure with wrong types or nothing: a client error, never a 500', async (t) => {
  const calls: ['GET' | 'POST', string][] = [
    ['POST', 'distributor.create'],
    ['POST', 'distributor.deleteById'],
    ['GET', 'distributor.getById'],
    ['GET', 'distributor.list'],
    ['POST', 'distributor.updateById'],
    ['POST', 'mapping.batchUpdate'],
    ['POST', 'mapping.create'],
    ['POST', 'mapping.deleteById'],
    ['GET', 'mapping.getByDistributor'],
    ['GET', 'mapping.getById'],
    ['GET', 'mapping.getMapping'],
    ['GET', 'mapping.list'],
    ['POST', 'mapping.processSample'],
    ['GET', 'mapping.redrivePreview'],
    ['GET', 'mapping.revision.listByMapping'],
    ['POST', 'mapping.updateById'],
  ];
  const garbage: Record<string, unknown>[] = [
    {},
    {
      id: 1,
      name: [],
      headers: 'x',
      fields: 1,
      mappingId: {},
      distributorId: true,
      statementId: null,
      updates: {},
      pagination: 'all',
      ids: 'x',
    },
    {
      id: "1' OR '1'='1",
      mappingId: '../../',
      distributorId: '%',
      statementId: '\\',
      headerHash: "'; --",
    },
    {
      id: UNKNOWN_ID,
      mappingId: UNKNOWN_ID,
      distributorId: UNKNOWN_ID,
      statementId: UNKNOWN_ID,
      name: 'x\u0000y',
    },
  ];
  for (const [method, path] of calls) {
    for (const input of garbage) {
      const res = await owner.client.call(method, path, { organizationId: org, ...input });
      if (!res.ok) {
        t.not(
          res.error.data.code,
          'INTERNAL_SERVER_ERROR',
          `${path} ${JSON.stringify(input).slice(0, 60)}: ${res.error.data.errorCode}`,
        );
        t.ok(res.status >= 400 && res.status < 500, `${path}: status ${res.status}`);
      } else {
        // lists succeed on an empty filter; that is fine
        t.ok(['distributor.list', 'mapping.list'].includes(path), `${path} answered`);
      }
    }
  }
});

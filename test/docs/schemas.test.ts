// GET /docs/schemas.json: generated from the procedure declarations, complete, no auth.
import t from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { describeProcedures } from '../../src/docs/schemas.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);

t.test(
  'one entry per procedure with method, path, summary, scope, minRole and input schema',
  async (t) => {
    const res = await fetch(`${srv.url}/docs/schemas.json`);
    t.equal(res.status, 200);
    const schemas = (await res.json()) as Record<string, any>;
    const names = describeProcedures(appRouter).map((p) => p.name);
    t.same(Object.keys(schemas).sort(), [...names].sort());
    t.match(schemas['apiKey.delete'], {
      method: 'POST',
      path: '/trpc/apiKey.delete',
      scope: '',
      minRole: 'admin',
      summary: 'Delete an API key; it stops working at once.',
      input: {
        type: 'object',
        required: ['organizationId', 'id'],
        properties: { organizationId: { type: 'string', format: 'uuid' } },
      },
    });
    t.match(schemas['user.currentUser'], { method: 'GET', scope: 'cli', minRole: 'any' });
    t.match(schemas.health, { method: 'GET', minRole: 'none' });
    // the pagination limit's bound is checked after parsing (its own errorCode): the schema says it
    t.match(schemas['rightsholder.list'].input.properties.pagination.properties.limit, {
      type: 'integer',
      minimum: 1,
      description: '1 to 2000; above 2000 is PAGINATION_LIMIT_EXCEEDED',
    });
    for (const [name, entry] of Object.entries(schemas)) {
      t.ok(entry.summary.length > 10, `${name} has a summary`);
      t.type(entry.input, 'object', `${name} has an input schema`);
    }
  },
);

/** The pagination schema of a procedure's input (its input may be nullable: anyOf object | null). */
function paginationOf(entry: any): any {
  const input = entry.input.anyOf
    ? entry.input.anyOf.find((s: any) => s.type === 'object')
    : entry.input;
  return input?.properties?.pagination;
}

t.test(
  'the limits and page sizes the service enforces are stated, from the schemas that apply them',
  async (t) => {
    const schemas = (await (await fetch(`${srv.url}/docs/schemas.json`)).json()) as Record<
      string,
      any
    >;
    const paged = Object.entries(schemas).filter(
      ([, entry]) => paginationOf(entry)?.properties?.sortOrder,
    );
    t.ok(paged.length >= 20, `${paged.length} lists`);
    for (const [name, entry] of paged) {
      const p = paginationOf(entry);
      // the specification gives a block's product details pages of up to 5000
      t.equal(
        p.properties.limit.maximum,
        name === 'product.getMusicalDetailsByBlock' ? 5000 : 2000,
        `${name}: limit maximum`,
      );
      t.equal(p.properties.sortOrder.default, 'asc', `${name}: sortOrder asc`);
      t.equal(p.properties.sortBy.type, 'string', `${name}: sortBy a string`);
      t.ok(p.properties.sortBy.enum.length >= 1, `${name}: sortBy names its fields`);
    }
    const sizes = (name: string) => {
      const p = paginationOf(schemas[name]);
      return { omitted: p.default.limit, innerLimit: p.properties.limit.default };
    };
    t.same(sizes('rightsholder.list'), { omitted: 300, innerLimit: 200 });
    t.same(sizes('upload.list'), { omitted: 300, innerLimit: 200 });
    t.same(sizes('payor.listGlobal'), { omitted: 300, innerLimit: 200 });
    t.same(sizes('fetching.list'), { omitted: 10, innerLimit: 10 });
    t.same(sizes('product.getByBlock'), { omitted: 300, innerLimit: 20 });
    t.same(paginationOf(schemas['upload.list']).properties.sortBy.enum, [
      'createdAt',
      'updatedAt',
      'fileCount',
    ]);
    for (const [name, field] of [
      ['lookupSalesType.batchResolveWithAI', 'salesTypes'],
      ['lookupSource.batchResolveWithAI', 'sources'],
    ] as const) {
      t.match(
        schemas[name].input.properties[field],
        { type: 'array', minItems: 1, maxItems: 10 },
        `${name}: at most 10`,
      );
    }
  },
);

t.test('the sizes stated are those answered', async (t) => {
  const owner = await newOrganization(srv);
  const schemas = (await (await fetch(`${srv.url}/docs/schemas.json`)).json()) as Record<
    string,
    any
  >;
  const stated = paginationOf(schemas['payor.listGlobal']);
  const omitted = await owner.client.query('payor.listGlobal', {
    organizationId: owner.organizationId,
  });
  t.equal(omitted.data.pagination.limit, stated.default.limit);
  const onlyPage = await owner.client.query('payor.listGlobal', {
    organizationId: owner.organizationId,
    pagination: { page: 1 },
  });
  t.equal(onlyPage.data.pagination.limit, stated.properties.limit.default);
  const over = await owner.client.query('payor.listGlobal', {
    organizationId: owner.organizationId,
    pagination: { limit: stated.properties.limit.maximum + 1 },
  });
  t.match(over, {
    ok: false,
    error: { data: { code: 'BAD_REQUEST', errorCode: 'PAGINATION_LIMIT_EXCEEDED' } },
  });
});

// GET /docs/schemas.json: generated from the procedure declarations, complete, no auth.
import t from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { describeProcedures } from '../../src/docs/schemas.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);

t.test('one entry per procedure with method, path, summary, scope, minRole and input schema', async (t) => {
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
    input: { type: 'object', required: ['organizationId', 'id'], properties: { organizationId: { type: 'string', format: 'uuid' } } },
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
});

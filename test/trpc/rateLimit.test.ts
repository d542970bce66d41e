// Rate limits over real HTTP (src/net/rateLimit.ts, src/trpc/rateLimit.ts): each group's budget
// per principal and per client address, each call of a batch counted, the refusal's exact wire
// shape (HTTP 429, Retry-After, data.code INTERNAL_SERVER_ERROR, errorCode TOO_MANY_REQUESTS),
// other callers unaffected, the budget back after the window, and the PostgreSQL store shared by
// two apps on one database. Client addresses are told apart with X-Forwarded-For (TRUST_PROXY).
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import t, { type Test } from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { buildApp } from '../../src/app.ts';
import { describeProcedures } from '../../src/docs/schemas.ts';
import { addressKey, createRateLimits } from '../../src/net/rateLimit.ts';
import { procedureGroups } from '../../src/trpc/rateLimit.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { addMember, newOrganization, type Caller } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { TrpcClient, type TrpcErrorBody } from '../helpers/trpc.ts';

const WINDOW_SECONDS = 4;
const srv = await startTestServer(t, {
  env: {
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    RATE_LIMIT_ADDRESS_FACTOR: '2',
    RATE_LIMIT_URLS: '3',
    RATE_LIMIT_SQL: '2',
    RATE_LIMIT_CUBE: '3',
    RATE_LIMIT_EXPORTS: '2',
    RATE_LIMIT_INVITATIONS: '2',
    RATE_LIMIT_PROVIDERS: '2',
  },
});

const orgA = await newOrganization(srv, 'Limited A');
const writerA = await addMember(srv, orgA.organizationId, 'writer');
const orgC = await newOrganization(srv, 'Limited C');
const rightsholderA = await createRightsholder(orgA.client, orgA.organizationId, 'Artist A');
const rightsholderC = await createRightsholder(orgC.client, orgC.organizationId, 'Artist C');

/** The caller's client as seen from a client address (forwarded by the trusted proxy, 127.0.0.1). */
const from = (caller: Caller, address: string): TrpcClient =>
  new TrpcClient(srv.url, {
    'x-api-key': caller.apiKey,
    'x-organization-id': caller.organizationId,
    'x-forwarded-for': address,
  });

interface BatchAnswer {
  status: number;
  retryAfter: string | null;
  items: ({ result: { data: any } } | { error: TrpcErrorBody })[];
}

const queries = new Set(
  describeProcedures(appRouter)
    .filter((p) => p.type === 'query')
    .map((p) => p.name),
);

/** One batch call (GET for a query, POST for a mutation): the procedure once for each input. */
async function batch(
  client: TrpcClient,
  procedure: string,
  inputs: unknown[],
  url = srv.url,
): Promise<BatchAnswer> {
  const path = `${url}/trpc/${inputs.map(() => procedure).join(',')}?batch=1`;
  const input = JSON.stringify(Object.fromEntries(inputs.map((value, i) => [i, value])));
  const res = queries.has(procedure)
    ? await fetch(`${path}&input=${encodeURIComponent(input)}`, { headers: client.headers })
    : await fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...client.headers },
        body: input,
      });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    items: (await res.json()) as BatchAnswer['items'],
  };
}

const refusals = (a: BatchAnswer) =>
  a.items.filter((i) => 'error' in i && i.error.data.errorCode === 'TOO_MANY_REQUESTS');
const errorOf = (a: BatchAnswer, i = 0): TrpcErrorBody => {
  const item = a.items[i]!;
  if (!('error' in item)) throw new Error(`call ${i} succeeded: ${JSON.stringify(item)}`);
  return item.error;
};

const upload = (caller: Caller, rightsholderId: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    organizationId: caller.organizationId,
    rightsholderId,
    fileName: `s${i}.csv`,
  }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The exact answer to a single call refused by a rate limit. */
function assertRefused(t: Test, a: BatchAnswer, procedure: string, message: RegExp): void {
  t.equal(a.status, 429, 'HTTP 429');
  const seconds = Number(a.retryAfter);
  t.ok(
    Number.isInteger(seconds) && seconds >= 1 && seconds <= WINDOW_SECONDS,
    `Retry-After is whole seconds within the window (${a.retryAfter})`,
  );
  const error = errorOf(a);
  t.same(
    { code: error.code, data: { ...error.data } },
    {
      code: -32603,
      data: {
        code: 'INTERNAL_SERVER_ERROR',
        errorCode: 'TOO_MANY_REQUESTS',
        httpStatus: 429,
        path: procedure,
        details: { retryAfterSeconds: seconds },
      },
    },
  );
  t.match(error.message, message);
}

t.test(
  'a batch counts each call: of 4 presigned URLs asked for in one request, 3 are minted',
  async (t) => {
    const a = await batch(
      from(orgA, '10.0.0.1'),
      'upload.uploadFile',
      upload(orgA, rightsholderA, 4),
    );
    t.equal(a.status, 207, 'results and a refusal: 207');
    t.equal(
      a.items.filter((i) => 'result' in i && typeof i.result.data.url === 'string').length,
      3,
      'three URLs minted',
    );
    t.equal(refusals(a).length, 1, 'the fourth refused');
    t.ok(Number(a.retryAfter) >= 1, 'Retry-After on the batch answer');

    const again = await batch(
      from(orgA, '10.0.0.1'),
      'upload.uploadFile',
      upload(orgA, rightsholderA, 1),
    );
    assertRefused(
      t,
      again,
      'upload.uploadFile',
      /^Too many upload and download URL calls: at most 3 a caller in 4 s; retry after \d s$/,
    );
    // the group is the budget: another URL-minting procedure is refused too
    const heartbeat = await batch(from(orgA, '10.0.0.1'), 'upload.heartbeat', [
      { organizationId: orgA.organizationId, statementIds: [rightsholderA] },
    ]);
    assertRefused(t, heartbeat, 'upload.heartbeat', /^Too many upload and download URL calls/);
    // other groups have budgets of their own
    const other = await batch(from(orgA, '10.0.0.1'), 'export.trigger', [
      {
        organizationId: orgA.organizationId,
        type: 'catalog',
        format: 'csv',
        rightsholderIds: [rightsholderA],
      },
    ]);
    t.equal(other.status, 200, JSON.stringify(other.items));
  },
);

t.test(
  'another member of the same organization has a budget of their own, the address one shared by all',
  async (t) => {
    // the address 10.0.0.1 holds 2 x 3 = 6: orgA spent 3 (a refused call is not counted against it)
    const b = await batch(
      from(writerA, '10.0.0.1'),
      'upload.uploadFile',
      upload(writerA, rightsholderA, 3),
    );
    t.equal(b.status, 200, JSON.stringify(refusals(b)));
    // another organization's owner from the same address: the address is spent
    const c = await batch(
      from(orgC, '10.0.0.1'),
      'upload.uploadFile',
      upload(orgC, rightsholderC, 1),
    );
    assertRefused(
      t,
      c,
      'upload.uploadFile',
      /^Too many upload and download URL calls from this address: at most 6 in 4 s; retry after \d s$/,
    );
    // ... and from an address of their own, not affected at all
    const elsewhere = await batch(
      from(orgC, '10.0.0.2'),
      'upload.uploadFile',
      upload(orgC, rightsholderC, 3),
    );
    t.equal(elsewhere.status, 200, JSON.stringify(refusals(elsewhere)));
  },
);

t.test('after the window the budget is back', async (t) => {
  const refused = await batch(
    from(orgA, '10.0.0.1'),
    'upload.uploadFile',
    upload(orgA, rightsholderA, 1),
  );
  t.equal(refused.status, 429);
  await sleep(Number(refused.retryAfter) * 1000 + 50);
  const a = await batch(
    from(orgA, '10.0.0.1'),
    'upload.uploadFile',
    upload(orgA, rightsholderA, 3),
  );
  t.equal(a.status, 200, JSON.stringify(refusals(a)));
  t.equal(a.items.filter((i) => 'result' in i && typeof i.result.data.url === 'string').length, 3);
});

/** A valid input of each limited procedure for the caller's organization and rightsholder, and the group's limit. */
const groupCalls: [string, (c: Caller, rightsholderId: string, i: number) => unknown, number][] = [
  ['cube.sqlQuery', (c) => ({ organizationId: c.organizationId, sql: 'SELECT 1 AS one' }), 2],
  [
    'cube.query',
    (c, rightsholderId) => ({
      organizationId: c.organizationId,
      query: {
        measures: ['analytics_full_view.units'],
        filters: [
          {
            member: 'analytics_full_view.rightsholder_id',
            operator: 'equals',
            values: [rightsholderId],
          },
        ],
      },
    }),
    3,
  ],
  [
    'export.trigger',
    (c, rightsholderId) => ({
      organizationId: c.organizationId,
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: [rightsholderId],
    }),
    2,
  ],
  [
    'organization.addUser',
    (c, _r, i) => ({
      organizationId: c.organizationId,
      email: `invitee-${c.userId}-${i}@example.test`,
    }),
    2,
  ],
  ['market.getTreasuryYields', (c) => ({ organizationId: c.organizationId }), 2],
];

t.test(
  "each group's limit, exceeded in one batch: exactly the call over it is refused, other callers are not",
  async (t) => {
    for (const [procedure, input, limit] of groupCalls) {
      const inputs = Array.from({ length: limit + 1 }, (_, i) => input(orgC, rightsholderC, i));
      const a = await batch(from(orgC, '10.0.1.1'), procedure, inputs);
      const refused = refusals(a);
      t.equal(refused.length, 1, `${procedure}: one call refused`);
      const error = (refused[0] as { error: TrpcErrorBody }).error;
      t.same(
        { code: error.code, data: error.data },
        {
          code: -32603,
          data: {
            code: 'INTERNAL_SERVER_ERROR',
            errorCode: 'TOO_MANY_REQUESTS',
            httpStatus: 429,
            path: procedure,
            details: { retryAfterSeconds: Number(a.retryAfter) },
          },
        },
        `${procedure}: the refusal`,
      );
      t.match(
        error.message,
        new RegExp(
          `^Too many [a-zA-Z. ]+ calls: at most ${limit} a caller in 4 s; retry after \\d s$`,
        ),
      );
      for (const item of a.items) {
        if ('result' in item) continue;
        if (item.error.data.errorCode !== 'TOO_MANY_REQUESTS')
          t.fail(`${procedure}: the others are answered (${JSON.stringify(item.error)})`);
      }
      // another organization's owner, from another address: untouched
      const other = await batch(from(orgA, '10.0.1.2'), procedure, [input(orgA, rightsholderA, 0)]);
      t.equal(
        other.status,
        200,
        `${procedure}: another caller is answered (${JSON.stringify(other.items).slice(0, 300)})`,
      );
    }
  },
);

t.test('the invitation link (a route outside tRPC) counts its requests per address', async (t) => {
  const post = (address: string) =>
    fetch(`${srv.url}/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: '{"token":"guess"}',
    });
  for (let i = 0; i < 4; i++)
    t.equal((await post('10.0.2.1')).status, 401, 'an anonymous try is counted');
  const refused = await post('10.0.2.1');
  t.equal(refused.status, 429);
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After');
  t.match(await refused.json(), {
    error: {
      errorCode: 'TOO_MANY_REQUESTS',
      message: /^Too many invitation calls from this address: at most 4 in 4 s/,
    },
  });
  t.equal((await post('10.0.2.2')).status, 401, 'another address is not refused');
});

t.test('RATE_LIMIT_STORE=postgres: two apps on one database share the budgets', async (t) => {
  const config = {
    ...srv.config,
    rateLimits: {
      ...srv.config.rateLimits,
      store: 'postgres' as const,
      perPrincipal: { ...srv.config.rateLimits.perPrincipal, urls: 3 },
    },
  };
  const urls: string[] = [];
  for (let i = 0; i < 2; i++) {
    const app = await buildApp({ ...srv.deps, config });
    t.teardown(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    urls.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  }
  const call = (i: number) =>
    batch(
      from(writerA, '10.0.3.1'),
      'upload.uploadFile',
      upload(writerA, rightsholderA, 1),
      urls[i],
    );
  t.equal((await call(0)).status, 200);
  t.equal((await call(0)).status, 200);
  t.equal((await call(1)).status, 200, 'the third call, on the other app');
  // the fourth, on either app, is refused: one app counted it from the database, the other
  // refuses it from memory without a statement (its budget was spent there)
  assertRefused(
    t,
    await call(0),
    'upload.uploadFile',
    /^Too many upload and download URL calls: at most 3 a caller in 4 s/,
  );
  assertRefused(
    t,
    await call(1),
    'upload.uploadFile',
    /^Too many upload and download URL calls: at most 3 a caller in 4 s/,
  );
  const { rows } = await srv.deps.pool.query<{ key: string; points: number }>(
    "SELECT key, points FROM rate_limits WHERE key LIKE 'urls:%' ORDER BY key",
  );
  t.same(rows, [
    { key: 'urls:address:10.0.3.1', points: 3 },
    { key: `urls:principal:${writerA.userId}`, points: 4 },
  ]);
});

t.test(
  'every procedure named in a group exists; addresses are counted per IPv4 address and per IPv6 /64',
  async (t) => {
    const names = new Set(describeProcedures(appRouter).map((p) => p.name));
    for (const name of procedureGroups.keys()) t.ok(names.has(name), name);
    t.equal(addressKey('::ffff:10.1.2.3'), '10.1.2.3');
    t.equal(addressKey('10.1.2.3'), '10.1.2.3');
    t.equal(addressKey('2001:db8:0:12::1'), '2001:db8:0:12::/64');
    t.equal(addressKey('2001:DB8:0000:0012:ffff:1:2:3'), '2001:db8:0:12::/64');
    t.equal(addressKey('::1'), '0:0:0:0::/64');
  },
);

t.test('a budget of 0 is no limit; the others count per group', async (t) => {
  const limits = createRateLimits({
    store: 'memory',
    windowSeconds: 60,
    addressFactor: 1,
    perPrincipal: { urls: 0, sql: 1, cube: 1, exports: 1, invitations: 1, providers: 1 },
  });
  for (let i = 0; i < 1000; i++) await limits.take('urls', { principal: 'p', address: '10.9.9.9' });
  await limits.take('sql', { principal: 'p', address: '10.9.9.9' });
  await limits.take('cube', { principal: 'p', address: '10.9.9.9' });
  await t.rejects(limits.take('sql', { principal: 'p', address: '10.9.9.10' }), {
    errorCode: 'TOO_MANY_REQUESTS',
    message: /^Too many cube\.sqlQuery calls: at most 1 a caller in 60 s; retry after (59|60) s$/,
  });
  await t.rejects(limits.take('cube', { principal: 'q', address: '10.9.9.9' }), {
    errorCode: 'TOO_MANY_REQUESTS',
    message: /^Too many cube\.query calls from this address: at most 1 in 60 s/,
  });
  // refused for its address, q spent nothing of its own
  await limits.take('cube', { principal: 'q', address: '10.9.9.11' });
});

t.test(
  'RATE_LIMIT_STORE=postgres with the database unreachable: counted in memory meanwhile',
  async (t) => {
    // a port nobody listens on: every statement fails at once
    const down = new pg.Pool({
      connectionString: 'postgres://nobody@127.0.0.1:1/none',
      connectionTimeoutMillis: 1000,
    });
    down.on('error', () => {});
    t.teardown(() => down.end());
    const limits = createRateLimits(
      {
        store: 'postgres',
        windowSeconds: 60,
        addressFactor: 10,
        perPrincipal: { urls: 2, sql: 0, cube: 0, exports: 0, invitations: 0, providers: 0 },
      },
      down,
    );
    await limits.take('urls', { principal: 'p', address: '10.9.8.7' });
    await limits.take('urls', { principal: 'p', address: '10.9.8.7' });
    await t.rejects(limits.take('urls', { principal: 'p', address: '10.9.8.7' }), {
      errorCode: 'TOO_MANY_REQUESTS',
      message: /^Too many upload and download URL calls: at most 2 a caller in 60 s/,
    });
  },
);

t.test(
  'the sign-in groups: failures counted by count, refused by check, cleared by forgive; per address only where no principal',
  async (t) => {
    const oauth = {
      ...srv.config.oauth,
      loginFailuresPerAccount: 2,
      loginFailuresPerAddress: 3,
      loginWindowSeconds: 60,
      registrationsPerAddress: 1,
    };
    const limits = createRateLimits(
      { ...srv.config.rateLimits, store: 'memory' },
      undefined,
      oauth,
    );
    const who = { principal: 'person@example.test', address: '10.9.7.1' };
    await limits.check('auth', who);
    await limits.count('auth', who);
    await limits.count('auth', who);
    await t.rejects(limits.check('auth', who), {
      errorCode: 'TOO_MANY_REQUESTS',
      message: /^Too many failed sign-ins: at most 2 an account in 60 s; retry after (59|60) s$/,
    });
    await limits.count('auth', who);
    await limits.forgive('auth', who.principal);
    await t.rejects(
      limits.check('auth', who),
      { message: /^Too many failed sign-ins from this address: at most 3 in 60 s/ },
      "the account's count is cleared, the address's stays",
    );
    await limits.check('auth', { principal: who.principal, address: '10.9.7.2' });
    await limits.take('register', { principal: 'ignored', address: '10.9.7.3' });
    await t.rejects(limits.take('register', { principal: 'someone else', address: '10.9.7.3' }), {
      message:
        /^Too many client registrations and metadata document fetches from this address: at most 1 in 3600 s/,
    });
    // without OAuth settings the sign-in groups are not limited
    const apiOnly = createRateLimits({ ...srv.config.rateLimits, store: 'memory' });
    for (let i = 0; i < 50; i++) await apiOnly.take('token', { address: '10.9.7.4' });
  },
);

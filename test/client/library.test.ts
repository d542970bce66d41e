// The typed client library against a running service: the transport (batch=1, GET for queries
// with the input in the URL, POST for mutations), errors as TRPCClientError with data.code and
// data.errorCode, and the recovery table: UNAUTHORIZED refreshes once, a rate limit's refusal
// (INTERNAL_SERVER_ERROR) is retried once after its Retry-After, TIMEOUT of cube.query goes
// through the async pair; paginate walks every page.
import t from 'tap';
import {
  createRoyaltyClient,
  errorCodeOf,
  specificCodeOf,
  TRPCClientError,
  type TokenProvider,
} from '../../src/client/index.ts';
import { setPassword } from '../../src/oauth/passwords.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { tokensFor } from '../oauth/browser.ts';

// one upload URL per caller and second: the second call in a second is refused, then allowed
const srv = await startTestServer(t, {
  env: { RATE_LIMIT_URLS: '1', RATE_LIMIT_WINDOW_SECONDS: '1' },
});
const owner = await newOrganization(srv, 'Library Org');
const org = owner.organizationId;
const PASSWORD = 'a long enough password';
await setPassword(srv.deps.pool, owner.email, PASSWORD);

interface Sent {
  method: string;
  url: URL;
  body: string | undefined;
  status: number;
}

/** The real fetch, with each request and its status written down. */
function recordingFetch(sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    sent.push({
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      body: init?.body as string | undefined,
      status: res.status,
    });
    return res;
  };
}

const sent: Sent[] = [];
const client = createRoyaltyClient({
  url: srv.url,
  apiKey: owner.apiKey,
  organizationId: org,
  fetch: recordingFetch(sent),
  retryBackoffMs: 10,
});

t.test(
  'queries are GET with batch=1 and the input in the URL; mutations are POST with {"0": input}',
  async (t) => {
    sent.length = 0;
    const created = await client.api.rightsholder.create.mutate({
      organizationId: org,
      name: 'Ünïcode & Co',
    });
    const got = await client.api.rightsholder.getById.query({
      organizationId: org,
      id: created.id,
    });
    t.equal(got.name, 'Ünïcode & Co');
    t.equal(sent.length, 2);
    const [post, get] = sent;
    t.equal(post!.method, 'POST');
    t.equal(post!.url.pathname, '/trpc/rightsholder.create');
    t.equal(post!.url.search, '?batch=1');
    t.same(JSON.parse(post!.body!), { 0: { organizationId: org, name: 'Ünïcode & Co' } });
    t.equal(get!.method, 'GET');
    t.equal(get!.url.pathname, '/trpc/rightsholder.getById');
    t.equal(get!.url.searchParams.get('batch'), '1');
    t.same(JSON.parse(get!.url.searchParams.get('input')!), {
      0: { organizationId: org, id: created.id },
    });
  },
);

t.test(
  'errors carry data.code and data.errorCode; NOT_FOUND, BAD_REQUEST, CONFLICT and FORBIDDEN are not retried',
  async (t) => {
    sent.length = 0;
    const missing = await client.api.rightsholder.getById
      .query({ organizationId: org, id: '00000000-0000-4000-8000-000000000000' })
      .catch((e: unknown) => e);
    t.ok(missing instanceof TRPCClientError);
    t.equal(errorCodeOf(missing), 'NOT_FOUND');
    t.equal(specificCodeOf(missing), 'RIGHTSHOLDER_NOT_FOUND');
    const invalid = await client
      .call('rightsholder.getById', 'query', { organizationId: org, id: "1' OR '1'='1" })
      .catch((e: unknown) => e);
    t.equal(errorCodeOf(invalid), 'BAD_REQUEST');
    t.equal(specificCodeOf(invalid), 'VALIDATION_FAILED');
    const duplicate = await client.api.rightsholder.create
      .mutate({ organizationId: org, name: 'Ünïcode & Co' })
      .catch((e: unknown) => e);
    t.equal(errorCodeOf(duplicate), 'CONFLICT');
    const member = await addMember(srv, org, 'member');
    const readOnly = createRoyaltyClient({
      url: srv.url,
      apiKey: member.apiKey,
      organizationId: org,
      fetch: recordingFetch(sent),
    });
    const forbidden = await readOnly.api.rightsholder.create
      .mutate({ organizationId: org, name: 'Not Allowed' })
      .catch((e: unknown) => e);
    t.equal(errorCodeOf(forbidden), 'FORBIDDEN');
    t.equal(specificCodeOf(forbidden), 'INSUFFICIENT_ROLE');
    t.same(
      sent.map((s) => s.status),
      [404, 400, 409, 403],
      'one request each',
    );
  },
);

t.test('UNAUTHORIZED: the token is refreshed once and the call sent again', async (t) => {
  const tokens = await tokensFor(srv, owner.email, PASSWORD);
  let current = 'not-a-token';
  let refreshes = 0;
  const provider: TokenProvider = {
    accessToken: async () => current,
    refresh: async () => {
      refreshes++;
      current = tokens.access_token;
    },
  };
  const calls: Sent[] = [];
  const oauthClient = createRoyaltyClient({
    url: srv.url,
    tokenProvider: provider,
    organizationId: org,
    fetch: recordingFetch(calls),
  });
  const me = await oauthClient.api.user.currentUser.query();
  t.equal(me.email, owner.email);
  t.equal(refreshes, 1);
  t.same(
    calls.map((c) => c.status),
    [401, 200],
  );

  // a refresh that does not help: UNAUTHORIZED after the one retry
  const stuck = createRoyaltyClient({
    url: srv.url,
    tokenProvider: { accessToken: async () => 'still-bad', refresh: async () => void refreshes++ },
    fetch: recordingFetch(calls),
  });
  calls.length = 0;
  const error = await stuck.api.user.currentUser.query().catch((e: unknown) => e);
  t.equal(errorCodeOf(error), 'UNAUTHORIZED');
  t.equal(refreshes, 2);
  t.same(
    calls.map((c) => c.status),
    [401, 401],
  );
});

t.test(
  'a rate limit (INTERNAL_SERVER_ERROR, HTTP 429) is retried once after its Retry-After',
  async (t) => {
    const rightsholder = await client.api.rightsholder.create.mutate({
      organizationId: org,
      name: 'Rate Limited',
    });
    const start = (fileName: string) =>
      client.api.upload.uploadFile.mutate({
        organizationId: org,
        rightsholderId: rightsholder.id,
        fileName,
        size: 10,
      });
    sent.length = 0;
    const first = await start('a.csv');
    const second = await start('b.csv');
    t.not(first.statementId, second.statementId);
    t.same(
      sent.map((s) => s.status),
      [200, 429, 200],
      'the second was refused once, then sent again in the next window',
    );
  },
);

t.test(
  'TIMEOUT of cube.query: the same query through cube.queryAsync and cube.queryPoll',
  async (t) => {
    const calls: Sent[] = [];
    let timeouts = 0;
    // the network between: it answers the first cube.query as the server does after its 25 s window
    const slowNetwork: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      if (url.pathname === '/trpc/cube.query' && timeouts++ === 0) {
        calls.push({ method: 'POST', url, body: undefined, status: 408 });
        const error = {
          message: 'The query took longer than 25 s',
          code: -32008,
          data: {
            code: 'TIMEOUT',
            errorCode: 'ANALYTICS_QUERY_TIMEOUT',
            httpStatus: 408,
            path: 'cube.query',
          },
        };
        return new Response(JSON.stringify([{ error }]), {
          status: 408,
          headers: { 'content-type': 'application/json' },
        });
      }
      return recordingFetch(calls)(input, init);
    };
    const analytics = createRoyaltyClient({
      url: srv.url,
      apiKey: owner.apiKey,
      organizationId: org,
      fetch: slowNetwork,
      pollIntervalMs: 50,
    });
    const rightsholders = await analytics.api.rightsholder.list.query({ organizationId: org });
    const query = {
      measures: ['analytics_full_view.statement_row_count'],
      filters: [
        {
          member: 'analytics_full_view.rightsholder_id',
          operator: 'equals' as const,
          values: rightsholders.data.map((r) => r.id),
        },
      ],
    };
    calls.length = 0;
    const answer = await analytics.api.cube.query.mutate({ organizationId: org, query });
    const rows = 'data' in answer ? answer.data : undefined;
    t.same(rows, [{ 'analytics_full_view.statement_row_count': '0' }]);
    const paths = calls.map((c) => c.url.pathname);
    t.same(paths.slice(0, 2), ['/trpc/cube.query', '/trpc/cube.queryAsync']);
    t.ok(
      paths.slice(2).every((p) => p === '/trpc/cube.queryPoll'),
      'then polls, nothing else',
    );
    const again = await analytics.queryAnalytics(query);
    t.same('data' in again ? again.data : undefined, rows, 'queryAnalytics answers the same');
  },
);

t.test('paginate walks every page of a list', async (t) => {
  const names = ['P1', 'P2', 'P3', 'P4', 'P5'];
  for (const name of names)
    await client.api.rightsholder.create.mutate({ organizationId: org, name });
  sent.length = 0;
  const seen: string[] = [];
  for await (const r of client.paginate(
    client.api.rightsholder.list.query,
    { organizationId: org, pagination: { sortBy: 'name' } },
    2,
  ))
    seen.push(r.name);
  t.same(seen, ['P1', 'P2', 'P3', 'P4', 'P5', 'Rate Limited', 'Ünïcode & Co']);
  t.equal(sent.length, 4, 'four pages of two');
  t.same(
    sent.map((s) => JSON.parse(s.url.searchParams.get('input')!)[0].pagination),
    [1, 2, 3, 4].map((page) => ({ sortBy: 'name', page, limit: 2 })),
  );
});

t.test('an API key needs its organization', async (t) => {
  t.throws(
    () => createRoyaltyClient({ url: srv.url, apiKey: owner.apiKey }),
    /organizationId is required/,
  );
  t.throws(
    () =>
      createRoyaltyClient({
        url: srv.url,
        apiKey: owner.apiKey,
        organizationId: org,
        tokenProvider: { accessToken: async () => '', refresh: async () => {} },
      }),
    /not both/,
  );
});

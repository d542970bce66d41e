// Real users, organizations, memberships and API keys, made through the same code the service
// uses (bootstrap and createApiKey), for tests to call the API as each role.
import { createApiKey } from '../../src/auth/apiKeys.ts';
import type { Queryable } from '../../src/db/pool.ts';
import { bootstrap, upsertUser } from '../../src/organizations/bootstrap.ts';
import type { OrgRole, PlatformRole } from '../../src/access/roles.ts';
import type { Deps } from '../../src/deps.ts';
import type { LooseClient } from './trpc.ts';

/** a test file's service, over HTTP (startTestServer) or in process (startTestHandler) */
export interface TestService<C extends LooseClient = LooseClient> {
  deps: Deps;
  client(headers: Record<string, string>): C;
}

let counter = 0;
const unique = (label: string) => `${label}-${process.pid}-${++counter}@example.test`;

export interface Caller<C extends LooseClient = LooseClient> {
  userId: string;
  email: string;
  apiKey: string;
  organizationId: string;
  client: C;
}

/** A new organization with its owner, calling through an API key of full scope. */
export async function newOrganization<C extends LooseClient>(
  srv: TestService<C>,
  name = 'Test Org',
): Promise<Caller<C>> {
  const email = unique('owner');
  const r = await bootstrap(srv.deps.pool, { email, organizationName: name });
  return {
    userId: r.userId,
    email,
    apiKey: r.apiKey,
    organizationId: r.organizationId,
    client: srv.client({ 'x-api-key': r.apiKey, 'x-organization-id': r.organizationId }),
  };
}

export async function addMember<C extends LooseClient>(
  srv: TestService<C>,
  organizationId: string,
  role: OrgRole,
  opts: { platformRole?: PlatformRole; patterns?: string[]; status?: 'active' | 'disabled' } = {},
): Promise<Caller<C>> {
  const db: Queryable = srv.deps.pool;
  const email = unique(role);
  const userId = await upsertUser(db, email, opts.platformRole);
  await db.query(
    'INSERT INTO memberships (organization_id, user_id, role, status) VALUES ($1, $2, $3, $4)',
    [organizationId, userId, role, opts.status ?? 'active'],
  );
  const { key } = await createApiKey(db, {
    userId,
    name: 'test',
    organizationIds: [organizationId],
    patterns: opts.patterns ?? ['*'],
  });
  return {
    userId,
    email,
    apiKey: key,
    organizationId,
    client: srv.client({ 'x-api-key': key, 'x-organization-id': organizationId }),
  };
}

/** A user with no membership of the organization, holding a key scoped to it. */
export async function outsider<C extends LooseClient>(
  srv: TestService<C>,
  organizationId: string,
  platformRole?: PlatformRole,
): Promise<Caller<C>> {
  const email = unique('outsider');
  const userId = await upsertUser(srv.deps.pool, email, platformRole);
  const { key } = await createApiKey(srv.deps.pool, {
    userId,
    name: 'test',
    organizationIds: [organizationId],
    patterns: ['*'],
  });
  return {
    userId,
    email,
    apiKey: key,
    organizationId,
    client: srv.client({ 'x-api-key': key, 'x-organization-id': organizationId }),
  };
}

// Helpers shared by the organization and user procedure tests.
import type { TestService } from '../../helpers/principals.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { freePort } from '../../../src/db/embedded.ts';

/** A rightsholder row, made directly in the table the rightsholder namespace owns. */
export async function insertRightsholder(
  srv: TestService,
  organizationId: string,
  name: string,
  opts: { deleted?: boolean } = {},
): Promise<string> {
  const { rows } = await srv.deps.pool.query<{ id: string }>(
    `INSERT INTO rightsholders (organization_id, name, deleted_at) VALUES ($1, $2, $3) RETURNING id`,
    [organizationId, name, opts.deleted ? new Date() : null],
  );
  return rows[0]!.id;
}

export interface ActivityRow {
  action: string;
  subjectType: string;
  subjectId: string;
  subjectLabel: string | null;
  actorUserId: string | null;
  apiKeyId: string | null;
  changes: Record<string, { before: unknown; after: unknown }> | null;
}

export async function activities(
  srv: TestService,
  organizationId: string,
  action: string,
): Promise<ActivityRow[]> {
  const { rows } = await srv.deps.pool.query<ActivityRow>(
    `SELECT action, subject_type AS "subjectType", subject_id AS "subjectId", subject_label AS "subjectLabel",
            actor_user_id AS "actorUserId", api_key_id AS "apiKeyId", changes
     FROM activity_events WHERE organization_id = $1 AND action = $2 ORDER BY id`,
    [organizationId, action],
  );
  return rows;
}

export const MISSING_ID = '00000000-0000-4000-8000-000000000000';
export const SQL_INJECTION = "x'; DROP TABLE organizations; --";

/** The token of an invitation link. */
export function tokenOf(link: string): string {
  return new URL(link).searchParams.get('token')!;
}

/** POST /invitations/accept as the holder of `apiKey`. */
export async function acceptInvitation(
  srv: TestServer,
  apiKey: string | undefined,
  body: unknown,
  opts: { query?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${srv.url}/invitations/accept${opts.query ?? ''}`, {
    method: 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }),
      ...opts.headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Moves an invitation's expiry into the past. */
export async function expireInvitation(srv: TestService, invitationId: string): Promise<void> {
  await srv.deps.pool.query(
    `UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`,
    [invitationId],
  );
}

/** A test server whose PUBLIC_URL is its own address, so invitation links can be followed as they are. */
export async function startServerWithPublicUrl(
  t: Parameters<typeof startTestServer>[0],
  env: Record<string, string> = {},
) {
  const port = await freePort();
  return startTestServer(t, {
    env: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, ...env },
  });
}

// Invitations to an organization. Stored states are pending, accepted and revoked; a pending one
// past its expires_at is reported `expired` (computed when read, so nothing has to sweep them).
// The link carries a random single-use token, stored only as its SHA-256: a high-entropy secret
// needs no slow hash, and a database dump yields no usable link.
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import type { OrgRole } from '../access/roles.ts';
import { sortDirection } from '../db/sql.ts';

export const invitationStatuses = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationStatus = (typeof invitationStatuses)[number];

export interface InvitationRecord {
  id: string;
  organizationId: string;
  email: string;
  role: OrgRole;
  status: InvitationStatus;
  invitedByUserId: string | null;
  replacesInvitationId: string | null;
  acceptedByUserId: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
}

const TOKEN_PREFIX = 'inv_';
export const ACCEPT_PATH = '/invitations/accept';

const STATUS_SQL = `CASE WHEN i.status = 'pending' AND i.expires_at <= now() THEN 'expired' ELSE i.status END`;
const COLUMNS = `i.id, i.organization_id AS "organizationId", i.email, i.role, ${STATUS_SQL} AS status,
  i.invited_by_user_id AS "invitedByUserId", i.replaces_invitation_id AS "replacesInvitationId",
  i.accepted_by_user_id AS "acceptedByUserId", i.created_at AS "createdAt", i.expires_at AS "expiresAt",
  i.accepted_at AS "acceptedAt", i.revoked_at AS "revokedAt"`;

export function generateInvitationToken(): { token: string; hash: Buffer } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashInvitationToken(token) };
}

export function hashInvitationToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The accept link: PUBLIC_URL when configured, else the configured listening address (a
 * wildcard interface becomes localhost, which only local users can follow: set PUBLIC_URL).
 */
export function invitationLink(
  config: Pick<Config, 'publicUrl' | 'host' | 'port'>,
  token: string,
): string {
  let base = config.publicUrl?.replace(/\/+$/, '');
  if (base === undefined) {
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    base = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
  }
  return `${base}${ACCEPT_PATH}?token=${encodeURIComponent(token)}`;
}

export async function createInvitation(
  db: Queryable,
  args: {
    organizationId: string;
    email: string;
    role: OrgRole;
    invitedByUserId: string;
    ttlHours: number;
    replacesInvitationId?: string;
  },
): Promise<{ invitation: InvitationRecord; token: string }> {
  const { token, hash } = generateInvitationToken();
  const { rows } = await db.query<InvitationRecord>(
    `WITH t AS (SELECT clock_timestamp() AS at),
     i AS (
       INSERT INTO invitations (organization_id, email, role, token_hash, invited_by_user_id, replaces_invitation_id, created_at, expires_at)
       SELECT $1, $2, $3, $4, $5, $6, t.at, t.at + make_interval(hours => $7) FROM t
       RETURNING *)
     SELECT ${COLUMNS} FROM i`,
    [
      args.organizationId,
      args.email,
      args.role,
      hash,
      args.invitedByUserId,
      args.replacesInvitationId ?? null,
      args.ttlHours,
    ],
  );
  return { invitation: rows[0]!, token };
}

/** The invitation of the organization, or INVITATION_NOT_FOUND; `lock` holds it to the transaction's end. */
export async function getInvitation(
  db: Queryable,
  organizationId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<InvitationRecord> {
  const { rows } = await db.query<InvitationRecord>(
    `SELECT ${COLUMNS} FROM invitations i WHERE i.organization_id = $1 AND i.id = $2${opts.lock ? ' FOR UPDATE' : ''}`,
    [organizationId, id],
  );
  if (!rows[0]) throw new AppError('INVITATION_NOT_FOUND');
  return rows[0];
}

/** INVITATION_NOT_PENDING unless the invitation's reported status is one of `allowed`. */
export function assertStatus(
  invitation: InvitationRecord,
  allowed: readonly InvitationStatus[],
): void {
  if (!allowed.includes(invitation.status)) {
    throw new AppError('INVITATION_NOT_PENDING', `The invitation is ${invitation.status}`, {
      details: { status: invitation.status },
    });
  }
}

/** A pending, unexpired invitation for the address, if any. */
export async function findPendingInvitation(
  db: Queryable,
  organizationId: string,
  email: string,
): Promise<InvitationRecord | undefined> {
  const { rows } = await db.query<InvitationRecord>(
    `SELECT ${COLUMNS} FROM invitations i
     WHERE i.organization_id = $1 AND lower(i.email) = lower($2) AND i.status = 'pending' AND i.expires_at > now()`,
    [organizationId, email],
  );
  return rows[0];
}

export async function listInvitations(
  db: Queryable,
  organizationId: string,
  args: {
    statuses: readonly InvitationStatus[];
    limit: number;
    offset: number;
    sortOrder: 'asc' | 'desc';
  },
): Promise<{ rows: InvitationRecord[]; total: number }> {
  const where = `i.organization_id = $1 AND ${STATUS_SQL} = ANY ($2::text[])`;
  const direction = sortDirection(args.sortOrder);
  const [{ rows }, count] = await Promise.all([
    db.query<InvitationRecord>(
      `SELECT ${COLUMNS} FROM invitations i WHERE ${where}
       ORDER BY i.created_at ${direction}, i.id ${direction} LIMIT $3 OFFSET $4`,
      [organizationId, args.statuses, args.limit, args.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*) AS total FROM invitations i WHERE ${where}`, [
      organizationId,
      args.statuses,
    ]),
  ]);
  return { rows, total: count.rows[0]!.total };
}

export async function revokeInvitation(db: Queryable, id: string): Promise<InvitationRecord> {
  const { rows } = await db.query<InvitationRecord>(
    `WITH i AS (UPDATE invitations SET status = 'revoked', revoked_at = clock_timestamp() WHERE id = $1 RETURNING *) SELECT ${COLUMNS} FROM i`,
    [id],
  );
  return rows[0]!;
}

/**
 * A fresh token for the invitation; links handed out before stop working. The one handing out
 * the new link (`issuedByUserId`, checked to be able to grant its role) becomes its sender, whom
 * accepting checks again.
 */
export async function rotateInvitationToken(
  db: Queryable,
  id: string,
  issuedByUserId: string,
): Promise<string> {
  const { token, hash } = generateInvitationToken();
  await db.query('UPDATE invitations SET token_hash = $2, invited_by_user_id = $3 WHERE id = $1', [
    id,
    hash,
    issuedByUserId,
  ]);
  return token;
}

/** The invitation a link token belongs to (any organization, any state), or undefined. */
export async function findInvitationByToken(
  db: Queryable,
  token: string,
  opts: { lock?: boolean } = {},
): Promise<InvitationRecord | undefined> {
  const { rows } = await db.query<InvitationRecord>(
    `SELECT ${COLUMNS} FROM invitations i WHERE i.token_hash = $1${opts.lock ? ' FOR UPDATE' : ''}`,
    [hashInvitationToken(token)],
  );
  return rows[0];
}

export async function markAccepted(
  db: Queryable,
  id: string,
  userId: string,
): Promise<InvitationRecord> {
  const { rows } = await db.query<InvitationRecord>(
    `WITH i AS (
       UPDATE invitations SET status = 'accepted', accepted_at = clock_timestamp(), accepted_by_user_id = $2 WHERE id = $1 RETURNING *)
     SELECT ${COLUMNS} FROM i`,
    [id, userId],
  );
  return rows[0]!;
}

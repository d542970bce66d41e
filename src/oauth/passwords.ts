// Passwords: Argon2id (OWASP's parameters: 19 MiB, 2 passes, 1 lane) through @node-rs/argon2,
// whose prebuilt binaries ship inside the npm package (no compiler at install). Only the PHC
// string is stored (users.password_hash); a login that names no account still computes one hash,
// so the answer's timing does not tell whether the e-mail exists.
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import type { Queryable } from '../db/pool.ts';

// 2 is Algorithm.Argon2id (a const enum, which this project's module settings cannot read)
const OPTIONS = { algorithm: 2 as Algorithm, memoryCost: 19_456, timeCost: 2, parallelism: 1 };
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 1024;

/** Why a new password is refused, or undefined. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH)
    return `a password has at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH)
    return `a password has at most ${PASSWORD_MAX_LENGTH} characters`;
  return undefined;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password.normalize('NFC'), OPTIONS);
}

let dummy: Promise<string> | undefined;

/**
 * Sets the user's password; false when no user has that e-mail. Whoever signed in with the old one
 * is signed out: the user's OAuth sessions, grants and tokens end with it (a reset after a leak).
 */
export async function setPassword(
  db: Queryable,
  email: string,
  password: string,
): Promise<boolean> {
  const passwordHash = await hashPassword(password);
  const { rows } = await db.query<{ id: string }>(
    'UPDATE users SET password_hash = $2, password_set_at = now(), updated_at = now() WHERE lower(email) = lower($1) RETURNING id',
    [email.trim(), passwordHash],
  );
  if (!rows[0]) return false;
  await db.query(
    `DELETE FROM oauth_models WHERE payload->>'accountId' = $1
       OR grant_id IN (SELECT id FROM oauth_models WHERE model = 'Grant' AND payload->>'accountId' = $1)`,
    [rows[0].id],
  );
  return true;
}

/** The user id when the e-mail and password match, else null (the same work either way). */
export async function checkPassword(
  db: Queryable,
  email: string,
  password: string,
): Promise<string | null> {
  const { rows } = await db.query<{ id: string; passwordHash: string | null }>(
    'SELECT id, password_hash AS "passwordHash" FROM users WHERE lower(email) = lower($1)',
    [email.trim()],
  );
  const row = rows[0];
  if (!row?.passwordHash) {
    dummy ??= hashPassword('not a password of anybody');
    await verify(await dummy, password.normalize('NFC')).catch(() => false);
    return null;
  }
  const ok = await verify(row.passwordHash, password.normalize('NFC')).catch(() => false);
  return ok ? row.id : null;
}

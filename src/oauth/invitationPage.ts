// An invitation link followed in a browser: the invitee joins the organization on a page, setting
// their sign-in password there when they have none (or confirming the one they have). The form
// carries the invitation token itself, a secret only the invitee's link holds, so a page elsewhere
// cannot post it for them; wrong passwords count against the login limits.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Pool } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { acceptInvitation } from '../invitations/accept.ts';
import { findInvitationByToken } from '../invitations/invitations.ts';
import { upsertUser } from '../organizations/bootstrap.ts';
import type { RateLimits } from '../net/rateLimit.ts';
import { signInFailed, signInWait } from './limits.ts';
import { escapeHtml, messagePage, page, PAGE_HEADERS } from './pages.ts';
import { checkPassword, passwordProblem, setPassword } from './passwords.ts';

export const INVITATION_PAGE = '/invitation';

interface Invitee {
  email: string;
  organizationName: string;
  role: string;
  hasPassword: boolean;
}

async function invitee(pool: Pool, token: string): Promise<Invitee | undefined> {
  const invitation = await findInvitationByToken(pool, token);
  if (
    !invitation ||
    invitation.status !== 'pending' ||
    invitation.expiresAt.getTime() <= Date.now()
  )
    return undefined;
  const { rows } = await pool.query<{ name: string; hasPassword: boolean | null }>(
    `SELECT o.name, (SELECT u.password_hash IS NOT NULL FROM users u WHERE lower(u.email) = lower($2)) AS "hasPassword"
     FROM organizations o WHERE o.id = $1 AND o.deleted_at IS NULL`,
    [invitation.organizationId, invitation.email],
  );
  if (!rows[0]) return undefined;
  return {
    email: invitation.email,
    organizationName: rows[0].name,
    role: invitation.role,
    hasPassword: rows[0].hasPassword === true,
  };
}

function invitationForm(action: string, token: string, who: Invitee, error?: string): string {
  const fields = who.hasPassword
    ? `<label for="password">Your password</label>
<input id="password" type="password" name="password" autocomplete="current-password" required autofocus>`
    : `<label for="password">Choose a password (at least 10 characters)</label>
<input id="password" type="password" name="password" autocomplete="new-password" minlength="10" required autofocus>
<label for="confirm">The password again</label>
<input id="confirm" type="password" name="confirm" autocomplete="new-password" minlength="10" required>`;
  return page(
    `Join ${who.organizationName}`,
    `<p>You are invited to <strong>${escapeHtml(who.organizationName)}</strong> as ${escapeHtml(who.role)}, as <strong>${escapeHtml(who.email)}</strong>.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<input type="hidden" name="email" value="${escapeHtml(who.email)}" autocomplete="username">
${fields}
<button type="submit">Join</button>
</form>`,
  );
}

const GONE =
  'This invitation link is not valid any more: it was used, replaced by a newer one, revoked, or has expired. Ask for a new one.';

export function invitationPageRoutes(
  scope: FastifyInstance,
  deps: { pool: Pool; limits: RateLimits; action: () => string },
): void {
  const send = (reply: FastifyReply, status: number, html: string) =>
    reply.status(status).headers(PAGE_HEADERS).send(html);

  scope.get(INVITATION_PAGE, async (req, reply) => {
    const token = String((req.query as { token?: unknown }).token ?? '').slice(0, 200);
    const who = token ? await invitee(deps.pool, token) : undefined;
    if (!who) return send(reply, 404, messagePage('Invitation not found', GONE));
    return send(reply, 200, invitationForm(deps.action(), token, who));
  });

  scope.post(INVITATION_PAGE, async (req, reply) => {
    const form = (req.body ?? {}) as Record<string, string | undefined>;
    const token = (form.token ?? '').slice(0, 200);
    const password = (form.password ?? '').slice(0, 4096);
    const who = token ? await invitee(deps.pool, token) : undefined;
    if (!who) return send(reply, 404, messagePage('Invitation not found', GONE));
    const again = (error: string, status = 200) =>
      send(reply, status, invitationForm(deps.action(), token, who, error));
    const wait = await signInWait(deps.limits, who.email, req.ip);
    if (wait > 0)
      return again(`Too many failed attempts. Try again in ${Math.ceil(wait / 60)} minutes.`, 429);
    if (who.hasPassword) {
      if (!(await checkPassword(deps.pool, who.email, password))) {
        await signInFailed(deps.limits, who.email, req.ip);
        return again('The password is not right.');
      }
    } else {
      const problem = passwordProblem(password);
      if (problem) return again(`That password cannot be used: ${problem}.`);
      if (password !== form.confirm) return again('The two passwords differ.');
    }
    const userId = await upsertUser(deps.pool, who.email);
    try {
      await acceptInvitation(
        deps.pool,
        { kind: 'bearer', userId, email: who.email, platformRole: null, apiKey: null },
        token,
      );
    } catch (error) {
      if (error instanceof AppError)
        return send(reply, 409, messagePage('Cannot join', error.message));
      throw error;
    }
    if (!who.hasPassword) await setPassword(deps.pool, who.email, password);
    return send(
      reply,
      200,
      messagePage(
        `You joined ${who.organizationName}`,
        'Sign in from your application with your e-mail and this password.',
      ),
    );
  });
}

// POST /invitations/accept: the one HTTP route outside tRPC, because the invitation link is what
// people follow (OAuth log-ins arrive later). Authenticated by the caller's API key alone: the
// invitation, not a header, names the organization, and an invitee's keys are by nature scoped
// to other organizations. The key's procedure patterns still apply: accepting is the procedure
// `invitation.accept`, so a key limited to, say, `cube.*` cannot make its user join anything.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { z } from 'zod';
import { principalForApiKey, scopeAllows } from '../auth/apiKeys.ts';
import { credentialsFromHeaders } from '../auth/principal.ts';
import { AppError } from '../errors.ts';
import { routeRateLimit, type RateLimits } from '../net/rateLimit.ts';
import type { Deps } from '../deps.ts';
import { acceptInvitation } from './accept.ts';
import { ACCEPT_PATH } from './invitations.ts';

const tokenSchema = z.string().min(1).max(200);
const bodySchema = z.object({ token: tokenSchema.optional() }).nullish();
const querySchema = z.object({ token: tokenSchema.optional() });

/** The name an API key's procedure patterns must allow (`*`, `invitation.*` or itself). */
export const ACCEPT_PROCEDURE = 'invitation.accept';

function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  return reply.status(getHTTPStatusCodeFromError(error)).send({
    error: {
      message: error.message,
      code: error.code,
      errorCode: error.errorCode,
      ...(error.details ? { details: error.details } : {}),
    },
  });
}

/** The token from the JSON body `{ token }` or, so that the link itself can be POSTed, the query. */
function tokenOf(body: unknown, query: unknown): string {
  const fromBody = bodySchema.safeParse(body);
  const fromQuery = querySchema.safeParse(query);
  if (!fromBody.success || !fromQuery.success)
    throw new AppError('VALIDATION_FAILED', 'token must be a string of 1 to 200 characters');
  const token = fromBody.data?.token ?? fromQuery.data.token;
  if (token === undefined)
    throw new AppError('VALIDATION_FAILED', 'token is required (JSON body { token } or ?token=)');
  return token;
}

export async function invitationRoutes(
  app: FastifyInstance,
  deps: Deps,
  limits: RateLimits,
): Promise<void> {
  // a link token guessed at: each try counts against its address in the invitations group
  app.post(
    ACCEPT_PATH,
    { onRequest: routeRateLimit(limits, 'invitations') },
    async (req, reply) => {
      try {
        const credentials = credentialsFromHeaders(req.headers, req.raw.rawHeaders);
        if (credentials.apiKey === undefined) {
          throw new AppError(
            credentials.bearerToken === undefined ? 'AUTH_REQUIRED' : 'INVALID_ACCESS_TOKEN',
          );
        }
        const principal = await principalForApiKey(deps.pool, credentials.apiKey);
        if (!principal) throw new AppError('INVALID_API_KEY');
        if (!scopeAllows(principal.apiKey!.patterns, ACCEPT_PROCEDURE)) {
          throw new AppError(
            'API_KEY_SCOPE_DENIED',
            `The API key's scope does not include ${ACCEPT_PROCEDURE}`,
          );
        }
        const token = tokenOf(req.body, req.query);
        return await acceptInvitation(deps.pool, principal, token);
      } catch (error) {
        if (error instanceof AppError) return sendError(reply, error);
        throw error;
      }
    },
  );
}

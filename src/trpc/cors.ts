// Cross-origin calls from browsers (CORS). Off unless CORS_ORIGINS names origins: the API is
// called by servers, the command-line client and the tool server, none of which needs it. The
// credentials are headers (x-api-key, Authorization), never cookies, so
// Access-Control-Allow-Credentials is never sent, with `*` or otherwise: a page can call only with
// a credential it holds itself.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** What a browser may send cross-origin: the methods of the transport rules and the headers of authentication. */
const ALLOW_METHODS = 'GET, POST, HEAD';
const ALLOW_HEADERS = 'content-type, x-api-key, x-organization-id, authorization, x-request-id';
/** Response headers a page may read beyond the CORS-safelisted ones. */
// retry-after: a page told to wait by a rate limit reads how long (src/net/rateLimit.ts)
const EXPOSE_HEADERS = 'x-request-id, retry-after';
/** How long a browser may keep a preflight's answer (Chrome caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export interface CorsPolicy {
  /** set on every response (before any handler): the CORS headers of an allowed origin, and Vary */
  decorate(req: FastifyRequest, reply: FastifyReply): void;
  /** whether the request is a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) */
  isPreflight(req: FastifyRequest): boolean;
  /** whether the request's Origin may call */
  allows(req: FastifyRequest): boolean;
  /**
   * before sending: Vary keeps Origin whatever a handler set (tRPC answers a web Response whose
   * own Vary replaces the reply's)
   */
  keepVary(reply: FastifyReply, payload: unknown): void;
  /** answers an allowed preflight: 204 with the methods and headers a call may use */
  answerPreflight(reply: FastifyReply): FastifyReply;
}

function originOf(req: FastifyRequest): string | undefined {
  const origin = req.headers.origin;
  return typeof origin === 'string' && origin !== '' ? origin : undefined;
}

/** `origins`: Config.corsOrigins, canonical origins (`https://app.example.com`), ['*'] for any, [] for none. */
export function corsPolicy(origins: readonly string[]): CorsPolicy {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  // `null` (a sandboxed frame, a file: page) is never allowed, not even by `*`: anything can send it
  const allows = (origin: string | undefined) =>
    origin !== undefined && origin !== 'null' && (any || allowed.has(origin.toLowerCase()));
  return {
    allows: (req) => allows(originOf(req)),
    isPreflight: (req) =>
      req.method === 'OPTIONS' &&
      originOf(req) !== undefined &&
      req.headers['access-control-request-method'] !== undefined,
    decorate(req, reply) {
      if (origins.length === 0) return;
      const origin = originOf(req);
      // the answer depends on the Origin when an allow-list picks: caches must keep one per origin
      if (!any) void reply.header('vary', 'Origin');
      if (!allows(origin)) return;
      void reply.header('access-control-allow-origin', any ? '*' : origin!);
      void reply.header('access-control-expose-headers', EXPOSE_HEADERS);
    },
    keepVary(reply, payload) {
      if (origins.length === 0 || any) return;
      const withOrigin = (list: string) =>
        /(^|,)\s*(origin|\*)\s*(,|$)/i.test(list)
          ? list
          : list === ''
            ? 'Origin'
            : `${list}, Origin`;
      if (payload instanceof Response) {
        payload.headers.set('vary', withOrigin(payload.headers.get('vary') ?? ''));
        return;
      }
      const vary = reply.getHeader('vary');
      void reply.header(
        'vary',
        withOrigin(Array.isArray(vary) ? vary.join(', ') : vary === undefined ? '' : String(vary)),
      );
    },
    answerPreflight(reply) {
      return reply
        .status(204)
        .header('access-control-allow-methods', ALLOW_METHODS)
        .header('access-control-allow-headers', ALLOW_HEADERS)
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
        .header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers')
        .send();
    },
  };
}

// DNS rebinding (MCP streamable HTTP, "Security Warning"): a web page on another origin must not
// reach the tool server through a name that resolves to it. A browser's Origin must be the
// service's own or one of CORS_ORIGINS, and the Host must be the public address or loopback.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export function originProblem(
  req: FastifyRequest,
  issuer: string,
  corsOrigins: readonly string[],
): AppError | undefined {
  const pub = new URL(issuer);
  const origin = req.headers.origin;
  if (
    origin !== undefined &&
    origin !== pub.origin &&
    !corsOrigins.includes('*') &&
    !corsOrigins.includes(origin)
  ) {
    return new AppError(
      'TOOL_ORIGIN_REFUSED',
      `Requests from the origin ${origin.slice(0, 200)} are not allowed (CORS_ORIGINS)`,
    );
  }
  const host = (req.headers.host ?? '').toLowerCase();
  const hostname = host.replace(/:\d+$/, '');
  if (host !== pub.host && !LOOPBACK.has(hostname)) {
    return new AppError(
      'TOOL_ORIGIN_REFUSED',
      `The Host ${host.slice(0, 200)} is not this service's address (PUBLIC_URL)`,
    );
  }
  return undefined;
}

// The procedure builders. Every procedure declares its metadata (minRole, scope, summary) next to
// its definition; one mechanism below enforces it, and a procedure built without a declared role
// is refused. Order of checks: authenticate → API-key procedure scope → rate limit (src/trpc/
// rateLimit.ts) → organization and role (from the raw input) → input validation.
import { TRPCError } from '@trpc/server';
import type { z } from 'zod';
import type { Principal } from '../auth/principal.ts';
import { scopeAllows } from '../auth/apiKeys.ts';
import { AppError } from '../errors.ts';
import { organizationAccess, type OrgAccess } from '../access/organization.ts';
import type { Queryable } from '../db/pool.ts';
import { baseProcedure, type ProcedureMeta } from './init.ts';
import { takeRateLimit } from './rateLimit.ts';
import { roleSatisfies, type MinRole } from '../access/roles.ts';

// PostgreSQL cannot store NUL in text, nor a lone surrogate (half of a UTF-16 pair) in JSON or
// text: refused here for every procedure and every string of its input, keys included, with the
// field's path, rather than as a 500 later. Walked without recursion: any depth of nesting is safe.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): string[] {
  const path: string[] = [];
  for (let v: Visit | null = visit; v && v.key !== null; v = v.parent) path.push(v.key);
  return path.reverse();
}

function unstorableText(input: unknown): { path: string[]; message: string } | null {
  const check = (text: string) =>
    text.includes('\u0000')
      ? 'strings must not contain NUL (U+0000) characters'
      : LONE_SURROGATE.test(text)
        ? 'strings must be well-formed Unicode (a lone surrogate, U+D800 to U+DFFF, is not)'
        : null;
  // a path is kept as links to the parent and spelled out only for the one reported
  const stack: Visit[] = [{ value: input, key: null, parent: null }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value } = visit;
    if (typeof value === 'string') {
      const message = check(value);
      if (message) return { path: pathOf(visit), message };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], key: String(i), parent: visit });
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const child: Visit = { value: (value as Record<string, unknown>)[key], key, parent: visit };
        const message = check(key);
        if (message) return { path: pathOf(child), message };
        stack.push(child);
      }
    }
  }
  return null;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const authenticated = baseProcedure.use(async ({ ctx, meta, path, getRawInput, next }) => {
  if (!meta?.minRole)
    throw new AppError('ROLE_NOT_DECLARED', `Procedure ${path} declares no minimum role`);
  const unstorable = unstorableText(await getRawInput());
  if (unstorable) throw new TRPCError({ code: 'BAD_REQUEST', cause: { issues: [unstorable] } });
  if (meta.minRole === 'none') return next({ ctx: { principal: null as Principal | null } });
  const principal = await ctx.authenticate();
  if (principal.apiKey && !scopeAllows(principal.apiKey.patterns, path)) {
    throw new AppError('API_KEY_SCOPE_DENIED', `The API key's scope does not include ${path}`);
  }
  if (principal.cubeSession && !ctx.sessions?.allows(principal.cubeSession, path)) {
    throw new AppError('CUBE_SESSION_SCOPE_DENIED', `An embed session does not authorize ${path}`);
  }
  await takeRateLimit(ctx, path, principal);
  return next({ ctx: { principal: principal as Principal | null } });
});

function inputOrganizationId(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const value = (input as { organizationId?: unknown }).organizationId;
  return typeof value === 'string' ? value : undefined;
}

function checkApiKeyOrganization(
  principal: Principal,
  headerOrg: string | undefined,
  inputOrg: string | undefined,
): void {
  if (!principal.apiKey) return;
  if (headerOrg === undefined) {
    throw new AppError(
      'ORGANIZATION_HEADER_REQUIRED',
      'API-key calls must send the x-organization-id header',
    );
  }
  if (!UUID_RE.test(headerOrg))
    throw new AppError('ORGANIZATION_HEADER_REQUIRED', 'x-organization-id must be a uuid');
  if (!principal.apiKey.organizationIds.includes(headerOrg)) {
    throw new AppError('API_KEY_SCOPE_DENIED', "The organization is outside the API key's scope");
  }
  if (inputOrg !== undefined && inputOrg.toLowerCase() !== headerOrg.toLowerCase()) {
    throw new AppError(
      'ORGANIZATION_MISMATCH',
      'organizationId in the input must equal the x-organization-id header',
    );
  }
}

async function authorize(
  db: Queryable,
  principal: Principal,
  minRole: Exclude<MinRole, 'none'>,
  headerOrg: string | undefined,
  inputOrg: string | undefined,
): Promise<OrgAccess | null> {
  checkApiKeyOrganization(principal, headerOrg, inputOrg);
  if (minRole === 'any') return null;
  if (minRole === 'c2_superadmin') {
    if (principal.platformRole !== 'c2_superadmin') throw new AppError('PLATFORM_ROLE_REQUIRED');
    return inputOrg === undefined ? null : organizationAccess(db, principal, inputOrg);
  }
  if (inputOrg === undefined) throw new AppError('ORGANIZATION_REQUIRED');
  const access = await organizationAccess(db, principal, inputOrg);
  if (!roleSatisfies(access.role, minRole)) {
    throw new AppError('INSUFFICIENT_ROLE', `This procedure needs the ${minRole} role or higher`);
  }
  return access;
}

/**
 * Authorizes before the input is validated, from the raw input's organizationId, so a caller
 * without the role learns nothing about the input schema. A raw organizationId that is not a
 * uuid is left to input validation, and the post-input guard below makes sure nothing runs
 * unauthorized.
 */
const authorized = authenticated.use(async ({ ctx, meta, getRawInput, next }) => {
  const principal = ctx.principal!;
  const raw = inputOrganizationId(await getRawInput());
  const inputOrg = raw !== undefined && UUID_RE.test(raw) ? raw : undefined;
  if (principal.cubeSession && inputOrg?.toLowerCase() !== principal.cubeSession.organizationId) {
    throw new AppError(
      'CUBE_SESSION_SCOPE_DENIED',
      'The embed session is for another organization',
    );
  }
  const minRole = meta!.minRole as Exclude<MinRole, 'none'>;
  const needsOrg = minRole !== 'any' && minRole !== 'c2_superadmin';
  const org =
    needsOrg && inputOrg === undefined
      ? null
      : await authorize(
          ctx.deps.pool,
          principal,
          minRole,
          ctx.credentials.organizationId,
          inputOrg,
        );
  return next({ ctx: { principal, org } });
});

/** A procedure callable without authentication (only `health`). */
export function publicProcedure<S extends z.ZodType>(
  meta: ProcedureMeta & { minRole: 'none' },
  input: S,
) {
  return authenticated.meta(meta).input(input);
}

/** A procedure without an organization in its input: minRole `any` or `c2_superadmin`. */
export function globalProcedure<S extends z.ZodType>(
  meta: ProcedureMeta & { minRole: 'any' | 'c2_superadmin' },
  input: S,
) {
  return authorized
    .meta(meta)
    .input(input)
    .use(async ({ ctx, input: parsed, next }) => {
      const inputOrg = inputOrganizationId(parsed);
      if (inputOrg !== undefined && ctx.org?.id !== inputOrg && meta.minRole !== 'any')
        throw new AppError('ORGANIZATION_REQUIRED');
      return next({ ctx: { principal: ctx.principal, org: ctx.org } });
    });
}

/** A procedure of one organization: the input carries organizationId; ctx.org is the caller's access. */
export function orgProcedure<S extends z.ZodType<{ organizationId: string }, unknown>>(
  meta: ProcedureMeta & { minRole: Exclude<MinRole, 'none' | 'any'> },
  input: S,
) {
  return authorized
    .meta(meta)
    .input(input)
    .use(async ({ ctx, input: parsed, next }) => {
      const org = ctx.org;
      // the organization authorized before validation must be the one the handler sees
      if (!org || org.id.toLowerCase() !== inputOrganizationId(parsed)?.toLowerCase())
        throw new AppError('ORGANIZATION_REQUIRED');
      return next({ ctx: { principal: ctx.principal, org } });
    });
}

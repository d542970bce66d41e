// The role matrix, derived from docs/spec/procedures.tsv: every procedure that exists declares
// exactly the method, scope and minimum role listed there, and calling it as each role is
// allowed exactly where the table allows it. A procedure without a declared role is denied.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { z } from 'zod';
import { appRouter } from '../../src/api/index.ts';
import { describeProcedures } from '../../src/docs/schemas.ts';
import { createContextInner } from '../../src/trpc/context.ts';
import { createCallerFactory, router } from '../../src/trpc/init.ts';
import { orgProcedure } from '../../src/trpc/procedure.ts';
import { roleSatisfies, type MinRole, type OrgRole } from '../../src/access/roles.ts';
import type { ErrorCode } from '../../src/errors.ts';
import { addMember, newOrganization, outsider, type Caller } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';

interface Row {
  procedure: string;
  method: 'GET' | 'POST';
  scope: string;
  minRole: MinRole;
}

const table: Row[] = readFileSync(`${repoRoot}/docs/spec/procedures.tsv`, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const [procedure, method, scope, minRole] = line.split('\t');
    return {
      procedure: procedure!,
      method: method as Row['method'],
      scope: scope ?? '',
      minRole: minRole as MinRole,
    };
  });

const declared = describeProcedures(appRouter);
const byName = new Map(table.map((r) => [r.procedure, r]));

t.equal(table.length, 150, 'the table lists the 150 procedures');

t.test('every procedure is in the table, with its method, scope and minimum role', async (t) => {
  for (const p of declared) {
    const row = byName.get(p.name);
    t.ok(row, `${p.name} is a procedure of the specification`);
    if (!row) continue;
    t.same(
      { method: p.method, scope: p.meta?.scope, minRole: p.meta?.minRole },
      { method: row.method, scope: row.scope, minRole: row.minRole },
      p.name,
    );
  }
  const missing = table
    .filter((r) => !declared.some((p) => p.name === r.procedure))
    .map((r) => r.procedure);
  t.comment(
    `${declared.length} of ${table.length} procedures implemented; not yet: ${missing.length}`,
  );
});

const srv = await startTestServer(t);

const orgRoles: OrgRole[] = ['member', 'reader', 'writer', 'admin', 'c2_customer_support', 'owner'];

function allowed(min: MinRole, role: OrgRole | 'platform_superadmin' | 'anonymous'): boolean {
  if (min === 'none') return true;
  if (role === 'anonymous') return false;
  if (min === 'any') return true;
  if (role === 'platform_superadmin') return true;
  if (min === 'c2_superadmin') return false;
  return roleSatisfies(role, min);
}

/** why the role is refused the procedure (data.errorCode), or 'allowed' */
function expectedAnswer(
  min: MinRole,
  role: OrgRole | 'platform_superadmin' | 'anonymous',
): ErrorCode | 'allowed' {
  if (allowed(min, role)) return 'allowed';
  if (role === 'anonymous') return 'AUTH_REQUIRED';
  return min === 'c2_superadmin' ? 'PLATFORM_ROLE_REQUIRED' : 'INSUFFICIENT_ROLE';
}

// Per-procedure tests need not repeat these refusals: each role's is asserted here, to the errorCode.
t.test(
  'each role is allowed exactly where procedures.tsv allows it, and refused for its role',
  async (t) => {
    for (const p of declared) {
      const row = byName.get(p.name);
      if (!row) continue;
      // a fresh organization per procedure: an allowed call may change it (delete it, even)
      const org = await newOrganization(srv, `Matrix ${p.name}`);
      const callers: [OrgRole | 'platform_superadmin' | 'anonymous', Caller['client']][] = [
        ['anonymous', srv.anonymous],
      ];
      for (const role of orgRoles)
        callers.push([role, (await addMember(srv, org.organizationId, role)).client]);
      callers.push([
        'platform_superadmin',
        (await outsider(srv, org.organizationId, 'c2_superadmin')).client,
      ]);
      // lowest roles first, so that denials are seen before any allowed call changes anything
      for (const [role, client] of callers) {
        const res = await client.call(row.method, p.name, { organizationId: org.organizationId });
        const denied =
          !res.ok &&
          (res.error.data.code === 'FORBIDDEN' || res.error.data.code === 'UNAUTHORIZED');
        const answer = denied ? res.error.data.errorCode : 'allowed';
        t.equal(
          answer,
          expectedAnswer(row.minRole, role),
          `${p.name} as ${role}${res.ok ? '' : ` (${res.error.data.errorCode})`}`,
        );
        if (!res.ok)
          t.not(res.error.data.code, 'INTERNAL_SERVER_ERROR', `${p.name} as ${role} is no 500`);
      }
    }
  },
);

t.test('a procedure without a declared role is denied', async (t) => {
  const undeclared = orgProcedure(
    { scope: '', summary: 'no role' } as never,
    z.object({ organizationId: z.uuid() }),
  ).query(() => 'ran');
  const caller = createCallerFactory(router({ undeclared }));
  const org = await newOrganization(srv);
  const call = caller(
    createContextInner(srv.deps, {
      apiKey: org.apiKey,
      bearerToken: undefined,
      organizationId: org.organizationId,
    }),
  );
  await t.rejects(call.undeclared({ organizationId: org.organizationId }), {
    name: 'AppError',
    errorCode: 'ROLE_NOT_DECLARED',
    code: 'FORBIDDEN',
  });
});

// schemas.json, generated from the procedure declarations themselves: it is complete for
// whatever procedures exist.
import { z } from 'zod';
import type { AnyTRPCProcedure, AnyTRPCRouter } from '@trpc/server';
import type { ProcedureMeta } from '../trpc/init.ts';

export interface ProcedureDescription {
  name: string;
  method: 'GET' | 'POST';
  type: 'query' | 'mutation';
  meta: ProcedureMeta | undefined;
  input: z.ZodType | undefined;
}

export function describeProcedures(router: AnyTRPCRouter): ProcedureDescription[] {
  const procedures = router._def.procedures as Record<string, AnyTRPCProcedure>;
  return Object.entries(procedures)
    .map(([name, proc]) => {
      const def = proc._def as unknown as {
        type: 'query' | 'mutation' | 'subscription';
        meta?: ProcedureMeta;
        inputs: unknown[];
      };
      return {
        name,
        method: def.type === 'query' ? ('GET' as const) : ('POST' as const),
        type: def.type === 'query' ? ('query' as const) : ('mutation' as const),
        meta: def.meta,
        input: def.inputs[0] as z.ZodType | undefined,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function inputJsonSchema(input: z.ZodType | undefined): unknown {
  if (!input) return {};
  return z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' });
}

export function schemasJson(router: AnyTRPCRouter, basePath = '/trpc'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of describeProcedures(router)) {
    out[p.name] = {
      method: p.method,
      path: `${basePath}/${p.name}`,
      summary: p.meta?.summary ?? '',
      scope: p.meta?.scope ?? '',
      minRole: p.meta?.minRole ?? null,
      ...(p.meta?.deprecated ? { deprecated: p.meta.deprecated } : {}),
      input: inputJsonSchema(p.input),
    };
  }
  return out;
}

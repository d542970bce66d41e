// The procedures as the tool server shows them: the same declarations /docs/schemas.json is
// generated from (src/docs/schemas.ts), so names, schemas, roles and summaries cannot drift.
import type { AnyTRPCRouter } from '@trpc/server';
import { describeProcedures, inputJsonSchema, type ProcedureDescription } from '../docs/schemas.ts';

export interface Endpoint {
  name: string;
  namespace: string;
  method: 'GET' | 'POST';
  type: 'query' | 'mutation';
  scope: string;
  minRole: string | null;
  summary: string;
  deprecated?: string;
  /** whether the input has an organizationId (the tool server can fill it in) */
  takesOrganization: boolean;
  described: ProcedureDescription;
}

export function endpointCatalog(router: AnyTRPCRouter): Map<string, Endpoint> {
  const out = new Map<string, Endpoint>();
  for (const p of describeProcedures(router)) {
    const schema = inputJsonSchema(p.input) as { properties?: Record<string, unknown> };
    out.set(p.name, {
      name: p.name,
      namespace: p.name.includes('.') ? p.name.slice(0, p.name.lastIndexOf('.')) : '',
      method: p.method,
      type: p.type,
      scope: p.meta?.scope ?? '',
      minRole: p.meta?.minRole ?? null,
      summary: p.meta?.summary ?? '',
      ...(p.meta?.deprecated ? { deprecated: p.meta.deprecated } : {}),
      takesOrganization: schema.properties?.organizationId !== undefined,
      described: p,
    });
  }
  return out;
}

/** One line of a listing: what an assistant needs to pick a procedure. */
export function endpointLine(e: Endpoint): Record<string, unknown> {
  return {
    name: e.name,
    type: e.type,
    minRole: e.minRole,
    summary: e.summary,
    ...(e.deprecated ? { deprecated: e.deprecated } : {}),
  };
}

/** The full description of one procedure, with the JSON Schema of its input. */
export function endpointDetail(e: Endpoint): Record<string, unknown> {
  return {
    ...endpointLine(e),
    method: e.method,
    scope: e.scope,
    input: inputJsonSchema(e.described.input),
  };
}

/** Procedures whose name, namespace or summary contain every word of the keyword text. */
export function searchEndpoints(catalog: Map<string, Endpoint>, keyword: string): Endpoint[] {
  const words = keyword.toLowerCase().split(/\s+/).filter(Boolean);
  return [...catalog.values()].filter((e) => {
    const text = `${e.name} ${e.summary}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
